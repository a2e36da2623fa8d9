"""``vms.all``: the fleet with details, pages and details fetched concurrently by threads.

Threads rather than asyncio so it runs unchanged inside Jupyter's running event loop; the
governor (shared by all threads) keeps the pull inside the rate limit. Pages are read in
parallel only when their count is known at the page size the server serves; a list paged by
links or cursors is read in order. List items that already carry ``sshKeys``, ``firewalls`` and
``privateNetworks`` are full VMs and need no detail read; items without ``updatedAt`` cannot
tell what changed, so a refresh reads every VM's detail.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import Any

from tqdm.auto import tqdm

from svcnb.client._config import DEFAULT_PER_PAGE
from svcnb.client._paging import Collector, Page, Pager
from svcnb.client._records import RecordParser
from svcnb.client._request import Requester
from svcnb.client._resources import segment
from svcnb.errors import NotFound, PagingWarning

_log = logging.getLogger("svcnb.client")
_PATH = "/vms"
_SCOPE = "vms:read"
_NESTED = ("sshKeys", "firewalls", "privateNetworks")  # what only the detail call returns


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


def _index_previous(previous: Iterable[dict]) -> dict[str, dict]:
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


def _is_full(item: Any) -> bool:
    return isinstance(item, dict) and all(key in item for key in _NESTED)


def _needs_detail(summary: dict, prev: dict | None) -> bool:
    if _is_full(summary):
        return False
    if prev is None or any(key not in prev for key in _NESTED):
        return True
    before, now = _instant(prev.get("updatedAt")), _instant(summary.get("updatedAt"))
    return before is None or before != now


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class _Pull:
    def __init__(
        self,
        req: Requester,
        records: RecordParser,
        details: bool,
        previous: dict[str, dict] | None,
        progress: bool,
        workers: int,
    ) -> None:
        self.req, self.records, self.details = req, records, details
        self.previous, self.progress, self.workers = previous, progress, workers
        self.pager = Pager(req, _PATH, scope=_SCOPE, per_page=DEFAULT_PER_PAGE)
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="svcnb-vms")
        self.pending: dict[Future, tuple[str, Any]] = {}
        self.pages: dict[int, Page] = {}
        self.detailed: dict[str, dict | None] = {}
        self.submitted: set[str] = set()
        self.bar: Any = None
        self.done = 0
        self.stats0 = req.stats.as_dict()

    def fetch(self, number: int) -> Page:
        return self.pager.fetch(number)

    def detail(self, vm_id: str) -> dict | None:
        try:
            reply = self.req.request("GET", f"/vms/{segment('vm_id', vm_id)}", scope=_SCOPE)
        except NotFound:
            return None  # deleted between the list and this read; reported in run()
        return self.records.one("vm", reply.data)

    def submit(self, kind: str, arg: Any) -> None:
        fn = self.fetch if kind == "page" else self.detail
        self.pending[self.pool.submit(fn, arg)] = (kind, arg)

    def consider(self, items: list[Any]) -> None:
        """Queue the detail reads the items of one page call for."""
        if not self.details:
            return
        added = 0
        for summary in items:
            vm_id = summary.get("id") if isinstance(summary, dict) else None
            if vm_id is None or vm_id in self.submitted:
                continue
            if self.previous is not None and "updatedAt" not in summary and not _is_full(summary):
                self.records.note_once(
                    "vm list without updatedAt",
                    "GET %s: the list's items carry no updatedAt, so a refresh cannot tell "
                    "which VMs changed: every VM's detail is read",
                    _PATH,
                )
            prev = None if self.previous is None else self.previous.get(str(vm_id))
            if _is_full(summary) or (
                self.previous is not None and not _needs_detail(summary, prev)
            ):
                continue
            self.submitted.add(vm_id)
            self.submit("detail", vm_id)
            added += 1
        if self.bar is not None and added and self.previous is not None:
            self.bar.total += added
            self.bar.refresh()

    def drain(self) -> None:
        """Wait for every queued call; pages that arrive queue their details."""
        while self.pending:
            done, _ = wait(list(self.pending), timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                kind, arg = self.pending.pop(future)
                result = future.result()  # re-raises the first failure
                if kind == "page":
                    self.pages[arg] = result
                    self.consider(result.items)
                else:
                    self.detailed[arg] = result
                self.done += 1
            self.show()

    def show(self) -> None:
        if self.bar is None:
            return
        self.bar.n = self.done
        self.bar.total = max(self.bar.total, self.done)  # pages the first answer did not count
        waited = self.req.stats.as_dict()["waited_seconds"] - self.stats0["waited_seconds"]
        self.bar.set_postfix_str(f"waited {waited:.1f}s on the limit", refresh=False)
        self.bar.refresh()

    def announce(self, first: Page) -> None:
        pages = self.pager.page_count(first) or 1
        total = first.total if first.total is not None else len(first.items)
        full = bool(first.items) and all(_is_full(item) for item in first.items)
        if self.details and full:
            count, what = pages, f"{pages} page(s); the list carries full VMs"
        elif self.details and self.previous is None:
            count, what = pages + total, f"{pages} page(s) + {total} VM details"
        elif self.details:
            count, what = pages, f"{pages} page(s) + details of changed VMs only"
        else:
            count, what = pages, f"{pages} page(s)"
        gov = self.req.governor
        eta = gov.estimate_seconds(count - 1, self.req.latency or 0.0, self.workers)
        limit = f"{gov.limit} per {gov.window:g}s" if gov.limit and gov.window else "unknown"
        _log.info(
            "vms.all: %d requests (%s); at the current rate limit (%s) about %s",
            count,
            what,
            limit,
            _duration(eta),
        )
        if self.progress:
            self.bar = tqdm(
                total=count,
                initial=1,
                unit="req",
                desc=f"VMs: {count} req, ~{_duration(eta)}",
                dynamic_ncols=True,
            )
            self.done = 1

    def run(self) -> list[dict]:
        started = time.monotonic()
        collector = Collector("vm", _PATH)
        try:
            first = self.pager.first()
            self.pages[1] = first
            self.announce(first)
            self.consider(first.items)
            count = self.pager.page_count(first)
            if count is not None and self.pager.by_number(first):
                # The count is bounded by the pager (PagingError above max_pages).
                for number in range(2, count + 1):
                    self.submit("page", number)
            self.drain()
            # One ordered pass through the paging loop applies every stop rule; any page it
            # still needs (the list grew, or it is paged by links or cursors) is read here.
            pages = self.pager.pages(
                first, fetch=lambda n: self.pages[n] if n in self.pages else self.fetch(n)
            )
            for page in pages:
                self.consider(collector.add(page))
                self.done += 0 if page.number in self.pages else 1
            self.drain()
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)
            if self.bar is not None:
                self.show()
                self.bar.close()
        summaries = self.records.many("vm", collector.finish(self.pager))
        result = self.assemble(summaries)
        used = self.req.stats.as_dict()
        _log.info(
            "vms.all: %d VMs in %.1fs with %d requests (%d retries), %.1fs waited on the limit",
            len(result),
            time.monotonic() - started,
            used["requests"] - self.stats0["requests"],
            used["retries"] - self.stats0["retries"],
            used["waited_seconds"] - self.stats0["waited_seconds"],
        )
        return result

    def assemble(self, summaries: list[dict]) -> list[dict]:
        if not self.details:
            return summaries
        out, vanished = [], []
        for summary in summaries:
            vm_id = summary["id"]
            if vm_id in self.detailed:
                full = self.detailed[vm_id]
                if full is None:
                    vanished.append(vm_id)
                    continue
                out.append(full)
            elif _is_full(summary):
                out.append(summary)
            else:
                # Unchanged since the previous pull: its nested lists plus today's summary.
                out.append({**self.previous[str(vm_id)], **summary})
        if vanished:
            warnings.warn(
                f"GET {_PATH}: {len(vanished)} VM(s) were deleted while the fleet was read "
                f"({', '.join(vanished[:5])}); they are left out",
                PagingWarning,
                stacklevel=4,
            )
        return out


def pull_vms(
    req: Requester,
    records: RecordParser,
    *,
    details: bool,
    previous: Iterable[dict] | None,
    progress: bool,
    workers: int,
) -> list[dict]:
    if previous is not None and not details:
        raise ValueError("previous is only used with details=True (it saves detail reads)")
    index = None if previous is None else _index_previous(previous)
    return _Pull(req, records, details, index, progress, workers).run()
