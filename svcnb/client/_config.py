"""Client configuration: argument, then environment, then a named default."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import httpx

from svcnb.client._redact import Secret, as_secret

ENV_API_KEY = "SVC_API_KEY"
ENV_BASE_URL = "SVC_BASE_URL"

DEFAULT_TIMEOUT = 30.0  # per connect, read or write: how long one step may stall
# The whole of one call: connect, send, receive, every retry and every wait. Long enough for a
# wait out of a full rate-limit window (60 s at the service) plus a slow answer and its
# retries; anything longer looks like a hang in a notebook, so it ends with an error instead.
DEFAULT_DEADLINE = 120.0
# The longest single wait the server may ask for (Retry-After, a rate-limit reset). A window of
# the service is 60 s, so a longer wait speaks of a quota, not of pacing: an error naming the
# wait tells the user more than a silent sleep would.
DEFAULT_MAX_WAIT = 90.0
DEFAULT_MAX_RETRIES = 5
DEFAULT_PER_PAGE = 100
DEFAULT_WORKERS = 8
MAX_PAGES = 10_000

# The spec's documented prefix first, then the form its published server entry shows.
API_PREFIX = "/api/public/v1"
BASE_PATH_CANDIDATES = (API_PREFIX, "/api/v1" + API_PREFIX)


@dataclass(frozen=True)
class Settings:
    api_key: Secret | None
    base_url: str
    timeout: float
    max_retries: int
    deadline: float = DEFAULT_DEADLINE
    max_wait: float = DEFAULT_MAX_WAIT


def key_and_url(
    api_key: Secret | str | None, base_url: str | None
) -> tuple[Secret | None, str | None]:
    """Each argument, else its environment variable; None where neither names one. The key
    comes back as a :class:`Secret` (never raising: see ``Secret.problem``)."""
    # Wrapped in the same expression that reads it, so no local of this frame holds it raw.
    key = as_secret(api_key if api_key is not None else os.environ.get(ENV_API_KEY) or None)
    url = base_url if base_url is not None else os.environ.get(ENV_BASE_URL) or None
    return key, url


def _seconds(name: str, value: float, *, zero: bool = False) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (value == 0 and not zero):
        allowed = ">= 0" if zero else "> 0"
        raise ValueError(f"{name} must be a finite number of seconds {allowed}, got {value!r}")
    return float(value)


def resolve(
    api_key: Secret | str | None,
    base_url: str | None,
    timeout: float,
    max_retries: int,
    deadline: float = DEFAULT_DEADLINE,
    max_wait: float = DEFAULT_MAX_WAIT,
) -> Settings:
    """Arguments first, then ``SVC_API_KEY`` / ``SVC_BASE_URL``; a bad value raises ValueError."""
    key, url = key_and_url(api_key, base_url)
    del api_key  # from here on only the Secret: this frame may raise
    if not url:
        raise ValueError(
            f"no base URL: pass base_url= or set {ENV_BASE_URL} "
            "(or call svcnb.connect() with neither set to use a local sandbox)"
        )
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"base_url must be an http(s) URL with a host, got {url!r}")
    problem = key.problem if key is not None else None
    if problem:
        raise ValueError(problem)
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
    return Settings(
        key,
        url.rstrip("/"),
        _seconds("timeout", timeout),
        max_retries,
        _seconds("deadline", deadline),
        _seconds("max_wait", max_wait, zero=True),
    )


def base_path_candidates(base_url: str) -> tuple[str, ...]:
    """Prefixes to try after ``base_url``; ``("",)`` when the URL already ends with the prefix."""
    path = httpx.URL(base_url).path.rstrip("/")
    if path.endswith(API_PREFIX):
        return ("",)
    return BASE_PATH_CANDIDATES
