"""The store on disk, with frames built from inline records (no server)."""

from __future__ import annotations

import copy
import json
import threading
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _fuzz import fuzz
from deltalake import DeltaTable
from frames._samples import account, rule, vm
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from svcnb import frames
from svcnb.frames import KEYS, SCHEMAS
from svcnb.store import RESOURCES, MissingResourceError, SnapshotWarning, Store, StoreError

DAY = pd.Timedelta(days=1)
T0 = pd.Timestamp("2026-11-01T00:00:00Z")


def frames_of(records: dict) -> dict[str, pd.DataFrame]:
    vms = records["vms"]
    out = {
        "vms": frames.vms(vms),
        "vm_ssh_keys": frames.vm_ssh_keys(vms),
        "vm_firewalls": frames.vm_firewalls(vms),
        "vm_private_networks": frames.vm_private_networks(vms),
    }
    for name in ("firewalls", "firewall_rules", "networks", "attachments", "wallet", "webhooks"):
        out[name] = getattr(frames, name)(records[name])
    out["deliveries"] = frames.deliveries(records["deliveries"])
    return out


def sorted_frame(resource: str, frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(KEYS[resource])).reset_index(drop=True)


def evolve(records: dict, day: int) -> dict:
    """The account one day later: a rule edited, a VM gone, a VM added, one VM's usage grown."""
    records = copy.deepcopy(records)
    records["firewall_rules"][day % 4]["port"] = f"{8000 + day}"
    records["vms"].pop(0)
    records["vms"].append(vm(100 + day))
    records["vms"][1]["bandwidthUsedBytes"] += 10**9
    records["wallet"][0]["balance"] = f"{150 - day}.00"
    return records


def test_load_at_each_time_equals_the_frames_written_then(history):
    store, ids, written = history
    for day, pulled in enumerate(written):
        for resource in RESOURCES:
            at = T0 + day * DAY + pd.Timedelta(hours=6)
            got = store.load(resource, at=at)
            pd.testing.assert_frame_equal(got, sorted_frame(resource, pulled[resource]))
    pd.testing.assert_frame_equal(store.load("vms"), sorted_frame("vms", written[-1]["vms"]))


def test_load_before_the_first_snapshot_or_in_an_empty_store_says_what_to_do(history, tmp_path):
    store, _, _ = history
    with pytest.raises(StoreError, match="first was taken at 2026-11-01"):
        store.load("vms", at="2026-10-01")
    with pytest.raises(StoreError, match="svcnb snapshot"):
        Store(tmp_path / "empty").load("vms")
    with pytest.raises(ValueError, match="choose one of"):
        store.load("vm")


def test_snapshots_lists_ids_times_and_row_counts(history):
    store, ids, written = history
    snaps = store.snapshots()
    assert snaps["snapshot_id"].tolist() == ids
    assert snaps["server_time"].tolist() == [T0 + d * DAY for d in range(5)]
    assert str(snaps["local_time"].dtype) == "datetime64[ns, UTC]"
    assert snaps["vms_rows"].tolist() == [len(w["vms"]) for w in written]
    assert snaps["firewall_rules_rows"].tolist() == [4] * 5


def versions(store: Store, resource: str) -> pa.Table:
    """Every row version the resource's Delta table holds, read by deltalake alone."""
    return DeltaTable(str(store.path / resource)).to_pyarrow_table()


def current_files(store: Store, resource: str) -> tuple[Path, Path | None]:
    """The base and changes file of the resource's latest segment."""
    part = store._entries()[-1]["parts"][resource]
    folder = store.path / resource
    return folder / part[2], folder / part[3] if part[3] else None


def test_unchanged_rows_are_not_written_again(history):
    store, ids, _ = history
    table = versions(store, "vms")
    per_snapshot = table.group_by("_snapshot").aggregate([("id", "count")]).to_pydict()
    counts = dict(zip(per_snapshot["_snapshot"], per_snapshot["id_count"], strict=True))
    # 8 VMs once; then each day one added, one usage change, one tombstone for the removed VM
    assert counts == {1: 8, 2: 3, 3: 3, 4: 3, 5: 3}
    assert versions(store, "firewall_rules").num_rows == 4 + 4  # one edited rule per day
    # a changes file replaced by a later one is gone once no reader can still need it
    names = sorted(p.name for p in (store.path / "vms").glob("*.parquet"))
    assert len(names) <= 3, names


