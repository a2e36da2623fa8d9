"""The journal: what people and checks did with a store, one typed record kind per table.

Beside the snapshots (``Store``), a store keeps a journal of what was done with it, each kind
of record in its own append-only Delta table under ``<store>/_journal/`` (wherever the store
is: a folder, ``s3://``, ``gs://``, ``az://``), with its own columns:

==================  ==========================  =================================================
kind                table                       columns (besides the common ones)
==================  ==========================  =================================================
``RuleEdit``        ``_journal/rule_edits``     firewall_id, rule_id, outcome, before, after
                                                (JSON), detail
``FindingAccepted`` ``_journal/acceptances``    finding_id, reason, owner, until (UTC), account,
                                                wallet, firewall_id, rule_id, before, after
``AcceptanceRevoked`` ``_journal/revocations``  finding_id, reason, owner, account, wallet,
                                                firewall_id, rule_id, before, after
``StopPlanRecord``  ``_journal/stop_plans``     stage, outcome, plan_id, approver, plan and vms
                                                (JSON: the plan as saved, each VM's outcome)
``AlertRecord``     ``_journal/alerts``         account, outcome, alert_key, alert_rule,
                                                snapshot_id, message, claimed_until (UTC)
==================  ==========================  =================================================

Every table also has ``time`` (when it happened, UTC), ``written`` (the writer's clock when it
was appended), ``record_id``, ``legacy_id`` and ``legacy_seq`` (a record copied from the audit
log kept before the journal: its id there and its place in that log's order) and ``extra``
(JSON: fields the kind does not declare, kept rather than dropped). Rows are appended, never
changed; each append is one commit (``svcnb.store._appendlog``), and an append can be made
conditional on the table being at the version read (:meth:`Journal.append_if`: a
compare-and-set, which ``svcnb check`` claims alerts with). Text is scrubbed before it is
written: secret-named keys dropped, tokens masked (``svcnb.store._audit.scrub``).

Records are read in the order written: those copied from the old audit log first, in its order,
then the rest by the writer's clock (``written``), and in commit order within a table.

The old audit log (``<store>/_audit``, and a local store's ``audit.jsonl``) is migrated on the
first write to the journal: each of its records becomes the record of its kind, keeping its id,
so it is copied once whoever copies it, and checked field for field once copied. Until then
reads take its records from it as they would once copied. A record of a kind the journal does
not know is refused with an error naming it, never left out. The old log itself is left as it
was, for an older svcnb that reads it.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal, TypeVar

import pandas as pd
import pyarrow as pa

from ._appendlog import AppendLog
from ._audit import LegacyAudit, _jsonable, audit_frame, scrub
from ._fs import Location
from ._layout import StoreError

JOURNAL = "_journal"
ColumnType = Literal["text", "time", "json"]
TimeLike = str | datetime | pd.Timestamp
_TS = pa.timestamp("us", tz="UTC")
_ARROW: dict[ColumnType, pa.DataType] = {"text": pa.string(), "time": _TS, "json": pa.string()}
_COMMON = pa.schema(
    [
        pa.field("time", _TS),
        pa.field("written", _TS),
        pa.field("record_id", pa.string()),
        pa.field("legacy_id", pa.string()),
        pa.field("legacy_seq", pa.int64()),
        pa.field("extra", pa.string()),
    ]
)
_MIGRATE_ATTEMPTS = 20


def _utc(value: object, name: str) -> pd.Timestamp:
    try:
        ts = pd.Timestamp(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        ts = None
    if not isinstance(ts, pd.Timestamp):  # NaT, from None or ""
        raise StoreError(f"{name}={value!r} is not a time; give a datetime or ISO 8601 text")
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _json(value: object) -> str | None:
    if value is None:
        return None
    return json.dumps(value, default=_jsonable, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True, kw_only=True)
class JournalRecord:
    """What every journal record has: ``time`` (when it happened; the clock when None, naive
    means UTC) and ``extra`` (fields its kind does not declare, kept as given)."""

    KIND: ClassVar[str]  # the record's table, under <store>/_journal/
    AUDIT_KIND: ClassVar[str | None]  # its ``kind`` in the old audit log (None: none)
    COLUMNS: ClassVar[Mapping[str, ColumnType]]  # its own columns, in order
    # fields the old audit log's records held only when set
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()
    # fields the kind implies, as the old audit log's records spelled them
    IMPLIED: ClassVar[Mapping[str, str]] = {}

    time: TimeLike | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def when(self) -> pd.Timestamp:
        """``time`` as a UTC Timestamp."""
        return _utc(self.time, "time")

    @classmethod
    def schema(cls) -> pa.Schema:
        """The columns of the kind's table."""
        fields = list(_COMMON) + [pa.field(c, _ARROW[t]) for c, t in cls.COLUMNS.items()]
        return pa.schema(fields)

    def scrubbed(self) -> JournalRecord:
        """This record as it is written: time in UTC, text and JSON scrubbed of secrets."""
        changes: dict[str, Any] = {
            "time": _utc(self.time if self.time is not None else datetime.now(UTC), "time"),
            "extra": scrub(dict(self.extra)),
        }
        for name, kind in self.COLUMNS.items():
            value = getattr(self, name)
            if value is None:
                continue
            if kind == "time":
                changes[name] = _utc(value, name)
            elif kind == "text":
                value = scrub(value)
                changes[name] = value if isinstance(value, str) else str(value)
            else:
                changes[name] = scrub(value)
        return dataclasses.replace(self, **changes)

    def as_audit(self) -> dict[str, Any]:
        """The record as the audit log held it: ``time`` and other times as ISO 8601 text,
        ``kind``, the fields of the kind and those of ``extra``."""
        out: dict[str, Any] = {"time": self.when().isoformat()}
        if self.AUDIT_KIND is not None:
            out["kind"] = self.AUDIT_KIND
        out.update(self.IMPLIED)
        for name, kind in self.COLUMNS.items():
            value = getattr(self, name)
            if value is None and name in self.OPTIONAL:
                continue
            out[name] = _utc(value, name).isoformat() if kind == "time" and value else value
        out.update(self.extra)
        return out


