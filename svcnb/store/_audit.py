"""The rule-editor audit log: one JSON line per attempted rule edit, append-only.

Written with an exclusive ``flock`` and ``fsync``'d before ``append`` returns. A line torn by a
crash is skipped when reading. Nothing secret is kept: keys that name secrets are dropped and any
token-like ``svc_...`` text is masked to its last four characters.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from svcnb.client._redact import redact

from ._layout import SnapshotWarning

try:
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

AUDIT_LOG = "audit.jsonl"
AUDIT_COLUMNS = ("time", "firewall_id", "rule_id", "before", "after", "outcome")
_SECRET_KEYS = {"secret", "api_key", "apikey", "x-api-key", "token", "password", "authorization"}


def scrub(value: Any) -> Any:
    """``value`` with secret-named keys dropped and token-like text masked, at any depth."""
    if isinstance(value, Mapping):
        return {str(k): scrub(v) for k, v in value.items() if str(k).lower() not in _SECRET_KEYS}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return redact(value)
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | pd.Timestamp):
        return pd.Timestamp(value).tz_convert("UTC").isoformat() if value.tzinfo else str(value)
    return str(value)


def append(root: Path, record: Mapping[str, Any]) -> dict[str, Any]:
    missing = [k for k in ("firewall_id", "rule_id", "outcome") if k not in record]
    if missing:
        raise ValueError(f"audit record lacks {missing}; fields are {', '.join(AUDIT_COLUMNS)}")
    clean = scrub(dict(record))
    when = pd.Timestamp(clean.get("time") or datetime.now(UTC))
    when = when.tz_localize("UTC") if when.tzinfo is None else when.tz_convert("UTC")
    clean["time"] = when.isoformat()
    line = json.dumps(clean, default=_jsonable, ensure_ascii=False, sort_keys=True).encode() + b"\n"
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / AUDIT_LOG, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        # a torn line left by a crash must not swallow this record: start on a fresh line
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    return clean


def read(root: Path) -> pd.DataFrame:
    """time (UTC), firewall_id, rule_id, before, after (dicts), outcome, then any extra fields."""
    rows, torn = [], 0
    path = root / AUDIT_LOG
    if path.exists():
        for line in path.read_bytes().splitlines():
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError:
                torn += 1
    if torn:
        warnings.warn(f"{path}: skipped {torn} unreadable line(s)", SnapshotWarning, stacklevel=3)
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
