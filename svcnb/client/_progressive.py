"""``vms.pull``: the fleet in seconds, details after.

A detailed pull of a big fleet is mostly detail reads (one per VM, 17 minutes for 10k VMs at
600 per minute) behind a few list pages (100 pages, about 10 s). :func:`start_pull` reads the
list first, in the caller's thread (so its warnings and errors surface where the pull was
started), with the other pages read ahead by a :class:`~svcnb.client._bulk.Crew`; it returns a
:class:`Pull` as soon as the list is whole, while the crew goes on with the details in the
background. No detail is read before the list is whole, so the first frame waits for the list
pages only. ``vms.all`` is ``start_pull(...).result()``: one implementation for both.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from concurrent.futures import CancelledError
from typing import Any, NamedTuple

from tqdm.auto import tqdm

from svcnb.client._bulk import Crew, duration, index_previous, is_full, merged, needs_detail
from svcnb.client._config import DEFAULT_PER_PAGE
from svcnb.client._paging import Collector, Listing, Page, Pager, changed, confirm
from svcnb.client._records import RecordParser
from svcnb.client._request import Requester
from svcnb.client._resources import segment
from svcnb.errors import NotFound, PagingWarning

_log = logging.getLogger("svcnb.client")
_PATH = "/vms"
_SCOPE = "vms:read"
# Redraw the bar at most this often: a redraw per answer costs more than the answer at speed.
SHOW_EVERY_SECONDS = 0.5


class Progress(NamedTuple):
    """Requests answered so far, and how many the pull will send as far as is known now."""

    done: int
    total: int


class Pull:
    """A VM pull whose list is read and whose details are being read in the background.

    ``summaries`` is the list as the server gave it, complete from the start: enough for a first
    frame (``svcnb.frames.vms(pull.records())``). ``records()`` is the best view so far (each
    VM's detail once read, else its summary); ``progress`` says how far the details are;
    ``done`` / ``wait(timeout)`` tell when they are all read, and ``result()`` returns then what
    ``vms.all`` returns, raising the pull's failure if it had one. ``cancel()`` stops queuing:
    requests in flight finish, ``records()`` keeps what was read, ``result()`` raises
    ``concurrent.futures.CancelledError``.
    """

    def __init__(
        self,
        req: Requester,
        records: RecordParser,
        *,
        details: bool,
        previous: dict[str, dict] | None,
        progress: bool,
        workers: int,
    ) -> None:
        self._req, self._records, self._details = req, records, details
        self._previous, self._progress, self._workers = previous, progress, workers
        self._pager = Pager(req, _PATH, scope=_SCOPE, per_page=DEFAULT_PER_PAGE)
        self._stats0 = req.stats.as_dict()
        self._started = time.monotonic()
        self._crew: Crew | None = None
        self._planned = 1  # pages up to this number are read by the crew
        self._pages: dict[int, Page] = {}  # read ahead of the ordered pass, until it takes them
        self._detailed: dict[str, dict | None] = {}
        self._wanted: list[str] = []  # VM ids whose detail the list calls for
        self._summaries: Listing | None = None
        self._done = 0
        self._total = 1
        self._vanished = 0
        self._bar: Any = None
        self._bar_lock = threading.Lock()
        self._next_show = 0.0
        self._result: Listing | None = None
        self._result_lock = threading.Lock()
        self._checked = False  # every listed VM's detail is read: those reads check the set

    # -- the handle ---------------------------------------------------------------------------

    @property
    def summaries(self) -> list[dict]:
        """Every VM of the list, as the list endpoint gave them (full VMs on some servers)."""
        return list(self._summaries or ())

    def records(self) -> list[dict]:
        """Every listed VM as complete as read so far, in list order (a VM found deleted by its
        detail read is left out)."""
        crew = self._crew
        assert crew is not None and self._summaries is not None
        with crew.lock:
            detailed = dict(self._detailed)
        return merged(self._summaries, detailed, self._previous)[0]

    @property
    def progress(self) -> Progress:
        crew = self._crew
        assert crew is not None
        with crew.lock:
            done = self._done
            total = done if crew.finished.is_set() else max(self._total, done)
        return Progress(done, total)

    @property
    def done(self) -> bool:
        """True once nothing more will be read (all read, failed or cancelled)."""
        return self._crew is not None and self._crew.finished.is_set()

    @property
    def error(self) -> BaseException | None:
        """The failure that stopped the pull, if any."""
        return None if self._crew is None else self._crew.error

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: as long as it takes); True when done."""
        assert self._crew is not None
        return self._crew.finished.wait(timeout)

    def cancel(self) -> None:
        """Queue no more reads; those in flight finish."""
        assert self._crew is not None
        self._crew.stop()

    def result(self, timeout: float | None = None) -> Listing:
        """Every VM (full objects with ``details=True``), once all are read; ``complete`` says
        whether the list is proven complete (see :class:`~svcnb.client.Listing`)."""
        return self._outcome(timeout, stacklevel=3)

    def __repr__(self) -> str:
        done, total = self.progress
        if self.error is not None:
            state = f"failed: {type(self.error).__name__}"
        elif self._crew is not None and self._crew.stopped and not self._crew.error:
            state = "cancelled"
        else:
            state = "done" if self.done else "reading details"
        return f"<Pull of {len(self._summaries or ())} VMs: {done}/{total} requests, {state}>"

    def _outcome(self, timeout: float | None, stacklevel: int) -> Listing:
        crew = self._crew
        assert crew is not None and self._summaries is not None
        if not crew.finished.wait(timeout):
            done, total = self.progress
            raise TimeoutError(
                f"vms.pull: the details are still being read ({done} of {total} requests "
                f"answered) after {timeout:g}s; wait again, or use records() meanwhile"
            )
        if crew.error is not None:
            raise crew.error
        if crew.stopped:
            raise CancelledError(
                "vms.pull was cancelled before every detail was read; records() holds what was"
            )
        with self._result_lock:
            if self._result is None:
                out, vanished = merged(self._summaries, self._detailed, self._previous)
                self._result = self._summaries.like(out)
                if vanished:
                    self._result = self._vanished_reread(out, vanished, stacklevel + 1)
                elif self._checked and self._summaries.proof and self._pager.answers > 1:
                    proof = f"{self._summaries.proof}; every listed VM answered its detail read"
                    self._result.proof = proof
        return self._result.like(self._result)

    def _vanished_reread(self, out: list[dict], vanished: list[str], stacklevel: int) -> Listing:
        """VMs the list named whose details answered 404 were deleted after the list was read:
        the set changed, so the list is read again (until two reads agree, when it takes more
        than one answer) and is complete only as that read: VMs it names that the first read
        did not are read now, and one that cannot be read leaves the list incomplete."""
        assert self._summaries is not None
        again = self._pager.again()
        reread = Collector("vm", _PATH)
        reread.quiet = True
        for page in again.pages():
            reread.add(page)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PagingWarning)  # said below, in one warning
            got = confirm(again, reread, reread.finish(again))
        listed = [s.get("id") for s in self._summaries]
        now = [item.get("id") for item in got if isinstance(item, dict)]
        named = set(listed)
        added = tuple(i for i in now if i not in named)
        removed = (*self._summaries.removed, *vanished)
        gone = ", ".join(map(str, vanished[:5]))
        said = (
            f"{len(vanished):,} VM(s) were deleted while the fleet was read ({gone}: their "
            "details answered 404)"
        )
        doubt: str | None = None
        if not got.complete:
            doubt = f"the VM list changed while it was read: {said}; a re-read: {got.doubt}"
        else:
            lost = []
            for vm_id in added:  # listed now, not by the first read: read them too
                if vm_id not in self._detailed and self._details:
                    self._detailed[str(vm_id)] = self._detail(str(vm_id))
                if self._details and self._detailed.get(str(vm_id)) is None:
                    lost.append(str(vm_id))
            if lost:
                doubt = (
                    f"the VM list changed while it was read: {said}; VMs a re-read listed "
                    f"could not be read ({', '.join(lost[:5])})"
                )
            else:
                rows = self._records.many("vm", got)
                out, _ = merged(rows, self._detailed, self._previous)
        if doubt is None:
            extra = f"; a re-read listed {changed(added, ())} too, read" if added else ""
            warnings.warn(
                f"GET {_PATH}: {said}; they are left out, and a re-read of the list is "
                f"returned{extra}",
                PagingWarning,
                stacklevel=stacklevel,
            )
            proof = f"{got.proof}; a re-read after {len(vanished)} VM(s) were found deleted"
            added = (*self._summaries.added, *added)
            result = Listing.of(out, True, proof, None, added=added, removed=removed)
            result.assumed, result.pinned = got.assumed, got.pinned
            return result
        warnings.warn(
            f"GET {_PATH}: the VM list may be incomplete: {doubt}. It is kept and stored as "
            "incomplete: read it again",
            PagingWarning,
            stacklevel=stacklevel,
        )
        return Listing.of(
            out, False, None, doubt, added=(*self._summaries.added, *added), removed=removed
        )

    # -- reading the list (the caller's thread) ------------------------------------------------

    def _read_list(self) -> None:
        first = self._pager.first()
        self._done = 1
        self._announce(first)
        self._crew = crew = Crew(
            self._workers,
            self._pager.fetch,
            self._detail,
            self._on_page,
            self._on_detail,
            self._show,
            self._finish,
        )
        crew.start()
        count = self._pager.page_count(first)
        if count is not None and count > 1 and self._pager.by_number(first):
            self._pager.ensure_base()  # page numbers from 0 or from 1, before the crew asks
            # The count is bounded by the pager (PagingError above max_pages).
            self._planned = count
            crew.pages(iter(range(2, count + 1)))
        collector = Collector("vm", _PATH)
        collector.quiet = True  # said by confirm, once it knows whether a re-read settles it
        try:
            # One ordered pass through the paging loop applies every stop rule; pages it needs
            # beyond the crew's (the list grew, or it is paged by links or cursors) it reads.
            for page in self._pager.pages(first, fetch=self._page):
                if page is not first and (page.number is None or page.number > self._planned):
                    self._count_own()  # a page the crew did not read
                self._queue(collector.add(page))
            crew.drop_pages()
            listed = collector.finish(self._pager)
            ids = set(collector.ids())
            # A detail read of every listed VM shows any VM the read named that is gone since
            # (404); with no duplicate and no moved total, nothing else can have shifted the
            # pages: those reads prove the set, and no re-read of the list is needed.
            self._checked = listed.complete and not collector.shifted and ids <= set(self._wanted)
            if self._checked:
                confirm(self._pager, collector, listed, settled=True)
            else:
                listed = confirm(self._pager, collector, listed)
                if listed.added or listed.removed:  # a later read settled it: its VMs are read
                    self._wanted = []
                    self._queue(list(listed))
            summaries = listed.like(self._records.many("vm", listed))
        except BaseException as exc:
            crew.stop(exc)
            crew.join()
            raise
        with crew.lock:
            self._summaries = summaries
            self._pages.clear()
        # Details only now: while the list is read, a detail read would take budget and time
        # from the pages the first frame waits for.
        crew.details(self._wanted)
        self._wanted = []
        crew.close()

    def _page(self, number: int) -> Page:
        crew = self._crew
        assert crew is not None
        with crew.lock:
            while number <= self._planned and number not in self._pages and not crew.stopped:
                crew.changed.wait(5.0)
            if crew.error is not None:
                raise crew.error
            if crew.stopped:
                raise CancelledError("vms.pull was cancelled while the list was read")
            page = self._pages.pop(number, None)
            tick = page is not None and self._due()
        if page is None:
            page = self._pager.fetch(number)  # counted by _read_list
        if tick:
            self._show()
        return page

    def _count_own(self) -> None:
        assert self._crew is not None
        with self._crew.lock:
            self._done += 1
            self._total = max(self._total, self._done)
            tick = self._due()
        if tick:
            self._show()

    def _queue(self, items: list[Any]) -> None:
        """Note the detail reads the (new) items of one page call for."""
        if not self._details:
            return
        ids = []
        for summary in items:
            vm_id = summary.get("id") if isinstance(summary, dict) else None
            if vm_id is None:
                continue
            if self._previous is not None and "updatedAt" not in summary and not is_full(summary):
                self._records.note_once(
                    "vm list without updatedAt",
                    "GET %s: the list's items carry no updatedAt, so a refresh cannot tell "
                    "which VMs changed: every VM's detail is read",
                    _PATH,
                )
            if needs_detail(summary, self._previous):
                ids.append(vm_id)
        if ids and self._previous is not None:
            assert self._crew is not None
            with self._crew.lock:
                self._total += len(ids)
        self._wanted.extend(ids)

    def _announce(self, first: Page) -> None:
        pages = self._pager.page_count(first) or 1
        total = first.total if first.total is not None else len(first.items)
        full = bool(first.items) and all(is_full(item) for item in first.items)
        if self._details and full:
            count, what = pages, f"{pages} page(s); the list carries full VMs"
        elif self._details and self._previous is None:
            count, what = pages + total, f"{pages} page(s) + {total} VM details"
        elif self._details:
            count, what = pages, f"{pages} page(s) + details of changed VMs only"
        else:
            count, what = pages, f"{pages} page(s)"
        self._total = count
        gov = self._req.governor
        eta = gov.estimate_seconds(count - 1, self._req.latency or 0.0, self._workers)
        limit = f"{gov.limit} per {gov.window:g}s" if gov.limit and gov.window else "unknown"
        _log.info(
            "vms.all: %d requests (%s); at the current rate limit (%s) about %s",
            count,
            what,
            limit,
            duration(eta),
        )
        if self._progress:
            self._bar = tqdm(
                total=count,
                initial=1,
                unit="req",
                desc=f"VMs: {count} req, ~{duration(eta)}",
                dynamic_ncols=True,
                mininterval=SHOW_EVERY_SECONDS,
            )

    # -- the crew's threads (called under the crew's lock unless said) -------------------------

    def _detail(self, vm_id: str) -> dict | None:
        """Runs outside the lock."""
        try:
            reply = self._req.request("GET", f"/vms/{segment('vm_id', vm_id)}", scope=_SCOPE)
        except NotFound:
            return None  # deleted between the list and this read; reported by result()
        return self._records.one("vm", reply.data)

    def _on_page(self, number: int, page: Page) -> bool:
        self._pages[number] = page
        self._done += 1
        assert self._crew is not None
        self._crew.changed.notify_all()
        return self._due()

    def _on_detail(self, vm_id: str, full: dict | None) -> bool:
        self._detailed[vm_id] = full
        self._done += 1
        self._vanished += full is None
        return self._due()

    def _due(self) -> bool:
        if self._bar is None:
            return False
        now = time.monotonic()
        if now < self._next_show:
            return False
        self._next_show = now + SHOW_EVERY_SECONDS
        return True

    def _show(self, final: bool = False) -> None:
        """Redraw the bar (outside the lock); a redraw under way in another thread wins."""
        if self._bar is None or not self._bar_lock.acquire(blocking=final):
            return
        try:
            done, total = self.progress if self._crew is not None else (self._done, self._total)
            total = done if final else total
            self._bar.n = done
            self._bar.total = max(total, done)  # pages the first answer did not count
            waited = self._req.stats.as_dict()["waited_seconds"] - self._stats0["waited_seconds"]
            self._bar.set_postfix_str(f"waited {waited:.1f}s on the limit", refresh=False)
            self._bar.refresh()
        finally:
            self._bar_lock.release()

    def _finish(self) -> None:
        """The last crew thread ended (outside the lock)."""
        if self._bar is not None:
            self._show(final=True)
            self._bar.close()
        if self._crew is not None and self._crew.stopped:
            return  # the failure or the cancellation is what the caller hears of
        used = self._req.stats.as_dict()
        _log.info(
            "vms.all: %d VMs in %.1fs with %d requests (%d retries), %.1fs waited on the limit",
            len(self._summaries or ()) - self._vanished,
            time.monotonic() - self._started,
            used["requests"] - self._stats0["requests"],
            used["retries"] - self._stats0["retries"],
            used["waited_seconds"] - self._stats0["waited_seconds"],
        )


def start_pull(
    req: Requester,
    records: RecordParser,
    *,
    details: bool,
    previous: Any,
    progress: bool,
    workers: int,
) -> Pull:
    """Read the list, start the detail reads, return the :class:`Pull`."""
    if previous is not None and not details:
        raise ValueError("previous is only used with details=True (it saves detail reads)")
    index = None if previous is None else index_previous(previous)
    pull = Pull(req, records, details=details, previous=index, progress=progress, workers=workers)
    pull._read_list()
    return pull