def test_diff_names_added_removed_and_changed_values(history):
    store, ids, _ = history
    d = store.diff("firewall_rules", ids[0], ids[1])
    assert d[["id", "change", "column", "before", "after"]].values.tolist() == [
        ["rule-1", "changed", "port", "22", "8001"]
    ]
    vms = store.diff("vms", ids[0], ids[1])
    assert vms.loc[vms["change"] == "added", "id"].tolist() == ["vm-00101"]
    assert vms.loc[vms["change"] == "removed", "id"].tolist() == ["vm-00000"]
    changed = vms[vms["change"] == "changed"]
    assert changed[["id", "column"]].values.tolist() == [["vm-00002", "bandwidth_used_bytes"]]
    assert changed["after"].iloc[0] - changed["before"].iloc[0] == 10**9
    by_time = store.diff("wallet", "2026-11-01T12:00Z", "2026-11-04T12:00Z")
    assert by_time.set_index("column").loc["balance_amount", ["before", "after"]].tolist() == [
        150.0,
        147.0,
    ]
    assert store.diff("vms", ids[2], ids[2]).empty


def test_history_is_one_long_frame_across_snapshots(history):
    store, ids, written = history
    h = store.history("wallet", ["balance_amount"])
    assert list(h.columns) == ["snapshot_id", "server_time", "id", "balance_amount"]
    assert h["balance_amount"].tolist() == [150.0, 149.0, 148.0, 147.0, 146.0]
    assert h["snapshot_id"].tolist() == ids
    window = store.history("vms", ["bandwidth_used_bytes"], since=T0 + DAY, until=T0 + 2 * DAY)
    assert window["snapshot_id"].unique().tolist() == ids[1:3]
    assert len(window) == len(written[1]["vms"]) + len(written[2]["vms"])
    with pytest.raises(ValueError, match="no columns"):
        store.history("vms", ["ram"])


def test_deltalake_alone_rebuilds_the_state_at_every_snapshot(history):
    store, _, written = history
    # what a user without svcnb does: versions valid then, the last per key, tombstones dropped
    table = versions(store, "vms").to_pandas()
    for day, pulled in enumerate(written):
        at = T0 + day * DAY
        state = (
            table[table["_valid_from"] <= at]
            .sort_values("_snapshot")
            .groupby("id", as_index=False)
            .last()
        )
        state = state[~state["_removed"]].sort_values("id")
        expected = sorted_frame("vms", pulled["vms"])
        assert state["id"].tolist() == expected["id"].tolist()
        assert state["bandwidth_used_bytes"].tolist() == expected["bandwidth_used_bytes"].tolist()


def test_writing_rejects_frames_it_cannot_keep(tmp_path):
    store = Store(tmp_path)
    with pytest.raises(ValueError, match="unknown resources"):
        store.write({"vm": frames.vms([vm(1)])}, server_time=T0)
    with pytest.raises(ValueError, match="twice"):
        store.write({"vms": frames.vms([vm(1), vm(1)])}, server_time=T0, partial=True)
    with pytest.raises(ValueError, match="lacks columns"):
        store.write({"vms": frames.vms([vm(1)]).drop(columns="name")}, server_time=T0, partial=True)
    assert store.snapshots().empty  # nothing was published


def test_store_path_from_argument_then_environment_then_default(monkeypatch, tmp_path):
    assert Store(tmp_path).path == tmp_path
    monkeypatch.setenv("SVCNB_STORE", str(tmp_path / "env"))
    assert Store().path == tmp_path / "env"
    monkeypatch.delenv("SVCNB_STORE")
    assert Store().path == Path("data/store")


