"""Saying a canonical answer in a dialect: words, money, times, field names, pages, statuses.

Handlers answer ``(status, envelope)`` in the default dialect's form, or ``(status, Listing)``
for a list; :func:`speak` turns that into the wire form of the active dialect and
:func:`speak_failure` picks the status and text of a failure. With the default dialect both
give exactly the canonical bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta, timezone
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from itertools import islice
from typing import Protocol
from urllib.parse import quote

from ._dialect import Dialect
from ._envelopes import ApiFailure, ok, parse_iso
from ._plans_regions import CURRENCY

TIME_KEYS = frozenset(
    {"createdAt", "updatedAt", "attachedAt", "lastAttemptAt", "expiresAt", "nextRenewalAt"}
)
# served by GET /vms/{id} only; GET /vms summaries leave them out (docs/contracts.md section 1)
DETAIL_KEYS = frozenset({"sshKeys", "firewalls", "privateNetworks"})
_VM_SCHEMAS = frozenset({"VM", "VMSummary"})
_LOCAL = timezone(timedelta(hours=2))
_CENT = Decimal("0.01")
_NANO = Decimal(10) ** 9
# the collection each paged list is named by in HAL's ``_embedded`` (by its item schema)
COLLECTIONS = {
    "VMSummary": "vms",
    "Firewall": "firewalls",
    "FirewallRule": "rules",
    "Network": "networks",
    "Attachment": "attachments",
    "WebhookList": "webhooks",
    "Delivery": "deliveries",
}
# paging styles that ignore query parameters they do not know (on every route)
LENIENT_PAGING = frozenset({"offset", "token", "hal"})


class Items(Protocol):
    """A sized iterable of records: a list, or a backend's ``Table.records()``."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[dict]: ...


@dataclass(frozen=True)
class Listing:
    """A whole list for the dialect to page: ``items`` in list order (a list, a backend's
    ``Table.records()``, which pages without walking to the page, or any sized iterable), each
    shown through ``view`` once chosen for the page."""

    items: Items
    view: Callable[[dict], dict] | None = None


@dataclass(frozen=True)
class Request:
    """What paging needs of the request: where it came in, for absolute ``Link`` URLs."""

    method: str
    scheme: str
    host: str
    path: str
    query: dict[str, str]


# -- values ------------------------------------------------------------------------------------
@lru_cache(maxsize=65536)
def write_time(text: str, form: str) -> str:
    """A canonical UTC timestamp (``...Z``) in timestamp form ``form`` (:data:`TIMESTAMPS`)."""
    if form == "z" or not text.endswith("Z"):
        return text
    if form == "offset":
        return text[:-1] + "+00:00"
    if form == "millis":
        return text[:-1] + ".000Z" if "." not in text else text
    return parse_iso(text).astimezone(_LOCAL).strftime("%Y-%m-%dT%H:%M:%S+02:00")


def read_money(value: object) -> Decimal | None:
    """The amount of a money value as the sandbox keeps it (its canonical forms: ``12.5``,
    ``"12.50"``, ``{"amount": "12.50", ...}``, a Decimal); None when it states none. The one
    place the sandbox reads an amount: it writes them with :func:`write_money`, in its
    dialect's form, and never reads back what it served."""
    if isinstance(value, dict):
        value = value.get("amount")
    if isinstance(value, bool) or value is None:
        return None
    try:
        amount = Decimal(repr(value) if isinstance(value, float) else str(value))
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() else None


def write_money(dialect: Dialect, value: object) -> object:
    """``value`` (any canonical money form) in the dialect's form; kept when it does not parse."""
    if dialect.money == "mixed":
        return value
    amount = read_money(value)
    if amount is None:
        return value
    form = dialect.money
    if form == "number":
        return float(amount)
    if form == "nanos":  # Google's Money: units and nanos carry the same sign
        units = int(amount)  # towards zero
        nanos = int((amount - units) * _NANO)
        return {"currencyCode": CURRENCY, "units": str(units), "nanos": nanos}
    cents = f"{amount.quantize(_CENT):.2f}"
    if form == "string":
        return cents
    if form == "object":
        return {"amount": cents, "currency": CURRENCY}
    if form == "text":
        return f"{cents} {CURRENCY}"
    if form == "code":
        return {"amount": cents, "currencyCode": CURRENCY}
    minor = int((amount * 100).to_integral_value())
    if form == "minor_amount":
        return {"amount": minor, "currency": CURRENCY, "precision": 2}
    if form in ("minor_exponent", "minor_scale", "minor_decimals"):
        return {"value": minor, "currency": CURRENCY, form[len("minor_") :]: 2}
    return {"value": minor, "currency": CURRENCY, "precision": 2}


def ram(dialect: Dialect, value: object) -> object:
    """Ram (MiB in the records) in the dialect's unit: whole GiB when it divides, else a
    fraction (exact: a power-of-two divisor)."""
    if dialect.ram_unit != "GiB" or isinstance(value, bool) or not isinstance(value, int):
        return value
    return value // 1024 if value % 1024 == 0 else value / 1024


