"""One rate budget per token for every svcnb process on this machine (``$SVCNB_BUDGET``: README).

Each process's :class:`~svcnb.client._pacing.Governor` paces its own threads from the
rate-limit headers; alone, three notebooks on one token would each spend the whole budget and
together meet 429s. So every process also keeps, in one small SQLite file, what the latest
answer of *any* of them said of the token's window (on the wall clock: the one clock all
processes share) and a row for each request sent and not yet answered (a grant). No server
runs: the file is the whole of it. Rows are keyed by a SHA-256 of the server and of the token's
own digest: the file never holds a token.

What can go wrong, and what then:

- A process killed while it holds grants: its grants stop counting once the window they were
  given in has ended (the server has forgotten it too), and any grant ends after
  :data:`GRANT_SECONDS`, so nothing blocks others for long.
- A symbolic link, or an SQLite database svcnb did not make (no svcnb ``application_id``): a
  ConfigError, and the file is never opened (the check reads its header only).
- Corrupt, of another schema or unwritable: one warning, and this process paces its own requests
  from then on. Locked for longer than :data:`LOCK_SECONDS`: the same warning (once), and local
  pacing alone for :data:`LOCKED_PAUSE_SECONDS` before the file is tried again.

Why not a rate-limiting library: ``pyrate-limiter`` (the maintained one with SQLite and Redis
buckets) counts requests against rates fixed when the bucket is made, in a sliding log of its
own timestamps. It cannot be told what the server announces (a limit raised per token, what
remains, when *its* fixed window resets, a 429's Retry-After), has no notion of a request in
flight, and its log, started at the first send, runs ahead of a window the server starts at the
first arrival, so each new burst would land just before the server's reset.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import stat
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

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
from svcnb.config import ConfigError, config_path

SCHEMA_VERSION = 1
# A request waits this long for the file's lock; past it, it goes by local pacing, and so do
# the process's requests for LOCKED_PAUSE_SECONDS, so a stuck lock costs one wait, not one each.
LOCK_SECONDS = 5.0
LOCKED_PAUSE_SECONDS = 30.0

# The mark of svcnb's budget file, in the SQLite header (PRAGMA application_id): "svnb". A
# database without it is another program's, which svcnb must not change (not even to WAL).
APPLICATION_ID = 0x73766E62
_SQLITE_MAGIC = b"SQLite format 3\x00"
# what a budget file made before the mark holds (SQLite names its own objects sqlite_*)
_UNMARKED_NAMES = {"windows", "grants", "grants_by_key"}

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS windows (
    key TEXT PRIMARY KEY,
    lim INTEGER,
    remaining INTEGER,
    reset_at REAL,
    length REAL,
    headerless INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS grants (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    pid INTEGER NOT NULL,
    window_end REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS grants_by_key ON grants (key);
"""


def check_budget_file(path: Path) -> None:
    """ConfigError, naming ``path`` and what to do, when it is no file svcnb may keep its
    budget in: a symbolic link (whatever it points to), not a regular file, or an SQLite
    database svcnb did not make. Only the header is read (a foreign database is never opened,
    so nothing of it changes); a path that does not exist yet, or an empty file, is svcnb's to
    make. A file that is no database at all is left to the connection, which fails on it
    without writing and warns."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError:
        return  # unreadable folder: the connection fails on it too, and warns
    own = "a path of svcnb's own (a file that does not exist yet), or off"
    if os.environ.get(ENV_BUDGET, "").strip():
        remedy = f"set {ENV_BUDGET} to {own}"
    else:  # the config file named it: say which file to fix
        remedy = f"set [budget] backend in {config_path()} to {own}"
    if stat.S_ISLNK(info.st_mode):
        raise ConfigError(
            f"the rate budget path {path} is a symbolic link; svcnb never writes where a link "
            f"points (it could be another program's database): {remedy}"
        )
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"the rate budget path {path} is not a regular file: {remedy}")
    if info.st_size == 0:
        return
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            header = os.read(fd, 100)
        finally:
            os.close(fd)
    except OSError:
        return
    if not header.startswith(_SQLITE_MAGIC):
        return
    if int.from_bytes(header[68:72], "big") == APPLICATION_ID or _unmarked_budget(path):
        return
    raise ConfigError(
        f"the rate budget file {path} is an SQLite database svcnb did not make (another "
        f"program's?); svcnb leaves it untouched: {remedy}"
    )


def _unmarked_budget(path: Path) -> bool:
    """Whether ``path`` is a budget file svcnb made before it marked them: its tables and
    schema version, read from the file as it is (``immutable``: no lock taken, no journal or
    shared-memory file made beside it, nothing written)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return False
    try:
        names = {
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master")
            if not name.startswith("sqlite_")
        }
        (version,) = conn.execute("PRAGMA user_version").fetchone()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return version == SCHEMA_VERSION and names == _UNMARKED_NAMES


