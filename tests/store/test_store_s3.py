"""The store on object storage: an S3 server on loopback, credentials from the environment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from frames._samples import account, vm

from svcnb.store import RESOURCES, Store

from . import readers
from .test_store_disk import DAY, T0, evolve, frames_of, sorted_frame


def test_snapshots_round_trip_on_s3(s3_url):
    store = Store(s3_url)
    records, written = account(6), []
    for day in range(4):
        if day:
            records = evolve(records, day)
        written.append(frames_of(records))
        store.write(written[-1], server_time=T0 + day * DAY)
    fresh = Store(s3_url)  # another process: nothing in memory
    assert fresh.snapshots()["seq"].tolist() == [1, 2, 3, 4]
    for day, pulled in enumerate(written):
        for resource in RESOURCES:
            got = fresh.load(resource, at=T0 + day * DAY)
            pd.testing.assert_frame_equal(got, sorted_frame(resource, pulled[resource]))
    assert fresh.diff("vms", T0, T0 + DAY)["change"].tolist().count("added") == 1
    assert fresh.journal.log().empty  # no record yet: an empty log, not an error


# S3 reads and writes go through the object store to the same code as on disk, whose twin of
# this test runs in `make test`; on S3 it runs in `make test-all` (the S3 tests `make test` keeps:
# concurrent writers, a killed writer, a round trip, damaged commits)
@pytest.mark.slow
def test_polars_reads_the_fleet_as_of_each_day_on_s3(s3_url, s3_server):
    store = Store(s3_url)
    records = account(6)
    for day in range(3):
        if day:
            records = evolve(records, day)
        store.write(frames_of(records), server_time=T0 + day * DAY)
    for day in range(3):
        at = T0 + day * DAY + pd.Timedelta(hours=1)
        got = readers.polars_as_of(s3_url, "vms", at, storage_options=s3_server)
        want = store.load("vms", at=at)
        assert got["id"].to_list() == want["id"].tolist()
        assert got["bandwidth_used_bytes"].to_list() == want["bandwidth_used_bytes"].tolist()


def test_a_snapshot_asks_object_storage_only_what_it_must(s3_url, monkeypatch):
    # every snapshot checks, for each resource table, that no commit came after its own: on
    # object storage a request each, where pyarrow's file info asks again for a folder
    import werkzeug.serving

    from svcnb.store import Location

    store = Store(s3_url)
    store.write(frames_of(account(3)), server_time=T0)
    loc = Location.of(s3_url, None)
    log = "vms/_delta_log"
    handler = werkzeug.serving.WSGIRequestHandler
    real = handler.run_wsgi
    sent: list[str] = []

    def counted(self):
        sent.append(f"{self.command} {self.path}")
        return real(self)

    monkeypatch.setattr(handler, "run_wsgi", counted)
    assert loc.exists(loc.file(log, "00000000000000000000.json"))
    assert not loc.exists(loc.file(log, "00000000000000000099.json"))
    assert not loc.exists(loc.file("vms", "nothing.parquet"))
    assert len(sent) == 3, sent
    # a snapshot that replaces files asks nothing of the files it removes (their sizes are in
    # the tables' logs), nor of the data files it writes (it knows their rows and sizes); it
    # reads the catalog it published, as every read of the list of snapshots does
    sent.clear()
    records = account(3)
    records["vms"].append(vm(50))
    store.write(frames_of(records), server_time=T0 + pd.Timedelta("1D"))

    def paths(method: str) -> list[str]:
        return [
            line.split()[1].partition("?")[0]
            for line in sent
            if line.startswith(method + " ") and ".parquet" in line
        ]

    # a table the snapshot leaves as it was costs two requests: that its commit is still the last
    unchanged = [line for line in sent if "/firewalls/" in line]
    assert len(unchanged) == 2, unchanged
    written = set(paths("PUT"))
    read = set(paths("HEAD") + paths("GET"))
    assert written and read == {p for p in written if "/_snapshots/" in p}, sent
    # each file it writes is one PUT, not a multipart upload (three requests)
    assert len(paths("PUT")) == len(written) and paths("POST") == [], sent


def test_two_writers_at_once_on_s3(s3_url):
    errors: list[BaseException] = []

    def writer(offset: int) -> None:
        try:
            store = Store(s3_url)
            for i in range(4):
                records = account(4)
                records["vms"].append(vm(offset + i))
                when = T0 + (offset + i) * pd.Timedelta("1s")
                store.write(frames_of(records), server_time=when, allow_older=True)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k * 100,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    store = Store(s3_url)
    snaps = store.snapshots()
    assert snaps["seq"].tolist() == list(range(1, 9))
    added = []
    for snapshot_id in snaps["snapshot_id"]:
        ids = set(store._frame_of("vms", snapshot_id)["id"])
        extra = ids - {f"vm-{i:05d}" for i in range(4)}
        assert len(extra) == 1, snapshot_id  # exactly the VM that writer added
        added += extra
    assert sorted(added) == sorted(f"vm-{k * 100 + i:05d}" for k in (1, 2) for i in range(4))


KILLED_WRITE = textwrap.dedent(
    """
    import sys, time
    import pandas as pd
    from frames._samples import account, vm
    from test_store_disk import T0, frames_of
    from svcnb.store import Store
    from svcnb.store import Location

    url, marker = sys.argv[1], sys.argv[2]
    real_write = Location.write_parquet

    def write_then_stall(self, path, table, **options):
        size = real_write(self, path, table, **options)
        if "/vms/" in path:  # some files of the snapshot are written: kill me now
            open(marker, "w").close()
            time.sleep(120)
        return size

    Location.write_parquet = write_then_stall
    records = account(4)
    records["vms"].append(vm(77))
    records["firewall_rules"][0]["port"] = "7777"
    Store(url).write(frames_of(records), server_time=T0 + pd.Timedelta(days=5))
    """
)


# make test-all: its twin on disk (tests/store/test_store_sandbox.py, a take killed mid-write)
# runs in make test, and the commit it relies on is the one the round trip reads
@pytest.mark.slow
def test_a_writer_killed_mid_snapshot_on_s3(s3_url, tmp_path):
    store = Store(s3_url)
    records = account(4)
    first = store.write(frames_of(records), server_time=T0)
    records = evolve(records, 1)
    second = store.write(frames_of(records), server_time=T0 + DAY)
    before = {r: store.load(r) for r in RESOURCES}

    script = tmp_path / "killed.py"
    script.write_text(KILLED_WRITE)
    marker = tmp_path / "written"
    tests = Path(__file__).resolve().parents[1]
    path = os.pathsep.join([str(tests), str(tests / "store")])
    child = subprocess.Popen(
        [sys.executable, str(script), s3_url, str(marker)], env={**os.environ, "PYTHONPATH": path}
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, "the write ended before it wrote anything"
            assert time.monotonic() < deadline, "the write never started"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    reader = Store(s3_url)
    assert reader.snapshots()["snapshot_id"].tolist() == [first, second]
    for resource in RESOURCES:
        pd.testing.assert_frame_equal(reader.load(resource), before[resource])
    records = evolve(records, 2)
    third = reader.write(frames_of(records), server_time=T0 + 2 * DAY)
    assert reader.snapshots()["snapshot_id"].tolist() == [first, second, third]
    pd.testing.assert_frame_equal(
        reader.load("vms"), sorted_frame("vms", frames_of(records)["vms"])
    )
    assert "vm-00077" not in set(Store(s3_url).load("vms", at=T0 + 10 * DAY)["id"])


def test_an_http_endpoint_on_this_machine_needs_no_allow_http(s3_url, monkeypatch):
    # what a user sets for MinIO or a test server: the endpoint and keys, nothing about HTTP
    monkeypatch.delenv("AWS_ALLOW_HTTP")
    store = Store(s3_url)
    store.write(frames_of(account(3)), server_time=T0)
    assert Store(s3_url).load("vms")["id"].tolist() == store.load("vms")["id"].tolist()


def test_an_http_endpoint_elsewhere_is_refused_naming_the_way(s3_url, monkeypatch):
    from svcnb.config import ConfigError

    monkeypatch.delenv("AWS_ALLOW_HTTP")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://minio.example.net:9000")
    with pytest.raises(ConfigError, match="plain http:// on minio.example.net.*AWS_ALLOW_HTTP"):
        Store(s3_url)
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")  # said explicitly: svcnb does not overrule it
    Store(s3_url)
