"""The one paging loop (:class:`Pager`), and the collector that turns pages into one list.

Shapes read: ``{data: [...], meta: {page, perPage, total, totalPages}}``; ``{data: {items: [...],
total, page, perPage}}``; a cursor, ``meta.nextCursor`` (the next call sends ``cursor=``); next
links in the body (``links.next``, ``next``, ``meta.next``) or in a ``Link: <...>; rel="next"``
header, as an absolute URL, a path or a query; totals in the body or in ``X-Total-Count``.

A server may serve fewer items than asked (a cap below our ``perPage``), so the page size is
learned from the answer: ``perPage`` where it says, else the length of a first page that is short
although the total says more exists; the page count is the total over that size. Reading goes on
while anything the server said (a total, a page count, a cursor, a next link) says more exists;
a short page ends the list only when nothing does. It stops on an empty page, a page seen before
or a link already followed, and past ``max_pages`` raises :class:`PagingError`. The collector
then compares what was read with what was announced, and says exactly what is missing.
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from svcnb.client._config import API_PREFIX, DEFAULT_PER_PAGE, MAX_PAGES
from svcnb.client._request import Reply, Requester
from svcnb.errors import PagingError, PagingWarning, SvcnbError, ValidationError

_log = logging.getLogger("svcnb.client")

# Sizes to try, largest first, when a server refuses our perPage without saying its maximum.
_FALLBACK_SIZES = (50, 25, 20, 10, 5, 1)


@dataclass
class Page:
    number: int | None  # the page number asked for (None when reached by a link or a cursor)
    items: list[Any]
    total: int | None  # how many items the whole list holds, as this answer says
    total_pages: int | None
    per_page: int | None  # the page size the answer says it served
    next: tuple[str, dict] | None  # (path, params) of the next link, when the server gave one
    cursor: str | None = None  # the cursor of the next page, when the server gave one
    cursored: bool = False  # the answer pages by cursor (a null cursor: the last page)


# Counts a server announces beyond this are not counts: far above any max_pages, and small
# enough that no arithmetic on them can overflow a float.
_MAX_COUNT = 10**12


def _int(value: Any) -> int | None:
    """A count or page number the server announced, or None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        # ASCII digits only ("²".isdigit() holds, int("²") fails), and few enough to convert.
        if not (text.isascii() and text.isdigit() and len(text) <= 13):
            return None
        value = int(text)
    if isinstance(value, int):
        return min(value, _MAX_COUNT) if value >= 0 else None
    return None


def parse_page(reply: Reply, number: int | None, requester: Requester) -> Page:
    """Items, totals, size, cursor and next link of one answer, whichever shape it has."""
    data = reply.data
    meta = dict(reply.meta or {})
    links: Any = reply.body.get("links") or reply.body.get("next")
    if isinstance(data, dict):
        items = data.get("items")
        if not isinstance(items, list):
            raise SvcnbError(
                "a list endpoint answered with an object that has no 'items' list; "
                f"its keys are {sorted(data)}"
            )
        inner = data.get("meta")
        meta.update(inner if isinstance(inner, dict) else {})
        for key in ("page", "perPage", "total", "totalPages", "nextCursor"):
            if key in data and key not in meta:
                meta[key] = data[key]
        links = links or data.get("links") or data.get("next")
    elif isinstance(data, list):
        items = data
    else:
        raise SvcnbError(
            f"a list endpoint answered with {type(data).__name__} data, not a list of records"
        )
    links = links or meta.get("next") or meta.get("links")
    if isinstance(links, dict):
        links = links.get("next")
    if not (isinstance(links, str) and links):
        links = _rel_next(reply)
    total = _int(meta.get("total"))
    if total is None:
        total = _int(reply.headers.get("x-total-count"))
    cursored = "nextCursor" in meta or "next_cursor" in meta
    cursor = meta.get("nextCursor", meta.get("next_cursor"))
    return Page(
        number=_int(meta.get("page")) or number,
        items=items,
        total=total,
        total_pages=_int(meta.get("totalPages")),
        per_page=_int(meta.get("perPage")),
        next=_next_link(links, reply, requester) if links else None,
        cursor=str(cursor) if cursor not in (None, "") else None,
        cursored=cursored,
    )


def _rel_next(reply: Reply) -> str | None:
    for link in reply.links.values():
        if "next" in link.get("rel", "").lower().split() and link.get("url"):
            return link["url"]
    return None


def _next_link(link: str, reply: Reply, requester: Requester) -> tuple[str, dict]:
    """(path under the API prefix, query params) of a next link in any of its written forms."""
    base = httpx.URL(reply.url or requester.base_url + "/")
    url: httpx.URL | None = None
    with contextlib.suppress(httpx.InvalidURL, ValueError, TypeError):
        url = base.join(link)
    if url is None:  # raised out here, so it holds no httpx error as its context
        raise PagingError(
            f"the server's next-page link {link[:200]!r} is not a URL svcnb can follow; "
            "nothing is returned rather than a partial list"
        )
    path = url.path
    root = httpx.URL(requester.base_url).path.rstrip("/") + (requester.base_path or "")
    if root and path.startswith(root):
        path = path[len(root) :]
    elif API_PREFIX in path:  # the link names the other of the two base paths
        path = path[path.index(API_PREFIX) + len(API_PREFIX) :]
    return path or "/", dict(url.params)


