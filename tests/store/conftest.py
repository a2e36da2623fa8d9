"""An S3 server on loopback (moto's server mode) for the store's object-storage tests: one per
session, a fresh prefix per test."""

from __future__ import annotations

import copy
import logging
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from frames._samples import account

from svcnb.store import Store

from .test_store_disk import DAY, T0, evolve, frames_of

BUCKET = "svcnb-test"


@pytest.fixture(scope="session")
def s3_server() -> Iterator[dict[str, str]]:
    """The environment that points S3 clients at the server (no real credentials)."""
    boto3 = pytest.importorskip("boto3")
    server_mod = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    # moto lists its package folder (a stat per service) on every request to route it: a sixth
    # of what an S3 test costs. The folder cannot change while the server runs.
    patch = pytest.MonkeyPatch()
    backends = pytest.importorskip("moto.backends")
    modules = tuple(backends.list_of_moto_modules())
    patch.setattr(backends, "list_of_moto_modules", lambda: modules)
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        # commits are put-if-absent: two writers never both write one version of a table log
        "AWS_CONDITIONAL_PUT": "etag",
    }
    client = boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=BUCKET)
    try:
        yield env
    finally:
        server.stop()
        patch.undo()


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
