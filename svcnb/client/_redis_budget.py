"""One rate budget per token for svcnb processes on several machines, kept on a Redis server.

The same budget as :mod:`svcnb.client._shared_budget` (the token's announced window, and the
requests sent and not yet answered), with the same four operations, for processes that share no
file: ``[budget] backend = "redis://host:6379/0"`` in the config file (or that URL in
``$SVCNB_BUDGET``). Per token (the same digest key as the file: Redis never holds a token) there
are two keys, ``svcnb:budget:<key>:window`` (a hash: limit, remaining, reset_at, length,
headerless) and ``svcnb:budget:<key>:grants`` (a hash: grant id -> host, pid, window end,
expiry), both forgotten after two idle days.

Each change is one optimistic transaction (``WATCH`` the two keys, decide in Python by the rules
of :class:`~svcnb.client._window.Window`, ``MULTI``/``EXEC``; tried again when another process
changed them in between). A look that finds no room writes nothing. Times are the Redis server's
clock (``TIME``), the one clock every machine shares; an answer's arrival is moved onto it by
how long ago it came on the local clock.

A grant of a process on this machine that is gone stops counting once its window has ended, as
with the file; a process on another machine cannot be checked, so its grants end after
``GRANT_SECONDS`` at the latest. A server that cannot be reached: one warning, and this process
paces its own requests from then on.

Why not a rate-limiting library here either: see :mod:`svcnb.client._shared_budget` (what is
shared is the server's announced window and the requests in flight, which the libraries' fixed
rates cannot be told).
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from svcnb.client._shared_budget import (
    ENV_BUDGET,
    FORGET_SECONDS,
    GRANT_SECONDS,
    _alive,
    _window,
    wait_for_grant,
)
from svcnb.client._window import Window

_T = TypeVar("_T")
PREFIX = "svcnb:budget:"
# a transaction that keeps losing to other writers tries again, after a short random pause,
# for up to this long; then local pacing for this request (a busy budget must not stall a pull)
CONTENDED_SECONDS = 5.0
_HOST = socket.gethostname()


def shown_url(url: str) -> str:
    """``url`` without a password, for messages and reprs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