def record(dialect: Dialect, rec: dict, schema: str) -> dict:
    """A copy of ``rec`` without internal keys, its values said in the dialect."""
    plain = dialect.plain_values
    vm = schema in _VM_SCHEMAS
    form = dialect.timestamps
    out: dict = {}
    for key, value in rec.items():
        if key[0] == "_":
            continue
        if plain:
            pass
        elif key in TIME_KEYS:
            value = write_time(value, form) if isinstance(value, str) else value
        elif key == "balance":
            value = write_money(dialect, value)
        elif key == "status" and vm:
            value = dialect.vm_word(value)
        elif key == "ram" and vm:
            value = ram(dialect, value)
        elif key == "billing" and isinstance(value, dict):
            value = _billing(dialect, value)
        elif key == "plan" and isinstance(value, dict) and "priceMonthly" in value:
            value = {**value, "priceMonthly": write_money(dialect, value["priceMonthly"])}
        elif key == "vm" and isinstance(value, dict) and "status" in value:
            value = {**value, "status": dialect.vm_word(value["status"])}
        out[key] = value
    if schema == "Delivery":
        names = dialect.delivery_fields
        out = {names.get(k, k): v for k, v in out.items()}
    return out


def _billing(dialect: Dialect, billing: dict) -> dict:
    out = dict(billing)
    if "priceMonthly" in out:
        out["priceMonthly"] = write_money(dialect, out["priceMonthly"])
    if isinstance(out.get("nextRenewalAt"), str):
        out["nextRenewalAt"] = write_time(out["nextRenewalAt"], dialect.timestamps)
    if "status" in out:
        out["status"] = dialect.billing_word(out["status"])
    return out


def list_item(dialect: Dialect, rec: dict, schema: str) -> dict:
    """One item of a list: a VM as the dialect's ``list_keys`` say, any other record whole."""
    if schema == "VMSummary" and dialect.list_keys != "full":
        dropped = DETAIL_KEYS if dialect.list_keys == "summary" else DETAIL_KEYS | {"updatedAt"}
        rec = {k: v for k, v in rec.items() if k not in dropped}
    return record(dialect, rec, schema)


# -- answers -----------------------------------------------------------------------------------
def query_names(dialect: Dialect, paged: bool) -> tuple[str, ...]:
    """The query parameters a route takes in this dialect."""
    if not paged:
        return ()
    style = dialect.paging
    if style == "cursor":
        return ("page", "perPage", "cursor")
    if style == "offset":
        return ("offset", "limit")
    if style == "token":
        _, token, size = dialect.token_names
        return (token, size)
    if style == "hal":
        return ("page", "size")
    return ("page", "perPage")


def ignores_unknown_query(dialect: Dialect) -> bool:
    """True when query parameters the route does not take are ignored instead of refused
    (``offset``, ``token`` and ``hal`` paging, on every route)."""
    return dialect.paging in LENIENT_PAGING


def success_status(dialect: Dialect, method: str, status: int) -> int:
    if status == 201:
        return dialect.created_status
    if status == 202:
        return dialect.stop_status
    if method == "DELETE" and status == 200:
        return dialect.delete_status
    return status


def speak(
    dialect: Dialect,
    schema: str,
    paged: bool,
    request: Request,
    status: int,
    payload: dict | Listing,
) -> tuple[int, dict, dict[str, str]]:
    """The wire status, body and extra headers of a successful canonical answer."""
    status = success_status(dialect, request.method, status)
    if isinstance(payload, Listing):
        if not paged:
            items = [_viewed(dialect, payload, rec, schema) for rec in payload.items]
            return status, ok(items), {}
        body, headers = _page(dialect, schema, request, payload)
        return status, body, headers
    data = payload.get("data")
    if isinstance(data, dict):
        payload = {**payload, "data": record(dialect, data, schema)}
    return status, payload, {}


def speak_failure(dialect: Dialect, exc: ApiFailure) -> tuple[int, str]:
    """The status and text of a failure in this dialect."""
    status = {
        "validation": dialect.validation_status,
        "conflict": dialect.conflict_status,
        "cap": dialect.cap_status,
        "revoked": dialect.revoked_status,
    }.get(exc.kind, exc.status)
    return status, exc.terse if dialect.wording == "terse" else exc.message


def _viewed(dialect: Dialect, listing: Listing, rec: dict, schema: str) -> dict:
    return list_item(dialect, listing.view(rec) if listing.view else rec, schema)


# -- paging ------------------------------------------------------------------------------------
def int_query(query: dict[str, str], name: str, default: int, low: int, high: int | None) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    bound = f"{low}..{high}" if high is not None else f">= {low}"
    if not re.fullmatch(r"[0-9]{1,9}", raw) or not (low <= int(raw) <= (high or int(raw))):
        raise ApiFailure(422, f"{name}: must be an integer {bound}, got {raw[:40]!r}")
    return int(raw)


