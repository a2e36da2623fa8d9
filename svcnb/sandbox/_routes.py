"""The route table: one ``Route`` per public endpoint, and the ``Call`` a handler receives.

Handlers run under ``state.lock`` and return ``(status, envelope)`` in the default dialect's form,
``(status, Listing)`` for a list (the dialect pages it), or raise ``ApiFailure``. The same table
drives dispatch, scope checks and the OpenAPI document.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ._dialect import Dialect
from ._speak import Listing
from ._state import State
from .backends import find

__all__ = ["Call", "Handler", "Route", "find", "template_regex"]

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


Handler = Callable[[State, Call], tuple[int, dict | Listing]]


@dataclass(frozen=True)
class Route:
    """One endpoint under the public prefix.

    ``body`` names the request-body schema in the OpenAPI document (None: takes no body);
    ``data`` names the schema of ``data`` in the success envelope; ``listing`` routes are paged
    (in the default dialect: ``page``/``perPage`` and ``meta``), ``pageable`` ones only in a
    dialect that pages them; ``failures`` are the statuses the route can
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
    pageable: bool = False
    failures: tuple[int, ...] = ()
    regex: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", template_regex(self.template))

    @property
    def name(self) -> str:
        return f"{self.method} {self.template}"

    @property
    def query_names(self) -> tuple[str, ...]:
        """The query of the default dialect (the OpenAPI document describes that one)."""
        return ("page", "perPage") if self.listing else ()

    def paged(self, dialect: Dialect) -> bool:
        return self.listing or (self.pageable and dialect.webhooks_paged)


def template_regex(template: str) -> re.Pattern:
    """The pattern of the paths ``template`` stands for: each ``{name}`` is one path segment."""
    pattern = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template)
    return re.compile(f"^{pattern}$")
