"""The route table: one ``Route`` per public endpoint, and the ``Call`` a handler receives.

Handlers run under ``state.lock`` and return ``(status, envelope)`` or raise ``ApiFailure``.
The same table drives dispatch, scope checks and the OpenAPI document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from itertools import islice

from ._state import State
from ._wire import ApiFailure, ok

PAGE_DEFAULT = 20
PAGE_MAX = 100


@dataclass
class Call:
    """One request as a handler sees it: path parameters, query, parsed JSON body, token."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, str]
    body: object
    token: dict | None


Handler = Callable[[State, Call], tuple[int, dict]]


@dataclass(frozen=True)
class Route:
    """One endpoint under the public prefix.

    ``body`` names the request-body schema in the OpenAPI document (None: takes no body);
    ``data`` names the schema of ``data`` in the success envelope; ``listing`` routes take
    ``page``/``perPage`` and answer with ``meta``; ``failures`` are the statuses the route can
    answer besides the ones every route can (401, 404, 405, 429, 500).
    """

    method: str
    template: str
    scope: str | None
    handler: Handler
    success: int
    summary: str
    data: str
    body: str | None = None
    listing: bool = False
    failures: tuple[int, ...] = ()
    regex: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", template_regex(self.template))

    @property
    def name(self) -> str:
        return f"{self.method} {self.template}"

    @property
    def query_names(self) -> tuple[str, ...]:
        return ("page", "perPage") if self.listing else ()


def template_regex(template: str) -> re.Pattern:
    """The pattern of the paths ``template`` stands for: each ``{name}`` is one path segment."""
    pattern = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template)
    return re.compile(f"^{pattern}$")


def page_of(items: Collection, query: dict[str, str]) -> dict:
    """The success envelope for one page of ``items`` (``page`` from 1, ``perPage`` 1..100)."""
    page = _int_query(query, "page", 1, 1, None)
    per_page = _int_query(query, "perPage", PAGE_DEFAULT, 1, PAGE_MAX)
    total = len(items)
    start = (page - 1) * per_page
    meta = {
        "page": page,
        "perPage": per_page,
        "total": total,
        "totalPages": (total + per_page - 1) // per_page,
    }
    if isinstance(items, list):
        chosen = items[start : start + per_page]
    else:  # a dict view: walk to the page instead of copying every record
        chosen = list(islice(items, start, start + per_page))
    return ok(chosen, meta)


def _int_query(query: dict[str, str], name: str, default: int, low: int, high: int | None) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    bound = f"{low}..{high}" if high is not None else f">= {low}"
    if not re.fullmatch(r"[0-9]{1,9}", raw) or not (low <= int(raw) <= (high or int(raw))):
        raise ApiFailure(422, f"{name}: must be an integer {bound}, got {raw[:40]!r}")
    return int(raw)


def find(table: dict[str, dict], record_id: str, what: str) -> dict:
    """The record, or a 404 naming what was looked for."""
    record = table.get(record_id)
    if record is None:
        shown = record_id if len(record_id) <= 80 else record_id[:80] + "..."
        raise ApiFailure(404, f"{what} {shown!r} not found")
    return record
