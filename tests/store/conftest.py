"""The store's object-storage tests: a fresh prefix per test on the session's S3 server on
loopback (``s3_server``, tests/conftest.py)."""

from __future__ import annotations

import copy
import shutil
import uuid
from pathlib import Path

import pandas as pd
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


@pytest.fixture(scope="session")
def written_history(tmp_path_factory) -> tuple[Path, list[str], list[dict[str, pd.DataFrame]]]:
    """Five daily snapshots written once per session: their store's folder, ids and frames."""
    store = Store(tmp_path_factory.mktemp("history") / "store")
    records, written, ids = account(8), [], []
    for day in range(5):
        if day:
            records = evolve(records, day)
        pulled = frames_of(records)
        ids.append(store.write(pulled, server_time=T0 + day * DAY))
        written.append(pulled)
    return store.path, ids, written


@pytest.fixture
def history(written_history, tmp_path):
    """Five daily snapshots and the frames each was written from, in this test's own store (a
    copy of the session's, file for file: tests damage theirs) opened as another process would."""
    path, ids, written = written_history
    shutil.copytree(path, tmp_path / "store")
    return Store(tmp_path / "store"), list(ids), copy.deepcopy(written)
