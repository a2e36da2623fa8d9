"""The snapshot store: take, list, load as of a time, history, diff, and the journal.

What it promises (layout, accounts, missing resources, the journal): docs/contracts.md §5.
The folders are drawn in ``svcnb.store._layout``. ``pull(client, None)`` reads the frames one
snapshot holds with no store between, ``scrub`` is what every record passes before it is
written, and ``Location.of(url, options)`` the place a store URL names. ``EVENT_COLUMNS`` are the
webhook event log's columns and their dtypes (what :class:`EventLog` frames hold).
"""

from __future__ import annotations

from ._accounts import EVERY_ACCOUNT, SEVERAL_ACCOUNTS_NOTE, Accounts, account_names, stack
from ._asof import Snapshot
from ._eventlog import COLUMNS as EVENT_COLUMNS
from ._eventlog import EventLog
from ._fs import Location, is_remote
from ._journal import Journal
from ._journal_kinds import (
    KINDS,
    AcceptanceRevoked,
    AlertRecord,
    FindingAccepted,
    JournalRecord,
    RuleEdit,
    StopPlanRecord,
    differs,
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
from ._pull import Pulled, pull, reason_of
from ._reading import check_readable
from ._scrub import scrub
from ._snapshots import RESOURCES
from ._store import Store, TimeLike

__all__ = [
    "DEFAULT_PATH",
    "ENV_PATH",
    "EVENT_COLUMNS",
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
    "Location",
    "MissingResourceError",
    "OriginError",
    "Pulled",
    "RuleEdit",
    "Snapshot",
    "SnapshotWarning",
    "StopPlanRecord",
    "Store",
    "StoreError",
    "TimeLike",
    "account_names",
    "check_readable",
    "differs",
    "from_audit",
    "is_remote",
    "migrate",
    "pull",
    "reason_of",
    "resolve_path",
    "resolve_url",
    "scrub",
    "stack",
]
