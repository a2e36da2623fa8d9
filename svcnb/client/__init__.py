"""The svcnb HTTP client (docs/contracts.md §3): ``Client`` and its resources.

It imports nothing else of svcnb but :mod:`svcnb.errors`, :mod:`svcnb.vocab` (status words, for
``vms.stop(wait=True)``) and :mod:`svcnb.config`. ``redact(text)`` is the one masking function of
svcnb; ``Secret`` holds a token so that it never prints.

For wiring svcnb into other code: ``read_all`` is the one paging loop (fed a request function),
``Governor``/``governor_for`` the one rate governor per token and server, the budgets
(``SharedBudget`` a file, ``RedisBudget`` a Redis server, ``budget_backend`` which one the
configuration picks) what processes share of it, and ``wire_for`` the HTTP wire a client uses.
"""

from __future__ import annotations

from svcnb.client._budget import (  # where processes share a token's rate budget
    ENV_BUDGET,
    TokenBudget,
    budget_key,
)
from svcnb.client._client import Client
from svcnb.client._config import (
    BASE_PATH_CANDIDATES,
    ENV_API_KEY,
    ENV_BASE_URL,
    RefusedBaseUrl,
    key_and_url,
    screened_url,
)
from svcnb.client._keepers import budget_backend, budget_path
from svcnb.client._pacing import Governor, governor_for, server_seconds
from svcnb.client._paging import MAX_EMPTY_PAGES, Listing, Page, parse_page, read_all
from svcnb.client._redact import (
    TOKEN_MAX_LENGTH,
    TOKEN_MIN_LENGTH,
    TOKEN_PREFIX,
    TOKEN_RE,
    Secret,
    as_secret,
    looks_like_token,
    redact,
)
from svcnb.client._redis_budget import RedisBudget
from svcnb.client._shared_budget import SharedBudget, check_budget_file
from svcnb.client._timebox import bound
from svcnb.client._validate import rule_update as validate_rule_update
from svcnb.client._wire import HttpxWire, Urllib3Wire, wire_for
from svcnb.errors import Forbidden, LimitExceeded, WaitTimeout

__all__ = [
    "BASE_PATH_CANDIDATES",
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_BUDGET",
    "MAX_EMPTY_PAGES",
    "TOKEN_MAX_LENGTH",
    "TOKEN_MIN_LENGTH",
    "TOKEN_PREFIX",
    "TOKEN_RE",
    "Client",
    "Forbidden",
    "Governor",
    "HttpxWire",
    "LimitExceeded",
    "Listing",
    "Page",
    "RedisBudget",
    "RefusedBaseUrl",
    "Secret",
    "SharedBudget",
    "TokenBudget",
    "Urllib3Wire",
    "WaitTimeout",
    "as_secret",
    "bound",
    "budget_backend",
    "budget_key",
    "budget_path",
    "check_budget_file",
    "governor_for",
    "key_and_url",
    "looks_like_token",
    "parse_page",
    "read_all",
    "redact",
    "screened_url",
    "server_seconds",
    "validate_rule_update",
    "wire_for",
]
