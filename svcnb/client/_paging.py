"""The one paging loop (:class:`Pager`), and the collector that turns pages into one list.

The shapes a list is read in are those of docs/dialects.md ("Paging"); what proves a list
complete, as a set, and the assumption ``paging.no_continuation_is_end``: docs/contracts.md §0.
A key of a list's answer svcnb does not understand may be a continuation under a name it cannot
follow, hence "may be incomplete" naming it rather than a skip.

A server may serve fewer items than asked (a cap below our ``perPage``), so the page size is
learned from the answer: ``perPage`` where it says, else the length of a short first page. The
loop stops on an empty page without a continuation, a page seen before or a link already
followed, and past ``max_pages`` raises :class:`PagingError`.
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from svcnb.assumptions import decide
from svcnb.client._config import API_PREFIX, DEFAULT_PER_PAGE, MAX_PAGES
from svcnb.client._request import Reply, Requester
from svcnb.config import pins as config_pins
from svcnb.errors import PagingError, PagingWarning, SvcnbError, ValidationError

_log = logging.getLogger("svcnb.client")


# A cursor or page token under the name an answer gives it -> the query parameter that sends it
# back. Names are those of the APIs svcnb was compared with (Google, AWS, Azure, Vultr, Slack,
# OpenStack/S3 markers); a continuation under any other name is a key svcnb does not understand.
TOKEN_PARAMS: dict[str, str] = {
    "nextCursor": "cursor",
    "next_cursor": "cursor",
    "nextPageToken": "pageToken",
    "next_page_token": "page_token",
    "nextToken": "nextToken",
    "next_token": "next_token",
    "continuationToken": "continuationToken",
    "continuation_token": "continuation_token",
    "nextMarker": "marker",
    "next_marker": "marker",
}
# "results" and "pages" are Linode's counts (read only as numbers: DRF's "results" is the list)
_TOTAL_KEYS = (
    "total", "totalCount", "total_count", "totalElements", "total_entries", "results",
    "@odata.count",
)  # fmt: skip
_SIZE_KEYS = ("perPage", "per_page", "pageSize", "page_size", "size", "limit")
_PAGES_KEYS = ("totalPages", "total_pages", "last_page", "pages")
_NEXT_KEYS = ("next", "nextLink", "@odata.nextLink")
_NUMBER_KEYS = ("page", "number", "current_page")
_MORE_KEYS = ("has_more", "hasMore")
_LINK_NAMES = ("next", "prev", "previous", "first", "last", "self")
# Keys svcnb understands where they can stand; anything else may change what the list holds.
_PAGING_KEYS = frozenset(
    {*TOKEN_PARAMS, *_TOTAL_KEYS, *_SIZE_KEYS, *_PAGES_KEYS, *_NUMBER_KEYS, *_MORE_KEYS}
    | {"links", "_links", "paging", "summary", *_NEXT_KEYS, "previous", "prev", "offset"}
    | {"pagination", "pages"}
    | {"prevCursor", "prev_cursor", "previousCursor", "prevPageToken", "previousPageToken"}
)
_BODY_KEYS = _PAGING_KEYS | {"success", "data", "meta"}
# "object" and "url" are Stripe's list tags ({object: "list", data: [...], has_more, url})
_DATA_KEYS = _PAGING_KEYS | {"items", "results", "value", "data", "_embedded", "meta", "count"}
_DATA_KEYS |= {"object", "url"}
_LINKS_KEYS = frozenset({*_LINK_NAMES, "pages", "curies", "cursors"})
# Objects holding next/previous links: JSON:API and DigitalOcean's ``links``, HAL's ``_links``,
# Facebook Graph's ``paging`` (whose ``cursors.after`` stays on the last page: only ``next``
# continues).
_LINK_HOLDERS = ("links", "_links", "paging")


@dataclass
class Page:
    number: int | None  # which page this is, 1 the first (None when reached by a link or cursor)
    items: list[Any]
    total: int | None  # how many items the whole list holds, as this answer says
    total_pages: int | None
    per_page: int | None  # the page size the answer says it served
    next: tuple[str, dict] | None  # (path, params) of the next link, when the server gave one
    cursor: str | None = None  # the cursor or page token of the next page
    cursor_param: str = "cursor"  # the query parameter that sends it back
    cursored: bool = False  # the answer pages by a continuation (link, cursor, token, has_more)
    ended: str | None = None  # how the answer said explicitly that nothing follows
    said_number: int | None = None  # the page number the answer states, in its own counting
    unknown: tuple[str, ...] = ()  # keys of the answer svcnb does not understand


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


class _Said:
    """What the parts of one answer say about paging, first source first, and the keys of
    those parts svcnb does not understand."""

    def __init__(self) -> None:
        self.sources: list[Mapping[str, Any]] = []
        self.unknown: list[str] = []

    def add(self, part: Any, where: str, known: frozenset[str]) -> None:
        if not isinstance(part, Mapping):
            return
        self.sources.append(part)
        for key in part:
            if key not in known:
                self.unknown.append(f"{where}{key}")

    def first(self, keys: tuple[str, ...]) -> tuple[str | None, Any]:
        """The first of ``keys`` a source holds as a plain value (HAL's ``page`` object is
        read through its own keys)."""
        for source in self.sources:
            for key in keys:
                if key in source and not isinstance(source[key], Mapping | list):
                    return key, source[key]
        return None, None


def _href(value: Any) -> Any:
    """A link as written: a string, HAL's ``{"href": ...}``, or None."""
    return value.get("href") if isinstance(value, Mapping) else value