def _create_private(path: Path) -> None:
    """Make ``path`` an empty file readable by its owner only, unless something is there (a
    link planted between the check and now is not followed: that fails the connection)."""
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
    except FileExistsError:
        return
    os.close(fd)


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


class SharedBudget(Budget):
    """The budget file, opened once per process and used by all its threads (one connection
    under a lock: each transaction is short, and SQLite runs one writer at a time anyway)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self.broken: str | None = None  # why this process no longer shares the file
        self._locked_until = 0.0  # monotonic time until which a locked file is left alone
        self._warned = False

    # -- the three operations of a Governor --------------------------------------------------

    def acquire(
        self, key: str, within: float, ends: float | None = None
    ) -> tuple[int | None, float | None]:
        """Wait until the shared window has room and take a grant: ``(grant, None)``. When the
        wait would be longer than ``within`` seconds: ``(None, seconds)`` (``math.inf``:
        unknown). When the file cannot be used, or is locked past ``ends`` (the request's
        deadline, ``time.monotonic()``): ``(None, None)``, go by local pacing alone."""

        def attempt() -> tuple[int | None, float, float] | None:
            # A look that finds no room writes nothing, so waiting processes, which look
            # again and again, never queue for the lock that the sending ones need.
            peek = self._guarded(
                lambda conn, now: self._peek(conn, key, now), None, write=False, ends=ends
            )
            if peek is None:
                return None
            look_again, now = peek
            if look_again is not None:
                return None, look_again, now
            return self._guarded(lambda conn, now: self._try_grant(conn, key, now), None, ends=ends)

        return wait_for_grant(attempt, within)

    def release(
        self,
        key: str,
        grant: int,
        headers: Mapping[str, str] | None,
        received: float,
        ends: float | None = None,
    ) -> Window | None:
        """Give ``grant`` back and take in its answer's ``headers``, which came at ``received``
        (wall clock); returns the shared view after that (None when the file cannot be used, or
        is locked past ``ends``, a ``time.monotonic()`` instant)."""

        def work(conn: sqlite3.Connection, now: float) -> Window:
            conn.execute("DELETE FROM grants WHERE id = ?", (grant,))
            window = self._load(conn, key)
            if headers is not None:
                # When it came, not when the lock let it in: Reset counts from its coming.
                window.learn(headers, min(received, now))
                self._save(conn, key, window, now)
            return window

        return self._guarded(work, None, ends=ends)

    def pause(self, key: str, seconds: float, ends: float | None = None) -> None:
        """A 429: no process sends on this token for ``seconds``."""

        def work(conn: sqlite3.Connection, now: float) -> None:
            window = self._load(conn, key)
            window.pause(seconds, now)
            self._save(conn, key, window, now)

        self._guarded(work, None, ends=ends)

    def view(self, key: str) -> tuple[Window, int]:
        """The shared window of ``key`` and its grants outstanding (for tests and benches)."""

        def work(conn: sqlite3.Connection, now: float) -> tuple[Window, int]:
            (held,) = conn.execute(
                "SELECT COUNT(*) FROM grants WHERE key = ? AND expires_at > ?", (key, now)
            ).fetchone()
            return self._load(conn, key), held

        return self._guarded(work, (Window(), 0), write=False)

    # -- inside one transaction ------------------------------------------------------------

    def _peek(self, conn: sqlite3.Connection, key: str, now: float) -> tuple[float | None, float]:
        """(None: try to take a grant; else when to look again, as in ``next_send``; now)."""
        window = self._load(conn, key)
        (held,) = conn.execute(
            "SELECT COUNT(*) FROM grants WHERE key = ? AND expires_at > ?", (key, now)
        ).fetchone()
        look_again = window.next_send(held, now)
        if look_again is not None and self._dead(conn, key, now):
            return None, now  # the writing look drops what the dead held, then decides
        return look_again, now

    def _try_grant(
        self, conn: sqlite3.Connection, key: str, now: float
    ) -> tuple[int | None, float, float]:
        window = self._load(conn, key)
        look_again = window.next_send(self._held(conn, key, now), now)
        if look_again is not None and self._forget_the_dead(conn, key, now):
            look_again = window.next_send(self._held(conn, key, now), now)
        if look_again is not None:
            return None, look_again, now
        # The window the grant is counted in ends at the shared reset, if one is known.
        window_end = now if window.reset_at is None else window.reset_at
        cursor = conn.execute(
            "INSERT INTO grants (key, pid, window_end, expires_at) VALUES (?, ?, ?, ?)",
            (key, os.getpid(), window_end, now + GRANT_SECONDS),
        )
        self._save(conn, key, window, now)  # next_send may have rolled it to a new window
        assert cursor.lastrowid is not None
        return cursor.lastrowid, now, now

    @staticmethod
    def _held(conn: sqlite3.Connection, key: str, now: float) -> int:
        conn.execute("DELETE FROM grants WHERE key = ? AND expires_at <= ?", (key, now))
        (held,) = conn.execute("SELECT COUNT(*) FROM grants WHERE key = ?", (key,)).fetchone()
        return held

    @staticmethod
    def _dead(conn: sqlite3.Connection, key: str, now: float) -> list[int]:
        """Processes that are gone and held grants in a window that has ended."""
        pids = conn.execute(
            "SELECT DISTINCT pid FROM grants WHERE key = ? AND window_end <= ? AND pid != ?",
            (key, now, os.getpid()),
        ).fetchall()
        return [pid for (pid,) in pids if not process_alive(pid)]

    def _forget_the_dead(self, conn: sqlite3.Connection, key: str, now: float) -> bool:
        """Drop grants of processes that are gone, once their window has ended."""
        dead = self._dead(conn, key, now)
        for pid in dead:
            conn.execute(
                "DELETE FROM grants WHERE key = ? AND pid = ? AND window_end <= ?", (key, pid, now)
            )
        return bool(dead)

    @staticmethod
    def _load(conn: sqlite3.Connection, key: str) -> Window:
        row = conn.execute(
            "SELECT lim, remaining, reset_at, length, headerless FROM windows WHERE key = ?",
            (key,),
        ).fetchone()
        return stored_window(row)

    @staticmethod
    def _save(conn: sqlite3.Connection, key: str, window: Window, now: float) -> None:
        conn.execute(
            "INSERT INTO windows (key, lim, remaining, reset_at, length, headerless, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET lim = excluded.lim,"
            " remaining = excluded.remaining, reset_at = excluded.reset_at,"
            " length = excluded.length, headerless = excluded.headerless,"
            " updated_at = excluded.updated_at",
            (key, window.limit, window.remaining, window.reset_at, window.length,
             int(window.headerless), now),
        )  # fmt: skip

    # -- the file ------------------------------------------------------------------------------

    def _guarded(
        self,
        work: Callable[[sqlite3.Connection, float], _T],
        fallback: _T,
        *,
        write: bool = True,
        ends: float | None = None,
    ) -> _T:
        """``work(conn, now)`` in one transaction (``write``: holding the file's write lock);
        ``fallback`` when the file cannot be used, or is still locked at ``ends`` (the calling
        request's deadline, a ``time.monotonic()`` instant: that request goes by local pacing).

        A busy file is tried again every few milliseconds for up to ``LOCK_SECONDS``. SQLite's
        own busy handler backs off to 100 ms between tries, and a process whose threads write
        back to back takes the lock again in between each time: under a burst another process
        could wait out the whole timeout. Short, jittered tries get their turn.
        """
        with self._lock:
            if self.broken is not None or time.monotonic() < self._locked_until:
                return fallback
            give_up = time.monotonic() + LOCK_SECONDS
            pause = 0.0005
            while True:
                try:
                    return self._transaction(work, write)
                except sqlite3.OperationalError as exc:
                    if _is_locked(exc) and ends is not None and time.monotonic() >= ends:
                        return fallback  # this request's deadline, not a stuck file
                    if not _is_locked(exc) or time.monotonic() >= give_up:
                        return self._give_up(exc, fallback)
                except (sqlite3.Error, OSError, ConfigError) as exc:
                    return self._give_up(exc, fallback)
                time.sleep(pause * (0.5 + random.random()))
                pause = min(2 * pause, 0.004)

    def _transaction(self, work: Callable[[sqlite3.Connection, float], _T], write: bool) -> _T:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            result = work(conn, time.time())
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        return result

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        # A connection inherited through fork() is the parent's: SQLite forbids using it.
        self._conn, self._pid = None, os.getpid()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # again here, not only when the client was made: the path may have changed since
        check_budget_file(self.path)
        _create_private(self.path)
        conn = sqlite3.connect(
            self.path, timeout=LOCK_SECONDS, isolation_level=None, check_same_thread=False
        )
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version not in (0, SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"schema version {version}, not {SCHEMA_VERSION}")
            (mark,) = conn.execute("PRAGMA application_id").fetchone()
            if mark != APPLICATION_ID:
                # before WAL, so the mark is in the file's own header, where the check of
                # every other process reads it
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute("PRAGMA journal_mode = WAL")
            # WAL with NORMAL syncs at checkpoints only: a lost grant after a power cut is
            # harmless, a sync per request is not.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(_SCHEMA)
            now = time.time()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM grants WHERE expires_at <= ?", (now,))
            conn.execute("DELETE FROM windows WHERE updated_at <= ?", (now - FORGET_SECONDS,))
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
            # From here on a busy file is waited for by _guarded, in short tries.
            conn.execute("PRAGMA busy_timeout = 0")
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return conn

    def _give_up(self, exc: BaseException, fallback: _T) -> _T:
        refused = isinstance(exc, ConfigError)  # check_budget_file's: it says what to do
        reason = str(exc) if refused else f"{type(exc).__name__}: {exc}"[:300]
        if isinstance(exc, sqlite3.OperationalError) and _is_locked(exc):
            self._locked_until = time.monotonic() + LOCKED_PAUSE_SECONDS
            if self._warned:
                return fallback
            what = f"for the next {LOCKED_PAUSE_SECONDS:g} s"
        else:
            self.broken = reason
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None
            what = "from now on"
        # a refused path may be another program's file: never advise removing it
        advice = "" if refused else f" Remove the file if it is damaged, or set {ENV_BUDGET}=off."
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"svcnb cannot use the shared rate budget {self.path} ({reason}); this process "
                f"paces its own requests only {what}, so others on the same token may meet 429 "
                f"answers.{advice}",
                RuntimeWarning,
                stacklevel=4,
            )
        return fallback