@dataclass(frozen=True, kw_only=True)
class RuleEdit(JournalRecord):
    """A firewall rule edit sent to the service: ``before`` and ``after`` (the changed fields),
    ``outcome`` (e.g. "ok", "failed"), ``detail``."""

    KIND = "rule_edits"
    AUDIT_KIND = None
    COLUMNS = {
        "firewall_id": "text",
        "rule_id": "text",
        "outcome": "text",
        "before": "json",
        "after": "json",
        "detail": "text",
    }
    OPTIONAL = frozenset({"detail"})

    firewall_id: str | None = None
    rule_id: str | None = None
    outcome: str | None = None
    before: Any = None
    after: Any = None
    detail: str | None = None


ACCEPTANCE_KIND = "finding_acceptance"
ACCEPTED = "finding accepted"
REVOKED = "acceptance revoked"
_FINDING: dict[str, ColumnType] = {
    "finding_id": "text",
    "reason": "text",
    "owner": "text",
    "account": "text",
    "wallet": "text",
    "firewall_id": "text",
    "rule_id": "text",
    "before": "text",
    "after": "text",
}


@dataclass(frozen=True, kw_only=True)
class FindingAccepted(JournalRecord):
    """A firewall finding's risk accepted by ``owner`` for ``reason`` until ``until``, in
    ``account`` (its name) whose wallet is ``wallet``."""

    KIND = "acceptances"
    AUDIT_KIND = ACCEPTANCE_KIND
    COLUMNS = {**_FINDING, "until": "time"}
    IMPLIED = {"outcome": ACCEPTED}

    finding_id: str | None = None
    reason: str | None = None
    owner: str | None = None
    until: TimeLike | None = None
    account: str | None = None
    wallet: str | None = None
    firewall_id: str | None = None
    rule_id: str | None = None
    before: str | None = None
    after: str | None = None


@dataclass(frozen=True, kw_only=True)
class AcceptanceRevoked(JournalRecord):
    """The acceptances of ``finding_id`` made before it ended by ``owner`` for ``reason``."""

    KIND = "revocations"
    AUDIT_KIND = ACCEPTANCE_KIND
    COLUMNS = _FINDING
    IMPLIED = {"outcome": REVOKED}

    finding_id: str | None = None
    reason: str | None = None
    owner: str | None = None
    account: str | None = None
    wallet: str | None = None
    firewall_id: str | None = None
    rule_id: str | None = None
    before: str | None = None
    after: str | None = None


