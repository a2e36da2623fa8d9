"""The one request function: key, base path, envelope, error mapping, pacing, retries.

Every call of every resource goes through :meth:`Requester.request`. Reads are retried on 5xx,
timeouts and dropped connections; writes (POST/PATCH/DELETE) carry an ``Idempotency-Key`` made
once per call and sent unchanged on every retry, so the server can tell a retry from a new call.
A write is never sent again without that key.

Every call ends by its deadline (``Client(deadline=)``): connecting, sending, reading the body
(read chunk by chunk against the clock, so a server that trickles cannot hold it), retries and
waits all count. No single wait the server asks for (``Retry-After``, a rate-limit reset) is
longer than ``Client(max_wait=)``: past it the call raises :class:`RateLimited` naming the wait.

What can raise is an :mod:`svcnb.errors` type, raised outside any ``except`` block, so it carries
no ``__context__``: an HTTP library's exceptions hold the request, whose headers hold the token.
The token itself is a :class:`Secret`, written into the header by the wire as the request goes
(:mod:`svcnb.client._wire`: urllib3's pool, or an httpx client for tests and proxies).
"""

from __future__ import annotations

import contextlib
import json
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
from typing import Any, cast

import httpx
from urllib3 import HTTPHeaderDict

from svcnb.client._config import ENV_API_KEY, Settings, base_path_candidates
from svcnb.client._failures import classify
from svcnb.client._pacing import MAX_SERVER_SECONDS, Governor, governor_for, server_seconds
from svcnb.client._redact import TOKEN_PREFIX, mask_token, redact, redact_bytes
from svcnb.client._validate import unsendable
from svcnb.client._wire import BadEncoding, Opened, WireError, wire_for
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
# how long past its deadline a call may take to give its shared rate-budget slot back
RELEASE_GRACE_SECONDS = 0.25
# An answer larger than this is refused rather than held in memory (a page of 100 VMs is ~100
# KB); it also bounds what a compressed body may inflate to.
MAX_ANSWER_BYTES = 64 * 1024 * 1024
_SCOPE_RE = re.compile(r"\b([a-z]+:(?:read|write))\b")
# A scope the text says is needed: after "needs", "requires", "missing", "lacks"... (a text may
# list the scopes the token holds too, before or after it)
_NEEDED_RE = re.compile(
    r"\b(?:needs?|needed|requires?|required|missing|lacks?|lacking|without)\b[^.;:]{0,40}?"
    r"\b([a-z]+:(?:read|write))\b",
    re.IGNORECASE,
)
# The scope of each endpoint the spec's table states (GET /vms: "vms:read grants reading VMs");
# every other endpoint's scope is "not shown", so only the server's text can say it.
_SPEC_SCOPES = (
    ("GET", re.compile(r"/vms(/[^/]+)?"), "vms:read"),
    ("POST", re.compile(r"/vms/[^/]+/stop"), "vms:write"),
    ("POST", re.compile(r"/webhooks"), "webhooks:write"),
    ("GET", re.compile(r"/webhooks(/[^/]+/deliveries)?"), "webhooks:read"),
    ("PATCH", re.compile(r"/webhooks/[^/]+"), "webhooks:write"),
)


def spec_scope(method: str, path: str) -> str | None:
    """The scope the spec says ``method path`` needs; None where it is "not shown"."""
    for verb, pattern, scope in _SPEC_SCOPES:
        if verb == method and pattern.fullmatch(path):
            return scope
    return None


@dataclass
class Answer:
    """One HTTP answer, read whole by the deadline. It keeps nothing of the request (whose
    headers hold the token): only what came back and the URL it came from."""

    status: int
    headers: HTTPHeaderDict  # case-insensitive
    # None: the body could not be read (``unreadable`` says why); never shown in a traceback.
    content: bytes | None = field(repr=False)
    url: str
    unreadable: str = ""
    attempts: int = 1  # attempts of the call this answer ended

    def payload(self) -> Any:
        """The body as JSON, or None when it is not JSON (or too deeply nested to parse)."""
        if self.content is None:
            return None
        try:
            return json.loads(self.content)
        except (ValueError, RecursionError):
            return None

    @property
    def text(self) -> str:
        return (self.content or b"").decode("utf-8", "replace")

    @property
    def reason_phrase(self) -> str:
        return httpx.codes.get_reason_phrase(self.status)

    @property
    def links(self) -> dict[str, dict[str, str]]:
        link = self.headers.get("link")
        if not link:  # most services send none: parsing an empty header costs a Response
            return {}
        try:
            links = httpx.Response(200, headers={"link": link}).links
            # the stub allows a None key; httpx keys each link by rel or else its url, which
            # every parsed link has
            return cast(dict[str, dict[str, str]], links)
        except Exception:  # a header svcnb cannot parse is a header it does not follow
            return {}


