"""A journal table whose latest Delta commit a power cut tore (cut short, emptied, garbage, or
left with nothing it changes), on disk and on the loopback S3 server: every record committed
before it is still listed, nothing is written on top of it, and once it is moved aside as the
error says, the journal is written again."""

from __future__ import annotations

import uuid
import warnings
from typing import Any

import pytest
from deltalake import DeltaTable

from svcnb.store import (
    AcceptanceRevoked,
    AlertRecord,
    DamagedCommitError,
    FindingAccepted,
    JournalRecord,
    RuleEdit,
    SnapshotWarning,
    StopPlanRecord,
    Store,
)

from .test_store_damaged_commits import DAMAGES, _copy_store, _fs, _latest_commit, _read, _write

KINDS = (RuleEdit, FindingAccepted, AcceptanceRevoked, StopPlanRecord, AlertRecord)


def record(kind: type[JournalRecord], n: int) -> JournalRecord:
    """Record ``n`` of ``kind``: its number in a field every kind lists."""
    fields: dict[type[JournalRecord], dict[str, Any]] = {
        RuleEdit: {"firewall_id": "fw-1", "rule_id": f"r-{n}", "outcome": "ok",
                   "before": {"port": "22"}, "after": {"port": str(2000 + n)}},
        FindingAccepted: {"finding_id": f"f-{n}", "reason": "vendor fix due",
                          "owner": "sam@example.com", "until": "2030-01-31T00:00:00+00:00",
                          "account": "default", "wallet": "w-1"},
        AcceptanceRevoked: {"finding_id": f"f-{n}", "reason": "fixed", "owner": "lee@example.com",
                            "account": "default", "wallet": "w-1"},
        StopPlanRecord: {"stage": "applied", "outcome": "stop plan applied", "plan_id": f"p-{n}",
                         "approver": "sam", "plan": {"vms": [n]}, "vms": []},
        AlertRecord: {"account": "default", "outcome": "alert fired", "alert_key": f"runway-{n}",
                      "alert_rule": "runway_days", "snapshot_id": f"s-{n}", "message": "m"},
    }  # fmt: skip
    return kind(time=f"2026-10-{n + 1:02d}T00:00:00+00:00", **fields[kind])


def listing(url: str) -> list[dict[str, Any]]:
    """Every record of the journal, in the order written, as a fresh Store lists them."""
    return [r.as_audit() for r in Store(url).journal.records()]


_BUILT: dict[str, str] = {}


def journal_store(url: str) -> None:
    """Three records of each kind in the empty store at ``url``, one commit each, the kinds
    taking turns (written once per kind of storage, then copied file by file)."""
    kind = "s3" if url.startswith("s3://") else "disk"
    if kind not in _BUILT:
        template = f"{url.rstrip('/').rpartition('/')[0]}/journal-{uuid.uuid4().hex[:8]}"
        journal = Store(template).journal
        for n in range(3):
            for cls in KINDS:
                journal.append(record(cls, n))
        _BUILT[kind] = template
    _copy_store(_BUILT[kind], url)


@pytest.fixture
def where(request, tmp_path) -> str:
    if request.param == "disk":
        return str(tmp_path / "store")
    return request.getfixturevalue("s3_url")


# `make test`: on disk, every table meets each way a log fails (deltalake refusing the commit,
# or reading it as changing nothing: "no-op") and every damage meets a table (the five tables
# share one reader, and each damage is a file's, not a table's). `make test-all`: every damage
# of every table on disk and on S3 (the same code, through the object store; some 13 s a case).
_REFUSED = [damage for damage in DAMAGES if damage != "no-op"]
_QUICK_ON_DISK = {
    *((kind, _REFUSED[i % len(_REFUSED)]) for i, kind in enumerate(KINDS)),
    *((kind, "no-op") for kind in KINDS),
}
# on S3: make test-all (the journal on S3 is held in make test by test_store_audit's writers)
_QUICK_ON_S3: set[tuple[type, str]] = set()
CASES = [
    pytest.param(
        store,
        kind,
        damage,
        id=f"{store}-{kind.KIND}-{damage}",
        marks=()
        if (kind, damage) in (_QUICK_ON_DISK if store == "disk" else _QUICK_ON_S3)
        else pytest.mark.slow,
    )
    for store in ("disk", "s3")
    for kind in KINDS
    for damage in DAMAGES
]


@pytest.mark.parametrize(("where", "kind", "damage"), CASES, indirect=["where"])
def test_a_torn_latest_commit_of_a_journal_table_keeps_every_earlier_record(where, kind, damage):
    journal_store(where)
    before = listing(where)
    assert len(before) == 3 * len(KINDS)
    table = f"_journal/{kind.KIND}"
    commit = _latest_commit(where, table)
    _write(where, commit, DAMAGES[damage](_read(where, commit)))
    name = commit.rpartition("/")[2]
    # the record the torn commit added is the last of its kind; every other is listed, and the
    # listing says, once, which commit it could not read
    torn = record(kind, 2).scrubbed().as_audit()
    assert before[-len(KINDS) + KINDS.index(kind)] == torn
    with pytest.warns(SnapshotWarning, match=name) as caught:
        during = listing(where)
    assert len([w for w in caught if name in str(w.message)]) == 1
    assert during == [r for r in before if r != torn]

    # nothing is written on top of it, a blind append or a compare-and-set: one line naming the
    # table, the commit and the command that moves it aside
    new = record(kind, 7)
    journal = Store(where).journal
    with pytest.raises(DamagedCommitError) as refused:
        journal.append(new)
    message = str(refused.value)
    assert "\n" not in message
    assert f"the journal's {kind.KIND}" in message and refused.value.table == f"{where}/{table}"
    assert refused.value.path.endswith(commit)
    aside = f"{where}/{table}/{name}.damaged"
    assert f" {refused.value.path} {aside}`" in message
    with pytest.warns(SnapshotWarning, match=name):
        version = journal.read(kind).attrs["version"]
    with pytest.raises(DamagedCommitError, match=name):
        journal.append_if([new], version=version)
    with pytest.warns(SnapshotWarning, match=name):
        assert listing(where) == during  # nothing was written

    # moved aside as the message says: the journal is written again, every record still there
    fs, root = _fs(where)
    fs.move(commit, f"{root}/{table}/{name}.damaged")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert listing(where) == during
        Store(where).journal.append(new)
        after = listing(where)
    assert after == [*during, new.scrubbed().as_audit()]
    # and the table is one any Delta reader opens again
    assert DeltaTable(f"{where}/{table}").to_pyarrow_table().num_rows == 3


def test_a_damaged_commit_inside_a_journal_table_is_named_on_every_read(tmp_path):
    """A damaged commit with others after it (one an older svcnb appended on top): reading
    past it would leave its record out, reading up to it the ones after, so reads refuse."""
    url = str(tmp_path / "store")
    journal_store(url)
    table = f"{url}/_journal/alerts/_delta_log"
    commit = _latest_commit(url, "_journal/alerts")
    second = commit.replace(commit.rpartition("/")[2], f"{int(commit[-25:-5]) - 1:020d}.json")
    assert second.startswith(table)
    _write(url, second, b"")
    with pytest.raises(DamagedCommitError, match="Restore it from a backup") as refused:
        listing(url)
    assert "\n" not in str(refused.value) and refused.value.path == second
