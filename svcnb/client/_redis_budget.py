"""One rate budget per token for svcnb processes on several machines, kept on a Redis server.

The budget of :mod:`svcnb.client._shared_budget` for processes that share no file (``[budget]
backend = "redis://..."``, README). Per token digest (Redis never holds a token) two hashes,
``svcnb:budget:<key>:window`` and ``svcnb:budget:<key>:grants``, forgotten after two idle days.

Each change is one optimistic transaction (``WATCH`` the two keys, decide in Python by the rules
of :class:`~svcnb.client._window.Window`, ``MULTI``/``EXEC``; again when another process changed
them in between). Times are the Redis server's clock (``TIME``), the one clock every machine
shares; an answer's arrival is moved onto it by how long ago it came on the local clock. A
process on another machine cannot be checked for life, so its grants end after
``GRANT_SECONDS`` at the latest. An unreachable server: one warning, then local pacing only.
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

from svcnb.client._budget import (
    ENV_BUDGET,
    FORGET_SECONDS,
    GRANT_SECONDS,
    Budget,
    process_alive,
    stored_window,
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


class RedisBudget(Budget):
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
        self.late = 0  # transactions a request's deadline cut short (local pacing those times)
        self._warned_late = False

    # -- the operations of a Governor --------------------------------------------------------

    def acquire(
        self, key: str, within: float, ends: float | None = None
    ) -> tuple[int | None, float | None]:
        """As :meth:`SharedBudget.acquire`: ``(grant, None)``, ``(None, seconds)`` when the
        wait would be longer than ``within``, ``(None, None)`` when Redis cannot be used, or did
        not answer by ``ends`` (the request's deadline, a ``time.monotonic()`` instant: a Redis on
        a slow link must not hold a request past it)."""
        return wait_for_grant(
            lambda: self._atomic(key, lambda *state: self._try_grant(key, *state), ends), within
        )

    def release(
        self,
        key: str,
        grant: int,
        headers: Mapping[str, str] | None,
        received: float,
        ends: float | None = None,
    ) -> Window | None:
        """Give ``grant`` back and take in its answer's ``headers`` (arrived at ``received``,
        local wall clock); returns the shared view after that. Round trips end by ``ends`` (a
        ``time.monotonic()`` instant); a grant not given back then runs out by itself."""
        ago = max(0.0, time.time() - received)

        def work(pipe: Any, window: Window, grants: dict, now: float) -> Window:
            if headers is not None:
                window.learn(headers, now - ago)
            pipe.multi()
            pipe.hdel(_grants(key), str(grant))
            if headers is not None:
                _save(pipe, key, window)
            return window

        return self._atomic(key, work, ends)

    def pause(self, key: str, seconds: float, ends: float | None = None) -> None:
        """A 429: no process on any machine sends on this token for ``seconds``."""

        def work(pipe: Any, window: Window, grants: dict, now: float) -> None:
            window.pause(seconds, now)
            pipe.multi()
            _save(pipe, key, window)

        self._atomic(key, work, ends)

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

    def _atomic(
        self,
        key: str,
        work: Callable[[Any, Window, dict, float], _T],
        ends: float | None = None,
    ) -> _T | None:
        """``work(pipe, window, grants, now)`` with the two keys watched; what it queues after
        ``pipe.multi()`` is applied only if nobody changed them meanwhile (else tried again).
        None when Redis cannot be used, or did not answer by ``ends`` (a ``time.monotonic()``
        instant: every connect, send and read on the way is cut to it)."""
        if self.broken is not None:
            return None
        import redis  # only a process that names a Redis budget needs the package

        _op_ends.value = ends
        try:
            client = self._connection()
            give_up = time.monotonic() + CONTENDED_SECONDS
            if ends is not None:
                give_up = min(give_up, ends)
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
            if ends is not None and time.monotonic() >= ends:
                self._late()
            else:
                self.contended += 1
            return None
        except (redis.RedisError, OSError, ValueError) as exc:
            if ends is not None and time.monotonic() >= ends - _LATE_SLACK:
                self._late()  # the request's deadline cut it: Redis is slow, not gone
            else:
                self._give_up(exc)
            return None
        finally:
            _op_ends.value = None

    def _connection(self) -> Any:
        with self._lock:
            if self._client is not None and self._pid == os.getpid():
                return self._client
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry

            # a client inherited through fork() shares its parent's sockets: make a new one.
            # No retries of its own: redis-py's default waits seconds between them, unbounded
            # by any deadline, and a failed transaction here already means local pacing.
            self._client = redis.Redis.from_url(
                self.url,
                password=self._password,
                socket_timeout=5,
                socket_connect_timeout=5,
                retry=Retry(NoBackoff(), 0),
                connection_class=_bounded_connection(self.url),
            )
            self._pid = os.getpid()
            return self._client

    def _late(self) -> None:
        self.late += 1
        if not self._warned_late:
            self._warned_late = True
            warnings.warn(
                f"the shared rate budget on {self.path} did not answer within what was left of a "
                "request's deadline; such requests go by this process's own pacing (said once), "
                "so others on the same token may meet 429 answers. Check the server's latency, "
                f"or set {ENV_BUDGET}=off.",
                RuntimeWarning,
                stacklevel=5,
            )

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


# The deadline of the transaction this thread is running, for the connection to cut its socket
# steps to (redis-py's commands take no deadline of their own).
_op_ends = threading.local()
# A failure this close to the deadline is the deadline's doing: the step was cut to it.
_LATE_SLACK = 0.05


def _left() -> float | None:
    ends = getattr(_op_ends, "value", None)
    return None if ends is None else ends - time.monotonic()


_bounded_classes: dict[str, type] = {}


def _bounded_connection(url: str) -> type:
    """redis-py's connection class for ``url``'s scheme, each connect, send and read of it cut
    to what is left of the running transaction's deadline."""
    import redis
    from redis.connection import AbstractConnection, SSLConnection, UnixDomainSocketConnection

    base: type[AbstractConnection] = {
        "rediss": SSLConnection,
        "unix": UnixDomainSocketConnection,
    }.get(urlsplit(url).scheme, redis.Connection)
    found = _bounded_classes.get(base.__name__)
    if found is not None:
        return found

    def cut(seconds: float | None) -> float | None:
        left = _left()
        if left is None:
            return seconds
        if left <= 0:
            raise redis.TimeoutError("the request's deadline passed")
        return left if seconds is None else min(seconds, left)

    # the base is chosen at run time, which mypy cannot follow as a base class
    class Bounded(base):  # type: ignore[misc, valid-type]
        # redis-py's property; declared so that mypy knows it past the dynamic base
        socket_connect_timeout: float | None

        def connect_check_health(self, *args: Any, **kwargs: Any) -> Any:
            if self._sock is not None or _left() is None:
                return super().connect_check_health(*args, **kwargs)
            saved = self.socket_connect_timeout
            self.socket_connect_timeout = cut(saved)
            try:
                return super().connect_check_health(*args, **kwargs)
            finally:
                self.socket_connect_timeout = saved

        def send_packed_command(self, command: Any, check_health: bool = True) -> Any:
            if _left() is None:
                return super().send_packed_command(command, check_health)
            if self._sock is None:
                self.connect_check_health(check_health=False)
            self._sock.settimeout(cut(self.socket_timeout))
            try:
                return super().send_packed_command(command, check_health)
            finally:
                if self._sock is not None:
                    self._sock.settimeout(self.socket_timeout)

        def read_response(self, *args: Any, **kwargs: Any) -> Any:
            if _left() is not None and "timeout" not in kwargs:
                kwargs["timeout"] = cut(self.socket_timeout)
            return super().read_response(*args, **kwargs)

    Bounded.__name__ = Bounded.__qualname__ = f"Bounded{base.__name__}"
    _bounded_classes[base.__name__] = Bounded
    return Bounded


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
    return host == _HOST and window_end <= now and pid != os.getpid() and not process_alive(pid)


def _from_hash(raw: Mapping[bytes, bytes]) -> Window:
    if not raw:
        return Window()

    def get(name: str, kind: Callable[[str], Any]) -> Any:
        value = raw.get(name.encode())
        return None if value is None or value == b"" else kind(value.decode())

    return stored_window(
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
