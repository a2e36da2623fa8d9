"""Webhook deliveries: every event, as a signed HTTPS POST, to each subscription that wants it.

Timing, auto-disable and the loopback-only rule as the user sees them: the README's table of
what the sandbox does; the delivery record: docs/contracts.md §1. The body is the event
``{id, type, createdAt, data}`` serialized once and signed over exactly those bytes
(``X-Service-Signature: sha256=<lowercase hex HMAC-SHA256(body, secret)>``), with
``X-Service-Event`` and ``X-Service-Delivery-Id`` (unique per attempt).

A retry is made only when every earlier attempt of that delivery failed. A failure is one failed
attempt (one record with ``success`` false), so a user reading the deliveries list sees exactly
50 failed records in a row before ``isActive`` turns false; a subscription re-enabled by PATCH
counts from 0 again even when control left the count at 50. A record's ``createdAt`` is when
attempt 1 was due, ``lastAttemptAt`` when this attempt was due (sandbox time); the timeout is
real time. The receiver's certificate is verified against the system store plus
``config.ca_bundle``; redirects are not followed; each attempt opens its own connection.

Determinism: the state lock is never held while waiting on the network. Attempts go through one
FIFO queue and worker thread per subscription, in the order they fall due on the clock; whether
an attempt is made (earlier attempt succeeded? subscription still active?) is decided when the
worker reaches it, after every earlier attempt to that subscription has been recorded. So the
same seed, clock steps and receiver answers give the same records, ids and counts per
subscription, whatever the network timing. Delivery ids come from the seed, the event id, the
subscription id and the attempt number.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import ssl
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import httpx

from ._clock import Job
from ._envelopes import dumps, iso
from ._state import State
from .backends.webhooks import AUTO_DISABLE_AFTER, WebhookBackend

__all__ = [
    "AUTO_DISABLE_AFTER",
    "MAX_ATTEMPTS",
    "RETRY_DELAYS",
    "TIMEOUT_SECONDS",
    "install",
    "is_loopback_host",
    "sign",
    "trust_ca_bundle",
    "wait_idle",
]

MAX_ATTEMPTS = 3
RETRY_DELAYS = (timedelta(seconds=10), timedelta(seconds=20))  # before attempts 2 and 3
TIMEOUT_SECONDS = 15.0
_USER_AGENT = "svcnb-sandbox-webhooks/1"

_log = logging.getLogger(__name__)


def sign(body: bytes, secret: str) -> str:
    """The ``X-Service-Signature`` value for ``body``: ``sha256=<lowercase hex HMAC-SHA256>``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def is_loopback_host(host: str | None) -> bool:
    """True for ``localhost`` and literal addresses in 127.0.0.0/8 or ``::1``."""
    if not host:
        return False
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class _Delivery:
    """One event on its way to one subscription: up to three attempts with the same body."""

    webhook_id: str
    event_id: str
    event_type: str
    body: bytes
    created: datetime
    settled: bool = False  # succeeded, gave up, or dropped
    jobs: list[Job] = field(default_factory=list, repr=False)


@dataclass
class _Attempt:
    delivery: _Delivery
    number: int
    due: datetime
    delivery_id: str


@dataclass
class _Outcome:
    status_code: int | None
    success: bool
    error: str | None


