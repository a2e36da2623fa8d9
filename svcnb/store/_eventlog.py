"""The webhook event log: every event the receiver accepted, one JSON line each, append-only.

Its promises (on disk before the 2xx, torn last line, several writers, no secret) are in
docs/contracts.md §5. Only the fields in ``COLUMNS`` are ever written: the subscription secret and
the signature header are not among them.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from ._layout import fsync_dir

# Windows has no flock: one process per log there, the thread lock still holds
if sys.platform != "win32":
    import fcntl

__all__ = ["COLUMNS", "LOG_NAME", "EventLog"]

LOG_NAME = "webhook_events.jsonl"

# column -> dtype of EventLog.frame(); also the only keys a record may carry
COLUMNS: dict[str, str] = {
    "received_at": "datetime64[ns, UTC]",  # receiver's clock when the event was accepted
    "delivery_id": "string",  # X-Service-Delivery-Id of the accepted attempt (unsigned header)
    "event_id": "string",  # `id` inside the signed body
    "type": "string",  # `type` inside the signed body
    "event_header": "string",  # X-Service-Event as received (unsigned; differs only if tampered)
    "created_at": "datetime64[ns, UTC]",  # `createdAt` inside the signed body
    "age_seconds": "Float64",  # received_at - created_at
    "possible_replay": "boolean",  # age_seconds was over the receiver's tolerance
    "data": "string",  # `data` inside the signed body, as a JSON string
}


class EventLog:
    """Append-only log of accepted webhook events in the store folder ``store_path``.

    ``append`` refuses (returns False for) a record whose delivery id or event id is already in the
    log, so the log holds each event once however often it was delivered.
    """

    def __init__(self, store_path: str | os.PathLike[str]) -> None:
        self.path = Path(store_path) / LOG_NAME
        self._lock = threading.Lock()
        self._offset = 0  # bytes of the file already indexed
        self._delivery_ids: set[str] = set()
        self._event_ids: set[str] = set()

    def __repr__(self) -> str:
        return f"EventLog({str(self.path.parent)!r})"

    # -- writing -------------------------------------------------------------------------------

    def append(self, record: Mapping[str, Any]) -> bool:
        """Write ``record`` durably unless its delivery id or event id is already logged.

        ``record`` holds keys of ``COLUMNS`` (``event_id`` required); datetimes may be given as
        ``datetime`` or ISO 8601 text and ``data`` as any JSON value. Returns True when the record
        was written and ``fsync``'d, False when it was a duplicate and nothing was written.
        """
        line = _encode(record)
        event_id, delivery_id = record["event_id"], record.get("delivery_id")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            created = not self.path.exists()
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                if created:
                    fsync_dir(self.path.parent)  # the new file's name must survive a crash too
                if sys.platform != "win32":
                    fcntl.flock(fd, fcntl.LOCK_EX)
                size = self._index_from(fd)
                if self._known(event_id, delivery_id):
                    return False
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    line = b"\n" + line  # a torn last line from a crash stays a line of its own
                os.write(fd, line)
                os.fsync(fd)
                self._offset = size + len(line)
                self._remember(event_id, delivery_id)
                return True
            finally:
                os.close(fd)  # also releases the flock

    # -- reading -------------------------------------------------------------------------------

    def seen(self, delivery_id: str | None = None, event_id: str | None = None) -> bool:
        """True when the log holds a record with this delivery id or this event id."""
        if delivery_id is None and event_id is None:
            raise ValueError("seen() needs a delivery_id or an event_id (or both)")
        with self._lock:
            if self.path.exists():
                fd = os.open(self.path, os.O_RDONLY)
                try:
                    self._index_from(fd)
                finally:
                    os.close(fd)
            return self._known(event_id, delivery_id)

    def frame(self) -> pd.DataFrame:
        """The log as a DataFrame, one row per accepted event in the order they were accepted.

        Columns: received_at, delivery_id, event_id, type, event_header, created_at (UTC
        datetimes), age_seconds (Float64), possible_replay (boolean), data (JSON text). Lines that
        do not parse (a write torn by a crash) are skipped; their count is in
        ``frame.attrs["skipped_lines"]``.
        """
        rows, skipped = [], 0
        if self.path.exists():
            for line in self.path.read_bytes().split(b"\n"):
                if not line.strip():
                    continue
                record = _decode(line)
                if record is None:
                    skipped += 1
                else:
                    rows.append(record)
        columns = {column: [r.get(column) for r in rows] for column in COLUMNS}
        columns["data"] = [_json_text(value) for value in columns["data"]]
        frame = pd.DataFrame(columns, dtype=object)
        for column in ("received_at", "created_at"):
            frame[column] = pd.to_datetime(
                frame[column], utc=True, format="ISO8601", errors="coerce"
            ).astype("datetime64[ns, UTC]")
        frame = frame.astype({c: t for c, t in COLUMNS.items() if not t.startswith("datetime")})
        frame.attrs["skipped_lines"] = skipped
        return frame

    # -- index ---------------------------------------------------------------------------------

    def _index_from(self, fd: int) -> int:
        """Index the records other writers added since our last look; return the file size."""
        size = os.fstat(fd).st_size
        if size < self._offset:  # the file was replaced or truncated: start over
            self._offset = 0
            self._delivery_ids.clear()
            self._event_ids.clear()
        if size > self._offset:
            chunk = os.pread(fd, size - self._offset, self._offset)
            for line in chunk.split(b"\n"):
                record = _decode(line) if line.strip() else None
                if record is not None:
                    self._remember(record["event_id"], record.get("delivery_id"))
            # stop after the last complete line: bytes after it are a write still in progress
            # (``seen`` reads without the lock) or torn by a crash, and are read again next time
            self._offset += chunk.rfind(b"\n") + 1
        return size

    def _known(self, event_id: str | None, delivery_id: str | None) -> bool:
        return (event_id is not None and event_id in self._event_ids) or (
            delivery_id is not None and delivery_id in self._delivery_ids
        )

    def _remember(self, event_id: str, delivery_id: str | None) -> None:
        self._event_ids.add(event_id)
        if delivery_id:
            self._delivery_ids.add(delivery_id)


def _encode(record: Mapping[str, Any]) -> bytes:
    unknown = set(record) - set(COLUMNS)
    if unknown:
        raise ValueError(
            f"event record has unknown fields {sorted(unknown)}; allowed: {list(COLUMNS)}"
        )
    event_id = record.get("event_id")
    if not isinstance(event_id, str) or not event_id:
        raise ValueError("event record needs a non-empty string event_id")
    out = {}
    for key in COLUMNS:
        value = record.get(key)
        out[key] = value.isoformat() if isinstance(value, datetime) else value
    # ASCII-only: `data` may hold lone surrogates from JSON escapes, which UTF-8 cannot encode
    return (json.dumps(out, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")


def _json_text(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: keep them as \u escapes
        text = json.dumps(value, separators=(",", ":"))
    return text


def _decode(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("event_id"), str):
        return None
    return record