def _size(dialect: Dialect, query: dict[str, str], name: str) -> int:
    """The page size asked under ``name``: ``page_default`` when left out; above ``page_max``
    a 422 naming ``name`` or ``page_max`` (``over_max``; ``bare`` paging always clamps)."""
    if dialect.over_max == "reject" and dialect.paging != "bare":
        return int_query(query, name, dialect.page_default, 1, dialect.page_max)
    return min(int_query(query, name, dialect.page_default, 1, None), dialect.page_max)


def _per_page(dialect: Dialect, query: dict[str, str]) -> int:
    return _size(dialect, query, "perPage")


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def _offset(cursor: str | None, name: str = "cursor") -> int:
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, ValueError):
        text = ""
    if not re.fullmatch(r"o:[0-9]{1,12}", text):
        what = "a cursor" if name == "cursor" else "a page token"
        raise ApiFailure(
            422, f"{name}: not {what} this server gave; leave it out to start from the first page"
        )
    return int(text[2:])


def _window(items: Items, start: int, stop: int) -> list:
    if isinstance(items, list):
        return items[start:stop]
    if hasattr(items, "window"):  # a backend's ordered table: O(page), wherever the page is
        return items.window(start, stop)
    return list(islice(items, start, stop))  # any other view: walk to the page, no copy


def _page(
    dialect: Dialect, schema: str, request: Request, listing: Listing
) -> tuple[dict, dict[str, str]]:
    query = request.query
    style = dialect.paging
    page = 1
    if style == "offset":
        per_page = _size(dialect, query, "limit")
        start = int_query(query, "offset", 0, 0, None)
    elif style == "token":
        _, token_name, size_name = dialect.token_names
        per_page = _size(dialect, query, size_name)
        start = _offset(query.get(token_name) or None, token_name)  # empty: the first page
    elif style == "cursor":
        per_page = _per_page(dialect, query)
        start = _offset(query.get("cursor"))
    elif style in ("hal", "zero"):  # pages counted from 0
        per_page = _size(dialect, query, "size" if style == "hal" else "perPage")
        page = int_query(query, "page", 0, 0, None)
        start = page * per_page
    else:
        per_page = _per_page(dialect, query)
        page = int_query(query, "page", 1, 1, None)
        start = (page - 1) * per_page
    items = listing.items
    total = len(items)
    data = [
        _viewed(dialect, listing, rec, schema) for rec in _window(items, start, start + per_page)
    ]
    pages = (total + per_page - 1) // per_page
    after = start + per_page
    if style in ("meta", "zero"):
        meta: dict[str, int | str | None] = {
            "page": page,
            "perPage": per_page,
            "total": total,
            "totalPages": pages,
        }
        return ok(data, meta), {}
    if style == "items":
        return ok({"items": data, "total": total, "page": page, "perPage": per_page}), {}
    if style == "cursor":
        meta = {
            "nextCursor": _cursor(after) if after < total else None,
            "perPage": per_page,
            "total": total,
        }
        return ok(data, meta), {}
    if style == "offset":

        def link(offset: int) -> str:
            return _url(request, dialect.link_form, f"offset={offset}&limit={per_page}")

        return ok(
            {
                "count": total,
                "next": link(after) if after < total else None,
                "previous": link(max(0, start - per_page)) if start > 0 else None,
                "results": data,
            }
        ), {}
    if style == "token":
        body = ok(data)
        if after < total:
            body[dialect.token_names[0]] = _cursor(after)
        return body, {}
    if style == "hal":

        def href(n: int) -> dict[str, str]:
            return {"href": _url(request, "absolute", f"page={n}&size={per_page}")}

        links = {"self": href(page)}
        if after < total:
            links["next"] = href(page + 1)
        resource = COLLECTIONS.get(schema) or request.path.rstrip("/").rsplit("/", 1)[-1]
        return ok(
            {
                "_embedded": {resource: data},
                "_links": links,
                "page": {
                    "size": per_page,
                    "totalElements": total,
                    "totalPages": pages,
                    "number": page,
                },
            }
        ), {}
    if style == "bare":
        return ok(data), {}
    return ok(data), _link_headers(request, page, per_page, pages, total)


def _url(request: Request, form: str, query: str) -> str:
    """The request's own path with ``query``: absolute (its scheme and host) or relative."""
    path = quote(request.path)
    if form == "relative":
        return f"{path}?{query}"
    return f"{request.scheme}://{request.host}{path}?{query}"


def _link_headers(
    request: Request, page: int, per_page: int, pages: int, total: int
) -> dict[str, str]:
    def url(n: int) -> str:
        return _url(request, "absolute", f"page={n}&perPage={per_page}")

    links = []
    if page < pages:
        links.append(f'<{url(page + 1)}>; rel="next"')
    if 1 < page <= pages + 1:
        links.append(f'<{url(page - 1)}>; rel="prev"')
    links.append(f'<{url(1)}>; rel="first"')
    links.append(f'<{url(max(pages, 1))}>; rel="last"')
    return {"link": ", ".join(links), "x-total-count": str(total)}
