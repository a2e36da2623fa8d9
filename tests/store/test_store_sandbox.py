"""The store against a loopback sandbox: take, time travel, diffs, a killed take, no secrets."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import pandas as pd
import pytest

from svcnb.client import Client
from svcnb.frames import KEYS
from svcnb.store import RESOURCES, Store, pull
from svcnb.store._catalog import file_seq
from svcnb.store._snapshots import expected_files

from . import readers


@pytest.fixture
def client(sandbox):
    with Client(api_key=sandbox.tokens["admin"], base_url=sandbox.base_url, progress=False) as c:
        yield c


NOW = pd.Timestamp("2100-01-01T00:00:00Z")


def _sorted(resource: str, frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(KEYS[resource])).reset_index(drop=True)


def _first_rule(client: Client) -> tuple[str, dict]:
    for fw in client.firewalls.list():
        rules = client.firewalls.rules(fw["id"])
        if rules:
            return fw["id"], rules[0]
    raise AssertionError("the seeded sandbox has no firewall rules")


def test_load_at_a_time_equals_the_frames_as_pulled_then(sandbox, client, tmp_path):
    store = Store(tmp_path / "store")
    first = store.take(client)
    # the clock is frozen: the same moment as the snapshot
    pulled_first = pull(client, None).frames
    fw_id, rule = _first_rule(client)
    client.firewalls.update_rule(fw_id, rule["id"], port="8443", description="moved")
    sandbox.control.advance(2 * 86400)
    store.take(client)
    pulled_second = pull(client, None).frames

    t1, t2 = store.snapshots()["server_time"]
    assert t2 - t1 == pd.Timedelta(days=2)
    for resource in RESOURCES:
        at_first = store.load(resource, at=t1 + pd.Timedelta(hours=1))
        pd.testing.assert_frame_equal(at_first, _sorted(resource, pulled_first[resource]))
        pd.testing.assert_frame_equal(
            store.load(resource), _sorted(resource, pulled_second[resource])
        )
    assert store.snapshots()["snapshot_id"].iloc[0] == first


def test_diff_finds_a_rule_edited_through_the_sandbox(sandbox, client, tmp_path):
    store = Store(tmp_path / "store")
    before = store.take(client)
    fw_id, rule = _first_rule(client)
    new_port = "2222" if rule["port"] != "2222" else "2223"
    client.firewalls.update_rule(fw_id, rule["id"], port=new_port)
    sandbox.control.advance(60)
    after = store.take(client)

    d = store.diff("firewall_rules", before, after)
    port = d[(d["id"] == rule["id"]) & (d["column"] == "port")]
    assert port[["change", "before", "after"]].values.tolist() == [
        ["changed", rule["port"], new_port]
    ]
    assert set(d["id"]) == {rule["id"]}  # nothing else changed
    assert set(d["column"]) <= {"port", "updated_at"}


def test_take_refreshes_only_vms_whose_updated_at_moved(sandbox, client, tmp_path):
    store = Store(tmp_path / "store")
    store.take(client)
    vms = client.vms.list()
    sandbox.control.vm_action(vms[0]["id"], "touch")
    start = client.stats["requests"]
    Store(tmp_path / "store").take(client)  # a new Store: the previous VMs come from disk
    used = client.stats["requests"] - start
    full = len(vms)
    # one detail read instead of one per VM; the list pages and other resources are the same
    assert used <= start - full + 1 + 2
    latest = store.load("vms").set_index("id")
    assert latest.loc[vms[0]["id"], "name"] == client.vms.get(vms[0]["id"])["name"]
    assert len(store.load("vm_ssh_keys")) == len(
        store.load("vm_ssh_keys", at=store.snapshots()["server_time"].iloc[0])
    )


def test_build_history_takes_one_snapshot_per_step(sandbox, client, tmp_path):
    store = Store(tmp_path / "store")
    ids = store.build_history(client, days=3, advance=sandbox.control.advance, every="1D")
    snaps = store.snapshots()
    assert snaps["snapshot_id"].tolist() == ids and len(ids) == 4
    assert snaps["server_time"].diff().dropna().tolist() == [pd.Timedelta(days=1)] * 3
    usage = store.history("vms", ["bandwidth_used_bytes"])
    per_day = usage.groupby("snapshot_id")["bandwidth_used_bytes"].sum()
    assert per_day.is_monotonic_increasing  # usage only grows within a billing period


KILLED_TAKE = textwrap.dedent(
    """
    import os, sys, time
    from svcnb.client import Client
    from svcnb.store import Store
    from svcnb.store import Location

    store_path, marker = sys.argv[1], sys.argv[2]
    real_write = Location.write_parquet

    def write_then_stall(self, path, table, **options):
        size = real_write(self, path, table, **options)
        if "firewall_rules" in path:  # some files of the snapshot are written: kill me now
            open(marker, "w").close()
            time.sleep(120)
        return size

    Location.write_parquet = write_then_stall
    client = Client(os.environ["SVC_API_KEY"], os.environ["SVC_BASE_URL"], progress=False)
    Store(store_path).take(client)
    """
)


def test_a_take_killed_mid_write_leaves_earlier_snapshots_readable(sandbox, client, tmp_path):
    store = Store(tmp_path / "store")
    store.take(client)
    fw_id, rule = _first_rule(client)
    client.firewalls.update_rule(fw_id, rule["id"], port="9000")
    sandbox.control.advance(86400)
    store.take(client)
    before = {r: store.load(r) for r in RESOURCES}
    ids = store.snapshots()["snapshot_id"].tolist()

    client.firewalls.update_rule(fw_id, rule["id"], port="9001")
    for vm in client.vms.list()[:3]:
        sandbox.control.vm_action(vm["id"], "touch")
    sandbox.control.advance(86400)
    script = tmp_path / "killed_take.py"
    script.write_text(KILLED_TAKE)
    marker = tmp_path / "written"
    env = {**os.environ, "SVC_API_KEY": sandbox.tokens["admin"], "SVC_BASE_URL": sandbox.base_url}
    child = subprocess.Popen([sys.executable, str(script), str(store.path), str(marker)], env=env)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, "the take ended before it wrote anything"
            assert time.monotonic() < deadline, "the take never started writing"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    reader = Store(store.path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is skipped: the killed snapshot never existed
        assert reader.snapshots()["snapshot_id"].tolist() == ids
        for resource in RESOURCES:
            pd.testing.assert_frame_equal(reader.load(resource), before[resource])
    # a raw read of the Delta tables sees no half snapshot either
    assert sorted(readers.polars_as_of(str(store.path), "vms", NOW)["id"]) == sorted(
        before["vms"]["id"]
    )

    # the next take cleans up after the killed one and publishes normally
    after = reader.take(client)
    assert reader.snapshots()["snapshot_id"].tolist() == [*ids, after]
    rules = reader.load("firewall_rules").set_index("id")
    assert rules.loc[rule["id"], "port"] == "9001"
    # every data file is one a snapshot uses, but for the killed take's: no take deletes files
    # it did not write that no snapshot names (they could be those of a snapshot whose commit
    # was lost)
    named = {n for e in reader._entries() for part in e["parts"].values() for n in part[2:]}
    for resource in RESOURCES:
        files = {p.name for p in (reader.path / resource).glob("*.parquet")}
        leftover = files - _used(reader, resource)
        assert {file_seq(name) for name in leftover} <= {len(ids) + 1}, resource
        assert not leftover & named, resource
    raw = readers.polars_as_of(str(store.path), "vms", NOW)
    assert sorted(raw["id"]) == sorted(reader.load("vms")["id"])


def _used(store: Store, resource: str) -> set[str]:
    entries = store._entries()
    return expected_files(entries, resource) | expected_files(entries[:-1], resource)


def test_no_token_or_webhook_secret_is_written_into_the_store(sandbox, client, tmp_path):
    hook = client.webhooks.create("https://hooks.example.test/svcnb", ["vm.stopped"], "ops")
    secret = hook["secret"]
    assert secret
    store = Store(tmp_path / "store")
    store.take(client)
    sandbox.control.advance(3600)
    store.take(client)
    store.journal.append(
        {"firewall_id": "f", "rule_id": "r", "before": {}, "after": {}, "outcome": "ok"}
    )
    needles = [secret, *sandbox.tokens.values()]
    files = [p for p in store.path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    for path in files:
        data = path.read_bytes()
        for needle in needles:
            assert needle.encode() not in data, f"{path} holds a secret"
        assert b"svc_" not in data, f"{path} holds something token-like"
    assert "secret" not in store.load("webhooks").columns


def test_cli_snapshot_and_snapshots(sandbox, tmp_path, monkeypatch, capsys):
    from svcnb.cli import main

    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["read"])
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    path = tmp_path / "store"
    assert main(["snapshot", "--store", str(path)]) == 0  # not --quiet: its whole report
    out = capsys.readouterr().out
    snapshot_id = Store(path).snapshots()["snapshot_id"].iloc[0]
    assert snapshot_id in out and "vms" in out
    assert main(["snapshots", "--store", str(path)]) == 0
    listing = capsys.readouterr().out
    assert snapshot_id in listing and "1 snapshot(s)" in listing
    assert sandbox.tokens["read"] not in out + listing
