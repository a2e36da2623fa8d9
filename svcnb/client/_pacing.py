"""The pacing governor: one per (base URL, token), shared by every thread and every Client.

It sends only while the last known ``X-RateLimit-Remaining`` minus the requests still in flight
is above zero, and otherwise waits for ``X-RateLimit-Reset``. It never assumes a window length:
everything it knows comes from the headers (the sandbox and the real service use a fixed window,
but nothing here depends on that).

Whatever the headers hold, the state stays usable: a value that is not a number between 0 and a
sane ceiling (a day of seconds, a billion requests) is ignored, so no wait can overflow a timer
or hold the shared state for longer than a day.
A caller says how long it may wait at most (``acquire(within=)``) and is told instead of held
past that; a call interrupted while it holds a slot gives it back (the caller releases in a
``finally``), so other calls on the token never wait for an answer that will not come.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime

import httpx

from svcnb.client._redact import Secret, as_secret

# Sent this long after the estimated reset, so a request never lands just before it.
RESET_MARGIN_SECONDS = 0.05
# A reset further away than this is garbage, not a window: it is ignored (and a pause is cut
# to it), so no timer overflows and no header holds the shared state for longer.
MAX_SERVER_SECONDS = 86_400.0
# Counts beyond this are ignored: far above any real budget, small enough for any sum.
MAX_COUNT = 10**9


def _number(headers: Mapping[str, str], name: str, ceiling: float) -> float | None:
    """The header as a number in 0..``ceiling``, or None (absent, not a number, or outside)."""
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        value = float(raw)
    except (ValueError, OverflowError):
        return None
    return value if 0 <= value <= ceiling else None


def server_seconds(raw: str | None) -> float | None:
    """A wait the server asked for (``Retry-After``: seconds or an HTTP date), or None when it
    is absent or not a time; 0 or more, possibly ``math.inf`` (the caller caps it)."""
    if raw is None:
        return None
    try:
        value = float(raw)
    except (ValueError, OverflowError):
        try:
            when = parsedate_to_datetime(raw)
            value = (when - datetime.now(when.tzinfo)).total_seconds()
        except (TypeError, ValueError, OverflowError, IndexError):
            return None
    return None if math.isnan(value) else max(0.0, value)


class Governor:
    """Rate-limit state of one token on one server.

    ``acquire(within)`` blocks until a request may be sent (and holds a slot: None), or
    returns, holding nothing, the seconds it would still have to wait when that is more than
    ``within`` (``math.inf``: unknown, other answers were awaited in vain). ``release(headers)``
    is called once per held slot when its answer (or failure) came, also when interrupted.
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

    def acquire(self, within: float = MAX_SERVER_SECONDS) -> float | None:
        give_up = self._clock() + max(0.0, within)
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
                    wake = give_up  # an answer in flight will tell what remains
                elif self.remaining - self._inflight > 0:
                    break
                elif self._reset_at is None:
                    wake = give_up  # an answer in flight will tell when the window ends
                else:
                    wake = self._reset_at + RESET_MARGIN_SECONDS
                    if wake > give_up:
                        return wake - now  # longer than the caller may wait: say so at once
                if now >= give_up:
                    return math.inf
                self._cond.wait(wake - now)
            self._inflight += 1
        return None

    def release(self, headers: Mapping[str, str] | None) -> None:
        """Account for one answered (or failed) request; ``headers`` of the answer, if any."""
        with self._cond:
            self._inflight -= 1
            if headers is not None:
                self._learn(headers)
            self._cond.notify_all()

    def pause(self, seconds: float) -> None:
        """A 429 came: nobody sends for ``seconds``; afterwards probe one request at a time."""
        seconds = min(max(0.0, seconds), MAX_SERVER_SECONDS) if seconds == seconds else 0.0
        with self._cond:
            # Retry-After is the server's own word on when the bucket refills.
            self.remaining = 0
            self._reset_at = self._clock() + seconds
            # After the pause the bucket's state is unknown until an answer tells it.
            self.limit = None
            self._cond.notify_all()

    def _learn(self, headers: Mapping[str, str]) -> None:
        limit = _number(headers, "x-ratelimit-limit", MAX_COUNT)
        remaining = _number(headers, "x-ratelimit-remaining", MAX_COUNT)
        reset = _number(headers, "x-ratelimit-reset", MAX_SERVER_SECONDS)
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


def governor_for(base_url: str, token: Secret | str | None) -> Governor:
    """The one governor of ``token`` on the server of ``base_url`` (whatever path the URL
    holds); requests without a token share one, as they share the server's per-IP bucket."""
    # Keyed by a digest so the registry never holds the secret itself.
    digest = (as_secret(token) or Secret("")).fingerprint()
    url = httpx.URL(base_url)
    key = (f"{url.scheme}://{url.netloc.decode('ascii')}", digest)
    with _registry_lock:
        gov = _registry.get(key)
        if gov is None:
            gov = _registry[key] = Governor()
        return gov
