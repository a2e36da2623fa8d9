"""A faithful, stateful local emulator of the VM-hosting public API (the svcnb sandbox).

What it serves and how it is driven: docs/contracts.md §1 and §2, its dialects docs/dialects.md,
a twin's dialect file docs/twin.md, and the README's table of what the default dialect does.

The names load from their modules on first use, so ``svcnb sandbox --help`` (which needs only
the defaults in ``_config``) imports neither uvicorn nor httpx. Nothing here imports svcnb's
client side: the two meet only over HTTP.
"""

from __future__ import annotations

import importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from . import _connection as connection
    from ._app import create_app
    from ._config import DEFAULT_SEED, DEFAULT_VMS, SandboxConfig
    from ._control_client import ClockReading, Control
    from ._deliveries import wait_idle
    from ._dialect import MONEY, TIMESTAMPS, TOKEN_NAMES, VALIDATION_STATUS, Dialect
    from ._following import SandboxClock
    from ._life import daily_rate_bytes, will_exceed_pack
    from ._plans_regions import CURRENCY
    from ._saved import StateError, export_state, read_state_file, write_state_file
    from ._serve import Sandbox, serve
    from ._speak import write_money, write_time
    from ._twin import read_dialect_file, validation_wording

# public name -> the module (under svcnb.sandbox) that defines it
_WHERE = {
    "CURRENCY": "_plans_regions",
    "DEFAULT_SEED": "_config",
    "DEFAULT_VMS": "_config",
    "MONEY": "_dialect",
    "TIMESTAMPS": "_dialect",
    "TOKEN_NAMES": "_dialect",
    "VALIDATION_STATUS": "_dialect",
    "ClockReading": "_control_client",
    "Control": "_control_client",
    "Dialect": "_dialect",
    "Sandbox": "_serve",
    "SandboxClock": "_following",
    "SandboxConfig": "_config",
    "StateError": "_saved",
    "create_app": "_app",
    "daily_rate_bytes": "_life",
    "export_state": "_saved",
    "read_dialect_file": "_twin",
    "read_state_file": "_saved",
    "serve": "_serve",
    "validation_wording": "_twin",
    "wait_idle": "_deliveries",
    "will_exceed_pack": "_life",
    "write_money": "_speak",
    "write_state_file": "_saved",
    "write_time": "_speak",
}
# public name -> the module it is (under svcnb.sandbox)
_MODULES = {"connection": "_connection"}

__all__ = [
    "CURRENCY",
    "DEFAULT_SEED",
    "DEFAULT_VMS",
    "MONEY",
    "TIMESTAMPS",
    "TOKEN_NAMES",
    "VALIDATION_STATUS",
    "ClockReading",
    "Control",
    "Dialect",
    "Sandbox",
    "SandboxClock",
    "SandboxConfig",
    "StateError",
    "connection",
    "create_app",
    "daily_rate_bytes",
    "export_state",
    "read_dialect_file",
    "read_state_file",
    "serve",
    "validation_wording",
    "wait_idle",
    "will_exceed_pack",
    "write_money",
    "write_state_file",
    "write_time",
]


def __getattr__(name: str) -> object:
    if name in _MODULES:
        value: object = importlib.import_module(f"{__name__}.{_MODULES[name]}")
    elif name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    else:
        raise AttributeError(f"module 'svcnb.sandbox' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *globals()})