@dataclass(frozen=True, kw_only=True)
class StopPlanRecord(JournalRecord):
    """A stop plan at ``stage`` ("applied", ...): the plan as saved, who approved it, and
    each VM's outcome (``vms``: the rows of ``StopRun.outcomes``)."""

    KIND = "stop_plans"
    AUDIT_KIND = "stop_plan"
    COLUMNS = {
        "stage": "text",
        "outcome": "text",
        "plan_id": "text",
        "approver": "text",
        "plan": "json",
        "vms": "json",
    }

    stage: str | None = None
    outcome: str | None = None
    plan_id: str | None = None
    approver: str | None = None
    plan: Any = None
    vms: Any = None


@dataclass(frozen=True, kw_only=True)
class AlertRecord(JournalRecord):
    """An alert of ``account`` fired, cleared, claimed (until ``claimed_until``) or not
    delivered (``outcome``), at the snapshot checked."""

    KIND = "alerts"
    AUDIT_KIND = "alert"
    COLUMNS = {
        "account": "text",
        "outcome": "text",
        "alert_key": "text",
        "alert_rule": "text",
        "snapshot_id": "text",
        "message": "text",
        "claimed_until": "time",
    }
    OPTIONAL = frozenset({"claimed_until"})

    account: str | None = None
    outcome: str | None = None
    alert_key: str | None = None
    alert_rule: str | None = None
    snapshot_id: str | None = None
    message: str | None = None
    claimed_until: TimeLike | None = None


KINDS: tuple[type[JournalRecord], ...] = (
    RuleEdit,
    FindingAccepted,
    AcceptanceRevoked,
    StopPlanRecord,
    AlertRecord,
)
R = TypeVar("R", bound=JournalRecord)


def from_audit(record: Mapping[str, Any], source: str = "") -> JournalRecord:
    """The journal record of an audit log record (a dict as ``Store.append_audit`` took it):
    its kind by ``kind`` (none: a rule edit; ``finding_acceptance`` by its outcome). Fields
    the kind does not declare go to ``extra``, unless empty. StoreError naming the kind (and
    ``source``, the record's id) when the journal has none for it."""
    kind = record.get("kind")
    outcome = record.get("outcome")
    cls: type[JournalRecord] | None = None
    for candidate in KINDS:
        if kind == candidate.AUDIT_KIND and candidate.IMPLIED.get("outcome", outcome) == outcome:
            cls = candidate
    if cls is None:
        said = f"kind {kind!r}" if kind != ACCEPTANCE_KIND else f"{kind} outcome {outcome!r}"
        known = ", ".join(repr(c.AUDIT_KIND) for c in KINDS if c.AUDIT_KIND)
        raise StoreError(
            f"the audit record {source + ' ' if source else ''}is of {said}, which the journal "
            f"does not keep (it keeps rule edits, no kind, and {known}); nothing was written"
        )
    values: dict[str, Any] = {"time": record.get("time")}
    extra: dict[str, Any] = {}
    for key, value in record.items():
        if key in ("time", "kind") or (key in cls.IMPLIED and cls.IMPLIED[key] == value):
            continue
        if key in cls.COLUMNS:
            values[key] = value
        elif value is not None:
            extra[key] = value
    return cls(**values, extra=extra)


@dataclass(frozen=True)
class _Read:
    """A record as read, with where it sits in the order written."""

    order: tuple[int, int, int, int, int, int]
    record: JournalRecord
    legacy_id: str | None


