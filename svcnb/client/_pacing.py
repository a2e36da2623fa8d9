"""The pacing governor: one per (base URL, token) in a process, shared by its threads and Clients.

It never assumes a window length: it follows the headers by the rules of
:class:`~svcnb.client._window.Window`. A request this process lets go also needs a grant from the
budget other processes share (:class:`~svcnb.client._budget.Budget`); this process's view stays
in front of it, so threads that cannot send wait here, on a condition, instead of polling the
shared budget.

A caller says how long it may wait at most (``acquire(within=)``; ``ends=``, its deadline, bounds
the shared budget's round trips) and is told instead of held past that. A call interrupted
while it holds a slot gives it back (the caller releases in a ``finally``), so other calls on
the token never wait for an answer that will not come.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping

import httpx

from svcnb.client._budget import TokenBudget
from svcnb.client._keepers import token_budget
from svcnb.client._redact import Secret, as_secret
from svcnb.client._window import (
    MAX_COUNT,
    MAX_SERVER_SECONDS,
    RESET_MARGIN_SECONDS,
    Window,
    server_seconds,
)

# the fewest requests left in a window for the shared file to be skipped: far more than all the
# workers of a few processes can have in flight between two answers
PLENTY_FLOOR = 256

__all__ = [
    "MAX_COUNT",
    "MAX_SERVER_SECONDS",
    "RESET_MARGIN_SECONDS",
    "Governor",
    "governor_for",
    "server_seconds",
]


class Governor:
    """Rate-limit state of one token on one server.

    ``acquire(within)`` blocks until a request may be sent (and holds a slot: None), or
    returns, holding nothing, the seconds it would still have to wait when that is more than
    ``within`` (``math.inf``: unknown, other answers were awaited in vain). ``release(headers)``
    is called once per held slot when its answer (or failure) came, also when interrupted.
    ``shared``: the token's budget shared with other processes (None: this process alone).
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, shared: TokenBudget | None = None
    ) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._inflight = 0
        self._state = Window()
        self.shared = shared
        self._grants: list[int] = []  # shared grants held by this process's requests in flight

    # What is known of the window, as the headers said it (read by callers and tests).
    @property
    def limit(self) -> int | None:
        return self._state.limit

    @property
    def remaining(self) -> int | None:
        return self._state.remaining

    @property
    def window(self) -> float | None:
        return self._state.length

    @property
    def headerless(self) -> bool:
        return self._state.headerless

    def acquire(
        self, within: float = MAX_SERVER_SECONDS, ends: float | None = None
    ) -> float | None:
        give_up = self._clock() + max(0.0, within)
        with self._cond:
            while True:
                now = self._clock()
                wake = self._state.next_send(self._inflight, now)
                if wake is None:
                    break
                if wake != math.inf and wake > give_up:
                    return wake - now  # longer than the caller may wait: say so at once
                if now >= give_up:
                    return math.inf
                # math.inf: an answer in flight will tell what remains or when the window ends.
                self._cond.wait(min(wake, give_up) - now)
            self._inflight += 1
            plenty = self._plenty()
        if self.shared is None or plenty:
            return None
        grant: int | None = None
        owed: float | None = math.inf
        try:
            grant, owed = self.shared.acquire(within=max(0.0, give_up - self._clock()), ends=ends)
        finally:
            if owed is not None:  # also when interrupted: the local slot is given back
                self._give_back(None)
        if grant is not None:
            with self._cond:
                self._grants.append(grant)
        return owed

    def _plenty(self) -> bool:
        """True while the budget the server last announced is so far from spent that no number
        of svcnb processes on this machine could spend it before their next answers say more:
        then the shared file is skipped (two write transactions a request). Every answer carries
        the server's count of all processes' requests, so each one turns back to the shared file
        as soon as half the window is used. Called holding the condition."""
        state = self._state
        if state.limit is None or state.remaining is None or state.headerless:
            return False
        margin = max(state.limit // 2, PLENTY_FLOOR)
        return state.remaining - self._inflight >= margin

    def release(self, headers: Mapping[str, str] | None, ends: float | None = None) -> None:
        """Account for one answered (or failed) request; ``headers`` of the answer, if any.
        ``ends`` (``time.monotonic()``) bounds the shared budget's round trips."""
        # Reset counts from when the answer came, not from when a lock let it in.
        received = self._clock()
        with self._cond:
            grant = self._grants.pop() if self._grants else None
        shared = None
        if grant is not None and self.shared is not None:
            # Given back before the local slot, so a thread woken by it finds the grant gone.
            wall = time.time()
            view = self.shared.release(grant, headers, wall - (self._clock() - received), ends=ends)
            shared = view.as_headers(time.time()) if view is not None else None
        self._give_back(headers, shared, received)

    def _give_back(
        self,
        headers: Mapping[str, str] | None,
        shared: Mapping[str, str] | None = None,
        received: float | None = None,
    ) -> None:
        with self._cond:
            self._inflight -= 1
            now = self._clock()
            if headers is not None:
                self._state.learn(headers, now if received is None else min(received, now))
            if shared is not None:
                # What all processes' answers said: as if it were one more answer.
                self._state.learn(shared, now)
            self._cond.notify_all()

    def pause(self, seconds: float, ends: float | None = None) -> None:
        """A 429 came: nobody sends for ``seconds``; afterwards probe one request at a time."""
        with self._cond:
            self._state.pause(seconds, self._clock())
            self._cond.notify_all()
        if self.shared is not None:
            self.shared.pause(seconds, ends=ends)

    def estimate_seconds(self, requests: int, seconds_per_request: float, workers: int) -> float:
        """Least time ``requests`` take at the current limit, given a latency and ``workers``."""
        with self._cond:
            by_latency = requests * seconds_per_request / max(1, workers)
            state = self._state
            limit, remaining, window = state.limit, state.remaining, state.length
            reset_in = 0.0 if state.reset_at is None else max(0.0, state.reset_at - self._clock())
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
    holds); requests without a token share one, as they share the server's per-IP bucket.
    Its shared budget is the one ``SVCNB_BUDGET`` names when it is first made."""
    # Keyed by a digest so the registry never holds the secret itself.
    digest = (as_secret(token) or Secret("")).fingerprint()
    url = httpx.URL(base_url)
    server = f"{url.scheme}://{url.netloc.decode('ascii')}"
    key = (server, digest)
    with _registry_lock:
        gov = _registry.get(key)
        if gov is None:
            gov = _registry[key] = Governor(shared=token_budget(server, digest))
        return gov
