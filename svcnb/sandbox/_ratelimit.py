"""Rate limits, counted in ``state.rate_buckets`` under the lock (which bucket counts a request:
the README's table of what the sandbox does; the headers: docs/contracts.md §1).

The dialect's ``rate_window`` says how: ``fixed`` windows (a bucket is ``[start, count]``) or a
``sliding`` log (the times of the requests counted in the last window; the reset is when the
oldest leaves it). Windows run on real monotonic time, not the sandbox clock, so a frozen clock
cannot freeze a limit.

The IP is the socket peer's. ``X-Forwarded-For`` counts only when the peer is a proxy the
operator named (``trusted_proxies``): then the caller is the rightmost address in the header
that is not itself a trusted proxy. From anyone else the header is ignored, so a caller cannot
buy a fresh bucket by inventing an address.
"""

from __future__ import annotations

import ipaddress
import math
import time
from dataclasses import dataclass
from functools import lru_cache

from ._state import State


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int
    message: str | None

    def headers(self) -> dict[str, str]:
        headers = {
            "x-ratelimit-limit": str(self.limit),
            "x-ratelimit-remaining": str(self.remaining),
            "x-ratelimit-reset": str(self.reset_seconds),
        }
        if not self.allowed:
            headers["retry-after"] = str(self.reset_seconds)
        return headers


@lru_cache(maxsize=64)
def _networks(
    proxies: tuple[str, ...],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(p, strict=False) for p in proxies)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def caller_ip(peer: str, forwarded_for: str | None, proxies: tuple[str, ...]) -> str:
    """The address whose bucket a request without a valid token counts in (module docstring)."""
    if not proxies or not forwarded_for:
        return peer
    networks = _networks(proxies)

    def trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
        return address is not None and any(address in n for n in networks)

    if not trusted(_address(peer)):
        return peer
    for hop in reversed(forwarded_for.split(",")[-32:]):
        address = _address(hop)
        if address is None:
            # a hop that is no address: the chain cannot be followed past it
            return peer
        if not trusted(address):
            return str(address)
    return peer


def _window_words(seconds: float) -> str:
    if seconds == 60:
        return "per minute"
    return f"per {seconds:g} seconds"


def count(state: State, token: dict | None, ip: str) -> Verdict:
    """Count one request in its bucket and say whether it may go ahead."""
    window = state.settings.rateWindowSeconds
    if token is not None:
        key = f"token:{token['id']}"
        limit = token["rateLimit"] or state.settings.defaultRateLimit
        bucket_words = f"the per-token limit of {limit} requests {_window_words(window)}"
    else:
        key = f"ip:{ip}"
        limit = state.settings.ipRateLimit
        bucket_words = (
            f"the global per-IP fallback limit of {limit} requests "
            f"{_window_words(window)} (requests without a valid token)"
        )
    now = time.monotonic()
    with state.lock:
        if state.dialect.rate_window == "sliding":
            return _sliding(state, key, limit, window, now, bucket_words)
        bucket = state.rate_buckets.get(key)
        if bucket is None or now - bucket[0] >= window:
            bucket = [now, 0]
            state.rate_buckets[key] = bucket
        # window minus the time elapsed: (start + window) - now would round when start + window
        # crosses a power of two (a fresh window then said 61 s)
        reset = max(1, math.ceil(window - (now - bucket[0])))
        if bucket[1] >= limit:
            return Verdict(
                False,
                limit,
                0,
                reset,
                f"Rate limit exceeded: {bucket_words}. Retry after {reset} seconds",
            )
        bucket[1] += 1
        return Verdict(True, limit, limit - int(bucket[1]), reset, None)


def _sliding(
    state: State, key: str, limit: int, window: float, now: float, bucket_words: str
) -> Verdict:
    log = state.rate_buckets.setdefault(key, [])
    while log and now - log[0] >= window:
        log.pop(0)
    if len(log) >= limit:
        reset = max(1, math.ceil(window - (now - log[0])))
        return Verdict(
            False,
            limit,
            0,
            reset,
            f"Rate limit exceeded: {bucket_words}. Retry after {reset} seconds",
        )
    log.append(now)
    reset = max(1, math.ceil(window - (now - log[0])))
    return Verdict(True, limit, limit - len(log), reset, None)
