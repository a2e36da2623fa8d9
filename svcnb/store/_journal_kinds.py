"""The journal's records: one typed kind per table, and how each reads and is written.

A kind declares its table (``KIND``), its columns (``COLUMNS``) and its ``kind`` in the old audit
log (``AUDIT_KIND``), so a record converts both ways (:func:`from_audit`,
:meth:`JournalRecord.as_audit`).
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

from svcnb.times import TimeError, to_utc

from ._layout import StoreError
from ._scrub import jsonable, scrub

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


def _json(value: object) -> str | None:
    if value is None:
        return None
    return json.dumps(value, default=jsonable, ensure_ascii=False, sort_keys=True)


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
        return to_utc(self.time, "time")

    @classmethod
    def schema(cls) -> pa.Schema:
        """The columns of the kind's table."""
        fields = list(_COMMON) + [pa.field(c, _ARROW[t]) for c, t in cls.COLUMNS.items()]
        return pa.schema(fields)

    def scrubbed(self) -> JournalRecord:
        """This record as it is written: time in UTC, text and JSON scrubbed of secrets."""
        changes: dict[str, Any] = {
            "time": to_utc(self.time if self.time is not None else datetime.now(UTC), "time"),
            "extra": scrub(dict(self.extra)),
        }
        for name, kind in self.COLUMNS.items():
            value = getattr(self, name)
            if value is None:
                continue
            if kind == "time":
                changes[name] = to_utc(value, name)
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
            out[name] = to_utc(value, name).isoformat() if kind == "time" and value else value
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
class _FindingRecord(JournalRecord):
    """The fields an acceptance and its revocation share (``_FINDING``): which finding, who,
    why, in which account (its name) and wallet, on which firewall rule."""

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
class FindingAccepted(_FindingRecord):
    """A firewall finding's risk accepted by ``owner`` for ``reason`` until ``until``, in
    ``account`` (its name) whose wallet is ``wallet``."""

    KIND = "acceptances"
    AUDIT_KIND = ACCEPTANCE_KIND
    COLUMNS = {**_FINDING, "until": "time"}
    IMPLIED = {"outcome": ACCEPTED}

    until: TimeLike | None = None


@dataclass(frozen=True, kw_only=True)
class AcceptanceRevoked(_FindingRecord):
    """The acceptances of ``finding_id`` made before it ended by ``owner`` for ``reason``."""

    KIND = "revocations"
    AUDIT_KIND = ACCEPTANCE_KIND
    COLUMNS = _FINDING
    IMPLIED = {"outcome": REVOKED}


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
    """The journal record of an audit log record (a dict as :meth:`Journal.append` takes it):
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


def differs(want: Mapping[str, Any], record: JournalRecord) -> str | None:
    """Why ``record`` (as the audit log shows it) is not the audit record ``want``, or None: a
    field absent and a field None are the same, the times of the kind are compared as instants,
    and every other value as JSON (so 502 is not "502", nor 1 True)."""
    got = record.as_audit()
    times = {"time", *(name for name, kind in record.COLUMNS.items() if kind == "time")}
    for key in sorted(set(want) | set(got), key=str):
        a, b = want.get(key), got.get(key)
        if _canonical(a) == _canonical(b):
            continue
        if key in times and isinstance(a, str | datetime) and isinstance(b, str | datetime):
            try:
                if to_utc(a, key) == to_utc(b, key):
                    continue
            except TimeError:
                pass
        return f"{key} was {_canonical(a)}, is {_canonical(b)}"
    return None


def _canonical(value: Any) -> str:
    return json.dumps(value, default=jsonable, ensure_ascii=False, sort_keys=True)


def to_rows(
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


def from_row(cls: type[JournalRecord], row: Mapping[str, Any]) -> JournalRecord:
    """The record of kind ``cls`` that a row of its table holds (as :func:`to_rows` wrote it)."""
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
