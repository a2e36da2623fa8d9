"""The svcnb HTTP client: ``Client`` and its resources (``vms``, ``firewalls``, ``networks``,
``wallet``, ``webhooks``). It imports nothing else of svcnb but :mod:`svcnb.errors` and
:mod:`svcnb.vocab` (status words, for ``vms.stop(wait=True)``; it reads :mod:`svcnb.config`).

``Secret`` holds an API token so that it never prints; ``redact(text)`` masks anything shaped
like a token (``svc_`` and the token alphabet): the one masking function of svcnb.

The error classes a failure may now take besides the spec's per-status ones are re-exported
here too (``Forbidden``, ``LimitExceeded``, ``WaitTimeout``); all live in :mod:`svcnb.errors`.
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
