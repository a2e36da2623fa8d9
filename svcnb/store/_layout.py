"""Where things live in a store, and the store's errors.

```
<store>/                         a folder, or a URL such as s3://bucket/prefix
  _snapshots/                    Delta table: the catalog, one row per published snapshot
  <resource>/                    Delta table per resource: versions of rows (svcnb.store._segments)
    account=NAME/                in a store of several accounts: that account's files (a Delta
                                 partition: readers see an ``account`` column)
  _journal/<kind>/               Delta table per journal record kind: rule_edits, acceptances,
                                 revocations, stop_plans, alerts (svcnb.store._journal)
  _audit/                        the audit log before the journal, a record per commit; copied
                                 into the journal on its first write, then only read
  audit.jsonl                    the audit log before that table (local stores; read, never written)
  webhook_events.jsonl           webhook event log (svcnb.store._eventlog; local stores)
```
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from svcnb.errors import SvcnbError

DEFAULT_PATH = "data/store"
ENV_PATH = "SVCNB_STORE"


class SnapshotWarning(UserWarning):
    """A snapshot or store file could not be read and was skipped; the others still are."""


class StoreError(SvcnbError, RuntimeError):
    """The store cannot be used as asked; the message says what to do."""


class DamagedCommitError(StoreError):
    """A commit in the Delta log of one of the store's tables is not what svcnb wrote: empty,
    not JSON, or (the catalog's latest) not the commit that published the catalog's file.

    ``path`` is the commit file (a URL on object storage), ``table`` the table's URL and
    ``problem`` what is wrong with the commit; the message also says what to do.
    """

    def __init__(self, message: str, *, path: str, table: str, problem: str) -> None:
        super().__init__(message)
        self.path = path
        self.table = table
        self.problem = problem


class OriginError(StoreError):
    """The store refuses a snapshot: it is of another server or account than the one the store
    holds under that account name, or older than that account's latest.

    ``what`` is ``"server"``, ``"account"`` or ``"time"``; ``held`` is what the store holds
    (the server URL, the account id, the latest server time), ``given`` what the snapshot
    brought. A sandbox started afresh is all three: another port, and a clock that starts
    again, for an account that is not the one stored.
    """

    def __init__(self, message: str, *, what: str, held: str, given: str) -> None:
        super().__init__(message)
        self.what = what
        self.held = held
        self.given = given


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
    return Path(resolve_url(path))


def resolve_url(path: str | os.PathLike[str] | None) -> str:
    """The argument, then ``$SVCNB_STORE``, then ``data/store``: a folder or a URL."""
    if path is not None:
        return os.fspath(path)
    return os.environ.get(ENV_PATH) or DEFAULT_PATH


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


def warn(message: str) -> None:
    warnings.warn(message, SnapshotWarning, stacklevel=4)
