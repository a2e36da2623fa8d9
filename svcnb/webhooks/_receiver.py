"""The webhook receiver: an ASGI app that verifies, de-duplicates and durably logs events.

Order of work for each POST, and why:

1. Read the raw body (at most ``max_body_bytes``; more gets 413 without being looked at).
2. :func:`~svcnb.webhooks.verify` the signature on those bytes (401, nothing kept). Nothing is
   parsed before this point.
3. Parse the now-trusted body as ``{id, type, createdAt, data}``. Anything else: 400, not kept.
4. Append to the store's event log unless the delivery id or the event id is already there.
   New or duplicate, the answer is 200, so the service stops retrying.
5. If writing fails (disk full, permissions): 503, so the service retries later. An event is never
   acknowledged without being on disk.

The event and delivery-id headers are not covered by the signature, so they are never trusted for
content: the event's type and id come from the signed body; the delivery id is only a cheap extra
de-duplication key and the ``X-Service-Event`` value is kept beside the signed type for audit.

Replays (``possible_replay``: the README, "Receiving webhooks"). A captured request stays
validly signed for ever; the event id catches a replay of an event the log holds, the signed
``createdAt`` flags older ones. Dropping a flagged event would be worse than keeping it: the
signature proves the service sent it, a late delivery is normal (retries, a backlog after the
subscription was re-enabled, clock skew), and a refusal would be retried and count towards the
50 failures that disable the subscription.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from svcnb.store import EventLog
from svcnb.webhooks._errors import PayloadError, SignatureError
from svcnb.webhooks._verify import header_values, verify

__all__ = ["DEFAULT_TOLERANCE", "Event", "Receiver", "parse_event", "system_clock"]

DEFAULT_TOLERANCE = 300.0  # seconds; a retried delivery arrives at most 30 s late by the spec
MAX_BODY_BYTES = 1024 * 1024  # the service's events are a few hundred bytes


def system_clock() -> datetime:
    """The machine's time in UTC: the right clock against the real service."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class Event:
    """A verified event body."""

    id: str
    type: str
    created_at: datetime  # UTC
    data: Any


# the event log stores times as nanoseconds since 1970 (pandas' datetime64[ns] range)
EARLIEST = datetime(1678, 1, 1, tzinfo=UTC)
LATEST = datetime(2261, 12, 31, tzinfo=UTC)


def parse_event(raw_body: bytes) -> Event:
    """Parse a body whose signature was already verified into an :class:`Event`.

    Raises :class:`PayloadError` naming what is wrong when the body is not a JSON object with a
    non-empty string ``id`` and ``type``, an ISO 8601 ``createdAt`` (UTC assumed when it has no
    offset) and a ``data`` member.
    """
    try:
        body = json.loads(raw_body)
    except (ValueError, RecursionError) as exc:
        raise PayloadError(f"the body is not JSON ({type(exc).__name__})") from None
    if not isinstance(body, dict):
        raise PayloadError(f"the body is a JSON {type(body).__name__}, expected an event object")
    for key in ("id", "type"):
        if not isinstance(body.get(key), str) or not body[key]:
            raise PayloadError(f"the event has no non-empty string {key!r}")
    created = body.get("createdAt")
    if not isinstance(created, str):
        raise PayloadError("the event has no string 'createdAt'")
    try:
        created_at = datetime.fromisoformat(created)
        if created_at.tzinfo is None:
            created_at = created_at.replace(tzinfo=UTC)
        created_at = created_at.astimezone(UTC)
    except (ValueError, OverflowError):
        # OverflowError: a time at the edge of the calendar whose offset moves it past year 1 or
        # 9999; a signed body can hold one, and it must get a 400, not a 500
        raise PayloadError("the event's 'createdAt' is not an ISO 8601 date-time") from None
    if not EARLIEST <= created_at <= LATEST:
        raise PayloadError(
            f"the event's 'createdAt' {created[:40]!r} is outside {EARLIEST.year}..{LATEST.year}, "
            "the range the event log can hold"
        )
    if "data" not in body:
        raise PayloadError("the event has no 'data' member")
    return Event(body["id"], body["type"], created_at, body["data"])


