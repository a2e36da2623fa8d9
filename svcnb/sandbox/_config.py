"""Settings of one sandbox: fleet size and seed, clock speed, limits, and where it listens."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from typing import Any

from ._dialect import Dialect

DEFAULT_EPOCH = datetime(2026, 11, 1, tzinfo=UTC)
DEFAULT_SEED = 7
DEFAULT_VMS = 40
DEFAULT_TOKEN_RATE_LIMIT = 600
DEFAULT_IP_RATE_LIMIT = 100
DEFAULT_RATE_WINDOW_SECONDS = 60.0
MAX_BODY_BYTES = 64 * 1024
# deeper than any body the API takes (two levels) or an event's data needs, far below what
# would strain a recursive encoder
MAX_JSON_DEPTH = 32


@dataclass(frozen=True)
class SandboxConfig:
    """Everything that fixes how a sandbox starts; the same config and seed give the same bytes.

    ``time_scale`` 0 freezes the sandbox clock (only ``/_sandbox/clock/advance`` moves it);
    ``K > 0`` runs it K times faster than real time. ``ca_bundle`` is a PEM file the webhook
    deliveries trust in addition to the system store (for a local test receiver). ``dialect``
    is how the sandbox speaks (docs/dialects.md): a named dialect (``default``, ``acme``, ...;
    ``_dialect.NAMED``) or ``random:SEED``. ``trusted_proxies`` are the addresses (or CIDR networks)
    of proxies whose ``X-Forwarded-For`` names the caller for the per-IP rate limit; from any
    other peer the header is ignored (default: none, the socket peer is the caller).
    """

    seed: int = DEFAULT_SEED
    vms: int = DEFAULT_VMS
    time_scale: float = 0.0
    epoch: datetime = DEFAULT_EPOCH
    latency_ms: float = 0.0
    rate_limit: int = DEFAULT_TOKEN_RATE_LIMIT
    ip_rate_limit: int = DEFAULT_IP_RATE_LIMIT
    rate_window_seconds: float = DEFAULT_RATE_WINDOW_SECONDS
    ca_bundle: str | None = None
    dialect: str = "default"
    trusted_proxies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.trusted_proxies, str):
            raise ValueError("trusted_proxies must be a list of addresses, not one string")
        object.__setattr__(self, "trusted_proxies", proxy_list(self.trusted_proxies))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if isinstance(self.vms, bool) or not isinstance(self.vms, int) or self.vms < 0:
            raise ValueError(f"vms must be an integer >= 0, got {self.vms!r}")
        if self.time_scale < 0:
            raise ValueError(
                f"time_scale must be >= 0 (0 freezes the clock), got {self.time_scale}"
            )
        if self.latency_ms < 0:
            raise ValueError(f"latency_ms must be >= 0, got {self.latency_ms}")
        for name in ("rate_limit", "ip_rate_limit"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1 per window, got {value!r}")
        if self.rate_window_seconds <= 0:
            raise ValueError(f"rate_window_seconds must be > 0, got {self.rate_window_seconds}")
        if self.epoch.tzinfo is None:
            raise ValueError("epoch must be timezone-aware (UTC)")
        Dialect.parse(self.dialect)  # raises ValueError naming the choices

    def with_changes(self, **changes: Any) -> SandboxConfig:
        """A copy with ``changes`` applied; unknown names raise ValueError naming known ones."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"unknown sandbox setting(s) {unknown}; known: {sorted(known)}")
        return replace(self, **changes)


def proxy_list(values: object) -> tuple[str, ...]:
    """``values`` as a tuple of normalised addresses or networks; ValueError naming a bad one."""
    out: list[str] = []
    for value in values:  # type: ignore[attr-defined]
        if not isinstance(value, str):
            raise ValueError(f"trusted proxy {value!r} is not an address")
        try:
            network = ipaddress.ip_network(value.strip(), strict=False)
        except ValueError:
            raise ValueError(
                f"trusted proxy {value[:80]!r} is not an IP address or CIDR network"
            ) from None
        out.append(str(network.network_address) if network.num_addresses == 1 else str(network))
    return tuple(dict.fromkeys(out))
