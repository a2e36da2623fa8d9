"""svcnb: the VM-hosting public API in Jupyter.

- ``svcnb.connect()``: a :class:`Client`, on a local sandbox when no server is configured;
- ``svcnb.configured_client("prod")``: the Client of an account of the config file (or of the
  server the environment names), never on a sandbox started for it;
- ``svcnb.sandbox_control()``: that sandbox's control helper (None on the real service);
- ``svcnb.Store``, ``svcnb.reports``, ``svcnb.panels``: the Delta store, reports and panels;
- ``svcnb.rehearse(store)``: a sandbox holding a copy of a stored snapshot;
- :mod:`svcnb.errors`: every error svcnb raises on purpose.

All but the errors, ``svcnb.config`` and ``svcnb.vocab`` load on first use, so ``import svcnb``
is quick and ``svcnb.<Tab>`` still lists them all. The README is the tour.
"""

from __future__ import annotations

import typing as _typing

from svcnb import config as config  # noqa: PLC0414 - `svcnb.config` after `import svcnb`
from svcnb import vocab as vocab  # noqa: PLC0414 - `svcnb.vocab.extend(...)` after `import svcnb`
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
    RefusedFile,
    SchemaDriftWarning,
    ScopeError,
    ServerError,
    SvcnbError,
    TransportError,
    UpstreamSyncError,
    ValidationError,
    WaitTimeout,
)

# Names imported from their module on first access: `import svcnb` (and so the `svcnb` command,
# whose --help needs none of them) loads neither the client's HTTP stack nor pandas, pyarrow or
# the Delta store. tests/install/test_startup_imports.py holds each entry point to that.
_LAZY_NAMES = {
    "Client": "svcnb.client",
    "configured_client": "svcnb._connect",
    "connect": "svcnb._connect",
    "sandbox_control": "svcnb._connect",
    "Rehearsal": "svcnb.learn.rehearsal",
    "rehearse": "svcnb.learn.rehearsal",
    "Store": "svcnb.store",
    "StoreError": "svcnb.store",
    "MissingResourceError": "svcnb.store",
    "SnapshotWarning": "svcnb.store",
}
# Subpackages reached as attributes (``svcnb.reports.billing``), imported on first access.
_LAZY = (
    "alerts",
    "cli",
    "client",
    "frames",
    "jupyter",
    "learn",
    "money",
    "panels",
    "plans",
    "reports",
    "sandbox",
    "store",
    "webhooks",
)

if _typing.TYPE_CHECKING:
    from svcnb._connect import configured_client, connect, sandbox_control
    from svcnb.client import Client
    from svcnb.learn.rehearsal import Rehearsal, rehearse
    from svcnb.store import MissingResourceError, SnapshotWarning, Store, StoreError

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
    "RefusedFile",
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
    "configured_client",
    "connect",
    "rehearse",
    "sandbox_control",
]


def __getattr__(name: str) -> object:
    import importlib

    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
    elif name in _LAZY:
        value = importlib.import_module(f"svcnb.{name}")
    else:
        raise AttributeError(f"module 'svcnb' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *_LAZY, "config", "errors", "vocab"})
