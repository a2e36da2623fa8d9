"""The audit log kept before the journal is migrated into the journal, record for record.

The old store is written as svcnb wrote it before the journal: one Delta table ``_audit``,
one commit per record, columns time, kind, account, firewall_id, rule_id, outcome, record_id and
record (the whole record as JSON), with the records each code path wrote (the rule editor, a
rule edit with extra fields, an acceptance and its revocation, a stop plan, an alert claimed,
fired and cleared), and on a local store a JSON-lines ``audit.jsonl`` older still.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from svcnb.alerts import active
from svcnb.store import (
    AcceptanceRevoked,
    AlertRecord,
    FindingAccepted,
    RuleEdit,
    StopPlanRecord,
    Store,
    StoreError,
)
from svcnb.store._old_audit import SCHEMA, audit_frame

UNTIL = "2030-01-31T12:00:00+00:00"
CLAIM_END = "2026-10-05T10:15:30.123456+00:00"
PLAN = {
    "kind": "svcnb_stop_plan",
    "version": 1,
    "server": "http://127.0.0.1:1/api/v1",
    "built_at": "2026-10-04T09:00:00+00:00",
    "filter": {"tags": ["env=dev"]},
    "limit": 5,
    "include_protected": [],
    "vms": [{"vm_id": "vm-1", "name": "dev-1", "is_protected": False, "decision": "stop"}],
    "plan_id": "p-1a2b",
}
# each record as the code of its kind wrote it (scrubbed, time as UTC ISO 8601 text)
OLD = [
    {  # the rule editor's save
        "time": "2026-10-01T08:00:00+00:00",
        "firewall_id": "fw-1",
        "rule_id": "r-1",
        "before": {"port": "22"},
        "after": {"port": "2222"},
        "outcome": "ok",
        "detail": "saved and read back",
    },
    {  # store.journal.append (a dict) with fields of its own
        "time": "2026-10-01T09:00:00+00:00",
        "firewall_id": "fw-1",
        "rule_id": "r-2",
        "before": {},
        "after": {},
        "outcome": "502",
        "writer": "script",
        "note": "edited with svc_…1234",
        "nested": {"deeper": [1, "two", {"three": None}]},
    },
    {  # store.journal.accept_finding
        "time": "2026-10-02T00:00:00+00:00",
        "kind": "finding_acceptance",
        "outcome": "finding accepted",
        "finding_id": "f-9",
        "reason": "VPN appliance, vendor fix due in March",
        "owner": "sam@example.com",
        "until": UNTIL,
        "account": "default",
        "wallet": "w-1",
        "firewall_id": "fw-1",
        "rule_id": "r-1",
        "before": "open",
        "after": "accepted until 2030-01-31 12:00 UTC by sam@example.com",
    },
    {  # store.journal.revoke_acceptance
        "time": "2026-10-03T00:00:00+00:00",
        "kind": "finding_acceptance",
        "outcome": "acceptance revoked",
        "finding_id": "f-9",
        "reason": "the vendor fix shipped",
        "owner": "lee@example.com",
        "account": "default",
        "wallet": "w-1",
        "firewall_id": "fw-1",
        "rule_id": "r-1",
        "before": "accepted",
        "after": "acceptance revoked by lee@example.com",
    },
    {  # StopRun.record
        "time": "2026-10-04T10:00:00+00:00",
        "kind": "stop_plan",
        "stage": "applied",
        "firewall_id": None,
        "rule_id": None,
        "outcome": "stop plan applied: 1 stopped",
        "plan_id": "p-1a2b",
        "approver": "sam",
        "plan": PLAN,
        "vms": [
            {
                "vm_id": "vm-1",
                "name": "dev-1",
                "decision": "stop",
                "outcome": "stopped",
                "reason": "stopped",
                "action_id": "a-1",
                "status": "stopped",
            }
        ],
    },
    *[
        {  # svcnb check: a claim, then the fire; a clear of another alert
            "time": "2026-10-05T10:00:00+00:00",
            "kind": "alert",
            "account": "default",
            "outcome": outcome,
            "alert_key": key,
            "alert_rule": "bandwidth_days",
            "snapshot_id": "s-5",
            "message": f"{key} uses its pack in 2 days",
            **({"claimed_until": CLAIM_END} if outcome == "alert claimed" else {}),
            "firewall_id": None,
            "rule_id": None,
            "before": None,
            "after": None,
        }
        for outcome, key in (
            ("alert claimed", "bandwidth:vm-1"),
            ("alert fired", "bandwidth:vm-1"),
            ("alert cleared", "bandwidth:vm-2"),
        )
    ],
]
KIND_OF = [RuleEdit, RuleEdit, FindingAccepted, AcceptanceRevoked, StopPlanRecord] + [
    AlertRecord
] * 3
JSONL = [  # a local store's log before the table: a rule edit and an alert of then
    {"time": "2026-09-01T00:00:00+00:00", "firewall_id": "fw-0", "rule_id": "r-0", "before": {},
     "after": {}, "outcome": "ok"},
    {"time": "2026-09-02T00:00:00+00:00", "kind": "alert", "outcome": "alert fired",
     "alert_key": "runway", "alert_rule": "runway_days", "snapshot_id": "s-0", "message": "m",
     "firewall_id": None, "rule_id": None, "before": None, "after": None},
]  # fmt: skip


def write_old(url: str, records: list[dict], options: dict[str, str] | None = None) -> None:
    """The ``_audit`` table as svcnb wrote it before the journal: a commit per record."""
    for i, record in enumerate(records):
        row = {
            "time": [pd.Timestamp(record["time"])],
            "kind": [record.get("kind")],
            "account": [record.get("account")],
            "firewall_id": [record.get("firewall_id")],
            "rule_id": [record.get("rule_id")],
            "outcome": [record.get("outcome")],
            "record_id": [f"old{i:04d}"],
            "record": [json.dumps(record, ensure_ascii=False, sort_keys=True)],
        }
        write_deltalake(
            f"{url}/_audit", pa.table(row, schema=SCHEMA), mode="append", storage_options=options
        )


def same(want: dict, got: dict) -> None:
    """Every field of ``want`` and ``got`` equal (absent and None alike; times as instants)."""
    for key in set(want) | set(got):
        a, b = want.get(key), got.get(key)
        if key in ("time", "until", "claimed_until") and a is not None:
            assert pd.Timestamp(a) == pd.Timestamp(b), (key, a, b)
        else:
            assert a == b, (key, a, b)


# S3 reads and writes go through the object store to the same code as on disk, whose twin of
# this test runs in `make test`; on S3 it runs in `make test-all` (the S3 tests `make test` keeps:
# concurrent writers, a killed writer, a round trip, damaged commits)
@pytest.mark.parametrize("where", ["local", pytest.param("s3", marks=pytest.mark.slow)])
def test_every_record_of_the_old_audit_log_lands_in_its_kind_field_for_field(
    where, tmp_path, request
):
    url = str(tmp_path / "s") if where == "local" else request.getfixturevalue("s3_url")
    old = list(OLD)
    kinds = list(KIND_OF)
    if where == "local":
        Path(url).mkdir()
        lines = "".join(json.dumps(r) + "\n" for r in JSONL)
        (Path(url) / "audit.jsonl").write_text(lines)
        old, kinds = JSONL + old, [RuleEdit, AlertRecord] + kinds
    write_old(url, OLD)
    want = audit_frame(old)

    store = Store(url)
    # before anything is written the journal reads the old records as they will be copied
    pd.testing.assert_frame_equal(store.journal.log(), want)
    assert store.journal.migrate() == len(old)

    again = Store(url)  # another process: only what is stored
    got = again.journal.records()
    assert [type(r) for r in got] == kinds
    for record, written in zip(old, got, strict=True):
        same(record, written.as_audit())
    pd.testing.assert_frame_equal(again.journal.log(), want)
    # each kind in its own table, with its own columns, readable without svcnb
    for kind in set(kinds):
        table = DeltaTable(f"{url}/_journal/{kind.KIND}").to_pyarrow_table()
        assert set(kind.COLUMNS) <= set(table.column_names)
        assert table.num_rows == kinds.count(kind)
    alerts = again.journal.read(AlertRecord)
    assert str(alerts["claimed_until"].dtype) == "datetime64[ns, UTC]"
    claimed = alerts[alerts["outcome"] == "alert claimed"]
    assert claimed["claimed_until"].tolist() == [pd.Timestamp(CLAIM_END)]
    # the readers of each kind see the copied records as they saw the old ones
    register = again.journal.acceptances()
    assert register["finding_id"].tolist() == ["f-9"]
    assert register["revoked_by"].tolist() == ["lee@example.com"]
    assert register["until"].tolist() == [pd.Timestamp(UNTIL)]
    standing = ["runway", "bandwidth:vm-1"] if where == "local" else ["bandwidth:vm-1"]
    assert active(again)["alert_key"].tolist() == standing
    # copied once: a later write migrates nothing again, and the old table is left as it was
    versions = {k: again.journal.read(k).attrs["version"] for k in set(kinds)}
    again.journal.append({"firewall_id": "fw-1", "rule_id": "r-3", "outcome": "ok"})
    assert {k: Store(url).journal.read(k).attrs["version"] for k in set(kinds)} == {
        **versions,
        RuleEdit: versions[RuleEdit] + 1,
    }
    assert len(Store(url).journal.log()) == len(old) + 1
    assert DeltaTable(f"{url}/_audit").to_pyarrow_table().num_rows == len(OLD)


def test_two_stores_migrating_at_once_copy_each_record_once(tmp_path):
    url = str(tmp_path / "s")
    write_old(url, OLD)
    stores = [Store(url) for _ in range(4)]
    go = threading.Barrier(len(stores), timeout=60)
    errors: list[BaseException] = []

    def migrate(store: Store) -> None:
        go.wait()
        try:
            store.journal.migrate()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=migrate, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    got = Store(url).journal.records()
    assert len(got) == len(OLD)
    for record, written in zip(OLD, got, strict=True):
        same(record, written.as_audit())


def test_a_record_of_a_kind_the_journal_does_not_keep_is_refused_by_name(tmp_path):
    url = str(tmp_path / "s")
    note = {"time": "2026-10-06T00:00:00+00:00", "kind": "note", "firewall_id": None,
            "rule_id": None, "outcome": "remember the milk"}  # fmt: skip
    write_old(url, [*OLD[:2], note])
    store = Store(url)
    with pytest.raises(StoreError, match="old0002 .*kind 'note'"):
        store.journal.migrate()
    with pytest.raises(StoreError, match="kind 'note'"):
        store.journal.log()  # never shown as if it were not there
    with pytest.raises(StoreError, match="kind 'note'"):
        store.journal.append({"firewall_id": "fw-1", "rule_id": "r-3", "outcome": "ok"})
    assert not (tmp_path / "s" / "_journal" / "rule_edits").exists()  # nothing copied
    with pytest.raises(StoreError, match="kind 'note'"):
        Store(tmp_path / "new").journal.append(note)  # nor taken from a caller
    assert not (tmp_path / "new" / "_journal").exists()


TOKEN = "svc_" + "Zq8Rt5Wm2Kp9Xv4Nb7Ly3Hd6Gf1Js0Ac"  # the form of an API token: masked on write


def _stored_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((root / "_journal").rglob("*")) if p.is_file())


@pytest.mark.parametrize("old_log", ["audit.jsonl", "_audit"])
def test_an_old_record_holding_a_token_is_copied_scrubbed_and_the_journal_written_after(
    old_log, tmp_path
):
    url = tmp_path / "s"
    url.mkdir()
    leaky = {
        **OLD[1],
        "note": f"edited with {TOKEN}",  # masked
        "token": TOKEN,  # a secret-named key: dropped
        "after": {"header": f"Bearer {TOKEN}", "api_key": TOKEN},
        TOKEN: "a token as a key",
    }
    records = [OLD[0], leaky, OLD[5]]
    if old_log == "audit.jsonl":
        (url / "audit.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        write_old(str(url), records)
    store = Store(url)
    assert store.journal.migrate() == 3
    store.journal.append({"firewall_id": "fw-1", "rule_id": "r-3", "outcome": "ok"})

    got = [r.as_audit() for r in Store(url).journal.records()]
    assert len(got) == 4
    masked = "svc_…" + TOKEN[-4:]
    same(
        {**OLD[1], "note": f"edited with {masked}", "after": {"header": f"Bearer {masked}"},
         masked: "a token as a key"},
        got[1],
    )  # fmt: skip
    same(OLD[0], got[0])
    same(OLD[5], got[2])
    assert TOKEN.encode() not in _stored_bytes(url)
    assert TOKEN[4:].encode() not in _stored_bytes(url)


GOOD_LINES = [JSONL[0], {**JSONL[0], "rule_id": "r-after"}]


@pytest.mark.parametrize("line", ["[]", "3", "null", '"text"', '[{"outcome": "ok"}]'])
def test_a_line_that_is_json_but_not_a_record_is_refused_by_its_number(line, tmp_path):
    url = tmp_path / "s"
    url.mkdir()
    text = f"{json.dumps(GOOD_LINES[0])}\n{line}\n{json.dumps(GOOD_LINES[1])}\n"
    (url / "audit.jsonl").write_text(text)
    store = Store(url)
    edit = {"firewall_id": "fw-1", "rule_id": "r-new", "outcome": "ok"}
    told = r"audit\.jsonl:2 .*not a record.*correct line 2 of .*audit\.jsonl, or empty it"
    with pytest.raises(StoreError, match=told) as refused:
        store.journal.migrate()
    assert "\n" not in str(refused.value)
    # nothing copied, the old log as it was; every write and read says the same, no traceback
    assert not (url / "_journal").exists()
    assert (url / "audit.jsonl").read_text() == text
    with pytest.raises(StoreError, match=told):
        store.journal.append(edit)
    with pytest.raises(StoreError, match=told):
        Store(url).journal.log()
    assert not (url / "_journal").exists()

    # emptied as told: the records around it are copied, and the journal written
    (url / "audit.jsonl").write_text(text.replace(f"\n{line}\n", "\n\n"))
    Store(url).journal.append(edit)
    log = Store(url).journal.log()
    assert log["rule_id"].tolist() == ["r-0", "r-after", "r-new"]


def _old_row(url: str, rid: str, text: str) -> None:
    """One more row of the old ``_audit`` table, its record given as text."""
    row: dict[str, list] = {name: [None] for name in SCHEMA.names}
    row |= {"time": [pd.Timestamp("2026-10-09T00:00:00Z")], "record_id": [rid], "record": [text]}
    write_deltalake(f"{url}/_audit", pa.table(row, schema=SCHEMA), mode="append")


def test_a_row_of_the_old_table_that_is_not_a_record_is_refused_by_its_id(tmp_path):
    url = str(tmp_path / "s")
    write_old(url, OLD[:2])
    _old_row(url, "bad0", "[]")
    _old_row(url, "old0009", json.dumps(OLD[5]))
    edit = {"firewall_id": "fw-1", "rule_id": "r-3", "outcome": "ok"}
    with pytest.raises(StoreError, match=r"bad0 .*not a record \(a list\).*delete") as refused:
        Store(url).journal.append(edit)
    assert f"DeltaTable('{url}/_audit').delete(\"record_id = 'bad0'\")" in str(refused.value)
    assert not (tmp_path / "s" / "_journal").exists()
    DeltaTable(f"{url}/_audit").delete("record_id = 'bad0'")  # as the error says
    Store(url).journal.append(edit)
    got = [r.as_audit() for r in Store(url).journal.records()]
    for want, written in zip([*OLD[:2], OLD[5], edit], got, strict=True):
        same({"time": written["time"], **want}, written)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("outcome", 502, 'outcome was 502, is "502"'),
        ("rule_id", True, 'rule_id was true, is "True"'),
        ("time", 1727000000, "time was 1727000000"),
        ("time", "yesterday", "time='yesterday' is not a time"),
    ],
)
def test_a_record_the_journal_would_change_is_refused_before_anything_is_copied(
    field, value, said, tmp_path
):
    url = tmp_path / "s"
    url.mkdir()
    text = f"{json.dumps(GOOD_LINES[0])}\n{json.dumps({**GOOD_LINES[1], field: value})}\n"
    (url / "audit.jsonl").write_text(text)
    with pytest.raises(StoreError, match="audit.jsonl:2 ") as refused:
        Store(url).journal.append({"firewall_id": "fw-1", "rule_id": "r-3", "outcome": "ok"})
    assert said in str(refused.value) and "correct line 2" in str(refused.value)
    assert not (url / "_journal").exists()
    assert (url / "audit.jsonl").read_text() == text