def _damage(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_a_corrupt_file_skips_only_the_snapshots_that_need_it(history):
    store, ids, written = history
    _, changes = current_files(store, "firewall_rules")
    _damage(changes)
    with pytest.warns(SnapshotWarning, match="skipping snapshot"):
        listed = store.snapshots()["snapshot_id"].tolist()
    assert listed == ids[:1]  # the other four need the damaged file
    with pytest.warns(SnapshotWarning):
        fallback = store.load("firewall_rules")
    expected = sorted_frame("firewall_rules", written[0]["firewall_rules"])
    pd.testing.assert_frame_equal(fallback, expected)
    # resources that do not need the file still read at every time, without warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pd.testing.assert_frame_equal(store.load("vms"), sorted_frame("vms", written[-1]["vms"]))
    # the next snapshot (another process: nothing in memory) starts a fresh segment
    records = evolve(account(8), 9)
    with pytest.warns(SnapshotWarning, match="starting a new segment"):
        new_id = Store(store.path).write(frames_of(records), server_time=T0 + 9 * DAY)
    expected = sorted_frame("firewall_rules", frames_of(records)["firewall_rules"])
    pd.testing.assert_frame_equal(store.load("firewall_rules"), expected)
    assert store.diff("firewall_rules", ids[0], new_id)["after"].tolist() == ["8009"]


def test_a_truncated_changes_file_is_detected_by_its_recorded_counts(history):
    store, ids, written = history
    _, path = current_files(store, "vms")
    table = pq.read_table(path)
    pq.write_table(table.slice(0, 4), path)  # a valid file that lost rows
    with pytest.warns(SnapshotWarning, match="catalog recorded"):
        got = store.load("vms")
    pd.testing.assert_frame_equal(got, sorted_frame("vms", written[1]["vms"]))


def test_a_damaged_catalog_is_reported_with_what_to_do(history):
    store, _, _ = history
    catalog = DeltaTable(str(store.path / "_snapshots"))
    (name,) = catalog.get_add_actions(flatten=True).column("path").to_pylist()
    _damage(store.path / "_snapshots" / name)
    with pytest.raises(StoreError, match="RESTORE"):
        Store(store.path).snapshots()


def test_two_writers_never_lose_or_mix_snapshots(tmp_path):
    path = tmp_path / "store"
    errors = []

    def writer(offset: int) -> None:
        try:
            store = Store(path)  # each thread its own Store, as two processes would have
            for i in range(6):
                records = account(5)
                records["vms"].append(vm(offset + i))
                # the two clocks interleave: each writer's times are its own
                when = T0 + (offset + i) * pd.Timedelta("1s")
                store.write(frames_of(records), server_time=when, allow_older=True)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k * 100,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    snaps = Store(path).snapshots()
    assert snaps["seq"].tolist() == list(range(1, 13))
    for snapshot_id in snaps["snapshot_id"]:
        vms = Store(path)._frame_of("vms", snapshot_id)
        extra = set(vms["id"]) - {f"vm-{i:05d}" for i in range(5)}
        assert len(extra) == 1, snapshot_id  # exactly the VM that writer added


def test_audit_log_is_durable_and_keeps_nothing_secret(tmp_path):
    store = Store(tmp_path)
    token = "svc_live_abcdefghijklmnop1234"
    store.journal.append(
        {
            "firewall_id": "fw-1",
            "rule_id": "rule-1",
            "before": {"port": "22"},
            "after": {"port": "2222", "secret": "whsec_x"},
            "outcome": "ok",
            "note": f"edited with {token}",
        }
    )
    store.journal.append(
        {"firewall_id": "fw-1", "rule_id": "rule-2", "before": {}, "after": {}, "outcome": "502"}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = Store(tmp_path).journal.log()  # another process: read from disk
    assert list(log.columns[:6]) == ["time", "firewall_id", "rule_id", "before", "after", "outcome"]
    assert log["rule_id"].tolist() == ["rule-1", "rule-2"]
    assert log["after"].iloc[0] == {"port": "2222"}
    assert log["note"].iloc[0] == "edited with svc_…1234"
    assert str(log["time"].dtype) == "datetime64[ns, UTC]"
    # what is on disk, as any Delta reader sees it
    text = str(DeltaTable(str(tmp_path / "_journal" / "rule_edits")).to_pyarrow_table().to_pylist())
    assert "rule-2" in text and token not in text and "whsec_x" not in text
    with pytest.raises(ValueError, match="lacks"):
        store.journal.append({"rule_id": "r"})


def test_events_reads_the_webhook_event_log_in_the_store(tmp_path):
    from svcnb.store import EventLog

    log = EventLog(tmp_path)
    log.append(
        {
            "received_at": "2026-11-01T00:00:05Z",
            "delivery_id": "dlv-1",
            "event_id": "evt-1",
            "type": "vm.stopped",
            "event_header": "vm.stopped",
            "created_at": "2026-11-01T00:00:00Z",
            "age_seconds": 5.0,
            "possible_replay": False,
            "data": {"vmId": "vm-1"},
        }
    )
    events = Store(tmp_path).events()
    assert events["event_id"].tolist() == ["evt-1"]
    assert events["type"].iloc[0] == "vm.stopped"


def test_the_catalog_is_a_delta_table_listing_each_snapshot(history):
    store, ids, _ = history
    catalog = DeltaTable(str(store.path / "_snapshots")).to_pandas().sort_values("snapshot")
    assert catalog["snapshot_id"].tolist() == ids
    assert catalog["snapshot"].tolist() == [1, 2, 3, 4, 5]
    assert catalog["account"].tolist() == ["wallet-1"] * 5
    assert catalog["missing"].tolist() == [""] * 5
    assert set(json.loads(catalog["entry"].iloc[0])["parts"]) == set(SCHEMAS)


def test_an_empty_frame_is_stored_as_empty_but_a_resource_left_out_never_is(tmp_path):
    store = Store(tmp_path)
    rules = {"firewall_rules": frames.firewall_rules([rule(1)])}
    with pytest.raises(ValueError, match=r"frames lacks \['vms'.*partial=True"):
        store.write(rules, server_time=T0)
    assert store.snapshots().empty
    store.write({**rules, "vms": frames.empty("vms")}, server_time=T0, partial=True)
    assert store.load("vms").empty
    assert list(store.load("vms").columns) == list(SCHEMAS["vms"])
    assert store.load("firewall_rules")["source_ips"].iloc[0] == ["10.0.0.0/8"]
    with pytest.raises(MissingResourceError, match=r"left out of Store.write \(partial=True\)"):
        store.load("wallet")


_EDITS = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "rename", "usage", "price", "nothing"]),
        st.integers(min_value=0, max_value=30),
    ),
    max_size=6,
)


