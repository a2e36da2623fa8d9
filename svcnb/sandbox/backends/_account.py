"""What a backend needs of the account that holds it, and nothing more.

``State`` (``.._state``) holds the backends and satisfies this protocol; a backend sees only
these members, so the backends depend on this module and never on ``State`` (which builds
them): the import graph has no circle, not even under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from datetime import datetime
from threading import RLock
from typing import Any, Protocol

from .._clock import Clock


class SyncFaults(Protocol):
    """The injected failures a backend itself acts on (the rest are the server's)."""

    @property
    def upstreamSyncFail(self) -> bool: ...  # noqa: N802 - the control API's field name

    @property
    def detachFail(self) -> bool: ...  # noqa: N802


class Account(Protocol):
    """The clock, ids, events and lock that every backend of one account shares."""

    @property
    def lock(self) -> RLock: ...

    @property
    def default_secrets(self) -> dict[str, str]: ...

    @property
    def faults(self) -> SyncFaults: ...

    @property
    def clock(self) -> Clock: ...

    # the server's counters (``/_control/stats``): a backend counts what it alone sees
    @property
    def stats(self) -> dict[str, Any]: ...

    def new_id(self, prefix: str) -> str: ...

    def now(self) -> datetime: ...

    def stamp(self) -> str: ...

    def touch(self, record: dict) -> None: ...

    def emit(self, type: str, data: dict) -> dict: ...  # noqa: A002 - the field is called type
