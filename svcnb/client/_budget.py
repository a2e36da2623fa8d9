"""The rate budget a token's processes share: the :class:`Budget` contract, and the rules both
keepers follow.

The two keepers (a SQLite file, :mod:`svcnb.client._shared_budget`; a Redis server,
:mod:`svcnb.client._redis_budget`) import nothing of each other. What both follow lives here: how
long a grant lasts, when a process holding grants counts as gone, how a stored window is read
back, and how a request waits for its grant.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from svcnb.client._window import MAX_COUNT, MAX_SERVER_SECONDS, Window

ENV_BUDGET = "SVCNB_BUDGET"
# Any grant ends this long after it was given, answered or not: well past the time one attempt
# can take (the Client's default deadline), so only a hung process meets it.
GRANT_SECONDS = 300.0
# How often a request waiting on another process looks at the budget again: for the answer to
# a first request (which says what the window holds) and, while the window is spent, for a
# grant given back without an answer (a failed request frees its slot).
ANSWER_POLL_SECONDS = 0.02
WINDOW_POLL_SECONDS = 0.25
# Windows nobody used for this long are forgotten, so the budget stays small.
FORGET_SECONDS = 2 * 86_400.0


class Budget(Protocol):
    """One keeper of shared budgets, opened once per process and used by all its threads; each
    token's budget is a ``key`` (:func:`budget_key`: a digest, never the token).

    ``acquire`` waits until the shared window has room and takes a grant: ``(grant, None)``;
    ``(None, seconds)`` when the wait would be longer than ``within`` (``math.inf``: unknown);
    ``(None, None)`` when the keeper cannot be used or did not answer by ``ends`` (the
    request's deadline, a ``time.monotonic()`` instant): the request goes by local pacing.
    ``release`` gives a grant back and takes in its answer's headers (which came at
    ``received``, wall clock), returning the shared window after that (None: not reachable).
    ``pause`` stops every process on the token for ``seconds`` (a 429). ``view`` is the shared
    window and the grants outstanding. None of them raises: a keeper that fails warns once and
    sets ``broken`` to why. ``path`` is where it is kept, without any password, for messages.
    """

    path: object
    broken: str | None

    def acquire(
        self, key: str, within: float, ends: float | None = None
    ) -> tuple[int | None, float | None]: ...

    def release(
        self,
        key: str,
        grant: int,
        headers: Mapping[str, str] | None,
        received: float,
        ends: float | None = None,
    ) -> Window | None: ...

    def pause(self, key: str, seconds: float, ends: float | None = None) -> None: ...

    def view(self, key: str) -> tuple[Window, int]: ...


class TokenBudget:
    """One token's share of a :class:`Budget`: what a Governor holds."""

    def __init__(self, budget: Budget, key: str) -> None:
        self.budget = budget
        self.key = key

    def acquire(self, within: float, ends: float | None = None) -> tuple[int | None, float | None]:
        return self.budget.acquire(self.key, within, ends=ends)

    def release(
        self,
        grant: int,
        headers: Mapping[str, str] | None,
        received: float,
        ends: float | None = None,
    ) -> Window | None:
        return self.budget.release(self.key, grant, headers, received, ends=ends)

    def pause(self, seconds: float, ends: float | None = None) -> None:
        self.budget.pause(self.key, seconds, ends=ends)

    def view(self) -> tuple[Window, int]:
        return self.budget.view(self.key)

    def __repr__(self) -> str:
        return f"TokenBudget({str(self.budget.path)!r}, key={self.key[:12]}…)"


def budget_key(server: str, token_digest: str) -> str:
    """The row key of a token on a server: a digest of a digest, never the token."""
    return hashlib.sha256(f"{server}\n{token_digest}".encode()).hexdigest()


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine still runs (True where that cannot be told)."""
    if os.name != "posix":
        return True  # os.kill would end the process there; such grants end by GRANT_SECONDS
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _count(value: object, ceiling: float) -> bool:
    return isinstance(value, int) and 0 <= value <= ceiling


def _time(value: object) -> bool:
    return isinstance(value, float | int) and math.isfinite(value)


def stored_window(row: tuple | None) -> Window:
    """A stored ``(limit, remaining, reset_at, length, headerless)`` as a Window; a row holding
    what no svcnb wrote is read as an unknown window."""
    if row is None:
        return Window()
    lim, remaining, reset_at, length, headerless = row
    if not (
        (lim is None or _count(lim, MAX_COUNT))
        and (remaining is None or _count(remaining, MAX_COUNT))
        and (reset_at is None or _time(reset_at))
        and (length is None or (_time(length) and 0 <= length <= MAX_SERVER_SECONDS))
    ):
        return Window()
    return Window(lim, remaining, reset_at, length, bool(headerless))


def wait_for_grant(
    attempt: Callable[[], tuple[int | None, float, float] | None], within: float
) -> tuple[int | None, float | None]:
    """Call ``attempt`` (one look at a shared budget: ``(grant or None, when to look again,
    now)``, or None when the backend cannot be used) until it grants, the wait would be longer
    than ``within`` seconds, or the backend fails; the answers of ``acquire``."""
    give_up = time.monotonic() + max(0.0, within)
    while True:
        outcome = attempt()
        if outcome is None:
            return None, None
        grant, look_again, now = outcome
        if grant is not None:
            return grant, None
        left = give_up - time.monotonic()
        if look_again != math.inf and look_again - now > left:
            return None, look_again - now  # longer than the caller may wait: say so now
        if left <= 0:
            return None, math.inf
        poll = WINDOW_POLL_SECONDS if look_again != math.inf else ANSWER_POLL_SECONDS
        time.sleep(max(0.0, min(look_again - now, poll, left)))
