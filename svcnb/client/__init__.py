"""The svcnb HTTP client (docs/contracts.md §3): ``Client`` and its resources.

It imports nothing else of svcnb but :mod:`svcnb.errors`, :mod:`svcnb.vocab` (status words, for
``vms.stop(wait=True)``) and :mod:`svcnb.config`. ``redact(text)`` is the one masking function of
svcnb; ``Secret`` holds a token so that it never prints.
"""

from __future__ import annotations

from svcnb.client._client import Client
from svcnb.client._config import (
    ENV_API_KEY,
    ENV_BASE_URL,
    RefusedBaseUrl,
    key_and_url,
    screened_url,
)
from svcnb.client._paging import Listing, Page, parse_page
from svcnb.client._redact import (
    TOKEN_MAX_LENGTH,
    TOKEN_MIN_LENGTH,
    Secret,
    as_secret,
    looks_like_token,
    redact,
)
from svcnb.client._timebox import bound
from svcnb.client._validate import rule_update as validate_rule_update
from svcnb.errors import Forbidden, LimitExceeded, WaitTimeout

__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "TOKEN_MAX_LENGTH",
    "TOKEN_MIN_LENGTH",
    "Client",
    "Forbidden",
    "LimitExceeded",
    "Listing",
    "Page",
    "RefusedBaseUrl",
    "Secret",
    "WaitTimeout",
    "as_secret",
    "bound",
    "key_and_url",
    "looks_like_token",
    "parse_page",
    "redact",
    "screened_url",
    "validate_rule_update",
]
