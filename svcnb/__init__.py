"""svcnb: the VM-hosting public API in Jupyter.

``svcnb.connect()`` returns a :class:`Client` (on a local sandbox when no server is configured);
``svcnb.sandbox_control()`` returns that sandbox's control helper (None on the real service);
``svcnb.rehearse(store)`` starts a sandbox holding a copy of a stored snapshot;
errors live in :mod:`svcnb.errors`. ``svcnb.reports`` and ``svcnb.panels`` (and the other
subpackages) load on first use, so ``svcnb.<Tab>`` lists them without importing matplotlib or
ipywidgets up front.
"""

from __future__ import annotations

from svcnb import config as config  # noqa: PLC0414 - `svcnb.config` after `import svcnb`
from svcnb import vocab as vocab  # noqa: PLC0414 - `svcnb.vocab.extend(...)` after `import svcnb`
from svcnb._connect import connect, sandbox_control
from svcnb._rehearse import Rehearsal, rehearse
from svcnb.client import Client
from svcnb.errors import (
    ApiError,
    AuthError,
    Conflict,
    Forbidden,
    IncompleteWarning,
    LimitExceeded,
    MissingFieldError,
    NotFound,
    PagingError,
    PagingWarning,
    RateLimited,
    SchemaDriftWarning,
    ScopeError,
    ServerError,
    SvcnbError,
    TransportError,
    UpstreamSyncError,
    ValidationError,
    WaitTimeout,
)
from svcnb.store import MissingResourceError, SnapshotWarning, Store, StoreError

# Subpackages reached as attributes (``svcnb.reports.billing``), imported on first access.
_LAZY = ("frames", "panels", "reports", "sandbox", "store", "webhooks")

# Kept sorted; tests/test_exports.py checks it is sorted and names every public name.
__all__ = [
    "ApiError",
    "AuthError",
    "Client",
    "Conflict",
    "Forbidden",
    "IncompleteWarning",
    "LimitExceeded",
    "MissingFieldError",
    "MissingResourceError",
    "NotFound",
    "PagingError",
    "PagingWarning",
    "RateLimited",
    "Rehearsal",
    "SchemaDriftWarning",
    "ScopeError",
    "ServerError",
    "SnapshotWarning",
    "Store",
    "StoreError",
    "SvcnbError",
    "TransportError",
    "UpstreamSyncError",
    "ValidationError",
    "WaitTimeout",
    "connect",
    "rehearse",
    "sandbox_control",
]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f"svcnb.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'svcnb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*__all__, *_LAZY, "config", "errors", "vocab"})
