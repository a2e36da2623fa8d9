"""A faithful, stateful local emulator of the VM-hosting public API (the svcnb sandbox).

``serve()`` runs it on loopback; ``create_app()`` gives the ASGI app for in-process use.
``export_state``/``read_state_file``/``write_state_file`` save an account and ``serve(saved=...)``
starts from one (format in ``svcnb.sandbox._saved``).

The names load from their modules on first use, so ``svcnb sandbox --help`` (which needs only
the options in ``_cli`` and ``_config``) imports neither uvicorn nor httpx.
"""

from __future__ import annotations

import importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from ._app import create_app
    from ._config import SandboxConfig
    from ._control_client import Control
    from ._deliveries import wait_idle
    from ._life import daily_rate_bytes, will_exceed_pack
    from ._saved import StateError, export_state, read_state_file, write_state_file
    from ._serve import Sandbox, serve

# public name -> the module (under svcnb.sandbox) that defines it
_WHERE = {
    "Control": "_control_client",
    "Sandbox": "_serve",
    "SandboxConfig": "_config",
    "StateError": "_saved",
    "create_app": "_app",
    "daily_rate_bytes": "_life",
    "export_state": "_saved",
    "read_state_file": "_saved",
    "serve": "_serve",
    "wait_idle": "_deliveries",
    "will_exceed_pack": "_life",
    "write_state_file": "_saved",
}

__all__ = [
    "Control",
    "Sandbox",
    "SandboxConfig",
    "StateError",
    "create_app",
    "daily_rate_bytes",
    "export_state",
    "read_state_file",
    "serve",
    "wait_idle",
    "will_exceed_pack",
    "write_state_file",
]


def __getattr__(name: str) -> object:
    if name not in _WHERE:
        raise AttributeError(f"module 'svcnb.sandbox' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *globals()})
