"""The one request function: key, base path, envelope, error mapping, pacing, retries.

Every call of every resource goes through :meth:`Requester.request`. Reads are retried on 5xx,
timeouts and dropped connections; writes (POST/PATCH/DELETE) carry an ``Idempotency-Key`` made
once per call and sent unchanged on every retry, so the server can tell a retry from a new call.
A write is never sent again without that key.
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from svcnb.client._config import ENV_API_KEY, Settings, base_path_candidates
from svcnb.client._failures import classify
from svcnb.client._pacing import Governor, governor_for
from svcnb.client._redact import mask_token, scrub
from svcnb.errors import (
    ApiError,
    AuthError,
    Conflict,
    LimitExceeded,
    NotFound,
    RateLimited,
    ScopeError,
    ServerError,
    TransportError,
    ValidationError,
)

_log = logging.getLogger("svcnb.client")

WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
RETRY_STATUSES_READ = frozenset({500, 502, 503, 504})
# A 502 on a write means the write was applied and a side effect failed: never repeat it.
RETRY_STATUSES_WRITE = frozenset({500, 503, 504})
RETRY_BASE_SECONDS = 0.2  # first backoff after a 5xx or a dropped connection
RETRY_CAP_SECONDS = 8.0
RATE_LIMIT_BASE_SECONDS = 1.0  # the spec's guidance: back off from 1 s after Retry-After
RATE_LIMIT_CAP_SECONDS = 60.0
MAX_RATE_LIMITED = 30  # consecutive 429s on one call before giving up
_SCOPE_RE = re.compile(r"\b([a-z]+:(?:read|write))\b")
_TRANSPORT_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


@dataclass
class Reply:
    """A successful answer: the envelope's ``data`` and ``meta``, the whole body, its headers,
    the URL it answered (to resolve relative links against) and its ``Link`` header parsed."""

    status: int
    data: Any
    meta: dict | None
    body: dict
    headers: httpx.Headers
    replayed: bool = False
    url: httpx.URL | None = None
    links: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Call:
    """One API call as the caller asked for it; every attempt of it sends exactly this."""

    method: str
    path: str  # under the API prefix
    params: Mapping[str, Any] | None
    body: Any
    headers: dict[str, str]
    scope: str | None  # the scope the endpoint needs, named in a 403


@dataclass
class Stats:
    """Counters of one Client. ``waited_seconds`` is wall-clock time during which at least one
    of its calls was held back by the rate limit (not a sum over threads)."""

    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    waited_seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _waiting: int = 0
    _since: float = 0.0

    def add(self, **deltas: float) -> None:
        with self.lock:
            for name, delta in deltas.items():
                setattr(self, name, getattr(self, name) + delta)

    def wait_begins(self) -> None:
        with self.lock:
            if self._waiting == 0:
                self._since = time.monotonic()
            self._waiting += 1

    def wait_ends(self) -> None:
        with self.lock:
            self._waiting -= 1
            if self._waiting == 0:
                self.waited_seconds += time.monotonic() - self._since

    def as_dict(self) -> dict:
        with self.lock:
            return {
                "requests": self.requests,
                "retries": self.retries,
                "rate_limited": self.rate_limited,
                "waited_seconds": round(self.waited_seconds, 3),
            }


class Requester:
    """Holds the HTTP connection pool, the token, the found base path and the governor."""

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        pool_size: int = 16,
    ) -> None:
        self._token = settings.api_key
        self.base_url = settings.base_url
        self.max_retries = settings.max_retries
        self._sleep = sleep
        self._candidates = base_path_candidates(settings.base_url)
        self.base_path: str | None = self._candidates[0] if len(self._candidates) == 1 else None
        self._discover_lock = threading.Lock()
        self.governor: Governor = governor_for(settings.base_url, settings.api_key)
        self.stats = Stats()
        self.server_time: datetime | None = None
        self.latency: float | None = None  # moving average of seconds per answered request
        headers = {"accept": "application/json", "user-agent": "svcnb"}
        if self._token:
            headers["x-api-key"] = self._token
        self._http = httpx.Client(
            base_url=settings.base_url,
            headers=headers,
            timeout=settings.timeout,
            transport=transport,
            limits=httpx.Limits(max_connections=pool_size, max_keepalive_connections=pool_size),
            follow_redirects=False,
        )

    @property
    def masked_token(self) -> str:
        return mask_token(self._token)

    def close(self) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        scope: str | None = None,
        idempotency_key: str | None = None,
    ) -> Reply:
        """Send one call to ``path`` (relative to the API prefix) and unwrap its envelope.

        Raises the :mod:`svcnb.errors` type of the failure status, or ``TransportError`` when no
        answer came on any attempt. ``scope`` names the scope the endpoint needs, for 403s.
        """
        method = method.upper()
        headers = {}
        if method in WRITE_METHODS:
            # Made once per call: every retry of this call sends the same key.
            headers["idempotency-key"] = idempotency_key or uuid.uuid4().hex
        call = Call(method, path, params, json, headers, scope)
        if self.base_path is not None:
            response = self._send(call, self.base_path)
        else:
            response = self._discover(call)
        return self._unwrap(response, call)

    def _discover(self, call: Call) -> httpx.Response:
        # One thread finds the base path; the others wait and then use it.
        with self._discover_lock:
            if self.base_path is not None:
                return self._send(call, self.base_path)
            first = None
            for candidate in self._candidates:
                response = self._send(call, candidate)
                if response.status_code != 404:
                    self.base_path = candidate
                    _log.info("API base path is %s%s", self.base_url, candidate)
                    return response
                first = first or response
            # 404 under every prefix: the documented prefix's answer says the most.
            return first

    def _send(self, call: Call, prefix: str) -> httpx.Response:
        """The retry loop: returns the first answer that is not to be retried."""
        method, path, headers = call.method, call.path, call.headers
        failures = 0
        limited = 0
        while True:
            self.stats.wait_begins()
            try:
                self.governor.acquire()
            finally:
                self.stats.wait_ends()
            started = time.monotonic()
            try:
                response = self._http.request(
                    method, prefix + path, params=call.params, json=call.body, headers=headers
                )
            except _TRANSPORT_ERRORS as exc:
                self.governor.release(None)
                self.stats.add(requests=1)
                if failures >= self.max_retries:
                    key = headers.get("idempotency-key")
                    maybe = (
                        f"; the write may have been applied (sent with Idempotency-Key {key}): "
                        "check the resource before sending it again"
                        if key
                        else ""
                    )
                    raise TransportError(
                        f"{method} {path}: no answer from {self.base_url} after "
                        f"{failures + 1} attempt(s) ({type(exc).__name__}: "
                        f"{scrub(str(exc), self._token) or 'connection failed'}); check that the "
                        f"server is reachable, or raise max_retries/timeout{maybe}",
                        method,
                        path,
                    ) from None
                failures += 1
                self.stats.add(retries=1)
                delay = self._backoff(failures, RETRY_BASE_SECONDS, RETRY_CAP_SECONDS)
                _log.debug(
                    "%s %s: %s; retry %d in %.2fs",
                    method,
                    path,
                    type(exc).__name__,
                    failures,
                    delay,
                )
                self._sleep(delay)
                continue
            self.governor.release(response.headers)
            self.stats.add(requests=1)
            self._observe(response, time.monotonic() - started)
            status = response.status_code
            if status == 429:
                limited += 1
                self.stats.add(rate_limited=1)
                retry_after = _retry_after(response.headers)
                self.governor.pause(retry_after)
                if limited > MAX_RATE_LIMITED:
                    return response
                delay = retry_after + self._backoff(
                    limited, RATE_LIMIT_BASE_SECONDS, RATE_LIMIT_CAP_SECONDS
                )
                _log.info("%s %s: rate limited (429); waiting %.1fs", method, path, delay)
                self.stats.add(retries=1)
                self.stats.wait_begins()
                try:
                    self._sleep(delay)
                finally:
                    self.stats.wait_ends()
                continue
            if self._retryable(method, response) and failures < self.max_retries:
                failures += 1
                self.stats.add(retries=1)
                delay = self._backoff(failures, RETRY_BASE_SECONDS, RETRY_CAP_SECONDS)
                _log.debug("%s %s: %d; retry %d in %.2fs", method, path, status, failures, delay)
                self._sleep(delay)
                continue
            return response

    @staticmethod
    def _retryable(method: str, response: httpx.Response) -> bool:
        status = response.status_code
        if method not in WRITE_METHODS:
            return status in RETRY_STATUSES_READ
        if status in RETRY_STATUSES_WRITE:
            return True
        # The same Idempotency-Key is still being served (our earlier attempt whose answer was
        # lost): wait for it to finish, then the retry gets its stored answer.
        return status == 409 and "idempot" in response.text.lower()

    @staticmethod
    def _backoff(attempt: int, base: float, cap: float) -> float:
        """Exponential backoff with jitter: up to ``base * 2**(attempt-1)``, at most ``cap``."""
        ceiling = min(cap, base * 2 ** (attempt - 1))
        return ceiling / 2 + random.random() * ceiling / 2

    def _observe(self, response: httpx.Response, seconds: float) -> None:
        date = response.headers.get("date")
        if date:
            with contextlib.suppress(TypeError, ValueError):
                self.server_time = parsedate_to_datetime(date)
        self.latency = seconds if self.latency is None else 0.9 * self.latency + 0.1 * seconds

    def _unwrap(self, response: httpx.Response, call: Call) -> Reply:
        status, method, path = response.status_code, call.method, call.path
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if 200 <= status < 300:
            if not isinstance(payload, dict) or "data" not in payload:
                raise ApiError(
                    status,
                    f"{method} {path}: the answer ({status}) is not the API's JSON envelope; "
                    f"check that {self.base_url} is the API's base URL",
                    method,
                    path,
                )
            if payload.get("success") is False:
                raise self._error(response, call, _error_text(payload))
            meta = payload.get("meta")
            return Reply(
                status,
                payload["data"],
                meta if isinstance(meta, dict) else None,
                payload,
                response.headers,
                replayed=response.headers.get("idempotent-replayed", "").lower() == "true",
                url=response.request.url,
                links=response.links,
            )
        text = _error_text(payload) or response.reason_phrase or ""
        raise self._error(response, call, text)

    def _error(self, response: httpx.Response, call: Call, text: str) -> ApiError:
        """The exception for a failure answer: its type by status and text (see _failures)."""
        status, method, path = response.status_code, call.method, call.path
        server = scrub(text, self._token)
        said = f" (server said: {server})" if server else ""
        where = f"{method} {path}"
        kw: dict[str, Any] = {"server_message": server}
        if status == 404:
            tried = ""
            if self.base_path is None:
                tried = " under both " + " and ".join(self._candidates) + f" on {self.base_url}"
            return NotFound(404, f"{where}: not found{tried}{said}", method, path, **kw)
        if status == 429:
            retry_after = _retry_after(response.headers)
            return RateLimited(
                429,
                f"{where}: still rate limited after {MAX_RATE_LIMITED} waits{said}; the token's "
                "budget is being spent elsewhere too, or the limit is very low",
                method,
                path,
                retry_after=retry_after,
                **kw,
            )
        if status >= 500:
            tries = (
                ""
                if method in WRITE_METHODS and status == 502
                else (f" after {self.max_retries + 1} attempt(s)")
            )
            return ServerError(
                status,
                f"{where}: the server failed with {status}{tries}{said}",
                method,
                path,
                **kw,
            )
        verdict = classify(status, server, body=call.body, params=call.params)
        args = (status, method, path)
        if verdict.kind == "auth":
            return self._auth_error(status, where, said, args, kw)
        if verdict.kind == "scope":
            found = _SCOPE_RE.search(server)
            needed = found.group(1) if found else call.scope
            needs = (
                f"this endpoint needs {needed}: use a token created with it"
                if needed
                else "svcnb does not know which scope this endpoint needs"
            )
            return ScopeError(
                *_msg(args, f"{where}: forbidden (403) for the API token {self.masked_token}"
                      f"{said}; per the API spec a 403 means a missing scope; {needs}"),
                scope=needed,
                **kw,
            )  # fmt: skip
        if verdict.kind == "limit":
            hint = (
                "the spec caps active webhook subscriptions at 10 per account: deactivate one "
                "(webhooks.set_active(id, False)) first"
                if path.startswith("/webhooks")
                else "free some of it, or ask support to raise the limit"
            )
            return LimitExceeded(
                *_msg(args, f"{where}: refused ({status}) as over an account limit{said}; {hint}"),
                **kw,
            )
        if verdict.kind == "conflict":
            why = (
                "the server reported a conflict (409)"
                if status == 409
                else f"refused ({status}) because of the resource's current state"
            )
            return Conflict(*_msg(args, f"{where}: {why}{said}"), **kw)
        if verdict.kind == "validation":
            if verdict.field_in == "body":
                what, after = f"{verdict.field} in the request body", ""
            elif verdict.field_in == "query":
                what, after = f"the query parameter {verdict.field}", ""
            else:
                what = "the request as invalid"
                after = "; the request sent no body" if call.body is None else ""
            return ValidationError(
                *_msg(args, f"{where}: the API rejected {what} ({status}){said}{after}"),
                field=verdict.field,
                **kw,
            )
        return ApiError(status, f"{where}: failed with {status}{said}", method, path, **kw)

    def _auth_error(
        self, status: int, where: str, said: str, args: tuple, kw: dict[str, Any]
    ) -> AuthError:
        if not self._token:
            text = (
                f"{where}: no API token was sent ({status}){said}; pass api_key= to Client or "
                f"set {ENV_API_KEY}"
            )
            return AuthError(*_msg(args, text), reason="missing", **kw)
        if status == 401:
            cause = "it is unknown, deleted, expired or revoked"
        else:
            cause = "the server's text says it is no longer valid"
        text = (
            f"{where}: the API token {self.masked_token} was rejected ({status}){said}; "
            f"{cause}: create a new token in the account dashboard"
        )
        return AuthError(*_msg(args, text), reason="rejected", **kw)


def _msg(args: tuple, message: str) -> tuple:
    """(status, message, method, path): the positional arguments of every ApiError."""
    status, method, path = args
    return status, message, method, path


def _error_text(payload: Any) -> str:
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, str):
            return error
        if isinstance(error, dict):
            return str(error.get("message") or error)
    return ""


def _retry_after(headers: httpx.Headers) -> float:
    raw = headers.get("retry-after")
    try:
        return max(0.0, float(raw)) if raw is not None else RATE_LIMIT_BASE_SECONDS
    except ValueError:
        try:
            when = parsedate_to_datetime(raw)
            return max(0.0, (when - datetime.now(when.tzinfo)).total_seconds())
        except (TypeError, ValueError):
            return RATE_LIMIT_BASE_SECONDS