class Journal:
    """The journal of the store at ``loc``: rule edits, accepted findings and their
    revocations, stop plans and alert state, one table per kind (see the module docstring).
    Reach it as ``Store(...).journal``."""

    def __init__(self, loc: Location) -> None:
        self.loc = loc
        self._logs = {
            cls: AppendLog(loc, f"{JOURNAL}/{cls.KIND}", cls.schema(), f"the journal's {cls.KIND}")
            for cls in KINDS
        }
        self._legacy = LegacyAudit(loc)
        self._migrated = False
        self._versions: dict[type[JournalRecord], int] = {}

    def __repr__(self) -> str:
        return f"Journal({self.loc.url!r})"

    # -- writing -------------------------------------------------------------------------

    def append(self, record: JournalRecord) -> JournalRecord:
        """Write one record (scrubbed; see :meth:`JournalRecord.scrubbed`) and return it as
        written. StoreError when the store cannot be written."""
        self.migrate()
        written = record.scrubbed()
        self._logs[type(written)].append(_rows([written]))
        return written

    def append_if(self, records: Sequence[JournalRecord], *, version: int) -> bool:
        """Write ``records`` (all of one kind) in one commit only if nobody wrote a record of
        that kind since its table was read at ``version`` (``read(kind).attrs["version"]``):
        a compare-and-set, on a local store and on object storage alike. False, nothing
        written, when someone did: read again and decide again."""
        if not records:
            raise ValueError("append_if needs at least one record")
        kinds = {type(r) for r in records}
        if len(kinds) != 1:
            names = sorted(k.__name__ for k in kinds)
            raise ValueError(f"append_if writes records of one kind in one commit, got {names}")
        self.migrate()
        written = [r.scrubbed() for r in records]
        return self._logs[type(written[0])].append_if(_rows(written), version)

    def migrate(self, records: Sequence[tuple[str, Mapping[str, Any]]] | None = None) -> int:
        """Copy the old audit log's records into the journal, each once (by its id), then
        check them field for field; returns how many old records it checked (0 when this
        Journal had already migrated). Runs by itself before the first write of this
        Journal; ``records`` (id, record) copies those instead (from a store of the first
        format). StoreError naming a record of a kind the journal does not keep, or one that
        reads back differently."""
        if records is None:
            if self._migrated:
                return 0
            records = self._legacy.records()
        pending: dict[type[JournalRecord], list[tuple[int, str, JournalRecord]]] = {}
        for seq, (rid, raw) in enumerate(records):
            record = from_audit(raw, f"{rid} of {self._legacy.where}").scrubbed()
            pending.setdefault(type(record), []).append((seq, rid, record))
        for cls, items in pending.items():
            log = self._logs[cls]
            for _ in range(_MIGRATE_ATTEMPTS):
                parts, version = log.read()
                have = {i for _, p in parts for i in p.column("legacy_id").to_pylist() if i}
                todo = [item for item in items if item[1] not in have]
                if not todo or log.append_if(_rows([r for _, _, r in todo], todo), version):
                    break
            else:
                raise StoreError(
                    f"the old audit log's {cls.KIND} could not be copied into {log.url}: other "
                    f"writers went first {_MIGRATE_ATTEMPTS} times in a row; try again"
                )
        self._check(records)
        self._migrated = True
        return len(records)

    def _check(self, records: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Every old record reads back from the journal as it was, field for field."""
        if not records:
            return
        copied = {r.legacy_id: r.record for r in self._read(KINDS, pending=False) if r.legacy_id}
        for rid, raw in records:
            got = copied.get(rid)
            if got is None:
                raise StoreError(f"the audit record {rid} was not copied into the journal")
            problem = differs(raw, got.as_audit())
            if problem:
                raise StoreError(f"the audit record {rid} reads back differently: {problem}")

    # -- reading -------------------------------------------------------------------------

    def records(self, *kinds: type[R]) -> list[R]:
        """The records of ``kinds`` (all when none is named), in the order written."""
        wanted: tuple[type[JournalRecord], ...] = kinds or KINDS
        return [r.record for r in self._read(wanted)]  # type: ignore[misc]

    def read(self, kind: type[JournalRecord]) -> pd.DataFrame:
        """The records of ``kind`` in the order written: time (UTC), the kind's columns
        (times UTC, JSON as Python values), extra (dict), written, record_id, legacy_id.
        ``attrs["version"]``: the version of its table read (-1: none yet), for
        :meth:`append_if`."""
        read = self._read((kind,))
        columns: dict[str, Any] = {"time": [r.record.time for r in read]}
        for name in kind.COLUMNS:
            columns[name] = [getattr(r.record, name) for r in read]
        columns["extra"] = [dict(r.record.extra) for r in read]
        columns["legacy_id"] = [r.legacy_id for r in read]
        frame = pd.DataFrame(columns, dtype=object)
        for name, typ in {"time": "time", **kind.COLUMNS}.items():
            if typ == "time":
                frame[name] = pd.to_datetime(frame[name], utc=True).astype("datetime64[ns, UTC]")
            elif typ == "text":
                frame[name] = frame[name].astype("string")
        frame["legacy_id"] = frame["legacy_id"].astype("string")
        frame.attrs["version"] = self._versions[kind]
        return frame

    def log(self) -> pd.DataFrame:
        """Every record, of every kind, in the order written, as the audit log showed them:
        time (UTC), firewall_id, rule_id, before, after, outcome, then any other field (kind,
        account, ...)."""
        return audit_frame([r.record.as_audit() for r in self._read(KINDS)])

    def _read(self, kinds: Sequence[type[JournalRecord]], pending: bool = True) -> list[_Read]:
        out: list[_Read] = []
        copied: set[str] = set()
        for cls in kinds:
            parts, version = self._logs[cls].read()
            self._versions[cls] = version
            for commit, part in parts:
                for row_no, row in enumerate(part.to_pylist()):
                    record = _record(cls, row)
                    legacy = row["legacy_id"]
                    if legacy:
                        copied.add(legacy)
                        order = (0, int(row["legacy_seq"]), 0, 0, 0, 0)
                    else:
                        written = int(pd.Timestamp(row["written"]).value // 1000)
                        order = (1, 0, written, KINDS.index(cls), commit, row_no)
                    out.append(_Read(order, record, legacy))
        if pending:
            # the old log's records not copied yet read as they will once copied
            for seq, (rid, raw) in enumerate(self._legacy.records()):
                if rid in copied:
                    continue
                record = from_audit(raw, f"{rid} of {self._legacy.where}")
                if type(record) in kinds:
                    out.append(_Read((0, seq, 0, 0, 0, 0), record.scrubbed(), rid))
        out.sort(key=lambda r: r.order)
        return out


def differs(want: Mapping[str, Any], got: Mapping[str, Any]) -> str | None:
    """Why two audit records differ (a field absent and a field None are the same), or None.
    Times are compared as instants."""
    for key in sorted(set(want) | set(got), key=str):
        a, b = want.get(key), got.get(key)
        if a == b:
            continue
        try:
            if a is not None and b is not None and pd.Timestamp(a) == pd.Timestamp(b):
                continue
        except (TypeError, ValueError):
            pass
        return f"{key} was {a!r}, is {b!r}"
    return None


def _rows(
    records: Sequence[JournalRecord], legacy: Sequence[tuple[int, str, JournalRecord]] = ()
) -> pa.Table:
    """The table rows of ``records`` (scrubbed, all of one kind); ``legacy`` (seq, id, _)
    marks each as copied from the old audit log."""
    cls = type(records[0])
    rid = secrets.token_hex(8)
    now = pd.Timestamp.now(tz="UTC")
    columns: dict[str, list[Any]] = {
        "time": [r.time for r in records],
        "written": [now] * len(records),
        "record_id": [rid if i == 0 else f"{rid}-{i}" for i in range(len(records))],
        "legacy_id": [item[1] for item in legacy] if legacy else [None] * len(records),
        "legacy_seq": [item[0] for item in legacy] if legacy else [None] * len(records),
        "extra": [_json(dict(r.extra)) if r.extra else None for r in records],
    }
    for name, kind in cls.COLUMNS.items():
        values = [getattr(r, name) for r in records]
        columns[name] = [_json(v) for v in values] if kind == "json" else values
    return pa.table(columns, schema=cls.schema())


def _record(cls: type[JournalRecord], row: Mapping[str, Any]) -> JournalRecord:
    values: dict[str, Any] = {"time": pd.Timestamp(row["time"])}
    for name, kind in cls.COLUMNS.items():
        value = row[name]
        if value is not None and kind == "json":
            value = json.loads(value)
        elif value is not None and kind == "time":
            value = pd.Timestamp(value)
        values[name] = value
    extra = json.loads(row["extra"]) if row["extra"] else {}
    return cls(**values, extra=extra)
