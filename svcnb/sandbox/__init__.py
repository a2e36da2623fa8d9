"""A faithful, stateful local emulator of the VM-hosting public API (the svcnb sandbox).

What it serves and how it is driven: docs/contracts.md §1 and §2, its dialects docs/dialects.md,
a twin's dialect file docs/twin.md, and the README's table of what the default dialect does.

For tests of one's own: ``new_state(SandboxConfig(...))`` builds a sandbox's :class:`State`
without a server (``new_vm_record`` adds a VM as the seed makes one, ``Clock`` is its time), and
the rules and tables it follows are named (``GRACE``, ``LOW_BALANCE_WINDOW``, ``add_month``,
``pack_bytes_of``, ``PLANS``, ``ROUTES``, ``caller_ip``, ``DELIVERY_POOLS``, and the points a
dialect file may state: ``POINTS``, ``DIALECT_POINTS``, ``SERVICE_POINTS``, ``AT_LEAST_POINTS``,
``VM_CLASSES``, ``BILLING_CLASSES``).

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
    from ._build import new_state
    from ._clock import Clock
    from ._config import DEFAULT_SEED, DEFAULT_VMS, SandboxConfig
    from ._control_client import ClockReading, Control
    from ._deliveries import wait_idle
    from ._dialect import (
        DELIVERY_POOLS,
        LINK_FORMS,
        MONEY,
        NAMED,
        PAGING,
        RAM_UNITS,
        TIMESTAMPS,
        TOKEN_NAMES,
        VALIDATION_STATUS,
        Dialect,
    )
    from ._following import SandboxClock
    from ._life import (
        GRACE,
        LOW_BALANCE_WINDOW,
        add_month,
        daily_rate_bytes,
        pack_bytes_of,
        will_exceed_pack,
    )
    from ._plans_regions import CURRENCY, PLANS
    from ._public import ROUTES
    from ._ratelimit import caller_ip
    from ._saved import StateError, export_state, read_state_file, write_state_file
    from ._seed import new_vm_record
    from ._serve import Sandbox, serve
    from ._speak import write_money, write_time
    from ._state import State
    from ._twin import (
        AT_LEAST_POINTS,
        BILLING_CLASSES,
        DIALECT_POINTS,
        POINTS,
        SERVICE_POINTS,
        VM_CLASSES,
        DialectFile,
        read_dialect_file,
        validation_wording,
    )

# public name -> the module (under svcnb.sandbox) that defines it. NAMED (what `--dialect NAME`
# accepts) and the choice tuples of the open points (docs/dialects.md's table: LINK_FORMS, MONEY,
# PAGING, RAM_UNITS, TIMESTAMPS, TOKEN_NAMES, VALIDATION_STATUS) are what a twin's dialect file
# and a sweep over dialects are written against.
_WHERE = {
    "CURRENCY": "_plans_regions",
    "DEFAULT_SEED": "_config",
    "DEFAULT_VMS": "_config",
    "LINK_FORMS": "_dialect",
    "MONEY": "_dialect",
    "NAMED": "_dialect",
    "PAGING": "_dialect",
    "RAM_UNITS": "_dialect",
    "TIMESTAMPS": "_dialect",
    "TOKEN_NAMES": "_dialect",
    "VALIDATION_STATUS": "_dialect",
    "ClockReading": "_control_client",
    "Control": "_control_client",
    "Dialect": "_dialect",
    "DialectFile": "_twin",  # what read_dialect_file returns
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
    "AT_LEAST_POINTS": "_twin",
    "BILLING_CLASSES": "_twin",
    "DIALECT_POINTS": "_twin",
    "POINTS": "_twin",
    "SERVICE_POINTS": "_twin",
    "VM_CLASSES": "_twin",
    "GRACE": "_life",
    "LOW_BALANCE_WINDOW": "_life",
    "add_month": "_life",
    "pack_bytes_of": "_life",
    "new_state": "_build",
    "State": "_state",
    "new_vm_record": "_seed",
    "PLANS": "_plans_regions",
    "Clock": "_clock",
    "DELIVERY_POOLS": "_dialect",
    "ROUTES": "_public",
    "caller_ip": "_ratelimit",
}
# public name -> the module it is (under svcnb.sandbox)
_MODULES = {"connection": "_connection"}

__all__ = [
    "AT_LEAST_POINTS",
    "BILLING_CLASSES",
    "CURRENCY",
    "DEFAULT_SEED",
    "DEFAULT_VMS",
    "DELIVERY_POOLS",
    "DIALECT_POINTS",
    "GRACE",
    "LINK_FORMS",
    "LOW_BALANCE_WINDOW",
    "MONEY",
    "NAMED",
    "PAGING",
    "PLANS",
    "POINTS",
    "RAM_UNITS",
    "ROUTES",
    "SERVICE_POINTS",
    "TIMESTAMPS",
    "TOKEN_NAMES",
    "VALIDATION_STATUS",
    "VM_CLASSES",
    "Clock",
    "ClockReading",
    "Control",
    "Dialect",
    "DialectFile",
    "Sandbox",
    "SandboxClock",
    "SandboxConfig",
    "State",
    "StateError",
    "add_month",
    "caller_ip",
    "connection",
    "create_app",
    "daily_rate_bytes",
    "export_state",
    "new_state",
    "new_vm_record",
    "pack_bytes_of",
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
