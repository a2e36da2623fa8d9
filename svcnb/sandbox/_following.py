"""A clock that follows a sandbox's simulated clock, for a webhook receiver's ``clock=``.

The sandbox starts its clock at a fixed epoch and moves it only when told (or K times real time),
so against the machine's clock every sandbox event would look days old and be flagged as a
possible replay. :class:`SandboxClock` samples ``GET {control_url}/clock`` from a background thread
through :meth:`Control.clock`, the one reader of that clock, and extrapolates between samples
with the sandbox's ``timeScale``. It lives with the sandbox, not with the receiver, so that
``svcnb.webhooks`` shares nothing with the sandbox: the receiver takes any clock callable.

It is sampled in the background, never while a request is being handled, because the sandbox runs
a delivery while holding its own state lock: asking it the time from inside the delivery it is
waiting on would stall both until the delivery timed out. The price is that the receiver's time
may lag the sandbox's by up to ``interval`` (or by a whole ``advance`` that is in progress); a lag
can only make an event look younger, so it never flags a fresh event as a replay.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta

import httpx

from ._control_client import ClockReading, Control

__all__ = ["SandboxClock"]

# what Control.clock raises when the sandbox cannot be asked or its answer is not a clock's
_UNREAD = (httpx.HTTPError, RuntimeError, AttributeError, ValueError, KeyError, TypeError)


class SandboxClock:
    """Zero-argument callable giving a sandbox's current time; pass it as ``Receiver(clock=...)``.

    ``control_url`` is the sandbox's control root (``sb.control_url``, ending in ``/_sandbox``).
    Raises ``ConnectionError`` at once if the sandbox cannot be asked the time.
    """

    def __init__(self, control_url: str, *, interval: float = 0.25, timeout: float = 5.0) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be > 0 seconds, got {interval}")
        self.url = control_url.rstrip("/") + "/clock"
        self.interval = interval
        self._control = Control(control_url, timeout=timeout, trust_env=False)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        try:
            self._sample = self._fetch()
        except _UNREAD as exc:
            self._control.close()
            raise ConnectionError(
                f"cannot read the sandbox clock at {self.url}: {exc}; is the sandbox running and "
                "is this its control URL (sb.control_url)?"
            ) from None
        self._thread = threading.Thread(target=self._poll, name="svcnb-sandbox-clock", daemon=True)
        self._thread.start()

    def __repr__(self) -> str:
        return f"SandboxClock({self.url!r})"

    def __call__(self) -> datetime:
        with self._lock:
            now, scale, sampled = self._sample
        return now + timedelta(seconds=scale * (time.monotonic() - sampled))

    def close(self) -> None:
        """Stop sampling; the clock keeps extrapolating from the last sample."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=self._control.timeout or 5.0)
        self._control.close()

    def __enter__(self) -> SandboxClock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fetch(self) -> tuple[datetime, float, float]:
        reading: ClockReading = self._control.clock()
        return reading.now, reading.time_scale, time.monotonic()

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                sample = self._fetch()
            except _UNREAD:
                continue  # keep the last good sample; the sandbox may be busy or restarting
            with self._lock:
                self._sample = sample
