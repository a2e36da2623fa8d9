"""The snapshot store: take, list, load as of a time, history, diff.

One Delta Lake table per resource, in a folder or on object storage, that DuckDB, Polars or
Spark read without svcnb (layout in ``svcnb.store._layout``). Unchanged rows are not written
again; a snapshot is published by one commit to the catalog table, whole or not at all, also
with several writers; a store holds one account's history, or several partitioned by account
(``Store.accounts()``, ``account=`` on every reader), each account name bound to one server and
wallet; tokens and webhook secrets never enter it. Beside the snapshots, ``Store.journal``
(``Journal``) keeps what was done with the store: rule edits, accepted findings and their
revocations, stop plans and alert state, one typed record kind per table.
A resource that could not be read is recorded as missing, with the reason, never as empty:
reading it at that snapshot raises ``MissingResourceError``.
"""

from __future__ import annotations

from ._accounts import EVERY_ACCOUNT, SEVERAL_ACCOUNTS_NOTE, Accounts, account_names, stack
from ._asof import Snapshot
from ._eventlog import EventLog
from ._fs import is_remote
from ._journal import Journal
from ._journal_kinds import (
    KINDS,
    AcceptanceRevoked,
    AlertRecord,
    FindingAccepted,
    JournalRecord,
    RuleEdit,
    StopPlanRecord,
    from_audit,
)
from ._layout import (
    DEFAULT_PATH,
    ENV_PATH,
    DamagedCommitError,
    MissingResourceError,
    OriginError,
    SnapshotWarning,
    StoreError,
    resolve_path,
    resolve_url,
)
from ._migrate import migrate
from ._pull import reason_of
from ._reading import check_readable
from ._snapshots import RESOURCES
from ._store import Store, TimeLike

__all__ = [
    "DEFAULT_PATH",
    "ENV_PATH",
    "EVERY_ACCOUNT",
    "KINDS",
    "RESOURCES",
    "SEVERAL_ACCOUNTS_NOTE",
    "AcceptanceRevoked",
    "Accounts",
    "AlertRecord",
    "DamagedCommitError",
    "EventLog",
    "FindingAccepted",
    "Journal",
    "JournalRecord",
    "MissingResourceError",
    "OriginError",
    "RuleEdit",
    "Snapshot",
    "SnapshotWarning",
    "StopPlanRecord",
    "Store",
    "StoreError",
    "TimeLike",
    "account_names",
    "check_readable",
    "from_audit",
    "is_remote",
    "migrate",
    "reason_of",
    "resolve_path",
    "resolve_url",
    "stack",
]