def _items(data: Any, said: _Said) -> list[Any]:
    if isinstance(data, list):
        return data
    if not isinstance(data, Mapping):
        raise SvcnbError(
            f"a list endpoint answered with {type(data).__name__} data, not a list of records"
        )
    said.add(data, "data.", _DATA_KEYS)
    if isinstance(data.get("items"), list):
        return data["items"]
    if isinstance(data.get("value"), list):  # OData
        return data["value"]
    if isinstance(data.get("data"), list):  # Stripe
        return data["data"]
    if isinstance(data.get("results"), list):
        if "count" in data:  # DRF: count is the whole list's
            said.sources.append({"total": data["count"]})
        return data["results"]
    embedded = data.get("_embedded")
    if isinstance(embedded, Mapping):
        lists = [v for v in embedded.values() if isinstance(v, list)]
        if len(lists) == 1 and len(embedded) == 1:
            return lists[0]
        raise SvcnbError(
            "a list endpoint answered with _embedded holding "
            f"{sorted(embedded)}; svcnb reads one list there and cannot tell which is the list"
        )
    raise SvcnbError(
        "a list endpoint answered with an object that has no 'items', 'results' or "
        f"'_embedded' list; its keys are {sorted(data)}"
    )


def parse_page(reply: Reply, number: int | None, requester: Requester) -> Page:
    """Items, totals, size, continuation and explicit end of one answer, whichever shape."""
    said = _Said()
    body = reply.body
    said.add(reply.meta, "meta.", _PAGING_KEYS)
    items = _items(reply.data, said)
    said.add({k: v for k, v in body.items() if k != "meta"}, "", _BODY_KEYS)
    for part in list(said.sources):
        for key in ("page", "pagination", "summary"):
            if isinstance(part.get(key), Mapping):  # HAL's page, Hetzner's, Graph's summary
                said.add(part[key], f"{key}.", _PAGING_KEYS)
    links: list[Mapping[str, Any]] = []
    for part in list(said.sources):
        for key in _LINK_HOLDERS:
            holder = part.get(key)
            if isinstance(holder, list):  # JSON:API/OpenStack/HAL-forms: [{rel, href}, ...]
                holder = _rel_links(holder, key, said)
            if isinstance(holder, Mapping):
                said.unknown.extend(f"{key}.{k}" for k in holder if k not in _LINKS_KEYS)
                links.append(holder)
                if isinstance(holder.get("pages"), Mapping):  # DigitalOcean: links.pages.next
                    links.append(holder["pages"])
            elif key in part and holder is not None:
                said.unknown.append(key)  # links in a shape svcnb cannot read: named, not used
    ended: str | None = None
    cursored = False
    next_link: Any = None
    for holder in links:
        if "next" in holder:
            cursored = True
            next_link = next_link or _href(holder["next"])
            if _href(holder["next"]) in (None, ""):
                ended = "its next link was null"
        elif holder:
            cursored = True
            ended = ended or "its links named no next page"
    for source in said.sources:
        for key in _NEXT_KEYS:
            value = _href(source.get(key))
            if key in source and not isinstance(value, Mapping | list):
                cursored = True
                next_link = next_link or value
                if value in (None, ""):
                    ended = ended or f"its {key} was null"
    if reply.links:
        cursored = True
        rel_next = _rel_next(reply)
        next_link = next_link or rel_next
        if rel_next is None:
            ended = ended or 'its Link header named no rel="next"'
    token_key, token = said.first(tuple(TOKEN_PARAMS))
    if token_key is not None:
        cursored = True
        if token in (None, ""):
            ended = ended or f"its {token_key} was null"
    more_key, more = said.first(_MORE_KEYS)
    if more_key is not None:
        cursored = True
        if more is False:
            ended = ended or f"{more_key} was false"
        elif more is True and not next_link and token in (None, "") and items:
            # Stripe: more follows after the last item's id
            token_key, token = "starting_after", _item_id(items[-1])
    total = _int(said.first(_TOTAL_KEYS)[1])
    if total is None:
        total = _int(reply.headers.get("x-total-count"))
    stated = _int(said.first(_NUMBER_KEYS)[1])
    if not (isinstance(next_link, str) and next_link):
        next_link = None
    return Page(
        number=number,
        items=items,
        total=total,
        total_pages=_int(said.first(_PAGES_KEYS)[1]),
        per_page=_int(said.first(_SIZE_KEYS)[1]),
        next=_next_link(next_link, reply, requester) if next_link else None,
        cursor=str(token) if token not in (None, "") else None,
        cursor_param=TOKEN_PARAMS.get(token_key or "", token_key or "cursor"),
        cursored=cursored,
        ended=ended if next_link is None and token in (None, "") else None,
        said_number=stated,
        unknown=tuple(dict.fromkeys(said.unknown)),
    )


