"""Everything the sandbox holds, behind one lock.

``State`` is the container of the emulated account: one backend per resource (``state.backends``,
see :mod:`.backends`), the clock, ids and events they share, and the server's own machinery
(faults, settings, rate-limit counters, stored idempotent responses, the dialect). Every reader
and writer holds ``state.lock`` (re-entrant), so HTTP workers, the clock ticker and delivery
threads see one consistent account; everything that reads or changes records goes through the
backend that owns them.
"""

from __future__ import annotations

import hashlib
import random
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ._clock import Clock
from ._config import SandboxConfig
from ._dialect import Dialect
from ._envelopes import iso, parse_iso
from .backends import Backends

_ONE_SECOND = timedelta(seconds=1)

Listener = Callable[[dict], None]


@dataclass
class Faults:
    """Injected failures; all off by default. ``errorRoutes`` empty means every public route."""

    latencyMs: float = 0.0
    errorRate: float = 0.0
    errorRoutes: list[str] = field(default_factory=list)
    dropRate: float = 0.0
    upstreamSyncFail: bool = False
    detachFail: bool = False
    seed: int = 0


@dataclass
class Settings:
    """Rate-limit knobs that control can change at run time."""

    rateWindowSeconds: float = 60.0
    ipRateLimit: int = 100
    defaultRateLimit: int = 600
    # proxies whose X-Forwarded-For is believed (addresses or CIDR networks); empty: none
    trustedProxies: list[str] = field(default_factory=list)


class State:
    """The emulated account (see the module docstring). Build it with ``_build.new_state``."""

    def __init__(self, config: SandboxConfig) -> None:
        self.lock = threading.RLock()
        # secrets of the default tokens (admin, read, none): drawn once per server, kept across
        # resets so a handle's tokens stay valid; set by ``_build``
        self.default_secrets: dict[str, str] = {}
        # this server's identity, kept across resets: a connection file records it, so a reader
        # tells the sandbox that wrote the file from a new one started since on its port
        self.instance = secrets.token_hex(8)
        # the saved state this server started from (``_saved``), which a reset goes back to
        self.start_doc: dict | None = None
        self.clear(config)

    def clear(self, config: SandboxConfig) -> None:
        """Forget everything and start an empty account on a fresh clock at ``config.epoch``."""
        with self.lock:
            self.config = config
            self.seed = config.seed
            # how the account is said on the wire; the records themselves stay canonical
            self.dialect = Dialect.parse(config.dialect)
            self.clock = Clock(config.epoch, config.time_scale, self.lock)
            # the account: one backend per resource, and the events they emit
            self.backends = Backends.empty(self)
            self.events: list[dict] = []
            self.listeners: list[Listener] = []
            # the life engine (``_life.install`` sets it); a saved state asks it what it knows
            self.life: Any = None
            # the server's own machinery
            self.faults = Faults(latencyMs=config.latency_ms)
            self.fault_rng = random.Random(0)
            self.settings = Settings(
                rateWindowSeconds=config.rate_window_seconds,
                ipRateLimit=config.ip_rate_limit,
                defaultRateLimit=config.rate_limit,
                trustedProxies=list(config.trusted_proxies),
            )
            self.stats: dict = {"requests": 0, "byStatus": {}}
            self.rate_buckets: dict[str, list[float]] = {}
            self.idempotency: dict[tuple[str, str], dict] = {}
            self._counters: dict[str, int] = {}

    # -- ids ------------------------------------------------------------------------------
    def new_id(self, prefix: str) -> str:
        """A fresh id like ``vm_3f9c0a1b2c4d5e6f``: fixed by the seed and how many came before."""
        with self.lock:
            n = self._counters.get(prefix, 0)
            self._counters[prefix] = n + 1
        digest = hashlib.sha256(f"{self.seed}:{prefix}:{n}".encode()).hexdigest()
        return f"{prefix}_{digest[:16]}"

    # -- time -----------------------------------------------------------------------------
    def now(self) -> datetime:
        return self.clock.now()

    def stamp(self) -> str:
        """The sandbox time as served in records."""
        return iso(self.clock.now())

    def touch(self, record: dict) -> None:
        """Set ``updatedAt`` to now, one second past its old value when the clock has not moved,
        so a client refreshing by ``updatedAt`` always sees the change."""
        now = self.stamp()
        old = record.get("updatedAt")
        if old is not None and now <= old:
            now = iso(parse_iso(old).replace(microsecond=0) + _ONE_SECOND)
        record["updatedAt"] = now

    # -- events ---------------------------------------------------------------------------
    def emit(self, type: str, data: dict) -> dict:  # noqa: A002 - the field is called type
        """Record the event ``{id, type, createdAt, data}`` and hand it to every listener."""
        with self.lock:
            event = {
                "id": self.new_id("evt"),
                "type": type,
                "createdAt": self.stamp(),
                "data": data,
            }
            self.events.append(event)
            for listener in list(self.listeners):
                listener(event)
            return event
