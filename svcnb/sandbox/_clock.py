"""The sandbox clock: starts at a fixed epoch, runs scaled or frozen, and runs scheduled jobs.

Money, bandwidth and webhook retries all hang off this clock, so a test can play out a month in
one call to :meth:`Clock.advance` and get the same result every time.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

_log = logging.getLogger(__name__)


@dataclass(order=True)
class Job:
    """One scheduled call; ``cancelled`` jobs stay in the heap and are skipped when due."""

    at: datetime
    seq: int
    fn: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)


class Clock:
    """Sandbox time in UTC.

    ``time_scale`` 0 freezes time: only :meth:`advance` moves it. With ``K > 0`` the clock runs K
    times real time and a ticker (see :meth:`run_due`) runs jobs as they fall due. While a job
    runs, :meth:`now` returns the job's own time, so what it records is stamped when it was due.
    ``lock`` (the state lock) is held while jobs run.
    """

    def __init__(
        self, start: datetime, time_scale: float = 0.0, lock: threading.RLock | None = None
    ) -> None:
        if start.tzinfo is None:
            raise ValueError("the clock start must be timezone-aware (UTC)")
        self.time_scale = float(time_scale)
        self._lock = lock or threading.RLock()
        self._base = start
        self._mono0 = time.monotonic()
        self._pinned: datetime | None = None
        self._jobs: list[Job] = []
        self._seq = itertools.count()

    def now(self) -> datetime:
        """The current sandbox time (the due time of a job while that job runs)."""
        if self._pinned is not None:
            return self._pinned
        if self.time_scale == 0:
            return self._base
        elapsed = (time.monotonic() - self._mono0) * self.time_scale
        return self._base + timedelta(seconds=elapsed)

    def schedule(self, at: datetime, fn: Callable[[], None]) -> Job:
        """Run ``fn`` when the clock reaches ``at`` (at once on the next tick if already past)."""
        if at.tzinfo is None:
            raise ValueError("job times must be timezone-aware (UTC)")
        with self._lock:
            job = Job(at, next(self._seq), fn)
            heapq.heappush(self._jobs, job)
            return job

    def cancel(self, job: Job) -> None:
        """Forget ``job``; cancelling a job that already ran or was cancelled does nothing."""
        job.cancelled = True

    def pending(self) -> int:
        """How many jobs are still waiting."""
        with self._lock:
            return sum(1 for j in self._jobs if not j.cancelled)

    def advance(self, seconds: float) -> datetime:
        """Move time forward by ``seconds`` and run every job due by then, in time order."""
        if seconds < 0:
            raise ValueError(f"the clock only moves forward; seconds must be >= 0, got {seconds}")
        with self._lock:
            target = self.now() + timedelta(seconds=seconds)
            self._run_until(target)
            self._base = target
            self._mono0 = time.monotonic()
            return target

    def run_due(self) -> int:
        """Run every job whose time has come; the ticker of a running clock calls this."""
        with self._lock:
            return self._run_until(self.now())

    def _run_until(self, target: datetime) -> int:
        ran = 0
        while self._jobs and self._jobs[0].at <= target:
            job = heapq.heappop(self._jobs)
            if job.cancelled:
                continue
            job.cancelled = True
            self._pinned = job.at
            try:
                job.fn()
            finally:
                self._pinned = None
            ran += 1
        return ran


class Ticker:
    """A daemon thread that runs due jobs of a clock that runs on its own (``time_scale > 0``)."""

    def __init__(self, tick: Callable[[], object], interval: float = 0.05) -> None:
        self._tick = tick
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="svcnb-sandbox-clock", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._tick()
            except Exception:  # a failing job must not stop the clock for every later job
                _log.exception("a scheduled sandbox job failed")
