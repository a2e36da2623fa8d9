"""Client configuration: argument, then environment, then a named default."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from urllib.parse import unquote

import httpx

from svcnb.client._redact import TOKEN_RE, Secret, as_secret
from svcnb.config import ConfigError

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
    api_key: Secret | str | None, base_url: str | RefusedBaseUrl | None
) -> tuple[Secret | None, str | RefusedBaseUrl | None]:
    """Each argument, else its environment variable; None where neither names one. The key
    comes back as a :class:`Secret` (never raising: see ``Secret.problem``), a URL that may
    hold a secret as a :class:`RefusedBaseUrl` (see :func:`screened_url`)."""
    # Wrapped in the same expression that reads it, so no local of this frame holds it raw.
    key = as_secret(api_key if api_key is not None else os.environ.get(ENV_API_KEY) or None)
    # screened as it is read, for the same reason: a URL with a password must not sit in a frame
    url = (
        screened_url(base_url, "base_url")
        if base_url is not None
        else screened_url(os.environ.get(ENV_BASE_URL) or None, ENV_BASE_URL)
    )
    return key, url


def base_url_problem(url: str) -> str | None:
    """What in ``url`` may be a credential, said without quoting any of it; None if nothing is.

    A base URL is ``scheme://host[:port][/path]``. The token travels in a header, while the
    URL is printed (``svcnb doctor``, ``svcnb snapshot``, error messages) and stored with every
    snapshot as the store's server: a user name or password, a query, a fragment, or anything
    shaped like a token in it can only be a secret pasted in the wrong place, so it is refused
    rather than carried along.
    """
    # percent-encoding (svc%5F..., user%40host) must not hide what decoding shows
    decoded = unquote(url)
    if TOKEN_RE.search(url) or TOKEN_RE.search(decoded):
        return "holds something shaped like an API token (svc_...)"
    if "@" in decoded:
        return "holds credentials (a user name or password before '@')"
    if "?" in decoded:
        return "holds a query (?...), where keys and tokens get pasted"
    if "#" in decoded:
        return "holds a fragment (#...)"
    return None


class RefusedBaseUrl:
    """Stands in for a base URL :func:`base_url_problem` refused. It keeps where the URL came
    from and why it was refused, never the URL, so the frames that pass it on (a verbose
    traceback prints their variables) hold nothing of the secret."""

    __slots__ = ("problem", "source")

    def __init__(self, problem: str, source: str) -> None:
        self.problem = problem
        self.source = source

    def error(self) -> ConfigError:
        return ConfigError(
            f"{self.source} is refused: it {self.problem}. A base URL is "
            "scheme://host[:port][/path] (e.g. https://api.example.com); the token goes in "
            f"{ENV_API_KEY} (or the variable an account's token_env names), never in the URL"
        )

    def __repr__(self) -> str:
        return f"<{self.source} refused: it {self.problem}>"


def screened_url(url: str | RefusedBaseUrl | None, source: str) -> str | RefusedBaseUrl | None:
    """``url`` as it is, or a :class:`RefusedBaseUrl` when it may hold a secret. It never
    raises (the caller raises ``.error()`` once no variable of its frame holds the URL)."""
    if not isinstance(url, str):
        return url
    problem = base_url_problem(url)
    return url if problem is None else RefusedBaseUrl(problem, source)


def _seconds(name: str, value: float, *, zero: bool = False) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (value == 0 and not zero):
        allowed = ">= 0" if zero else "> 0"
        raise ValueError(f"{name} must be a finite number of seconds {allowed}, got {value!r}")
    return float(value)


def resolve(
    api_key: Secret | str | None,
    base_url: str | RefusedBaseUrl | None,
    timeout: float,
    max_retries: int,
    deadline: float = DEFAULT_DEADLINE,
    max_wait: float = DEFAULT_MAX_WAIT,
) -> Settings:
    """Arguments first, then ``SVC_API_KEY`` / ``SVC_BASE_URL``. A base URL or key that cannot
    be used raises ConfigError (a ValueError), other bad values ValueError."""
    source = "base_url" if base_url is not None else ENV_BASE_URL
    key, url = key_and_url(api_key, base_url)
    del api_key, base_url  # from here on only the Secret and the screened URL: this frame may raise
    if isinstance(url, RefusedBaseUrl):
        raise url.error()
    if not url:
        raise ConfigError(
            f"no base URL: pass base_url= or set {ENV_BASE_URL} "
            "(or call svcnb.connect() with neither set to use a local sandbox)"
        )
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        # quoting it is safe here: a URL that could hold a secret was refused above
        raise ConfigError(
            f"{source} must be an http(s) URL with a host (e.g. https://api.example.com), "
            f"got {url!r}"
        )
    problem = key.problem if key is not None else None
    if problem:
        raise ConfigError(problem)
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