def _item_id(item: Any) -> Any:
    return item.get("id") if isinstance(item, dict) else repr(item)


class Pager:
    """Reads one list endpoint page by page, learning its paging from the answers.

    ``per_page=None``: the endpoint takes no page parameters unless its first answer shows it is
    paged (a total beyond that page, a next link or a cursor); then it is read on like any other.
    """

    def __init__(
        self,
        requester: Requester,
        path: str,
        *,
        scope: str | None = None,
        per_page: int | None = DEFAULT_PER_PAGE,
        max_pages: int = MAX_PAGES,
    ) -> None:
        self.req, self.path, self.scope, self.max_pages = requester, path, scope, max_pages
        self.asked = per_page  # what the caller wants; lowered when the server refuses it
        self.size = per_page  # the page size the server serves, once known
        self.pages_read = 0  # pages that held items
        self.totals: list[int] = []  # the total of every answer read, repeated pages too
        self.stalled: str | None = None  # why reading stopped where the server promised more

    # -- reading single pages ---------------------------------------------------------------

    def fetch(self, number: int) -> Page:
        """Page ``number`` by page number, at the page size learned so far."""
        params: dict[str, Any] | None = None
        if self.size is not None:
            params = {"page": number, "perPage": self.size}
        elif number > 1:
            params = {"page": number}
        reply = self.req.request("GET", self.path, params=params, scope=self.scope)
        return parse_page(reply, number, self.req)

    def first(self) -> Page:
        """Page 1; a ``perPage`` the server refuses as too large is lowered and asked again."""
        while True:
            try:
                page = self.fetch(1)
            except ValidationError as exc:
                smaller = self._smaller_size(exc)
                if smaller is None:
                    raise
                _log.info(
                    "GET %s: the server refused perPage=%d (%s); asking for %d per page",
                    self.path,
                    self.size,
                    exc.server_message,
                    smaller,
                )
                self.asked = self.size = smaller
                continue
            self.learn(page, first=True)
            return page

    def _smaller_size(self, exc: ValidationError) -> int | None:
        if self.size is None or self.size <= 1 or exc.field != "perPage":
            return None
        said = [int(n) for n in re.findall(r"\b\d{1,9}\b", exc.server_message)]
        below = [n for n in said if 1 <= n < self.size]
        if below:
            return max(below)
        return next((n for n in _FALLBACK_SIZES if n < self.size), None)

    def _follow(self, path: str, params: dict) -> Page:
        reply = self.req.request("GET", path or self.path, params=params, scope=self.scope)
        return parse_page(reply, _int(params.get("page")), self.req)

    # -- what the answers say ---------------------------------------------------------------

    def learn(self, page: Page, *, first: bool = False) -> None:
        """Take the page size from the answer: what it says it served, else the length of a
        first page that is short although its total says more exists."""
        if page.per_page is not None and page.per_page > 0:
            self.size = page.per_page
        elif first and page.items and (page.total or 0) > len(page.items):
            short = self.size is None or len(page.items) < self.size
            self.size = len(page.items) if short else self.size
        count = self.page_count(page)
        if count is not None and count > self.max_pages:
            raise PagingError(
                f"GET {self.path}: the server announces {count} pages ({page.total} items at "
                f"{self.size} per page), more than the {self.max_pages} svcnb reads; nothing "
                "was read rather than a partial list (a very low page size on the server?)"
            )

    def page_count(self, page: Page) -> int | None:
        """How many pages the list holds at the learned size, when the answer tells."""
        counts = [page.total_pages] if page.total_pages is not None else []
        if page.total is not None and self.size:
            counts.append(-(-page.total // self.size))  # integers: exact at any size
        return max(counts) if counts else None

    def by_number(self, page: Page) -> bool:
        """Whether the list continues by page number (no link or cursor to follow)."""
        return page.next is None and page.cursor is None and not page.cursored

    # -- the loop ---------------------------------------------------------------------------

    def pages(
        self, first: Page | None = None, fetch: Callable[[int], Page] | None = None
    ) -> Iterator[Page]:
        """Every page, in order, each stop rule applied (see the module doc).

        ``first`` is page 1 when the caller already read it; ``fetch(n)`` reads page ``n``
        (the bulk pull passes the pages it read in parallel).
        """
        fetch = fetch or self.fetch
        page = first or self.first()
        seen_pages: dict[tuple, int] = {}
        followed: set[str] = set()
        number, count, read = 1, 1, 0
        linked = False  # reached by a link or cursor: the page without one is the last
        while True:
            if page.total is not None:
                self.totals.append(page.total)
            if not page.items:
                if count == 1 and (page.total or 0) > 0:
                    self.stalled = "its first page was empty"
                return
            signature = tuple(_item_id(item) for item in page.items)
            if signature in seen_pages:
                self.stalled = f"page {count} repeated page {seen_pages[signature]}"
                warnings.warn(
                    f"GET {self.path}: page {count} repeats an earlier page (page "
                    f"{seen_pages[signature]}); "
                    "stopped reading there (the server ignored the page asked for, or the list "
                    "shifted)",
                    PagingWarning,
                    stacklevel=3,
                )
                return
            seen_pages[signature] = count
            self.pages_read += 1
            read += len(page.items)
            yield page
            asked = self.size
            if page.next is not None:
                next_path, params = page.next
                key = f"{next_path}?{sorted(params.items())}"
                if key in followed:
                    self.stalled = "its next link led back to a page already read"
                    return
                followed.add(key)
                linked = True
                page = self._follow(next_path, params)
            elif page.cursor is not None:
                if page.cursor in followed:
                    self.stalled = "its cursor led back to a page already read"
                    return
                followed.add(page.cursor)
                linked = True
                params = {"cursor": page.cursor}
                if self.size is not None:
                    params["perPage"] = self.size
                page = self._follow(self.path, params)
            elif linked or page.cursored:
                return
            else:
                pages = self.page_count(page)
                if pages is not None:
                    more = number < pages
                elif page.total is not None:
                    more = read < page.total
                else:  # nothing announced: only a full page says more may follow
                    more = asked is not None and len(page.items) >= asked
                if not more:
                    return
                number += 1
                page = fetch(number)
            count += 1
            if count > self.max_pages:
                raise PagingError(
                    f"GET {self.path}: more than {self.max_pages} pages; stopped rather than "
                    "return a partial list (the server may be ignoring the page parameter)"
                )


class Collector:
    """Joins pages into one list: drops duplicated ids, checks what was read against what
    the server announced."""

    def __init__(self, resource: str, path: str) -> None:
        self.resource = resource
        self.path = path
        self.items: list[Any] = []
        self._ids: set[Any] = set()
        self.duplicates: list[Any] = []
        self.totals: list[int] = []

    def add(self, page: Page) -> list[Any]:
        """Adds the page's items; returns the ones not seen before."""
        if page.total is not None:
            self.totals.append(page.total)
        fresh = []
        for item in page.items:
            key = _item_id(item)
            if key is not None and key in self._ids:
                self.duplicates.append(key)
                continue
            self._ids.add(key)
            fresh.append(item)
        self.items.extend(fresh)
        return fresh

    def finish(self, pager: Pager | None = None) -> list[Any]:
        """The items, after warning about what the reading showed; PagingError when the
        server announced more than its first page and nothing past it could be read."""
        read = len(self.items)
        if self.duplicates:
            shown = ", ".join(map(str, self.duplicates[:5]))
            warnings.warn(
                f"GET {self.path}: dropped {len(self.duplicates)} duplicated {self.resource} "
                f"id(s) ({shown}): the same record came on two pages, so the list shifted "
                "while it was read (or the server pages inconsistently)",
                PagingWarning,
                stacklevel=3,
            )
        totals = pager.totals if pager is not None else self.totals
        distinct = list(dict.fromkeys(totals))
        total = totals[-1] if totals else None
        if len(distinct) > 1:
            warnings.warn(
                f"GET {self.path}: the {self.resource} list changed while it was read "
                f"(total reported {'→'.join(map(str, distinct))}, {read} read); records added "
                "or removed meanwhile may be missing: read it again for a consistent list",
                PagingWarning,
                stacklevel=3,
            )
        elif total is not None and read < total:
            why = pager.stalled if pager is not None else None
            if why is not None and pager is not None and pager.pages_read <= 1:
                raise PagingError(
                    f"GET {self.path}: the server announced {total} {self.resource} records "
                    f"but only its first page ({read}) could be read: {why}. Nothing is "
                    "returned rather than a partial list; the server pages in a way svcnb does "
                    "not follow (see docs/dialects.md)"
                )
            reason = f" ({why})" if why else ""
            warnings.warn(
                f"GET {self.path}: read {read} of {total} announced {self.resource} records; "
                f"the server sent no more pages{reason}, and the total did not change while "
                "reading. The list is incomplete: read it again, and if it stays short, the "
                "server's paging is not one svcnb follows (see docs/dialects.md)",
                PagingWarning,
                stacklevel=3,
            )
        elif total is not None and read > total and not self.duplicates:
            warnings.warn(
                f"GET {self.path}: read {read} {self.resource} records but {total} were "
                "announced; the server's count is off, or records were added while reading: "
                "read it again for a consistent list",
                PagingWarning,
                stacklevel=3,
            )
        return self.items


def read_all(
    requester: Requester,
    path: str,
    resource: str,
    *,
    scope: str | None = None,
    per_page: int | None = DEFAULT_PER_PAGE,
    max_pages: int = MAX_PAGES,
) -> list[Any]:
    """Every item of the list at ``path`` (all pages), duplicates dropped with a warning."""
    pager = Pager(requester, path, scope=scope, per_page=per_page, max_pages=max_pages)
    collector = Collector(resource, path)
    for page in pager.pages():
        collector.add(page)
    return collector.finish(pager)
