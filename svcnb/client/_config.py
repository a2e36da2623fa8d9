"""Client configuration: argument, then environment, then a named default."""

from __future__ import annotations

import os
from dataclasses import dataclass

import httpx

ENV_API_KEY = "SVC_API_KEY"
ENV_BASE_URL = "SVC_BASE_URL"

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 5
DEFAULT_PER_PAGE = 100
DEFAULT_WORKERS = 8
MAX_PAGES = 10_000

# The spec's documented prefix first, then the form its published server entry shows.
API_PREFIX = "/api/public/v1"
BASE_PATH_CANDIDATES = (API_PREFIX, "/api/v1" + API_PREFIX)


@dataclass(frozen=True)
class Settings:
    api_key: str | None
    base_url: str
    timeout: float
    max_retries: int


def key_and_url(api_key: str | None, base_url: str | None) -> tuple[str | None, str | None]:
    """Each argument, else its environment variable; None where neither names one."""
    key = api_key if api_key is not None else os.environ.get(ENV_API_KEY) or None
    url = base_url if base_url is not None else os.environ.get(ENV_BASE_URL) or None
    return key, url


def resolve(
    api_key: str | None, base_url: str | None, timeout: float, max_retries: int
) -> Settings:
    """Arguments first, then ``SVC_API_KEY`` / ``SVC_BASE_URL``; a bad value raises ValueError."""
    key, url = key_and_url(api_key, base_url)
    if not url:
        raise ValueError(
            f"no base URL: pass base_url= or set {ENV_BASE_URL} "
            "(or call svcnb.connect() with neither set to use a local sandbox)"
        )
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"base_url must be an http(s) URL with a host, got {url!r}")
    if key is not None and not isinstance(key, str):
        raise ValueError(f"api_key must be a string, got {type(key).__name__}")
    if key is not None and key.strip() != key:
        raise ValueError("api_key has leading or trailing whitespace; pass the token exactly")
    if not timeout or timeout <= 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
    return Settings(key, url.rstrip("/"), float(timeout), max_retries)


def base_path_candidates(base_url: str) -> tuple[str, ...]:
    """Prefixes to try after ``base_url``; ``("",)`` when the URL already ends with the prefix."""
    path = httpx.URL(base_url).path.rstrip("/")
    if path.endswith(API_PREFIX):
        return ("",)
    return BASE_PATH_CANDIDATES
