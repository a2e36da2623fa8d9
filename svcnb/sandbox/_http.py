"""ASGI plumbing shared by the public API and control: bodies in, JSON envelopes out."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

from ._config import MAX_BODY_BYTES, MAX_JSON_DEPTH
from ._envelopes import ApiFailure


class DroppedConnection(Exception):
    """Raised on purpose after the response started, so the server cuts the connection."""


def header_map(scope: dict) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


async def read_body(receive, headers: dict[str, str], limit: int = MAX_BODY_BYTES) -> bytes:
    """The whole request body; 413 past ``limit`` (checked before reading when the
    length is declared); 400 when the body ends before it was complete (the client went away
    while ``more_body`` was still due, or sent fewer bytes than its ``Content-Length``), so a
    cut-off body is never applied as if it were whole."""
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiFailure(
            413, f"request body of {declared} bytes is over the limit of {limit} bytes"
        )
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ApiFailure(
                400,
                f"incomplete request body: the client disconnected after {size} bytes, "
                "before the body ended; nothing was changed",
            )
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ApiFailure(413, f"request body is over the limit of {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    if declared is not None and declared.isdigit() and int(declared) != size:
        raise ApiFailure(
            400,
            f"incomplete request body: Content-Length says {int(declared)} bytes but {size} "
            "came; nothing was changed",
        )
    return b"".join(chunks)


class _Refused(ValueError):
    """A body that is JSON text but not one the sandbox can store and serve back."""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    # last-wins would let one body mean two things to two parsers
    body = dict(pairs)
    if len(body) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {_shown(key)} in one JSON object")
            seen.add(key)
    return body


def _no_constant(name: str) -> object:
    raise _Refused(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        # 1e400 parses to infinity, which JSON cannot say on the way back out
        raise _Refused(f"number {text[:40]} is out of range")
    return value


def _shown(text: str) -> str:
    return repr(text[:40]).encode("ascii", "backslashreplace").decode()


def _check_storable(value: object, depth: int = 1) -> None:
    """Refuse what could be stored but not served: nesting past ``MAX_JSON_DEPTH`` and strings
    that are not Unicode text (a lone surrogate such as ``"\\ud800"`` cannot be encoded as
    UTF-8, so every later read of the record would fail)."""
    if depth > MAX_JSON_DEPTH:
        raise _Refused(f"nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        _check_text(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key)
            if isinstance(item, dict | list | str):
                _check_storable(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict | list | str):
                _check_storable(item, depth + 1)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _Refused(
            f"string {_shown(text)} holds a lone surrogate (U+{ord(text[exc.start]):04X}), "
            "which is not Unicode text"
        ) from None


def parse_json_body(raw: bytes, wants_body: bool) -> object:
    """The parsed body: 400 when it is not JSON (or missing where one is needed) and when it
    is JSON the sandbox could not store and serve back (invalid UTF-8, a lone surrogate, a
    duplicate key, ``NaN`` or an out-of-range number, nesting deeper than ``MAX_JSON_DEPTH``);
    a route that takes no body accepts only nothing, ``{}`` or ``null``."""
    if not raw.strip():
        if wants_body:
            raise ApiFailure(400, "a JSON object request body is required")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiFailure(
            400, f"malformed JSON body: not valid UTF-8 (byte {exc.start}); nothing was changed"
        ) from None
    try:
        body = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constant,
            parse_float=_finite_float,
        )
        _check_storable(body)
    except _Refused as exc:
        raise ApiFailure(400, f"malformed JSON body: {exc}; nothing was changed") from None
    except RecursionError:
        raise ApiFailure(
            400, f"malformed JSON body: nested deeper than {MAX_JSON_DEPTH} levels"
        ) from None
    except ValueError as exc:
        raise ApiFailure(400, f"malformed JSON body: {str(exc)[:120]}") from None
    if not wants_body:
        if body in (None, {}):
            return None
        raise ApiFailure(422, "body: this endpoint takes no request body")
    if not isinstance(body, dict):
        raise ApiFailure(400, f"request body must be a JSON object, got {type(body).__name__}")
    return body


def parse_query(
    raw: bytes, allowed: tuple[str, ...], ignore_unknown: bool = False
) -> dict[str, str]:
    """The query as a dict: 422 for a parameter not in ``allowed`` (dropped instead with
    ``ignore_unknown``) and for one given more than once."""
    try:
        pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True, strict_parsing=False)
    except ValueError:
        raise ApiFailure(422, "query: cannot be parsed") from None
    query: dict[str, str] = {}
    for name, value in pairs:
        if name not in allowed:
            if ignore_unknown:
                continue
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
