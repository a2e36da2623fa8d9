"""The store's audit log: one record per rule edit, acceptance, stop plan or alert, append-only.

It is a Delta table inside the store, ``<store>/_audit``, so it lives wherever the store does
(a folder, ``s3://``, ``gs://``, ``az://``) and a team sharing a store shares its audit trail.
Each record is one file and one commit: the file is written under a name no other writer uses
(``fsync``'d on a local store), then added in a Delta commit that names the record
(``svcnb.audit`` in the commit's metadata). Two writers at once both land: Delta lets only one
commit take a version and the other commits again at the next one, so no record is lost.
Records are read back in commit order (the version that added each file), which is the order
they were written. Columns, for engines that read the table without svcnb: time (UTC), kind,
account, firewall_id, rule_id, outcome, record_id and record (the whole record as JSON).

A caller that decides what to write from what it read (``svcnb check``: an alert is claimed only
when no one else claimed it) appends with :meth:`AuditLog.append_if`: all its records in one
commit, at the version right after the one it read, or nothing. That is a compare-and-set any
store gives: Delta writes a commit file only if no file of that version exists (an atomic
create on a local disk; a conditional put on object storage, the same the catalog relies on).

Nothing secret is kept: keys that name secrets are dropped and any token-like ``svc_...`` text
is masked to its last four characters (:func:`scrub`), before anything is written, in text and
bytes alike, in keys and values at any depth.

Local stores written before the table existed keep their JSON-lines file ``audit.jsonl``; it is
read, never written again, and its records come first (they were all written before any record
of the table). It is not moved into the table: a move on first write would race a second writer
doing the same, and the file stays readable as it was.
"""

from __future__ import annotations

import json
import os
import secrets
import time
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
from deltalake import CommitProperties, DeltaTable
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError
from deltalake.transaction import AddAction

from svcnb.client import redact

from ._catalog import _now_ms
from ._fs import Location
from ._layout import SnapshotWarning, StoreError, fsync_dir

AUDIT_TABLE = "_audit"
LEGACY_LOG = "audit.jsonl"  # local stores before the table: read, never written
AUDIT_COLUMNS = ("time", "firewall_id", "rule_id", "before", "after", "outcome")
_SECRET_KEYS = {"secret", "api_key", "apikey", "x-api-key", "token", "password", "authorization"}
_META = "svcnb.audit"  # the commit metadata key naming the record a commit added
_ATTEMPTS = 20
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
# the order of records is the commit order: the commit log is kept, never cleaned up
_CONFIGURATION = {"delta.enableExpiredLogCleanup": "false"}


def scrub(value: Any) -> Any:
    """``value`` with secret-named keys dropped and token-like text masked, at any depth.

    What comes back holds only what JSON holds (and datetimes, which :func:`_jsonable`
    writes): anything else is made text here, and masked, because ``str()`` of bytes or of an
    object shows what it holds and nothing would mask it later.
    """
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            key = scrub(k) if isinstance(k, str | bytes | bytearray | memoryview) else redact(k)
            if key.lower() not in _SECRET_KEYS:
                out[key] = scrub(v)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return redact(bytes(value).decode("utf-8", "backslashreplace"))
    if value is None or isinstance(value, bool | int | float | datetime | pd.Timestamp):
        return value
    return redact(str(value))


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | pd.Timestamp):
        return pd.Timestamp(value).tz_convert("UTC").isoformat() if value.tzinfo else str(value)
    return redact(str(value))


def _clean(record: Mapping[str, Any]) -> dict[str, Any]:
    missing = [k for k in ("firewall_id", "rule_id", "outcome") if k not in record]
    if missing:
        raise ValueError(f"audit record lacks {missing}; fields are {', '.join(AUDIT_COLUMNS)}")
    clean = scrub(dict(record))
    when = pd.Timestamp(clean.get("time") or datetime.now(UTC))
    when = when.tz_localize("UTC") if when.tzinfo is None else when.tz_convert("UTC")
    clean["time"] = when.isoformat()
    return clean


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