class Receiver:
    """ASGI app receiving the service's webhook deliveries into the store's event log.

    Parameters
    ----------
    secret
        The subscription secret, returned once by ``client.webhooks.create``.
    store_path
        The store folder; accepted events go to its event log (read with ``Store.events()``).
    tolerance
        Seconds; an event whose signed ``createdAt`` is older than this by ``clock`` is stored
        with ``possible_replay`` set.
    clock
        Zero-argument callable returning the current time as an aware ``datetime``; the machine's
        UTC time by default. Against the sandbox, whose clock is simulated, pass a clock that
        follows it (``svcnb.sandbox.SandboxClock``), or every event would look days old.

    POST to any path is handled (the subscription URL picks the path); every answer is JSON:
    200 ``{"received": true, "duplicate": bool, "eventId": ...}``, 400/401/413/503
    ``{"error": "..."}``. ``stats`` counts the outcomes since start.
    """

    def __init__(
        self,
        secret: str | bytes,
        store_path: str | os.PathLike[str],
        tolerance: float = DEFAULT_TOLERANCE,
        clock: Callable[[], datetime] | None = None,
        *,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        if not secret:
            raise ValueError(
                "the webhook secret is empty; pass the `secret` returned once when the "
                "subscription was created"
            )
        if not isinstance(secret, str | bytes):
            raise TypeError(f"secret must be str or bytes, not {type(secret).__name__}")
        if tolerance < 0:
            raise ValueError(f"tolerance must be >= 0 seconds, got {tolerance}")
        self.__secret = secret  # name-mangled and left out of repr: it must never be shown
        self.log = EventLog(store_path)
        self.tolerance = float(tolerance)
        self.clock = clock or system_clock
        self.max_body_bytes = int(max_body_bytes)
        self.stats = {
            "accepted": 0,
            "duplicates": 0,
            "rejected_signature": 0,
            "rejected_payload": 0,
            "rejected_too_large": 0,
            "store_errors": 0,
        }
        self._app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["POST"])])

    def __repr__(self) -> str:
        return f"Receiver(store_path={str(self.log.path.parent)!r}, tolerance={self.tolerance:g})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    async def _handle(self, request: Request) -> JSONResponse:
        try:
            body = await _read_body(request, self.max_body_bytes)
        except ClientDisconnect:  # the sender gave up mid-body: nothing to verify or answer
            return _error(400, "the request body was cut off")
        if body is None:
            self.stats["rejected_too_large"] += 1
            return _error(413, f"the body is larger than {self.max_body_bytes} bytes")
        try:
            verify(body, request.headers, self.__secret)
        except SignatureError as exc:
            self.stats["rejected_signature"] += 1
            return _error(401, str(exc))
        try:
            event = parse_event(body)
            delivery_ids = header_values(request.headers, "x-service-delivery-id")
            if len(delivery_ids) > 1:
                raise PayloadError("the request has more than one X-Service-Delivery-Id header")
        except PayloadError as exc:
            self.stats["rejected_payload"] += 1
            return _error(400, str(exc))
        event_headers = header_values(request.headers, "x-service-event")
        now = self.clock()
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
        age = (now - event.created_at).total_seconds()
        record = {
            "received_at": now.astimezone(UTC),
            "delivery_id": (delivery_ids[0] if delivery_ids else None) or None,
            "event_id": event.id,
            "type": event.type,
            "event_header": ", ".join(event_headers) if event_headers else None,
            "created_at": event.created_at,
            "age_seconds": age,
            "possible_replay": age > self.tolerance,
            "data": event.data,
        }
        try:
            written = await run_in_threadpool(self.log.append, record)
        except OSError as exc:
            self.stats["store_errors"] += 1
            return _error(
                503,
                f"the event could not be stored ({exc.strerror or type(exc).__name__}); "
                "it was not acknowledged, so the service will retry",
            )
        self.stats["accepted" if written else "duplicates"] += 1
        return JSONResponse({"received": True, "duplicate": not written, "eventId": event.id})


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The raw body, or None as soon as it is known to exceed ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)
