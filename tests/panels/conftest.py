"""Panels are driven through their widgets against a reset loopback sandbox."""

from __future__ import annotations

import pytest

import svcnb
from svcnb.store import Store


@pytest.fixture
def admin(sandbox):
    """A client holding every scope, with no progress bars."""
    client = svcnb.Client(
        api_key=sandbox.tokens["admin"], base_url=sandbox.base_url, progress=False
    )
    yield client
    client.close()


@pytest.fixture
def reader(sandbox):
    """A client whose token has only the ``:read`` scopes."""
    client = svcnb.Client(api_key=sandbox.tokens["read"], base_url=sandbox.base_url, progress=False)
    yield client
    client.close()


@pytest.fixture
def panel_store(tmp_path):
    return Store(tmp_path / "store")
