"""The audit log as svcnb wrote it before the journal: read to migrate it, never written.

``<store>/_audit`` (columns time, kind, account, firewall_id, rule_id, outcome, record_id and
record, the whole record as JSON), and on older local stores ``audit.jsonl``. How it is copied
and refused: docs/contracts.md §5; the journal cannot tell what a line that is JSON but not a
record (``[]``, ``3``, ``null``) meant, hence the refusal rather than a skip.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from svcnb.times import to_utc

from ._appendlog import AppendLog
from ._fs import Location
from ._layout import SnapshotWarning, StoreError
from ._scrub import scrub

AUDIT_TABLE = "_audit"
LEGACY_LOG = "audit.jsonl"  # local stores before the table: read, never written
AUDIT_COLUMNS = ("time", "firewall_id", "rule_id", "before", "after", "outcome")
_TS = pa.timestamp("us", tz="UTC")
SCHEMA = pa.schema(
    [
        pa.field("time", _TS),
        pa.field("kind", pa.string()),
        pa.field("account", pa.string()),
        pa.field("firewall_id", pa.string()),
        pa.field("rule_id", pa.string()),
        pa.field("outcome", pa.string()),
        pa.field("record_id", pa.string()),
        pa.field("record", pa.string()),
    ]
)


def clean(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` as the audit log took it: scrubbed, ``time`` as UTC ISO 8601 text (now when
    it had none); ValueError when it lacks firewall_id, rule_id or outcome."""
    missing = [k for k in ("firewall_id", "rule_id", "outcome") if k not in record]
    if missing:
        raise ValueError(f"audit record lacks {missing}; fields are {', '.join(AUDIT_COLUMNS)}")
    cleaned = dict(scrub(dict(record)))
    when = to_utc(cleaned.get("time") or datetime.now(UTC), "time")
    cleaned["time"] = when.isoformat()
    return cleaned


class LegacyAudit:
    """The audit log as svcnb wrote it before the journal, read for migration only: the
    ``_audit`` table of the store at ``loc`` and, on a local store, ``audit.jsonl``."""

    def __init__(self, loc: Location) -> None:
        self.loc = loc
        self._table = AppendLog(loc, AUDIT_TABLE, SCHEMA, "the audit log")
        self.where = loc.table_url(AUDIT_TABLE)

    def records(self) -> list[tuple[str, dict[str, Any]]]:
        """Every record with its id, in the order written (``audit.jsonl``'s first, each
        named by its line; then the table's in commit order, each by its ``record_id``). A
        record torn by a crash is skipped with a SnapshotWarning."""
        rows = legacy_lines(Path(self.loc.root)) if self.loc.local else []
        torn = 0
        parts, _ = self._table.read()
        for _, part in parts:
            ids = part.column("record_id").to_pylist()
            for rid, text in zip(ids, part.column("record").to_pylist(), strict=True):
                try:
                    record = json.loads(text)
                except (TypeError, ValueError):
                    torn += 1
                    continue
                if not isinstance(record, dict):
                    problem = f"it is JSON but not a record ({_json_kind(record)})"
                    raise self.refused(str(rid), problem)
                rows.append((str(rid), record))
        if torn:
            warnings.warn(
                f"{self._table.url}: skipped {torn} unreadable record(s)",
                SnapshotWarning,
                stacklevel=4,
            )
        return rows

    def refused(self, rid: str, problem: str) -> StoreError:
        """The error for the old record ``rid`` that cannot be copied into the journal as it
        is, saying what to do about it."""
        name, _, line = rid.partition(":")
        if name == LEGACY_LOG and line.isdigit():
            return _refused(rid, str(Path(self.loc.root) / LEGACY_LOG), problem, int(line))
        return _refused(rid, self.where, problem)


def _refused(rid: str, where: str, problem: str, line: int | None = None) -> StoreError:
    if line is not None:
        todo = (
            f"correct line {line} of {where}, or empty it (keep the empty line: the lines after "
            "it are known by their numbers)"
        )
    else:
        todo = (
            f"correct its row of {where}, or delete it "
            f"(DeltaTable('{where}').delete(\"record_id = '{rid}'\"))"
        )
    return StoreError(
        f"the old audit log's record {rid} ({where}) cannot be copied into the journal: "
        f"{problem}. The journal copies that log whole or not at all, so nothing more of it was "
        f"copied, it is left as it was, and the journal is neither read nor written until then: "
        f"{todo}"
    )


def _json_kind(value: object) -> str:
    # what the line holds, not its text: that could be a token
    if value is None:
        return "null"
    names = {list: "a list", str: "text", bool: "true or false"}
    return names.get(type(value), "a number")


def legacy_lines(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """The records of a local store's JSON-lines log from before the table, each with its id
    (``audit.jsonl:<line>``; the file is never rewritten, so a line keeps its number); a line
    torn by a crash is skipped with a SnapshotWarning, StoreError naming a line that is JSON
    but not a record."""
    rows: list[tuple[str, dict[str, Any]]] = []
    torn = 0
    path = root / LEGACY_LOG
    if path.exists():
        for number, line in enumerate(path.read_bytes().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                torn += 1
                continue
            rid = f"{LEGACY_LOG}:{number}"
            if not isinstance(record, dict):
                problem = f"it is JSON but not a record ({_json_kind(record)})"
                raise _refused(rid, str(path), problem, number)
            rows.append((rid, record))
    if torn:
        warnings.warn(f"{path}: skipped {torn} unreadable line(s)", SnapshotWarning, stacklevel=5)
    return rows


def audit_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The audit log's frame of ``rows`` (records as dicts): time (UTC), firewall_id,
    rule_id, before, after, outcome, then every other field, sorted by name."""
    extra = sorted({k for r in rows for k in r} - set(AUDIT_COLUMNS))
    frame = pd.DataFrame(
        {c: [r.get(c) for r in rows] for c in (*AUDIT_COLUMNS, *extra)}, dtype=object
    )
    frame["time"] = pd.to_datetime(frame["time"], utc=True, format="ISO8601").astype(
        "datetime64[ns, UTC]"
    )
    for c in ("firewall_id", "rule_id", "outcome"):
        frame[c] = frame[c].astype("string")
    return frame
