"""The store's object-storage tests: a fresh prefix per test on the session's S3 server on
loopback (``s3_server``, tests/conftest.py)."""

from __future__ import annotations

import uuid

import pytest
from frames._samples import account

from svcnb.store import Store

from .test_store_disk import DAY, T0, evolve, frames_of

BUCKET = "svcnb-test"  # one of the S3 server's buckets (tests/conftest.py)


@pytest.fixture
def s3_url(s3_server: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    """``s3://bucket/<fresh prefix>`` with the environment set as a user would set it."""
    for name, value in s3_server.items():
        monkeypatch.setenv(name, value)
    return f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}"


@pytest.fixture
def history(tmp_path):
    """Five daily snapshots and the frames each was written from."""
    store = Store(tmp_path / "store")
    records, written, ids = account(8), [], []
    for day in range(5):
        if day:
            records = evolve(records, day)
        pulled = frames_of(records)
        ids.append(store.write(pulled, server_time=T0 + day * DAY))
        written.append(pulled)
    return store, ids, written