class AuditLog:
    """The audit log of the store at ``loc``; remembers what it read until the table moves."""

    def __init__(self, loc: Location) -> None:
        self.loc = loc
        self.url = loc.table_url(AUDIT_TABLE)
        self._created = False
        self._table: DeltaTable | None = None
        self._write_table: DeltaTable | None = None
        self._version = -1
        self._files: dict[str, list[str]] = {}  # data file -> its records (JSON text)
        self._order: dict[str, int] = {}  # data file -> the version that added it

    def _options(self) -> dict[str, str] | None:
        return self.loc.storage_options or None

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Write one record (scrubbed) and return it as written; ValueError when it lacks
        firewall_id, rule_id or outcome, StoreError when the store cannot be written."""
        clean, path, add, props = self._stage([record])
        error: Exception | None = None
        for _ in range(_ATTEMPTS):
            try:
                # a blind append: another writer's commit at the same version makes Delta
                # refuse this one, and it commits again on top of theirs
                table = self._writer()
                table.create_write_transaction(
                    [add], mode="append", schema=SCHEMA, commit_properties=props
                )
                break
            except (DeltaError, OSError) as exc:
                error, self._write_table = exc, None  # read the log afresh next attempt
                time.sleep(0.01 + secrets.randbelow(50) / 1000)
        else:
            self.loc.delete(path)
            raise StoreError(
                f"the audit log {self.url} could not be committed after {_ATTEMPTS} attempts "
                f"({error}); nothing was recorded, try again"
            )
        self._sync(table)
        return clean[0]

    def append_if(
        self, records: list[Mapping[str, Any]], version: int
    ) -> list[dict[str, Any]] | None:
        """Write ``records`` (scrubbed) in one commit if the log is still at ``version`` (as
        :meth:`read` reported it in ``attrs["version"]``); returns them as written, or None,
        writing nothing, when anyone appended since. StoreError when the store cannot be
        written."""
        if not records:
            raise ValueError("append_if needs at least one record")
        # no retry: a commit at the next version is the compare-and-set; another writer's commit
        # there makes Delta refuse this one instead of committing it on top
        clean, path, add, props = self._stage(records, retries=0)
        # a log not created yet when it was read is at version 0 once created, with no record
        expected = max(version, 0)
        try:
            table = self._writer()
            if table.version() != expected:
                self.loc.delete(path)
                return None
            table.create_write_transaction(
                [add], mode="append", schema=SCHEMA, commit_properties=props
            )
        except CommitFailedError:
            self.loc.delete(path)
            self._write_table = None
            return None
        except (DeltaError, OSError) as exc:
            self.loc.delete(path)
            self._write_table = None
            raise StoreError(f"the audit log {self.url} cannot be written: {exc}") from None
        self._sync(table)
        return clean

    def _stage(
        self, records: list[Mapping[str, Any]], retries: int | None = None
    ) -> tuple[list[dict[str, Any]], str, AddAction, CommitProperties]:
        """Scrub ``records``, write them as one data file under a name no one else uses, and
        return them with the file's path, its add action and the commit's properties."""
        clean = [_clean(record) for record in records]
        rid = secrets.token_hex(8)
        ids = [rid if i == 0 else f"{rid}-{i}" for i in range(len(clean))]
        rows = {
            "time": [pd.Timestamp(c["time"]) for c in clean],
            "kind": [_text(c.get("kind")) for c in clean],
            "account": [_text(c.get("account")) for c in clean],
            "firewall_id": [_text(c.get("firewall_id")) for c in clean],
            "rule_id": [_text(c.get("rule_id")) for c in clean],
            "outcome": [_text(c.get("outcome")) for c in clean],
            "record_id": ids,
            "record": [
                json.dumps(c, default=_jsonable, ensure_ascii=False, sort_keys=True) for c in clean
            ],
        }
        name = f"{int(time.time() * 1000):013d}-{rid}-audit.parquet"
        path = self.loc.file(AUDIT_TABLE, name)
        try:
            self._create()
            size = self.loc.write_parquet(path, pa.table(rows, schema=SCHEMA), compression="zstd")
        except (DeltaError, OSError) as exc:
            raise StoreError(f"the audit log {self.url} cannot be written: {exc}") from None
        stats = json.dumps({"numRecords": len(clean)})
        add = AddAction(name, size, {}, _now_ms(), True, stats)
        props = CommitProperties(custom_metadata={_META: rid}, max_commit_retries=retries)
        return clean, path, add, props

    def _sync(self, table: DeltaTable) -> None:
        if self.loc.local:
            # on disk before append returns, as the JSON-lines log was (the data file already is)
            # (the commit is one of those after the version it was built on)
            log = Path(self.loc.root) / AUDIT_TABLE / "_delta_log"
            start = table.version() + 1
            table.update_incremental()
            for version in range(start, table.version() + 1):
                _fsync(log / f"{version:020d}.json")
            fsync_dir(log)

    def _writer(self) -> DeltaTable:
        # the table at its latest version; kept between appends so each reads only the commits
        # since the last (loading it afresh replays the whole log, one read per record)
        if self._write_table is None:
            self._write_table = DeltaTable(self.url, storage_options=self._options())
        else:
            self._write_table.update_incremental()
        return self._write_table

    def _create(self) -> None:
        if self._created:
            return
        try:
            DeltaTable.create(
                self.url,
                SCHEMA,
                mode="ignore",
                configuration=_CONFIGURATION,
                storage_options=self._options(),
            )
        except (DeltaError, OSError):
            # another writer created it at the same moment: use theirs
            DeltaTable(self.url, storage_options=self._options())
        self._created = True

    def read(self) -> pd.DataFrame:
        """time (UTC), firewall_id, rule_id, before, after (dicts), outcome, then any extra
        fields; in the order written. ``attrs["version"]``: the table's version read (-1: no
        table yet), for :meth:`append_if`."""
        rows = _legacy(Path(self.loc.root)) if self.loc.local else []
        torn = 0
        records = self._records()
        for text in records:
            try:
                rows.append(json.loads(text))
            except ValueError:
                torn += 1
        if torn:
            warnings.warn(
                f"{self.url}: skipped {torn} unreadable record(s)", SnapshotWarning, stacklevel=3
            )
        frame = _frame(rows)
        frame.attrs["version"] = self._version if self._table is not None else -1
        return frame

    def _records(self) -> list[str]:
        """The table's records (JSON text) in commit order."""
        try:
            if self._table is None:
                self._table = DeltaTable(self.url, storage_options=self._options())
            else:
                self._table.update_incremental()
        except TableNotFoundError:
            return []
        except (DeltaError, OSError) as exc:
            raise StoreError(f"the audit log {self.url} cannot be read: {exc}") from None
        version = self._table.version()
        if version != self._version:
            self._catch_up(self._table, version)
        # a file whose commit is not in the log (none should be: the log is kept) first
        names = sorted(self._files, key=lambda name: self._order.get(name, -1))
        return [text for name in names for text in self._files[name]]

    def _catch_up(self, table: DeltaTable, version: int) -> None:
        try:
            # the commit that added each file is its place in the order; the commits are read
            # once each (pyarrow's file system: deltalake's history() holds the interpreter)
            for commit in range(self._version + 1, version + 1):
                path = f"{self.loc.root}/{AUDIT_TABLE}/_delta_log/{commit:020d}.json"
                with self.loc.fs.open_input_stream(path) as stream:
                    for line in stream.read().splitlines():
                        action = json.loads(line) if line.strip() else {}
                        if "add" in action:
                            self._order[unquote(action["add"]["path"])] = commit
            paths = {
                unquote(p) for p in table.get_add_actions(flatten=True).column("path").to_pylist()
            }
            for gone in set(self._files) - paths:
                del self._files[gone]
            for name in sorted(paths - set(self._files)):
                part = self.loc.read_parquet(self.loc.file(AUDIT_TABLE, name))
                self._files[name] = part.column("record").to_pylist()
        except (DeltaError, OSError, pa.ArrowException, KeyError, ValueError) as exc:
            raise StoreError(
                f"the audit log {self.url} cannot be read ({exc}); its records are in Delta "
                f"table {self.url}, which any Delta reader opens"
            ) from None
        self._version = version


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - the commit is there; only its durability is unsure
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _legacy(root: Path) -> list[dict[str, Any]]:
    """The records of a local store's JSON-lines log from before the table (a line torn by a
    crash is skipped with a SnapshotWarning)."""
    rows, torn = [], 0
    path = root / LEGACY_LOG
    if path.exists():
        for line in path.read_bytes().splitlines():
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError:
                torn += 1
    if torn:
        warnings.warn(f"{path}: skipped {torn} unreadable line(s)", SnapshotWarning, stacklevel=4)
    return rows


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
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