@fuzz(20, HealthCheck.function_scoped_fixture)
@given(days=st.lists(_EDITS, min_size=1, max_size=6), share=st.sampled_from([0.0, 0.35, 5.0]))
def test_any_sequence_of_edits_loads_back_exactly(tmp_path_factory, monkeypatch, days, share):
    # share 0 starts a segment at every change, 5 never does: both ends of the layout
    monkeypatch.setattr("svcnb.store._snapshots.SEGMENT_SHARE", share)
    monkeypatch.setattr("svcnb.store._snapshots.SEGMENT_MIN_CHANGES", 0)
    store = Store(tmp_path_factory.mktemp("store"))
    fleet = {i: vm(i) for i in range(4)}
    written = []
    for day, edits in enumerate(days):
        for action, i in edits:
            if action == "add":
                fleet.setdefault(i, vm(i))
            elif action == "remove":
                fleet.pop(i, None)
            elif i in fleet and action == "rename":
                fleet[i]["name"] = f"renamed-{day}"
            elif i in fleet and action == "usage":
                fleet[i]["bandwidthUsedBytes"] += 1
            elif i in fleet and action == "price":
                fleet[i]["billing"] = {**fleet[i]["billing"], "priceMonthly": {"amount": day}}
        records = copy.deepcopy(list(fleet.values()))
        pulled = {"vms": frames.vms(records), "vm_ssh_keys": frames.vm_ssh_keys(records)}
        store.write(pulled, server_time=T0 + day * DAY, partial=True)
        written.append(pulled)
    for day, pulled in enumerate(written):
        for resource, frame in pulled.items():
            got = store.load(resource, at=T0 + day * DAY)
            pd.testing.assert_frame_equal(got, sorted_frame(resource, frame))


def test_versions_up_to_a_snapshot_are_found_in_or_out_of_write_order():
    from svcnb.store._segments import versions_upto

    in_order = pa.table({"_snapshot": pa.array([1, 1, 2, 3]), "id": ["a", "b", "a", "c"]})
    assert versions_upto(in_order, 2).column("id").to_pylist() == ["a", "b", "a"]
    assert versions_upto(in_order, 0).num_rows == 0
    assert versions_upto(in_order, 9).num_rows == 4
    # a file rewritten by other tools may hold versions in any order: none may be lost or added
    shuffled = pa.table({"_snapshot": pa.array([3, 1, 2, 1]), "id": ["c", "a", "a", "b"]})
    assert versions_upto(shuffled, 2).column("id").to_pylist() == ["a", "a", "b"]
    assert versions_upto(shuffled, 1).column("id").to_pylist() == ["a", "b"]
