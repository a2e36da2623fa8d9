"""List endpoints that page the ways docs/dialects.md allows, for ``FakeApi.extra``.

``paged(rows, shape, cap=...)`` serves ``rows`` (a list, or a callable giving it) with a page
size capped at ``cap`` whatever ``perPage`` asks, as a real server may do silently. Shapes:

- ``meta``: ``{data: [...], meta: {page, perPage, total, totalPages}}``
- ``meta-total``: ``meta: {page, total}`` only (the size must be learned from the page length)
- ``items``: ``{data: {items, total, page, perPage}}``; ``items-total``: ``{data: {items, total}}``
- ``cursor``: ``{data: [...], meta: {nextCursor, perPage, total}}`` (``cursor=`` asks the next)
- ``link``: ``Link: <...>; rel="next"`` and ``X-Total-Count`` headers; ``link-bare``: no count
- ``body-link``: ``links.next`` in the body, no totals
- ``bare``: a list and nothing else

``announce`` overrides the total said; ``serve`` serves only the first ``serve`` rows (a server
that announces more than it gives); ``link_form`` writes links as ``absolute``, ``path``,
``query`` or ``other-prefix`` (the other of the two base paths).
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
from _fakeapi import envelope

SHAPES = (
    "meta",
    "meta-total",
    "items",
    "items-total",
    "cursor",
    "link",
    "link-bare",
    "body-link",
    "bare",
)


def paged(
    rows: list[dict] | Callable[[], list[dict]],
    shape: str,
    *,
    cap: int = 100,
    default: int = 20,
    announce: int | None = None,
    serve: int | None = None,
    link_form: str = "absolute",
) -> Callable[[httpx.Request], httpx.Response]:
    if shape not in SHAPES:
        raise ValueError(shape)

    def handler(request: httpx.Request) -> httpx.Response:
        q = request.url.params
        size = min(int(q.get("perPage", default)), cap)
        everything = rows() if callable(rows) else rows
        served = everything if serve is None else everything[:serve]
        if shape == "cursor":
            start = int(q.get("cursor", "c0")[1:])
            page = start // size + 1
        else:
            page = int(q.get("page", 1))
            start = (page - 1) * size
        chunk = served[start : start + size]
        total = len(everything) if announce is None else announce
        more = start + size < len(served)
        pages = -(-total // size)
        if shape == "meta":
            meta = {"page": page, "perPage": size, "total": total, "totalPages": pages}
            return envelope(chunk, meta=meta)
        if shape == "meta-total":
            return envelope(chunk, meta={"page": page, "total": total})
        if shape == "items":
            return envelope({"items": chunk, "total": total, "page": page, "perPage": size})
        if shape == "items-total":
            return envelope({"items": chunk, "total": total})
        if shape == "cursor":
            meta = {"nextCursor": f"c{start + size}" if more else None, "perPage": size}
            return envelope(chunk, meta={**meta, "total": total})
        if shape == "bare":
            return envelope(chunk)
        link = _link(request, page + 1, size, link_form)
        if shape == "body-link":
            body = {"success": True, "data": chunk}
            if more:
                body["links"] = {"next": link}
            return httpx.Response(200, json=body)
        first = _link(request, 1, size, link_form)
        links = [f'<{first}>; rel="first"']
        if more:
            links.append(f'<{link}>; rel="next"')
        headers = {"link": ", ".join(links)}
        if shape == "link":
            headers["x-total-count"] = str(total)
        return envelope(chunk, headers=headers)

    return handler


def _link(request: httpx.Request, page: int, size: int, form: str) -> str:
    url = request.url.copy_with(params={"page": page, "perPage": size})
    if form == "absolute":
        return str(url)
    if form == "path":
        return url.raw_path.decode()
    if form == "query":
        return "?" + url.query.decode()
    if form == "other-prefix":
        return url.raw_path.decode().replace("/api/public/v1", "/api/v1/api/public/v1", 1)
    raise ValueError(form)
