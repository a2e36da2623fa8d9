"""Where things live in a store folder, and the manifest that lists published snapshots.

```
<store>/
  manifest.json                                # published snapshots, replaced atomically
  .lock                                        # writers hold an exclusive flock on it
  .writing                                     # exists while a snapshot is being written
  audit.jsonl                                  # rule-editor audit log (append-only)
  webhook_events.jsonl                         # webhook event log (svcnb.store._eventlog)
  <resource>/segment=<first seq>/base.parquet  # every row at the segment's first snapshot
  <resource>/segment=<first seq>/changes.parquet  # rows new, changed or removed since then
```

Every Parquet row carries ``_seq`` (the snapshot that wrote this version) and ``_removed`` (a
tombstone: the key left the account at that snapshot). The state at snapshot N is: the segment
that holds N, rows with ``_seq <= N``, the last version of each key, tombstones dropped.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from svcnb.errors import SvcnbError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one writer per store
    fcntl = None

MANIFEST = "manifest.json"
LOCK = ".lock"
WRITING = ".writing"  # present while a writer works; found at the next write: clean up first
FORMAT = 1
DEFAULT_PATH = "data/store"
ENV_PATH = "SVCNB_STORE"


class SnapshotWarning(UserWarning):
    """A snapshot or store file could not be read and was skipped; the others still are."""


class StoreError(SvcnbError, RuntimeError):
    """The store folder cannot be used as asked; the message says what to do."""


class MissingResourceError(StoreError):
    """A resource could not be read when the snapshot asked for was taken.

    ``resource``, ``snapshot_id`` and ``reason`` (the exception type and message of the failed
    read) say what is missing where and why; ``latest`` is the id of the latest earlier snapshot
    that has it (None when none has), which ``Store.load(..., allow_stale=True)`` returns.
    ``needed_by`` names the report that could not be computed, when a report asked.
    """

    def __init__(
        self,
        resource: str,
        snapshot_id: str,
        reason: str | None,
        latest: str | None = None,
        needed_by: str | None = None,
    ) -> None:
        self.resource = resource
        self.snapshot_id = snapshot_id
        self.reason = reason or "no reason was recorded"
        self.latest = latest
        self.needed_by = needed_by
        if needed_by:
            head = f"{needed_by} needs {resource!r}, which snapshot {snapshot_id} could not read"
        else:
            head = f"{resource!r} is missing from snapshot {snapshot_id}: it could not be read"
        if latest:
            tail = (
                f"the latest snapshot that has it is {latest}; "
                f"Store.load({resource!r}, at=..., allow_stale=True) gives that older state"
            )
        else:
            tail = "no earlier snapshot has it"
        super().__init__(f"{head}: {self.reason.rstrip('.')}. {tail[0].upper()}{tail[1:]}.")


def resolve_path(path: str | os.PathLike[str] | None) -> Path:
    """The argument, then ``$SVCNB_STORE``, then ``data/store``."""
    if path is not None:
        return Path(path)
    return Path(os.environ.get(ENV_PATH) or DEFAULT_PATH)


def segment_dir(root: Path, resource: str, segment: int) -> Path:
    return root / resource / f"segment={segment:06d}"


def write_atomic(path: Path, data: bytes) -> None:
    """Write beside, fsync, then rename over ``path``: readers see the old or the new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (best effort where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


# parsed manifests by path, valid while the file's identity is unchanged: it is only ever
# replaced by a rename, which gives it a new inode
_PARSED: dict[Path, tuple[tuple[int, int, int], list[dict[str, Any]]]] = {}


def read_manifest(root: Path) -> list[dict[str, Any]]:
    """Published snapshots in order; [] for a new store. A damaged manifest raises StoreError.

    The list is shared between callers: treat it as read-only.
    """
    path = root / MANIFEST
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            identity = (st.st_ino, st.st_size, st.st_mtime_ns)
            hit = _PARSED.get(path)
            if hit is not None and hit[0] == identity:
                return hit[1]
            text = f.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return []
    try:
        doc = json.loads(text)
        snapshots = doc["snapshots"]
        if doc.get("format") != FORMAT or not isinstance(snapshots, list):
            raise ValueError(f"unknown manifest format {doc.get('format')!r}")
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreError(
            f"{path} is not a readable svcnb manifest ({exc}). It is only ever replaced "
            "atomically, so something else changed it: restore it from a backup, or "
            "remove it to start the history afresh (the Parquet files stay readable by DuckDB)."
        ) from None
    _PARSED[path] = (identity, snapshots)
    return snapshots


def write_manifest(root: Path, snapshots: list[dict[str, Any]]) -> None:
    # one compact line per snapshot: still plain JSON to read and grep, at about half the bytes
    # of an indented file (it is rewritten whole at every snapshot)
    lines = ",\n".join(json.dumps(e, sort_keys=True, separators=(",", ":")) for e in snapshots)
    text = f'{{"format": {FORMAT}, "snapshots": [\n{lines}\n]}}\n'
    write_atomic(root / MANIFEST, text.encode())


@contextlib.contextmanager
def writer_lock(root: Path) -> Iterator[None]:
    """Exclusive lock for one writer at a time, across processes (released if the process dies)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK, "a+b") as f:
        if fcntl is not None:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def warn(message: str) -> None:
    warnings.warn(message, SnapshotWarning, stacklevel=4)
