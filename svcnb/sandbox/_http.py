"""ASGI plumbing shared by the public API and control: bodies in, JSON envelopes out."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

from ._config import MAX_BODY_BYTES
from ._wire import ApiFailure


class DroppedConnection(Exception):
    """Raised on purpose after the response started, so the server cuts the connection."""


def header_map(scope: dict) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


async def read_body(receive, headers: dict[str, str]) -> bytes:
    """The whole request body; 413 past ``MAX_BODY_BYTES`` (checked before reading when the
    length is declared)."""
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise ApiFailure(
            413, f"request body of {declared} bytes is over the limit of {MAX_BODY_BYTES} bytes"
        )
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiFailure(413, f"request body is over the limit of {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def parse_json_body(raw: bytes, wants_body: bool) -> object:
    """The parsed body: 400 when it is not JSON (or missing where one is needed); a route that
    takes no body accepts only nothing, ``{}`` or ``null``."""
    if not raw.strip():
        if wants_body:
            raise ApiFailure(400, "a JSON object request body is required")
        return None
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiFailure(400, f"malformed JSON body: {str(exc)[:120]}") from None
    if not wants_body:
        if body in (None, {}):
            return None
        raise ApiFailure(422, "body: this endpoint takes no request body")
    if not isinstance(body, dict):
        raise ApiFailure(400, f"request body must be a JSON object, got {type(body).__name__}")
    return body


def parse_query(raw: bytes, allowed: tuple[str, ...]) -> dict[str, str]:
    try:
        pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True, strict_parsing=False)
    except ValueError:
        raise ApiFailure(422, "query: cannot be parsed") from None
    query: dict[str, str] = {}
    for name, value in pairs:
        if name not in allowed:
            hint = f"accepted: {', '.join(allowed)}" if allowed else "it takes none"
            raise ApiFailure(422, f"{name[:40]}: unknown query parameter; {hint}")
        if name in query:
            raise ApiFailure(422, f"{name}: given more than once")
        query[name] = value
    return query


async def send_response(
    send, status: int, body: bytes, headers: dict[str, str], drop: bool = False
) -> None:
    """Send ``body``; with ``drop`` only half of it goes out before the connection is cut."""
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    raw_headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    if drop:
        await send(
            {"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True}
        )
        raise DroppedConnection("connection dropped on purpose by the sandbox's dropRate fault")
    await send({"type": "http.response.body", "body": body})
