"""What a VM pull reads and how its records are put together, and the crew that reads them.

Rules: list items that already carry ``sshKeys``, ``firewalls`` and ``privateNetworks`` are full
VMs and need no detail read; with ``previous`` a VM's detail is read again only when its
``updatedAt`` moved (items without ``updatedAt`` cannot tell, so every detail is read).

:class:`Crew`: a fixed number of worker threads taking jobs from a lazy source (page numbers
first, then VM ids), so the work in flight is bounded by the number of workers, nothing is
created per queued request, and each answer costs the same at any fleet size. Threads rather
than asyncio so a pull runs unchanged inside Jupyter's running event loop; the governor (shared by
all threads) keeps them inside the rate limit.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

NESTED = ("sshKeys", "firewalls", "privateNetworks")  # what only the detail call returns


def _instant(value: Any) -> datetime | str | None:
    """``updatedAt`` as an aware UTC datetime so snapshot values compare with API strings."""
    if isinstance(value, datetime):  # also pandas.Timestamp
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def index_previous(previous: Iterable[dict]) -> dict[str, dict]:
    index = {}
    for record in previous:
        if not isinstance(record, dict):
            raise ValueError(
                "previous must hold full VM dicts (e.g. an earlier vms.all() or "
                f"svcnb.frames.vm_records(frame)), got a {type(record).__name__}"
            )
        if "id" in record:
            index[str(record["id"])] = record
    return index


def is_full(item: Any) -> bool:
    return isinstance(item, dict) and all(key in item for key in NESTED)


def needs_detail(summary: dict, previous: dict[str, dict] | None) -> bool:
    """Whether the VM of this list item must be read on its own."""
    if is_full(summary):
        return False
    if previous is None:
        return True
    prev = previous.get(str(summary.get("id")))
    if prev is None or any(key not in prev for key in NESTED):
        return True
    before, now = _instant(prev.get("updatedAt")), _instant(summary.get("updatedAt"))
    return before is None or before != now


def merged(
    summaries: list[dict], detailed: dict[str, dict | None], previous: dict[str, dict] | None
) -> tuple[list[dict], list[str]]:
    """The best record of each listed VM: its detail when read, the full list item, or (on a
    refresh, unchanged) the previous record under today's summary; else the summary itself.
    Also the ids whose detail read found the VM gone."""
    out, vanished = [], []
    for summary in summaries:
        vm_id = summary["id"]
        if vm_id in detailed:
            full = detailed[vm_id]
            if full is None:
                vanished.append(vm_id)
                continue
            out.append(full)
        elif previous is not None and not is_full(summary) and str(vm_id) in previous:
            out.append({**previous[str(vm_id)], **summary})
        else:
            out.append(summary)
    return out, vanished


def duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Crew:
    """``workers`` threads running ``page(n)`` for queued page numbers, then ``detail(id)`` for
    queued VM ids, handing each result to ``on_page``/``on_detail`` (called under the crew's
    lock, so they must be quick); when one returns True, ``on_tick`` runs after it, outside the
    lock (to redraw a progress bar). The first failure stops all queuing and is kept in
    ``error``.

    Jobs come from ``pages(numbers)`` (an iterator, read lazily) and ``details(ids)``; after
    ``close()`` no more come, and the threads end when the source is dry. ``finished`` is set
    when the last thread ended, after ``on_finish`` ran.
    """

    def __init__(
        self,
        workers: int,
        page: Callable[[int], Any],
        detail: Callable[[str], Any],
        on_page: Callable[[int, Any], bool],
        on_detail: Callable[[str, Any], bool],
        on_tick: Callable[[], None],
        on_finish: Callable[[], None],
    ) -> None:
        self.lock = threading.Lock()
        self._work = threading.Condition(self.lock)  # a job was queued, or the source closed
        self.changed = threading.Condition(self.lock)  # a page arrived, or a failure
        # by job kind: what runs it (a page number or an id in), and what takes its result
        self._run: dict[str, Callable[[Any], Any]] = {"page": page, "detail": detail}
        self._done: dict[str, Callable[[Any, Any], bool]] = {
            "page": on_page,
            "detail": on_detail,
        }
        self._on_tick, self._on_finish = on_tick, on_finish
        self._numbers: Iterator[int] = iter(())
        self._ids: deque[str] = deque()
        self._open = True
        self._stopped = False
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self._alive = workers
        self._threads = [
            threading.Thread(target=self._loop, name=f"svcnb-vms-{i}", daemon=True)
            for i in range(workers)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    # -- feeding (any thread) -----------------------------------------------------------------

    def pages(self, numbers: Iterator[int]) -> None:
        with self.lock:
            self._numbers = numbers
            self._work.notify_all()

    def details(self, ids: list[str]) -> None:
        if not ids:
            return
        with self.lock:
            if self._stopped:
                return
            self._ids.extend(ids)
            self._work.notify(len(ids))

    def drop_pages(self) -> None:
        """No more page jobs (the ordered reading of the list ended before them)."""
        with self.lock:
            self._numbers = iter(())

    def close(self) -> None:
        """Nothing more will be queued: the threads end once the queued jobs are done."""
        with self.lock:
            self._open = False
            self._work.notify_all()

    def stop(self, error: BaseException | None = None) -> None:
        """Queue nothing more and drop what is queued; requests in flight still finish."""
        with self.lock:
            self._stop(error)

    def join(self) -> None:
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join()

    @property
    def stopped(self) -> bool:
        return self._stopped

    # -- the threads ----------------------------------------------------------------------------

    def _stop(self, error: BaseException | None) -> None:
        if error is not None and self.error is None:
            self.error = error
        self._stopped = True
        self._open = False
        self._numbers = iter(())
        self._ids.clear()
        self._work.notify_all()
        self.changed.notify_all()

    def _take(self) -> tuple[str, Any] | None:
        while not self._stopped:
            number = next(self._numbers, None)
            if number is not None:
                return "page", number
            if self._ids:
                return "detail", self._ids.popleft()
            if not self._open:
                return None
            # Woken by every queuing, close and stop; the timeout is a safety net only.
            self._work.wait(30.0)
        return None

    def _loop(self) -> None:
        try:
            while True:
                with self.lock:
                    job = self._take()
                if job is None:
                    return
                kind, arg = job
                try:
                    result = self._run[kind](arg)
                    with self.lock:
                        tick = self._done[kind](arg, result)
                    if tick:
                        self._on_tick()
                except BaseException as exc:  # handed to whoever waits for the pull
                    with self.lock:
                        self._stop(exc)
                    return
        finally:
            with self.lock:
                self._alive -= 1
                last = self._alive == 0
            if last:
                try:
                    self._on_finish()
                finally:
                    self.finished.set()
