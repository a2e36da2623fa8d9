"""What is known of one token's rate-limit window, and how each answer's headers update it.

Pure state, no lock and no clock of its own: every method takes ``now``. The in-process
:class:`~svcnb.client._pacing.Governor` keeps one on the monotonic clock; the budget shared by
processes (:mod:`svcnb.client._shared_budget`) keeps one per token on the wall clock, so both
follow the headers by the same rules.

Nothing here assumes a window length: everything comes from ``X-RateLimit-Limit``,
``-Remaining`` and ``-Reset`` (and a 429's ``Retry-After``). A value that is not a number
between 0 and a sane ceiling (a day of seconds, a billion requests) is ignored, so no wait can
overflow a timer or hold the state for longer than a day.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

# Sent this long after the estimated reset, so a request never lands just before it.
RESET_MARGIN_SECONDS = 0.05
# A reset further away than this is garbage, not a window: it is ignored (and a pause is cut
# to it), so no timer overflows and no header holds the shared state for longer.
MAX_SERVER_SECONDS = 86_400.0
# Two estimates of one window's end closer than this (or half a window) are of one window.
SAME_WINDOW_SECONDS = 2.0
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


@dataclass
class Window:
    """The last word of the server on a token's bucket; times are on the caller's clock."""

    limit: int | None = None
    remaining: int | None = None  # None: unknown, send one probe at a time
    reset_at: float | None = None  # when the current window ends
    length: float | None = None  # longest Reset seen: the window length, at most
    # The server answered without rate-limit headers: nothing to pace by, so no probing.
    headerless: bool = False

    def next_send(self, inflight: int, now: float) -> float | None:
        """None when one more request may be sent with ``inflight`` unanswered; else when to
        look again: the end of the window, or ``math.inf`` (when an answer in flight tells)."""
        if self.reset_at is not None and now >= self.reset_at + RESET_MARGIN_SECONDS:
            # A new window began; its size is the last limit seen, if any.
            self.reset_at = None
            self.remaining = self.limit
        if self.remaining is None:
            return None if inflight == 0 or self.headerless else math.inf
        if self.remaining - inflight > 0:
            return None
        if self.reset_at is None:
            return math.inf
        return self.reset_at + RESET_MARGIN_SECONDS

    def pause(self, seconds: float, now: float) -> None:
        """A 429 asked for ``seconds``: nobody sends until then, and then one probe at a time."""
        seconds = min(max(0.0, seconds), MAX_SERVER_SECONDS) if seconds == seconds else 0.0
        # Retry-After is the server's own word on when the bucket refills.
        self.remaining = 0
        self.reset_at = now + seconds
        # After the pause the bucket's state is unknown until an answer tells it.
        self.limit = None

    def learn(self, headers: Mapping[str, str], now: float) -> None:
        """Take in the rate-limit headers of one answer, which may arrive out of order."""
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
        reset_at = now + reset
        if changed:
            # The token's limit was changed: what was known of the window no longer holds.
            self.remaining, self.reset_at, self.length = int(remaining), reset_at, reset
            return
        self.length = max(self.length or 0.0, reset)
        # Answers arrive out of order: one from an earlier window must not undo what a later
        # one said. Two estimates of one window's end differ by the rounding of Reset (under a
        # second) plus the time an answer waited before it was taken in (a busy machine, the
        # shared file's lock): under two seconds, or half a window. A later window ends at
        # least most of a window later. A same-window answer taken for a later window would
        # put back what the window had early on, and let requests out beyond the budget.
        slack = min(SAME_WINDOW_SECONDS, (self.length or 2 * SAME_WINDOW_SECONDS) / 2)
        if self.reset_at is None or reset_at > self.reset_at + slack:
            if self.reset_at is None and reset_at <= now:
                return  # a straggler from a window that already ended
            self.remaining = int(remaining)
            self.reset_at = reset_at
        elif reset_at >= self.reset_at - slack:
            self.remaining = (
                int(remaining) if self.remaining is None else min(self.remaining, int(remaining))
            )
            self.reset_at = min(self.reset_at, reset_at)
        # else: an answer from an older window; what it says is stale.

    def as_headers(self, now: float) -> dict[str, str] | None:
        """This state told as an answer's headers would tell it (for another :class:`Window`
        to :meth:`learn` from), or None when it knows no window."""
        if self.limit is None or self.remaining is None or self.reset_at is None:
            return None
        return {
            "x-ratelimit-limit": str(self.limit),
            "x-ratelimit-remaining": str(self.remaining),
            "x-ratelimit-reset": repr(max(0.0, self.reset_at - now)),
        }