def _rel_links(entries: list[Any], key: str, said: _Said) -> Mapping[str, Any] | None:
    """An array of ``{rel, href}`` link objects as the object of links it means (``{rel:
    href}``); None, with the key named, when an entry is not such an object or names a
    relation svcnb does not know (it may be the continuation)."""
    out: dict[str, Any] = {}
    for entry in entries:
        rel = entry.get("rel") if isinstance(entry, Mapping) else None
        href = entry.get("href", entry.get("url")) if isinstance(entry, Mapping) else None
        if not isinstance(rel, str) or not (href is None or isinstance(href, str)):
            said.unknown.append(key)
            return None
        for name in rel.lower().split():  # a rel holds space-separated relation types
            if name not in _LINKS_KEYS:
                said.unknown.append(f"{key}[rel={name}]")
            elif name not in out or out[name] in (None, ""):
                out[name] = href
    return out


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


def _item_id(item: Any) -> str | int | float | bool | None:
    """What tells one item from another: its id, or its text where the id is no plain value
    (a service answering garbage must cost its list, not a TypeError)."""
    key = item.get("id") if isinstance(item, dict) else repr(item)
    return key if isinstance(key, str | int | float | bool | None) else repr(key)


class Listing(list):
    """A list read from the API, and whether it is proven complete.

    ``complete`` is True only when proven (a matching total, an explicit end, an empty page
    after a short one); ``proof`` says which, ``doubt`` why not (None when complete)."""

    complete: bool = True
    proof: str | None = None
    doubt: str | None = None
    # ids a later read (one that agreed with the read after it) held and the first did not,
    # or the first held and it did not: records created or deleted while the list was read, or
    # passed over by pages that shifted; () when no read saw the list change
    added: tuple[Any, ...] = ()
    removed: tuple[Any, ...] = ()
    # the paging assumption (config.PAGING_ASSUMPTIONS) the proof rests on, unpinned; and where
    # it is pinned when it is
    assumed: str | None = None
    pinned: str | None = None

    @classmethod
    def of(
        cls,
        items: Any,
        complete: bool,
        proof: str | None,
        doubt: str | None,
        *,
        added: tuple[Any, ...] = (),
        removed: tuple[Any, ...] = (),
    ) -> Listing:
        out = cls(items)
        out.complete, out.proof, out.doubt = complete, proof, doubt
        out.added, out.removed = added, removed
        return out

    def like(self, items: Any) -> Listing:
        """``items`` (the records of this list, parsed) with this list's completeness."""
        out = Listing.of(
            items, self.complete, self.proof, self.doubt, added=self.added, removed=self.removed
        )
        out.assumed, out.pinned = self.assumed, self.pinned
        return out

    def changes(self) -> str:
        """What came and went while the list was read ("" when nothing did)."""
        return changed(self.added, self.removed)


