"""The pacing governor: one per (base URL, token), shared by every thread and every Client.

It sends only while the last known ``X-RateLimit-Remaining`` minus the requests still in flight
is above zero, and otherwise waits for ``X-RateLimit-Reset``. It never assumes a window length:
everything it knows comes from the headers (the sandbox and the real service use a fixed window,
but nothing here depends on that).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Mapping

import httpx

# Sent this long after the estimated reset, so a request never lands just before it.
RESET_MARGIN_SECONDS = 0.05


def _number(headers: Mapping[str, str], name: str) -> float | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


class Governor:
    """Rate-limit state of one token on one server.

    ``acquire()`` blocks until a request may be sent and returns the seconds it waited;
    ``release(headers)`` is called once per acquired request when its answer (or failure) came.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._inflight = 0
        self.limit: int | None = None
        self.remaining: int | None = None  # None: unknown, send one probe at a time
        self._reset_at: float | None = None  # clock time the current window ends
        self.window: float | None = None  # longest Reset seen: the window length, at most
        # The server answered without rate-limit headers: nothing to pace by, so no probing.
        self.headerless = False

    def acquire(self) -> float:
        start = self._clock()
        with self._cond:
            while True:
                now = self._clock()
                if self._reset_at is not None and now >= self._reset_at + RESET_MARGIN_SECONDS:
                    # A new window began; its size is the last limit seen, if any.
                    self._reset_at = None
                    self.remaining = self.limit
                if self.remaining is None:
                    if self._inflight == 0 or self.headerless:
                        break
                    self._cond.wait()
                    continue
                if self.remaining - self._inflight > 0:
                    break
                if self._reset_at is None:
                    self._cond.wait()  # an answer in flight will tell when the window ends
                else:
                    self._cond.wait(self._reset_at + RESET_MARGIN_SECONDS - now)
            self._inflight += 1
        return self._clock() - start

    def release(self, headers: Mapping[str, str] | None) -> None:
        """Account for one answered (or failed) request; ``headers`` of the answer, if any."""
        with self._cond:
            self._inflight -= 1
            if headers is not None:
                self._learn(headers)
            self._cond.notify_all()

    def pause(self, seconds: float) -> None:
        """A 429 came: nobody sends for ``seconds``; afterwards probe one request at a time."""
        with self._cond:
            # Retry-After is the server's own word on when the bucket refills.
            self.remaining = 0
            self._reset_at = self._clock() + seconds
            # After the pause the bucket's state is unknown until an answer tells it.
            self.limit = None
            self._cond.notify_all()

    def _learn(self, headers: Mapping[str, str]) -> None:
        limit = _number(headers, "x-ratelimit-limit")
        remaining = _number(headers, "x-ratelimit-remaining")
        reset = _number(headers, "x-ratelimit-reset")
        changed = limit is not None and self.limit is not None and int(limit) != self.limit
        if limit is not None:
            self.limit = int(limit)
        if remaining is None or reset is None:
            self.headerless = self.remaining is None
            return
        self.headerless = False
        now = self._clock()
        reset_at = now + reset
        if changed:
            # The token's limit was changed: what was known of the window no longer holds.
            self.remaining, self._reset_at, self.window = int(remaining), reset_at, reset
            return
        self.window = max(self.window or 0.0, reset)
        # Answers arrive out of order: one from an earlier window must not undo what a later
        # one said. Two estimates of one window's end differ by rounding only (under a second
        # or half a window); a later window ends at least most of a window later.
        slack = min(1.0, (self.window or 2.0) / 2)
        if self._reset_at is None or reset_at > self._reset_at + slack:
            if self._reset_at is None and reset_at <= now:
                return  # a straggler from a window that already ended
            self.remaining = int(remaining)
            self._reset_at = reset_at
        elif reset_at >= self._reset_at - slack:
            self.remaining = (
                int(remaining) if self.remaining is None else min(self.remaining, int(remaining))
            )
            self._reset_at = min(self._reset_at, reset_at)
        # else: an answer from an older window; what it says is stale.

    def estimate_seconds(self, requests: int, seconds_per_request: float, workers: int) -> float:
        """Least time ``requests`` take at the current limit, given a latency and ``workers``."""
        with self._cond:
            by_latency = requests * seconds_per_request / max(1, workers)
            limit, remaining, window = self.limit, self.remaining, self.window
            reset_in = 0.0 if self._reset_at is None else max(0.0, self._reset_at - self._clock())
        if not limit or not window:
            return by_latency
        left = requests - (remaining if remaining is not None else limit)
        if left <= 0:
            return by_latency
        windows_after = math.ceil(left / limit) - 1
        return max(by_latency, reset_in + windows_after * window)


_registry: dict[tuple[str, str], Governor] = {}
_registry_lock = threading.Lock()


def governor_for(base_url: str, token: str | None) -> Governor:
    """The one governor of ``token`` on the server of ``base_url`` (whatever path the URL
    holds); requests without a token share one, as they share the server's per-IP bucket."""
    # Keyed by a digest so the registry never holds the secret itself.
    digest = hashlib.sha256((token or "").encode()).hexdigest()
    url = httpx.URL(base_url)
    key = (f"{url.scheme}://{url.netloc.decode('ascii')}", digest)
    with _registry_lock:
        gov = _registry.get(key)
        if gov is None:
            gov = _registry[key] = Governor()
        return gov
