"""Fixtures of the conformance suite: ``api`` drives the ``sandbox`` fixture over loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_support import Api

from svcnb.sandbox import Sandbox


@pytest.fixture
def api(sandbox: Sandbox) -> Iterator[Api]:
    client = Api(sandbox)
    yield client
    client.http.close()
