"""Reading a list or a money value the way a dialect says it, with plain httpx.

``walk`` follows each paging style's own continuation (page numbers, cursors, ``Link``
headers, ``next`` URLs, page tokens, HAL links) and returns the items with the total the style
states (None where it states none); ``amount`` reads every money form back to an exact
``Decimal``, checking each form's shape and currency.
"""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import urljoin

import httpx

CURRENCY = "EUR"
MINOR_KEYS = ("precision", "exponent", "scale", "decimals")


def size_param(d: dict) -> str:
    """The query parameter that asks for a page size in dialect choices ``d``."""
    return {"offset": "limit", "token": d["token_names"][2], "hal": "size"}.get(
        d["paging"], "perPage"
    )


def served_size(d: dict, response: httpx.Response) -> int | None:
    """The page size the answer says it served (None where the style does not say it)."""
    body = response.json()
    return {
        "meta": lambda: body["meta"]["perPage"],
        "zero": lambda: body["meta"]["perPage"],
        "items": lambda: body["data"]["perPage"],
        "cursor": lambda: body["meta"]["perPage"],
        "hal": lambda: body["data"]["page"]["size"],
    }.get(d["paging"], lambda: None)()


def page_items(d: dict, body: dict) -> list:
    """The items of one answered page."""
    data = body["data"]
    if d["paging"] == "items":
        return data["items"]
    if d["paging"] == "offset":
        return data["results"]
    if d["paging"] == "hal":
        (items,) = data["_embedded"].values()
        return items
    return data


def walk(
    http: httpx.Client, d: dict, path: str, size: int | None = None, limit: int = 10_000
) -> tuple[list[dict], int | None]:
    """Every item of the list at ``path`` (an absolute URL or one relative to ``http``'s base),
    read by following the dialect's own continuation; with the total it states, if any."""
    paging = d["paging"]
    params = {} if size is None else {size_param(d): size}
    items: list[dict] = []
    total: int | None = None
    url = path
    seen_pages = 0

    def get(target: str, query: dict | None = None) -> dict:
        nonlocal seen_pages
        seen_pages += 1
        assert seen_pages <= limit, "the continuation never ends"
        response = http.get(target, params=query)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["success"] is True
        return body

    if paging == "link":
        response = http.get(url, params=params)
        total = int(response.headers["x-total-count"])
        while True:
            assert response.status_code == 200, response.text
            items += response.json()["data"]
            nxt = response.links.get("next")
            if nxt is None:
                return items, total
            response = http.get(nxt["url"])
    if paging == "cursor":
        query = dict(params)
        while True:
            body = get(url, query)
            items += body["data"]
            total = body["meta"]["total"]
            if body["meta"]["nextCursor"] is None:
                return items, total
            query = dict(params, cursor=body["meta"]["nextCursor"])
    if paging == "offset":
        body = get(url, params)
        while True:
            data = body["data"]
            assert list(data) == ["count", "next", "previous", "results"], list(data)
            items += data["results"]
            total = data["count"]
            if data["next"] is None:
                return items, total
            if d["link_form"] == "relative":
                assert data["next"].startswith("/"), data["next"]
            else:
                assert data["next"].startswith("http"), data["next"]
            body = get(urljoin(str(http.base_url), data["next"]))
    if paging == "token":
        answer, token_name, _ = d["token_names"]
        query = dict(params)
        while True:
            body = get(url, query)
            items += body["data"]
            if answer not in body:
                assert set(body) == {"success", "data"}, set(body)
                return items, None
            assert set(body) == {"success", "data", answer}, set(body)
            assert isinstance(body[answer], str) and body[answer]
            query = dict(params, **{token_name: body[answer]})
    if paging == "hal":
        body = get(url, params)
        while True:
            data = body["data"]
            assert list(data) == ["_embedded", "_links", "page"], list(data)
            items += page_items(d, body)
            total = data["page"]["totalElements"]
            nxt = data["_links"].get("next")
            if nxt is None:
                return items, total
            assert nxt["href"].startswith("http"), nxt
            body = get(nxt["href"])
    # numbered pages: meta and items count from 1, zero from 0; bare states no total
    page = 0 if paging == "zero" else 1
    while True:
        body = get(url, dict(params, page=page))
        chunk = page_items(d, body)
        items += chunk
        if paging == "bare":
            assert set(body) == {"success", "data"}, set(body)
            if not chunk:
                return items, None
        else:
            if paging == "items":
                total, pages = body["data"]["total"], None
            else:
                total, pages = body["meta"]["total"], body["meta"]["totalPages"]
                assert body["meta"]["page"] == page
            last = len(items) >= total if pages is None else page + (paging == "zero") >= pages
            if last or not chunk:
                return items, total
        page += 1


def amount(value: object) -> Decimal | None:
    """The exact amount of a money value in any form a dialect says (None for null)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise AssertionError(f"not money: {value!r}")
    if isinstance(value, float | int):
        return Decimal(repr(value))
    if isinstance(value, str):
        number, _, code = value.partition(" ")
        assert code in ("", CURRENCY), value
        return Decimal(number)
    assert isinstance(value, dict), value
    keys = set(value)
    if keys == {"currencyCode", "units", "nanos"}:
        assert value["currencyCode"] == CURRENCY
        units, nanos = value["units"], value["nanos"]
        assert isinstance(units, str) and isinstance(nanos, int) and not isinstance(nanos, bool)
        assert int(units) == 0 or nanos == 0 or (int(units) < 0) == (nanos < 0), value
        assert abs(nanos) < 10**9
        return Decimal(int(units)) + Decimal(nanos).scaleb(-9)
    if keys == {"amount", "currencyCode"}:
        assert value["currencyCode"] == CURRENCY and isinstance(value["amount"], str)
        return Decimal(value["amount"])
    if keys == {"amount", "currency"}:
        assert value["currency"] == CURRENCY and isinstance(value["amount"], str)
        return Decimal(value["amount"])
    assert value.get("currency") == CURRENCY, value
    (scale,) = keys & set(MINOR_KEYS)
    minor = value["amount"] if "amount" in keys else value["value"]
    assert keys == {"amount" if "amount" in keys else "value", "currency", scale}, value
    assert isinstance(minor, int) and not isinstance(minor, bool)
    return Decimal(minor).scaleb(-value[scale])