class _Courier:
    """The outboxes of one sandbox build: a FIFO and a worker thread per subscription."""

    def __init__(self, state: State) -> None:
        self._state_ref = weakref.ref(state)
        # the backend of this build: after a reset the state holds a new one, and work queued
        # for the old build is dropped instead of touching records that happen to share an id
        self.backend: WebhookBackend = state.backends.webhooks
        self.webhooks = self.backend.webhooks
        self.clock = state.clock
        self.seed = state.seed
        self.dialect = state.dialect
        self.ca_bundle = state.config.ca_bundle
        self._queues: dict[str, deque[_Attempt]] = {}
        self._busy: set[str] = set()
        self._mutex = threading.Condition()
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()

    # -- scheduling (state lock held) --
    def on_event(self, event: dict) -> None:
        body: bytes | None = None
        for webhook_id, sub in self.webhooks.items():
            if not sub.get("isActive") or event["type"] not in (sub.get("events") or ()):
                continue
            if body is None:
                body = dumps(self._payload(event))
            due = self.clock.now()
            delivery = _Delivery(webhook_id, event["id"], event["type"], body, due)
            self._enqueue(delivery, 1, due)
            at = due
            for number, delay in enumerate(RETRY_DELAYS, start=2):
                at = at + delay
                delivery.jobs.append(self.clock.schedule(at, self._retry_job(delivery, number, at)))

    def _payload(self, event: dict) -> dict:
        """The event as POSTed: the spec's canonical ``{id, type, createdAt, data}``, only the
        VM status word in ``data.vm`` said in the dialect."""
        payload = {k: event[k] for k in ("id", "type", "createdAt", "data") if k in event}
        data = payload.get("data")
        vm = data.get("vm") if isinstance(data, dict) else None
        if isinstance(data, dict) and isinstance(vm, dict) and "status" in vm:
            word = self.dialect.vm_word(vm["status"])
            if word != vm["status"]:
                payload["data"] = {**data, "vm": {**vm, "status": word}}
        return payload

    def _retry_job(self, delivery: _Delivery, number: int, at: datetime) -> Callable[[], None]:
        def due() -> None:
            if not delivery.settled:
                self._enqueue(delivery, number, at)

        return due

    def _enqueue(self, delivery: _Delivery, number: int, due: datetime) -> None:
        digest = hashlib.sha256(
            f"{self.seed}:dlv:{delivery.event_id}:{delivery.webhook_id}:{number}".encode()
        ).hexdigest()
        attempt = _Attempt(delivery, number, due, f"dlv_{digest[:16]}")
        with self._mutex:
            self._queues.setdefault(delivery.webhook_id, deque()).append(attempt)
            if delivery.webhook_id in self._busy:
                return
            self._busy.add(delivery.webhook_id)
        threading.Thread(
            target=self._drain,
            args=(delivery.webhook_id,),
            name=f"svcnb-webhook-{delivery.webhook_id}",
            daemon=True,
        ).start()

    # -- the worker of one subscription --
    def _drain(self, webhook_id: str) -> None:
        while True:
            with self._mutex:
                queue = self._queues.get(webhook_id)
                if not queue:
                    self._busy.discard(webhook_id)
                    self._queues.pop(webhook_id, None)
                    self._mutex.notify_all()
                    return
                attempt = queue.popleft()
            try:
                self._attempt(attempt)
            except Exception:  # one broken attempt must not stall the subscription's queue
                _log.exception(
                    "webhook delivery attempt %s failed unexpectedly", attempt.delivery_id
                )

    def _attempt(self, attempt: _Attempt) -> None:
        state = self._state_ref()
        if state is None:
            return
        delivery = attempt.delivery
        with state.lock:
            sub = self.webhooks.get(delivery.webhook_id)
            if state.backends.webhooks is not self.backend or delivery.settled:
                return
            if sub is None or not sub.get("isActive"):
                self._settle(delivery)
                return
            url = str(sub.get("url", ""))
            secret = str(sub.get("_secret", ""))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": _USER_AGENT,
            "X-Service-Event": delivery.event_type,
            "X-Service-Signature": sign(delivery.body, secret),
            "X-Service-Delivery-Id": attempt.delivery_id,
        }
        outcome = self._post(url, delivery.body, headers)
        with state.lock:
            if state.backends.webhooks is not self.backend:
                return
            self._record(attempt, url, outcome)

    def _record(self, attempt: _Attempt, url: str, outcome: _Outcome) -> None:
        delivery = attempt.delivery
        if outcome.success or attempt.number >= MAX_ATTEMPTS:
            self._settle(delivery)
        if not outcome.success:
            _log.debug(
                "%s webhook %s: attempt %d/%d of %s (%s) to %s failed: %s",
                iso(attempt.due),
                delivery.webhook_id,
                attempt.number,
                MAX_ATTEMPTS,
                delivery.event_id,
                delivery.event_type,
                _safe_url(url),
                outcome.error,
            )
        self.backend.record_attempt(
            {
                "id": attempt.delivery_id,
                "eventId": delivery.event_id,
                "event": delivery.event_type,
                "url": url,
                "statusCode": outcome.status_code,
                "success": outcome.success,
                "attempts": attempt.number,
                "createdAt": iso(delivery.created),
                "lastAttemptAt": iso(attempt.due),
                "error": outcome.error,
                "_webhookId": delivery.webhook_id,
            }
        )

    def _settle(self, delivery: _Delivery) -> None:
        delivery.settled = True
        for job in delivery.jobs:
            self.clock.cancel(job)

    # -- the network (no lock held) --
    def _post(self, url: str, body: bytes, headers: dict[str, str]) -> _Outcome:
        try:
            parts = urlsplit(url)
            host = parts.hostname
            port = parts.port
        except ValueError:
            return _Outcome(None, False, "the subscription URL does not parse; nothing was sent")
        if parts.scheme != "https":
            return _Outcome(None, False, "the subscription URL is not HTTPS; nothing was sent")
        if not is_loopback_host(host):
            return _Outcome(
                None,
                False,
                f"the sandbox only delivers webhooks to loopback hosts (127.0.0.0/8, ::1, "
                f"localhost); {host} is not one, so nothing was sent",
            )
        where = f"{host}:{port or 443}"
        started = time.monotonic()
        try:
            with self._http().stream("POST", url, content=body, headers=headers) as response:
                status = response.status_code
        except httpx.TimeoutException:
            return _Outcome(None, False, f"timed out after {TIMEOUT_SECONDS:g} s")
        except httpx.ConnectError as exc:
            text = str(exc)
            if "CERTIFICATE_VERIFY_FAILED" in text:
                return _Outcome(
                    None,
                    False,
                    f"TLS: the certificate of {where} is not trusted ({text}); start the "
                    "sandbox with a CA bundle that signs it",
                )
            return _Outcome(None, False, f"could not connect to {where}: {text or 'refused'}")
        except httpx.HTTPError as exc:
            return _Outcome(None, False, f"{type(exc).__name__} talking to {where}: {exc}")
        elapsed = time.monotonic() - started
        if elapsed > TIMEOUT_SECONDS:
            return _Outcome(
                None,
                False,
                f"timed out after {TIMEOUT_SECONDS:g} s (answered after {elapsed:.1f} s)",
            )
        if 200 <= status < 300:
            return _Outcome(status, True, None)
        return _Outcome(status, False, f"receiver answered {status}")

    def _http(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                context = ssl.create_default_context()
                if self.ca_bundle:
                    context.load_verify_locations(cafile=self.ca_bundle)
                self._client = httpx.Client(
                    verify=context,
                    timeout=httpx.Timeout(TIMEOUT_SECONDS),
                    follow_redirects=False,
                    trust_env=False,
                    # a fresh connection per attempt: a stale keep-alive socket must never turn
                    # into a failure the receiver did not cause
                    limits=httpx.Limits(max_keepalive_connections=0),
                )
            return self._client

    def trust(self, ca_bundle: str | None) -> None:
        with self._client_lock:
            self.ca_bundle = ca_bundle
            # Dropped, not closed: an attempt in flight may still use it (each attempt opens its
            # own connection); the next attempt builds a client with the new trust.
            self._client = None

    def wait_idle(self, timeout: float) -> bool:
        with self._mutex:
            return self._mutex.wait_for(lambda: not self._busy, timeout=timeout)


def _safe_url(url: str) -> str:
    """``url`` without user info or query, for logs."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<unparseable url>"
    return f"{parts.scheme}://{parts.hostname}{port}{parts.path}"


_COURIERS: weakref.WeakKeyDictionary[State, _Courier] = weakref.WeakKeyDictionary()


def install(state: State) -> None:
    """Deliver every event ``state`` emits from now on. Called after every seed or reset."""
    with state.lock:
        courier = _Courier(state)
        _COURIERS[state] = courier
        # first, so deliveries leave in the order events were emitted even when a listener
        # emits further events from inside its own handling
        state.listeners.insert(0, courier.on_event)


def wait_idle(state: State, timeout: float = 10.0) -> bool:
    """Wait until every attempt that has fallen due on ``state`` has been made and recorded.

    Returns False when ``timeout`` (real seconds) passed first. Attempts due later on the
    sandbox clock are not waited for: advance the clock to make them due.
    """
    courier = _COURIERS.get(state)
    return True if courier is None else courier.wait_idle(timeout)


def trust_ca_bundle(state: State, ca_bundle: str | None) -> None:
    """Verify receivers against ``ca_bundle`` (plus the system store) from the next attempt on."""
    courier = _COURIERS.get(state)
    if courier is not None:
        courier.trust(ca_bundle)