@dataclass(frozen=True)
class NoAnswer:
    """Why an attempt got no (complete) answer; ``text`` is masked and names no token."""

    text: str
    retryable: bool
    deadline: bool = False  # the call's deadline ran out before the answer was complete
    hint: str = ""  # what to do, when the wire knows (a certificate, a scheme)


@dataclass
class Reply:
    """A successful answer: the envelope's ``data`` and ``meta``, the whole body, its headers
    (case-insensitive), the URL it answered (to resolve relative links against) and its ``Link``
    header parsed."""

    status: int
    data: Any
    meta: dict | None
    body: dict
    headers: Mapping[str, str]
    replayed: bool = False
    url: str | None = None
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
        self.timeout = settings.timeout
        self.deadline = settings.deadline
        self.max_wait = settings.max_wait
        self._sleep = sleep
        self._candidates = base_path_candidates(settings.base_url)
        self.base_path: str | None = self._candidates[0] if len(self._candidates) == 1 else None
        self._discover_lock = threading.Lock()
        self.governor: Governor = governor_for(settings.base_url, settings.api_key)
        self.stats = Stats()
        self.server_time: datetime | None = None
        # the client's assumption pins (Client.pins): the paging loop decides paging.* by them
        self.pins: Mapping[str, Any] | None = None
        # assumption -> where it was pinned, for each pin a list's completeness rested on
        self.relied: dict[str, str] = {}
        self._date_seen: str | None = None  # the Date header server_time was parsed from
        self.latency: float | None = None  # moving average of seconds per answered request
        self._wire = wire_for(
            settings.base_url,
            self._token,
            transport=transport,
            pool_size=pool_size,
            default_headers={"accept": "application/json", "user-agent": "svcnb"},
        )

    @property
    def masked_token(self) -> str:
        return mask_token(self._token)

    def close(self) -> None:
        self._wire.close()

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

        Raises the :mod:`svcnb.errors` type of the failure status, ``TransportError`` when no
        complete answer came on any attempt or by the deadline, ``RateLimited`` when the server
        asks for a wait longer than ``max_wait`` or the deadline allows. ``scope`` names the
        scope the endpoint needs, for 403s.
        """
        ends = time.monotonic() + self.deadline
        method = method.upper()
        bad = None if json is None else unsendable(json)
        if bad is not None:
            # said before anything is sent: the wire would fail on it half-way into the request
            raise ValueError(
                f"{method} {path}: {bad} of the request body cannot be sent as JSON (text with a "
                "lone surrogate, a number that is not finite, or a value JSON has no form for)"
            )
        headers = {}
        if method in WRITE_METHODS:
            # Made once per call: every retry of this call sends the same key.
            headers["idempotency-key"] = idempotency_key or uuid.uuid4().hex
        call = Call(method, path, params, json, headers, scope)
        if self.base_path is not None:
            answer = self._send(call, self.base_path, ends)
        else:
            answer = self._discover(call, ends)
        return self._unwrap(answer, call)

    def _discover(self, call: Call, ends: float) -> Answer:
        # One thread finds the base path; the others wait and then use it.
        with self._discover_lock:
            if self.base_path is not None:
                return self._send(call, self.base_path, ends)
            first = None
            for candidate in self._candidates:
                answer = self._send(call, candidate, ends)
                # A redirect names another base (a 308 to the other of the two prefixes): the
                # API is not here. Redirects are never followed, so the token stays where it is.
                if answer.status != 404 and not 300 <= answer.status < 400:
                    self.base_path = candidate
                    _log.info("API base path is %s%s", self.base_url, candidate)
                    return answer
                first = first or answer
            # 404 under every prefix: the documented prefix's answer says the most.
            assert first is not None
            return first

    def _send(self, call: Call, prefix: str, ends: float) -> Answer:
        """The retry loop: returns the first answer that is not to be retried, raises when no
        answer came. Nothing it raises is raised inside an ``except`` block (see module doc)."""
        method, path = call.method, call.path
        failures = 0
        limited = 0
        while True:
            self.stats.wait_begins()
            try:
                owed = self.governor.acquire(
                    within=min(self.max_wait, ends - time.monotonic()), ends=ends
                )
            finally:
                self.stats.wait_ends()
            if owed is not None:
                raise self._too_long(call, owed, "the token's rate-limit reset", ends)
            outcome: Answer | NoAnswer | None = None
            started = time.monotonic()
            try:
                outcome = self._exchange(call, prefix, ends)
            finally:
                # Also on KeyboardInterrupt: a slot never given back stalls the token for good.
                # A shared slot is given back a moment past the deadline too: one left to run
                # out holds other processes' requests for minutes.
                self.governor.release(
                    outcome.headers if isinstance(outcome, Answer) else None,
                    ends=max(ends, time.monotonic() + RELEASE_GRACE_SECONDS),
                )
            self.stats.add(requests=1)
            if isinstance(outcome, NoAnswer):
                delay = self._backoff(failures + 1, RETRY_BASE_SECONDS, RETRY_CAP_SECONDS)
                if outcome.retryable and failures < self.max_retries and self._fits(delay, ends):
                    failures += 1
                    self.stats.add(retries=1)
                    _log.debug("%s %s: %s; retry %d in %.2fs", method, path, outcome.text,
                               failures, delay)  # fmt: skip
                    self._sleep(delay)
                    continue
                raise self._no_answer(call, outcome, failures + 1, ends)
            outcome.attempts = failures + limited + 1
            self._observe(outcome, time.monotonic() - started)
            status = outcome.status
            if status == 429:
                limited += 1
                self.stats.add(rate_limited=1)
                asked = server_seconds(outcome.headers.get("retry-after"))
                asked = RATE_LIMIT_BASE_SECONDS if asked is None else asked
                if asked > self.max_wait:
                    # Not passed on to the shared governor: a wait nobody makes must not hold
                    # other calls (a garbage header would stall the token); each call that
                    # meets it is told by the server itself.
                    raise self._too_long(call, asked, "Retry-After of a 429", ends)
                self.governor.pause(asked, ends=ends)
                if limited > MAX_RATE_LIMITED:
                    return outcome
                delay = asked + self._backoff(
                    limited, RATE_LIMIT_BASE_SECONDS, RATE_LIMIT_CAP_SECONDS
                )
                if not self._fits(delay, ends):
                    raise self._too_long(call, asked, "Retry-After of a 429", ends)
                _log.info("%s %s: rate limited (429); waiting %.1fs", method, path, delay)
                self.stats.add(retries=1)
                self.stats.wait_begins()
                try:
                    self._sleep(delay)
                finally:
                    self.stats.wait_ends()
                continue
            if self._retryable(method, outcome) and failures < self.max_retries:
                delay = self._backoff(failures + 1, RETRY_BASE_SECONDS, RETRY_CAP_SECONDS)
                if self._fits(delay, ends):
                    failures += 1
                    self.stats.add(retries=1)
                    _log.debug("%s %s: %d; retry %d in %.2fs", method, path, status, failures,
                               delay)  # fmt: skip
                    self._sleep(delay)
                    continue
            return outcome

    def _exchange(self, call: Call, prefix: str, ends: float) -> Answer | NoAnswer:
        """One attempt: the answer read whole, or why none came. It never raises a library's
        error: those hold the request and its token header, so only their masked text leaves."""
        left = ends - time.monotonic()
        if left <= 0:
            return NoAnswer("the call's deadline ran out before this attempt", False, True)
        try:
            # No single step may outlast the deadline; the body is timed as it is read.
            opened = self._wire.open(
                call.method, prefix + call.path, call.params, call.body, call.headers,
                min(self.timeout, left), ends,
            )  # fmt: skip
        except WireError as exc:
            # a step cut short by the deadline: said as the deadline, never retried
            late = time.monotonic() >= ends
            return NoAnswer(self._masked(exc.text), exc.retryable and not late, late, exc.hint)
        try:
            return self._read(opened, ends)
        finally:
            opened.close()

    def _read(self, opened: Opened, ends: float) -> Answer | NoAnswer:
        """The body, read chunk by chunk against the deadline; a token it (or a header) echoes
        is masked at once, so no frame or record downstream ever holds it."""
        status, url, headers = opened.status, opened.url, opened.headers
        if any(TOKEN_PREFIX in value for value in headers.values()):
            headers = HTTPHeaderDict([(k, redact(v, self._token)) for k, v in headers.items()])
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in opened.chunks:
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    why = f"its body is larger than {MAX_ANSWER_BYTES} bytes"
                    return Answer(status, headers, None, url, unreadable=why)
                if time.monotonic() > ends:
                    return NoAnswer(f"{size} byte(s) of the answer had come", False, True)
        except BadEncoding as exc:
            encoding = headers.get("content-encoding", "none")
            why = f"its body does not decode as its Content-Encoding ({encoding}): "
            return Answer(status, headers, None, url, unreadable=why + self._masked(str(exc)))
        except WireError as exc:
            late = time.monotonic() >= ends
            return NoAnswer(self._masked(exc.text), exc.retryable and not late, late, exc.hint)
        return Answer(status, headers, redact_bytes(b"".join(chunks), self._token), url)

    def _masked(self, text: str) -> str:
        return redact(text, self._token)[:300]

    @staticmethod
    def _fits(delay: float, ends: float) -> bool:
        return time.monotonic() + delay < ends

    def _no_answer(self, call: Call, why: NoAnswer, attempts: int, ends: float) -> TransportError:
        method, path = call.method, call.path
        key = call.headers.get("idempotency-key")
        maybe = (
            f"; the write may have been applied (sent with Idempotency-Key {key}): "
            "check the resource before sending it again"
            if key
            else ""
        )
        if why.deadline:
            text = (
                f"{method} {path}: no complete answer from {self.base_url} within the call's "
                f"deadline of {self.deadline:g} s ({why.text}; {attempts} attempt(s)); the server "
                f"is stalled or too slow: try again, or pass Client(deadline=...){maybe}"
            )
        else:
            cut = (
                f"; the call's deadline of {self.deadline:g} s left no time for another attempt"
                if why.retryable and attempts <= self.max_retries
                else ""
            )
            todo = why.hint or "check that the server is reachable, or raise max_retries/timeout"
            via = self._wire.proxy
            if via:
                todo += f"; requests go through the proxy {via} (or name the host in NO_PROXY)"
            text = (
                f"{method} {path}: no answer from {self.base_url} after {attempts} attempt(s) "
                f"({why.text}){cut}; {todo}{maybe}"
            )
        return TransportError(text, method, path)

    def _too_long(self, call: Call, seconds: float, source: str, ends: float) -> RateLimited:
        """The error for a wait the call will not make: longer than ``max_wait``, or past
        the deadline."""
        method, path = call.method, call.path
        asked = _duration(seconds)
        if seconds > self.max_wait:
            why = (
                f"the server asks for a wait of {asked} ({source}), more than "
                f"max_wait={self.max_wait:g} s; svcnb does not sleep that long unasked: try "
                "again later, or pass Client(max_wait=...) to wait it out"
            )
        else:
            left = max(0.0, ends - time.monotonic())
            why = (
                f"a wait of {asked} ({source}) would pass the call's deadline of "
                f"{self.deadline:g} s ({left:.1f} s left); try again later, or pass "
                "Client(deadline=...)"
            )
        return RateLimited(
            429,
            f"{method} {path}: rate limited: {why}",
            method,
            path,
            retry_after=min(seconds, MAX_SERVER_SECONDS),
        )

    @staticmethod
    def _retryable(method: str, answer: Answer) -> bool:
        status = answer.status
        if method not in WRITE_METHODS:
            return status in RETRY_STATUSES_READ
        if status in RETRY_STATUSES_WRITE:
            return True
        # The same Idempotency-Key is still being served (our earlier attempt whose answer was
        # lost): wait for it to finish, then the retry gets its stored answer.
        return status == 409 and "idempot" in answer.text.lower()

    @staticmethod
    def _backoff(attempt: int, base: float, cap: float) -> float:
        """Exponential backoff with jitter: up to ``base * 2**(attempt-1)``, at most ``cap``."""
        ceiling = min(cap, base * 2 ** min(attempt - 1, 32))
        return ceiling / 2 + random.random() * ceiling / 2

    def _observe(self, answer: Answer, seconds: float) -> None:
        date = answer.headers.get("date")
        # the header changes once a second: a bulk pull parses it once, not once per request
        if date and date != self._date_seen:
            with contextlib.suppress(TypeError, ValueError, OverflowError, IndexError):
                self.server_time = parsedate_to_datetime(date)
                self._date_seen = date
        self.latency = seconds if self.latency is None else 0.9 * self.latency + 0.1 * seconds

    def _unwrap(self, answer: Answer, call: Call) -> Reply:
        status, method, path = answer.status, call.method, call.path
        payload = answer.payload()
        if 200 <= status < 300:
            if answer.content is None:
                applied = (
                    "; the write was applied: check the resource before sending it again"
                    if method in WRITE_METHODS
                    else ""
                )
                raise ApiError(
                    status,
                    f"{method} {path}: the answer ({status}) could not be read: "
                    f"{answer.unreadable}{applied}",
                    method,
                    path,
                )
            if not isinstance(payload, dict) or "data" not in payload:
                raise ApiError(
                    status,
                    f"{method} {path}: the answer ({status}) is not the API's JSON envelope; "
                    f"check that {self.base_url} is the API's base URL",
                    method,
                    path,
                )
            if payload.get("success") is False:
                raise self._error(answer, call, _error_text(payload))
            meta = payload.get("meta")
            return Reply(
                status,
                payload["data"],
                meta if isinstance(meta, dict) else None,
                payload,
                answer.headers,
                replayed=answer.headers.get("idempotent-replayed", "").lower() == "true",
                url=answer.url,
                links=answer.links,
            )
        text = _error_text(payload) or answer.reason_phrase or ""
        raise self._error(answer, call, text)

    def _error(self, answer: Answer, call: Call, text: str) -> ApiError:
        """The exception for a failure answer: its type by status and text (see _failures)."""
        status, method, path = answer.status, call.method, call.path
        server = redact(text, self._token)
        said = f" (server said: {server})" if server else ""
        where = f"{method} {path}"
        kw: dict[str, Any] = {"server_message": server}
        if status == 404:
            tried = ""
            if self.base_path is None:
                tried = " under both " + " and ".join(self._candidates) + f" on {self.base_url}"
            return NotFound(404, f"{where}: not found{tried}{said}", method, path, **kw)
        if status == 429:
            asked = server_seconds(answer.headers.get("retry-after"))
            retry_after = None if asked is None else min(asked, MAX_SERVER_SECONDS)
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
                else (f" after {answer.attempts} attempt(s)")
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
            # What the client knows first: the spec's table. The text second: the scope it says
            # is needed, or the one scope it names; never the first of a list of held scopes.
            needed = spec_scope(method, path)
            named = list(dict.fromkeys(_SCOPE_RE.findall(server)))
            said_needed = _NEEDED_RE.search(server)
            if needed is None and said_needed is not None:
                needed = said_needed.group(1)
            elif needed is None and len(named) == 1:
                needed = named[0]
            needs = (
                f"this endpoint needs {needed}: use a token created with it"
                if needed
                else "svcnb does not know which scope this endpoint needs (the spec does not "
                "say; see the server's text)"
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


def _duration(seconds: float) -> str:
    if seconds > MAX_SERVER_SECONDS:
        return "more than a day"
    if seconds >= 120:
        return f"{seconds:.0f} s ({seconds / 60:.0f} min)"
    return f"{seconds:.1f} s"
