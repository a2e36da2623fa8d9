"""A faithful, stateful local emulator of the VM-hosting public API (the svcnb sandbox).

``serve()`` runs it on loopback; ``create_app()`` gives the ASGI app for in-process use.
``export_state``/``read_state_file``/``write_state_file`` save an account and ``serve(saved=...)``
starts from one (format in ``svcnb.sandbox._saved``).
"""

from __future__ import annotations

from ._app import create_app
from ._config import SandboxConfig
from ._control_client import Control
from ._deliveries import wait_idle
from ._life import daily_rate_bytes, will_exceed_pack
from ._saved import StateError, export_state, read_state_file, write_state_file
from ._serve import Sandbox, serve

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
