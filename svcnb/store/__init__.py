"""The snapshot store: take, list, load as of a time, history, diff, and the journal.

What it promises (layout, accounts, missing resources, the journal): docs/contracts.md §5.
The folders are drawn in ``svcnb.store._layout``.
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
