"""The one page iterator, and the collector that turns pages into one list.

Shapes followed: ``{data: [...], meta: {page, perPage, total, totalPages}}`` (the sandbox's),
``{data: {items: [...], ...}}`` and next links (``links.next``, ``next``, ``meta.next``), as an
absolute URL, a path or a query string. Reading stops on an empty page, a page seen before, the
last page ``meta`` names, a short page when ``meta`` is missing, or a next link already followed;
more than ``max_pages`` pages raises :class:`PagingError` rather than return a truncated list.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from svcnb.client._config import DEFAULT_PER_PAGE, MAX_PAGES
from svcnb.client._request import Reply, Requester
from svcnb.errors import PagingError, PagingWarning, SvcnbError

_log = logging.getLogger("svcnb.client")


@dataclass
class Page:
    number: int | None  # the page number asked for (None when following a next link)
    items: list[Any]
    total: int | None  # meta.total: how many items the whole list holds
    total_pages: int | None
    next: tuple[str, dict] | None  # (path, params) of the next link, when the server gave one


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def parse_page(reply: Reply, number: int | None, requester: Requester) -> Page:
    """Items, totals and next link of one answer, whichever of the known shapes it has."""
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
        for key in ("page", "perPage", "total", "totalPages"):
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
    return Page(
        number=_int(meta.get("page")) or number,
        items=items,
        total=_int(meta.get("total")),
        total_pages=_int(meta.get("totalPages")),
        next=_next_link(links, requester) if isinstance(links, str) and links else None,
    )


def _next_link(link: str, requester: Requester) -> tuple[str, dict]:
    """(path under the API prefix, query params) of a next link in any of its written forms."""
    url = httpx.URL(link)
    params = dict(url.params)
    path = url.path
    if link.startswith("?") or not path:
        return "", params  # "?page=2": same path, new query (filled in by the caller)
    root = httpx.URL(requester.base_url).path.rstrip("/") + (requester.base_path or "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path or "/", params


def fetch_page(
    requester: Requester, path: str, page: int, per_page: int | None, scope: str | None
) -> Page:
    """Page ``page`` of ``path``; ``per_page=None`` for a list that takes no page parameters."""
    params = None if per_page is None else {"page": page, "perPage": per_page}
    reply = requester.request("GET", path, params=params, scope=scope)
    return parse_page(reply, page, requester)


def iter_pages(
    requester: Requester,
    path: str,
    *,
    scope: str | None = None,
    per_page: int | None = DEFAULT_PER_PAGE,
    max_pages: int = MAX_PAGES,
    first: Page | None = None,
    fetch: Callable[[int], Page] | None = None,
) -> Iterator[Page]:
    """Every page of the list at ``path``, in order, each stop rule applied (see module doc).

    ``first`` is page 1 when the caller already read it; ``fetch(n)`` reads page ``n``.
    ``per_page=None``: the endpoint takes no page parameters (only next links are followed).
    """
    fetch = fetch or (lambda n: fetch_page(requester, path, n, per_page, scope))
    seen_pages: set[tuple] = set()
    followed: set[str] = set()
    page = first or fetch(1)
    count = 1
    while True:
        signature = tuple(_item_id(item) for item in page.items)
        if not page.items:
            return
        if signature in seen_pages:
            warnings.warn(
                f"GET {path}: page {page.number or count} repeats an earlier page; stopped "
                "reading there (the server ignored the page number, or the list shifted)",
                PagingWarning,
                stacklevel=3,
            )
            return
        seen_pages.add(signature)
        yield page
        if page.next is not None:
            next_path, params = page.next
            key = f"{next_path}?{sorted(params.items())}"
            if key in followed:
                return
            followed.add(key)
            loaded = requester.request("GET", next_path or path, params=params, scope=scope)
            page = parse_page(loaded, None, requester)
        else:
            number = (page.number or count) + 1
            if per_page is None:
                return  # not a paged endpoint, and no next link
            if page.total_pages is not None:
                if number > page.total_pages:
                    return
            elif len(page.items) < per_page:
                return  # no meta: a short page is the last one
            page = fetch(number)
        count += 1
        if count > max_pages:
            raise PagingError(
                f"GET {path}: more than {max_pages} pages; stopped rather than return a "
                "partial list (the server may be ignoring the page parameter)"
            )


def _item_id(item: Any) -> Any:
    return item.get("id") if isinstance(item, dict) else repr(item)


class Collector:
    """Joins pages into one list: drops duplicated ids, notices a list that changed."""

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

    def finish(self) -> list[Any]:
        """The items, after warning about duplicates or a change seen while reading."""
        if self.duplicates:
            shown = ", ".join(map(str, self.duplicates[:5]))
            warnings.warn(
                f"GET {self.path}: dropped {len(self.duplicates)} duplicated {self.resource} "
                f"id(s) ({shown}); the list changed while it was read",
                PagingWarning,
                stacklevel=3,
            )
        changed = len(set(self.totals)) > 1
        last_total = self.totals[-1] if self.totals else None
        if changed or (last_total is not None and last_total != len(self.items)):
            warnings.warn(
                f"GET {self.path}: the {self.resource} list changed while it was read "
                f"(total reported {'→'.join(map(str, dict.fromkeys(self.totals)))}, "
                f"{len(self.items)} read); records added or removed meanwhile may be missing: "
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
    collector = Collector(resource, path)
    for page in iter_pages(requester, path, scope=scope, per_page=per_page, max_pages=max_pages):
        collector.add(page)
    return collector.finish()
