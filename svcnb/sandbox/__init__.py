"""A faithful, stateful local emulator of the VM-hosting public API (the svcnb sandbox).

``serve()`` runs it on loopback; ``create_app()`` gives the ASGI app for in-process use.
"""

from __future__ import annotations

from ._app import create_app
from ._config import SandboxConfig
from ._control_client import Control
from ._deliveries import wait_idle
from ._life import daily_rate_bytes, will_exceed_pack
from ._serve import Sandbox, serve

__all__ = [
    "Control",
    "Sandbox",
    "SandboxConfig",
    "create_app",
    "daily_rate_bytes",
    "serve",
    "wait_idle",
    "will_exceed_pack",
]