# The paging assumption a proof by a missing continuation rests on (svcnb.assumptions).
NO_CONTINUATION = "paging.no_continuation_is_end"


def _pinned(listing: Listing, assumed: str | None, req: Any = None) -> Listing:
    """``listing`` as the pin of ``assumed`` in the requester's pins (``Client.pins``; None:
    the config file's) says: ``true`` pinned (named where, and noted in ``req.relied``),
    ``false`` not proven, none: the proof stands on the assumption, named
    (``Listing.assumed``: ``svcnb doctor`` calls it assumed, a store records the list as
    incomplete)."""
    if assumed is None:
        return listing
    pins = getattr(req, "pins", None)
    decided = decide(NO_CONTINUATION, config_pins() if pins is None else pins, None, True)
    if decided.state == "unknown":
        listing.assumed = assumed
    elif decided.value == "true":
        listing.pinned = decided.where
        relied = getattr(req, "relied", None)
        if isinstance(relied, dict):
            relied[NO_CONTINUATION] = decided.where
    else:
        listing.complete, listing.doubt = (
            False,
            (
                f"{listing.proof}, but {decided.where} is false: an answer without a "
                "continuation is not taken for the end"
            ),
        )
        listing.proof = None
    return listing


def changed(added: Any, removed: Any) -> str:
    """``+a, +b; -c`` for the ids that came and went, a few of each named."""
    parts = []
    for sign, ids in (("added", list(added)), ("removed", list(removed))):
        if ids:
            more = f" and {len(ids) - 5:,} more" if len(ids) > 5 else ""
            shown = ", ".join(map(str, ids[:5])) + more
            parts.append(f"{sign} {shown}")
    return "; ".join(parts)