class RedisBudget:
    """The budget on one Redis server, opened once per process and used by all its threads
    (redis-py's client is thread-safe; each transaction takes a pipeline of its own)."""

    def __init__(self, url: str, password: str | None = None) -> None:
        self.url = url
        self.path = shown_url(url)  # what TokenBudget's repr and the warning show
        self._password = password
        self._lock = threading.Lock()
        self._client: Any = None
        self._pid = 0
        self.broken: str | None = None
        self._warned = False
        self.contended = 0  # transactions given up for contention (local pacing those times)

    # -- the operations of a Governor --------------------------------------------------------

    def acquire(self, key: str, within: float) -> tuple[int | None, float | None]:
        """As :meth:`SharedBudget.acquire`: ``(grant, None)``, ``(None, seconds)`` when the
        wait would be longer than ``within``, ``(None, None)`` when Redis cannot be used."""
        return wait_for_grant(
            lambda: self._atomic(key, lambda *state: self._try_grant(key, *state)), within
        )

    def release(
        self, key: str, grant: int, headers: Mapping[str, str] | None, received: float
    ) -> Window | None:
        """Give ``grant`` back and take in its answer's ``headers`` (arrived at ``received``,
        local wall clock); returns the shared view after that."""
        ago = max(0.0, time.time() - received)

        def work(pipe: Any, window: Window, grants: dict, now: float) -> Window:
            if headers is not None:
                window.learn(headers, now - ago)
            pipe.multi()
            pipe.hdel(_grants(key), str(grant))
            if headers is not None:
                _save(pipe, key, window)
            return window

        return self._atomic(key, work)

    def pause(self, key: str, seconds: float) -> None:
        """A 429: no process on any machine sends on this token for ``seconds``."""

        def work(pipe: Any, window: Window, grants: dict, now: float) -> None:
            window.pause(seconds, now)
            pipe.multi()
            _save(pipe, key, window)

        self._atomic(key, work)

    def view(self, key: str) -> tuple[Window, int]:
        """The shared window of ``key`` and its grants outstanding (for tests and benches)."""

        def work(pipe: Any, window: Window, grants: dict, now: float) -> tuple[Window, int]:
            return window, sum(1 for g in grants.values() if g[3] > now)

        return self._atomic(key, work) or (Window(), 0)

    # -- inside one transaction ----------------------------------------------------------------

    @staticmethod
    def _try_grant(
        key: str, pipe: Any, window: Window, grants: dict, now: float
    ) -> tuple[int | None, float, float]:
        live = {gid: g for gid, g in grants.items() if g[3] > now and not _dead(g, now)}
        look_again = window.next_send(len(live), now)
        if look_again is not None:
            return None, look_again, now
        gone = [gid for gid in grants if gid not in live]
        grant = int(pipe.incr(f"{PREFIX}{key}:next"))  # immediate: ids need not be in order
        window_end = now if window.reset_at is None else window.reset_at
        pipe.multi()
        if gone:
            pipe.hdel(_grants(key), *gone)
        record = f"{_HOST}|{os.getpid()}|{window_end!r}|{now + GRANT_SECONDS!r}"
        pipe.hset(_grants(key), str(grant), record)
        _save(pipe, key, window)  # next_send may have rolled it to a new window
        return grant, now, now

    # -- the server ----------------------------------------------------------------------------

    def _atomic(self, key: str, work: Callable[[Any, Window, dict, float], _T]) -> _T | None:
        """``work(pipe, window, grants, now)`` with the two keys watched; what it queues after
        ``pipe.multi()`` is applied only if nobody changed them meanwhile (else tried again).
        None when Redis cannot be used."""
        if self.broken is not None:
            return None
        import redis  # only a process that names a Redis budget needs the package

        try:
            client = self._connection()
            give_up = time.monotonic() + CONTENDED_SECONDS
            pause = 0.0005
            while time.monotonic() < give_up:
                with client.pipeline() as pipe:
                    try:
                        pipe.watch(_window_key(key), _grants(key))
                        seconds, micros = pipe.time()
                        now = seconds + micros / 1e6
                        raw = pipe.hgetall(_window_key(key))
                        grants = {
                            gid.decode(): _grant(value)
                            for gid, value in pipe.hgetall(_grants(key)).items()
                        }
                        result = work(pipe, _from_hash(raw), grants, now)
                        if pipe.explicit_transaction:
                            pipe.expire(_window_key(key), int(FORGET_SECONDS))
                            pipe.expire(_grants(key), int(FORGET_SECONDS))
                            pipe.execute()
                        return result
                    except redis.WatchError:
                        pass
                # another process changed the keys first: let it be, then look again
                time.sleep(pause * (0.5 + random.random()))
                pause = min(2 * pause, 0.004)
            self.contended += 1
            return None
        except (redis.RedisError, OSError, ValueError) as exc:
            self._give_up(exc)
            return None

    def _connection(self) -> Any:
        with self._lock:
            if self._client is not None and self._pid == os.getpid():
                return self._client
            import redis

            # a client inherited through fork() shares its parent's sockets: make a new one
            self._client = redis.Redis.from_url(
                self.url, password=self._password, socket_timeout=5, socket_connect_timeout=5
            )
            self._pid = os.getpid()
            return self._client

    def _give_up(self, exc: BaseException) -> None:
        self.broken = f"{type(exc).__name__}: {exc}"[:300]
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"svcnb cannot use the shared rate budget on {self.path} ({self.broken}); this "
                "process paces its own requests only from now on, so others on the same token "
                f"may meet 429 answers. Check the server, or set {ENV_BUDGET}=off.",
                RuntimeWarning,
                stacklevel=5,
            )


def _window_key(key: str) -> str:
    return f"{PREFIX}{key}:window"


def _grants(key: str) -> str:
    return f"{PREFIX}{key}:grants"


def _grant(raw: bytes) -> tuple[str, int, float, float]:
    host, pid, window_end, expires_at = raw.decode().split("|")
    return host, int(pid), float(window_end), float(expires_at)


def _dead(grant: tuple[str, int, float, float], now: float) -> bool:
    """A grant of a process on this machine that is gone, in a window that has ended."""
    host, pid, window_end, _ = grant
    return host == _HOST and window_end <= now and pid != os.getpid() and not _alive(pid)


def _from_hash(raw: Mapping[bytes, bytes]) -> Window:
    if not raw:
        return Window()

    def get(name: str, kind: Callable[[str], Any]) -> Any:
        value = raw.get(name.encode())
        return None if value is None or value == b"" else kind(value.decode())

    return _window(
        (
            get("lim", int),
            get("remaining", int),
            get("reset_at", float),
            get("length", float),
            get("headerless", int) or 0,
        )
    )


def _save(pipe: Any, key: str, window: Window) -> None:
    def text(value: Any) -> str:
        return "" if value is None else repr(value)

    pipe.hset(
        _window_key(key),
        mapping={
            "lim": text(window.limit),
            "remaining": text(window.remaining),
            "reset_at": text(window.reset_at),
            "length": text(window.length),
            "headerless": str(int(window.headerless)),
        },
    )