class Pager:
    """Reads one list endpoint page by page, learning its paging from the answers.

    ``per_page=None``: the endpoint takes no page parameters unless its first answer shows it is
    paged (a total beyond that page, a next link or a cursor); then it is read on like any other.
    After :meth:`pages` ends, ``proof`` says how the end was proven (None: it was not), ``doubt``
    why the list may be incomplete, ``unknown`` the answer keys svcnb did not understand.
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
        self.proof: str | None = None
        self.weak = False  # the proof holds only if no answer key went unread
        self.doubt: str | None = None
        self.unknown: dict[str, None] = {}
        self.base: int | None = None  # the server's number of its first page: 0 or 1
        self._first_ids: tuple | None = None
        self._probe: Page | None = None  # the second page, read while finding the base
        self._paged = True  # False once the endpoint refused a page number
        self.sized = per_page is not None  # False once the server refused perPage
        self.refused_size = False  # the server refused perPage (not only: never asked)
        self.answers = 0  # list answers read (pages, probes): one answer is one moment
        self.assumed: str | None = None  # the paging assumption the proof rests on
        self.settled: str | None = None  # why the set read is consistent without a re-read

    # -- reading single pages ---------------------------------------------------------------

    def _params(self, number: int) -> dict[str, Any] | None:
        params: dict[str, Any] = {}
        if number > 1:  # the first page is asked without a number: its answer says the base
            params["page"] = number - 1 + (1 if self.base is None else self.base)
        if self.size is not None and self.sized:
            params["perPage"] = self.size
        return params or None

    def fetch(self, number: int) -> Page:
        """Page ``number`` (1 is the first, whatever the server counts from) at the page size
        learned so far."""
        if number == 2 and self._probe is not None:
            page, self._probe = self._probe, None
            return page
        reply = self.req.request("GET", self.path, params=self._params(number), scope=self.scope)
        self.answers += 1
        page = parse_page(reply, number, self.req)
        page.number = number
        return page

    def first(self) -> Page:
        """Page 1; a ``perPage`` the server refuses as too large is lowered and asked again,
        and one it refuses naming no size it takes is left out."""
        refused: ValidationError | None = None
        while True:
            try:
                page = self.fetch(1)
            except ValidationError as exc:
                failed = exc
            else:
                said = page.said_number
                if said is not None:
                    self.base = 0 if said == 0 else 1
                self._first_ids = tuple(_item_id(item) for item in page.items)
                self.learn(page, first=True)
                return page
            if refused is not None and not self.sized:
                raise refused  # refused without a size too: the first refusal says the most
            refused = refused or failed
            smaller = self._smaller_size(failed)
            if smaller is None and self.size is not None and failed.field == "perPage":
                # no size it would take is named ("unknown parameter: perPage"): ask with
                # no size at all, and learn the page size from the answer
                _log.info(
                    "GET %s: the server refused perPage=%d (%s); asking without a page size",
                    self.path,
                    self.size,
                    failed.server_message,
                )
                self.asked = self.size = None
                self.sized = False
                self.refused_size = True
                continue
            if smaller is None:
                raise failed
            _log.info(
                "GET %s: the server refused perPage=%d (%s); asking for %d per page",
                self.path,
                self.size,
                failed.server_message,
                smaller,
            )
            self.asked = self.size = smaller

    def again(self) -> Pager:
        """A fresh pager for the same list at what this one learned (size, base): a re-read
        asks exactly the pages this read asked, with no probe."""
        other = Pager(
            self.req, self.path, scope=self.scope, per_page=self.asked, max_pages=self.max_pages
        )
        other.size, other.sized, other.base, other._paged = (
            self.size,
            self.sized,
            self.base,
            self._paged,
        )
        other.refused_size = self.refused_size
        return other

    def ensure_base(self) -> bool:
        """Find whether the server counts pages from 0 or 1 when its first answer did not say:
        ``page=1`` is the first page again on one, the second page on the other. False when the
        endpoint refuses a page number (it is not paged)."""
        if self.base is not None or not self._paged:
            return self._paged
        params: dict[str, Any] = {"page": 1}
        if self.size is not None and self.sized:
            params["perPage"] = self.size
        try:
            reply = self.req.request("GET", self.path, params=params, scope=self.scope)
        except ValidationError:
            self._paged = False
            return False
        self.answers += 1
        probe = parse_page(reply, 2, self.req)
        if probe.items and tuple(_item_id(i) for i in probe.items) == self._first_ids:
            self.base = 1
        else:
            self.base, self._probe = 0, probe
        return True

    def _smaller_size(self, exc: ValidationError) -> int | None:
        if self.size is None or self.size <= 1 or exc.field != "perPage":
            return None
        said = [int(n) for n in re.findall(r"\b\d{1,9}\b", exc.server_message)]
        below = [n for n in said if 1 <= n < self.size]
        return max(below) if below else None

    def _follow(self, path: str, params: dict) -> Page:
        reply = self.req.request("GET", path or self.path, params=params, scope=self.scope)
        self.answers += 1
        page = parse_page(reply, None, self.req)
        page.number = None
        return page

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

    def _prove(self, how: str, *, weak: bool = False, assumed: str | None = None) -> None:
        self.proof, self.weak, self.assumed = how, weak, assumed

    def _unpaged(self, page: Page, earlier: int, count: int) -> bool:
        """Whether a second page that repeats the first proves an unpaged list: the whole list
        served whatever is asked. The evidence: nothing said otherwise (no total beyond it, no
        link, cursor or key svcnb does not understand), and a smaller page size asked is not
        honoured (or the service takes none): a paged service would serve fewer."""
        if earlier != 1 or count != 2 or page.cursored or self.unknown:
            return False
        n = len(page.items)
        if any(total != n for total in self.totals):
            return False
        ids = tuple(_item_id(item) for item in page.items)
        if self.refused_size:
            how = "it takes no page size"
        elif n == 1:
            how = "a single item, so no smaller size can be asked"
        else:
            smaller = n // 2
            try:
                reply = self.req.request(
                    "GET", self.path, params={"perPage": smaller}, scope=self.scope
                )
            except ValidationError as exc:
                if exc.field not in (None, "perPage"):
                    return False
                how = f"it refused perPage={smaller}"
            else:
                self.answers += 1
                probe = parse_page(reply, 1, self.req)
                self.unknown.update(dict.fromkeys(probe.unknown))
                if probe.cursored or probe.unknown or tuple(map(_item_id, probe.items)) != ids:
                    return False  # it honours the size: a paged service that ignores the page
                how = f"perPage={smaller} served all {n} again"
        self.settled = f"every answer held the same {n} item(s)"
        self._prove(
            f"it served the same {n} item(s) whatever page or size was asked (page 2 repeated "
            f"page 1; {how}): an unpaged list, whole"
        )
        return True

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
        number, count, read, empties = 1, 1, 0, 0
        linked = False  # reached by a link or cursor: the page without one is the last
        while True:
            if page.total is not None:
                self.totals.append(page.total)
            self.unknown.update(dict.fromkeys(page.unknown))
            continued = page.next is not None or page.cursor is not None
            if not page.items and not continued:
                if count == 1 and (page.total or 0) > 0:
                    self.stalled = "its first page was empty"
                elif count == 1:
                    self._prove("its only page was empty")
                elif empties:
                    self._prove(f"page {count} came back empty and carried no continuation")
                else:
                    self._prove(f"page {count} came back empty")
                return
            if page.items:
                empties = 0
                signature = tuple(_item_id(item) for item in page.items)
                if signature in seen_pages:
                    if self._unpaged(page, seen_pages[signature], count):
                        return
                    self.stalled = f"page {count} repeated page {seen_pages[signature]}"
                    self.doubt = (
                        f"page {count} repeats an earlier page (page {seen_pages[signature]}): "
                        "the server ignored the page asked for, or the list shifted"
                    )
                    return
                seen_pages[signature] = count
                self.pages_read += 1
                read += len(page.items)
            else:
                # An empty page that carries a continuation is not the end (filtered or
                # soft-deleted rows): the continuation outranks the empty page, within a bound.
                empties += 1
                if empties > MAX_EMPTY_PAGES:
                    self.stalled = f"{empties} empty pages in a row each carried a continuation"
                    self.doubt = f"{self.stalled}; svcnb stopped following it (it may never end)"
                    return
            yield page
            asked = self.size
            if page.next is not None:
                next_path, params = page.next
                key = f"{next_path}?{sorted(params.items())}"
                if key in followed:
                    self.stalled = "its next link led back to a page already read"
                    self.doubt = self.stalled
                    return
                followed.add(key)
                linked = True
                _STYLES[self.req] = "next links"
                page = self._follow(next_path, params)
            elif page.cursor is not None:
                if page.cursor in followed:
                    self.stalled = "its cursor led back to a page already read"
                    self.doubt = self.stalled
                    return
                followed.add(page.cursor)
                linked = True
                _STYLES[self.req] = f"a continuation ({page.cursor_param}=...)"
                params = {page.cursor_param: page.cursor}
                if self.size is not None and self.sized and page.cursor_param == "cursor":
                    params["perPage"] = self.size
                page = self._follow(self.path, params)
            elif linked or page.cursored:
                if page.ended and self.req not in _STYLES:
                    _STYLES[self.req] = "next links or cursors"
                if page.ended:
                    self._prove(page.ended)
                elif linked:
                    self._prove(
                        "its last page carried no continuation", weak=True, assumed=NO_CONTINUATION
                    )
                else:
                    self.doubt = (
                        "its answer says more may follow but gives no link or cursor svcnb "
                        "can follow"
                    )
                return
            else:
                pages = self.page_count(page)
                if pages is not None:
                    if number >= pages:
                        self._prove(f"it counted {pages} page(s), all read")
                        return
                elif page.total is not None:
                    if read >= page.total:
                        return  # the collector holds what was read against the total
                elif asked is None or len(page.items) < asked:
                    style = _STYLES.get(self.req)
                    if style is not None:
                        self._prove(
                            f"the service continues its lists by {style}, and this "
                            "answer carries none",
                            weak=True,
                            assumed=NO_CONTINUATION,
                        )
                        return
                    # Nothing announced, and a short page: the end, or a cap the server did not
                    # state. Only the next page tells; asked at the size served so far.
                    if count == 1 and asked is not None:
                        self.size = len(page.items)
                if not self.ensure_base():
                    self._prove("the endpoint takes no page number", weak=True)
                    return
                number += 1
                page = fetch(number)
            count += 1
            if count > self.max_pages:
                raise PagingError(
                    f"GET {self.path}: more than {self.max_pages} pages; stopped rather than "
                    "return a partial list (the server may be ignoring the page parameter)"
                )


# Empty pages in a row that each carry a continuation, followed before svcnb calls the list
# "may be incomplete" (a service filtering soft-deleted rows may answer a few).
MAX_EMPTY_PAGES = 20

# What each client (its requester) has seen its service continue lists by: on a service that
# says "next" on every list that has more, an answer that says nothing has no more.
_STYLES: weakref.WeakKeyDictionary[Requester, str] = weakref.WeakKeyDictionary()


class Collector:
    """Joins pages into one list: drops duplicated ids, checks what was read against what
    the server announced, and says whether the list is proven complete."""

    def __init__(self, resource: str, path: str) -> None:
        self.resource = resource
        self.path = path
        self.items: list[Any] = []
        self._ids: set[Any] = set()
        self.duplicates: list[Any] = []
        self.totals: list[int] = []
        self.quiet = False  # keep the warnings in ``said`` only (a read that may be redone)
        self.said: list[str] = []
        self.shifted = False  # the read itself showed the list changing under it

    def _warn(self, message: str) -> None:
        self.said.append(message)
        if not self.quiet:
            warnings.warn(message, PagingWarning, stacklevel=4)

    def ids(self) -> list[Any]:
        return [_item_id(item) for item in self.items]

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

    def finish(self, pager: Pager | None = None) -> Listing:
        """The items, after warning about what the reading showed; PagingError when the
        server announced more than its first page and nothing past it could be read."""
        read = len(self.items)
        if self.duplicates:
            shown = ", ".join(map(str, self.duplicates[:5]))
            self._warn(
                f"GET {self.path}: dropped {len(self.duplicates)} duplicated {self.resource} "
                f"id(s) ({shown}): the same record came on two pages, so the list shifted "
                "while it was read (or the server pages inconsistently)",
            )
        totals = pager.totals if pager is not None else self.totals
        distinct = list(dict.fromkeys(totals))
        total = totals[-1] if totals else None
        if len(distinct) > 1:
            self.shifted = True
            self._warn(
                f"GET {self.path}: the {self.resource} list changed while it was read "
                f"(total reported {'→'.join(map(str, distinct))}, {read} read); records added "
                "or removed meanwhile may be missing: read it again for a consistent list",
            )
            return Listing.of(self.items, False, None, "the list changed while it was read")
        if total is not None and read < total:
            why = pager.stalled if pager is not None else None
            if why is not None and pager is not None and pager.pages_read <= 1:
                raise PagingError(
                    f"GET {self.path}: the server announced {total} {self.resource} records "
                    f"but only its first page ({read}) could be read: {why}. Nothing is "
                    "returned rather than a partial list; the server pages in a way svcnb does "
                    "not follow (see docs/dialects.md)"
                )
            reason = f" ({why})" if why else ""
            self._warn(
                f"GET {self.path}: read {read} of {total} announced {self.resource} records; "
                f"the server sent no more pages{reason}, and the total did not change while "
                "reading. The list is incomplete: read it again, and if it stays short, the "
                "server's paging is not one svcnb follows (see docs/dialects.md)",
            )
            return Listing.of(self.items, False, None, f"read {read} of {total} announced")
        if total is not None and read > total and not self.duplicates:
            self.shifted = True
            self._warn(
                f"GET {self.path}: read {read} {self.resource} records but {total} were "
                "announced; the server's count is off, or records were added while reading: "
                "read it again for a consistent list",
            )
            return Listing.of(self.items, False, None, f"read {read} of {total} announced")
        if total is not None:
            return Listing.of(self.items, True, f"its total ({total}) matched", None)
        doubt = self._doubt(pager)
        if doubt is None:
            assert pager is not None
            return _pinned(
                Listing.of(self.items, True, pager.proof, None),
                pager.assumed,
                pager.req,
            )
        self._warn(
            f"GET {self.path}: the {self.resource} list may be incomplete ({read} read): "
            f"{doubt}. It is kept and stored as incomplete; `svcnb doctor` shows how this "
            "service pages"
        )
        return Listing.of(self.items, False, None, doubt)

    def _doubt(self, pager: Pager | None) -> str | None:
        """Why a list without a total is not proven complete (None: it is)."""
        if pager is None:
            return "nothing the server said proved its end"
        unknown = list(pager.unknown)
        extra = f" (keys svcnb does not understand: {', '.join(unknown[:5])})" if unknown else ""
        if pager.doubt is not None:
            return pager.doubt + extra
        if pager.proof is None:
            return "nothing the server said proved its end" + extra
        if self.duplicates:
            self.shifted = True
            return "records came twice, so the list shifted while it was read"
        if pager.weak and unknown:
            return (
                f"its answers carry keys svcnb does not understand ({', '.join(unknown[:5])}), "
                "which may continue the list"
            )
        return None


def confirm(
    pager: Pager, collector: Collector, listing: Listing, *, settled: bool = False
) -> Listing:
    """``listing`` proven as a set: a list read in more than one answer may have changed
    between them (page numbers and offsets shift when records come and go, so a matching
    total proves a count, not a set), so it is read again until two reads in a row agree on
    every id, at most :data:`MAX_READS` reads. The list returned is the last read; what came
    and went since the first is in ``added`` / ``removed``. A list read in one answer, or
    whose answers all held the same items, is one moment already: returned as it is, with
    the first read's warnings. A list not proven for another reason (a key not understood, a
    stalled read) is not read again: another read cannot prove it. ``settled``: the caller
    proves the set otherwise (a detail read of every item), so only the warnings are said."""
    first_ids = collector.ids()
    one_moment = pager.answers <= 1 or pager.settled is not None
    if settled or one_moment or not (listing.complete or collector.shifted):
        _say(collector.said)
        return listing
    last, last_ids, last_clean = listing, first_ids, listing.complete and not collector.shifted
    said = collector.said
    for _ in range(MAX_READS - 1):
        again = pager.again()
        reread = Collector(collector.resource, collector.path)
        reread.quiet = True
        for page in again.pages():
            reread.add(page)
        got = reread.finish(again)
        ids = reread.ids()
        clean = got.complete and not reread.shifted
        if clean and last_clean and set(ids) == set(last_ids) and len(ids) == len(last_ids):
            added, removed = _difference(first_ids, ids)
            if added or removed or collector.shifted:
                what = changed(added, removed) or "ids came twice or the total moved"
                _say(
                    [
                        f"GET {collector.path}: the {collector.resource} list changed while it "
                        f"was read ({what}); it was read again until two reads agreed, and "
                        "the last read is returned"
                    ]
                )
            proof = f"{got.proof}; a re-read agreed on all {len(ids)} ids"
            out = Listing.of(got, True, proof, None, added=added, removed=removed)
            out.assumed, out.pinned = got.assumed, got.pinned
            return out
        last, last_ids, last_clean, said = got, ids, clean, reread.said
    added, removed = _difference(first_ids, last_ids)
    what = changed(added, removed) or "the same ids, read differently"
    doubt = f"the list changed while it was read: {MAX_READS} reads did not agree in a row ({what})"
    _say(
        [
            *said,
            f"GET {collector.path}: the {collector.resource} list may be incomplete: {doubt}. "
            "It is kept and stored as incomplete; read it again when it is quieter",
        ]
    )
    return Listing.of(last, False, None, doubt, added=added, removed=removed)


# Reads of one list, at most, until two in a row agree (the first one included).
MAX_READS = 3


def _difference(before: list[Any], after: list[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(ids in ``after`` not in ``before``, ids in ``before`` not in ``after``), in order."""
    was, now = set(before), set(after)
    return tuple(i for i in after if i not in was), tuple(i for i in before if i not in now)


def _say(messages: list[str]) -> None:
    for message in dict.fromkeys(messages):
        warnings.warn(message, PagingWarning, stacklevel=4)


def read_all(
    requester: Requester,
    path: str,
    resource: str,
    *,
    scope: str | None = None,
    per_page: int | None = DEFAULT_PER_PAGE,
    max_pages: int = MAX_PAGES,
) -> Listing:
    """Every item of the list at ``path`` (all pages), duplicates dropped with a warning, and
    whether it is proven complete."""
    pager = Pager(requester, path, scope=scope, per_page=per_page, max_pages=max_pages)
    collector = Collector(resource, path)
    collector.quiet = True  # said by confirm, once it knows whether a re-read settles it
    for page in pager.pages():
        collector.add(page)
    return confirm(pager, collector, collector.finish(pager))
