"""What goes on the wire: timestamps, the two envelopes, and byte-stable JSON.

Records are plain dicts whose insertion order is the order keys are served in; keys starting
with ``_`` are internal and are never served.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from decimal import Decimal
from email.utils import format_datetime

# the kind of a failure when the raiser names none: what dialects choose a status for
_KIND_OF_STATUS = {
    400: "malformed",
    401: "auth",
    403: "scope",
    404: "not_found",
    409: "conflict",
    422: "validation",
    429: "rate",
    502: "upstream",
}
_TERSE = {
    "malformed": "Bad request",
    "auth": "Unauthorized",
    "scope": "Forbidden",
    "not_found": "Not found",
    "conflict": "Conflict",
    "cap": "Webhook limit reached",
    "revoked": "Token revoked",
    "upstream": "Upstream sync failed",
}


class ApiFailure(Exception):
    """A failure answered with the failure envelope: ``status`` and a message for the user.

    ``status`` is the default dialect's; ``kind`` (``validation``, ``conflict``, ``cap``,
    ``revoked``, ``scope``, ...; derived from the status when not given) lets another dialect
    pick its own status, and ``terse`` is the short text of ``terse`` wording.
    """

    def __init__(
        self,
        status: int,
        message: str,
        headers: dict[str, str] | None = None,
        *,
        kind: str | None = None,
        terse: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.kind = kind or _KIND_OF_STATUS.get(status, "other")
        self._terse = terse

    @property
    def terse(self) -> str:
        if self._terse is not None:
            return self._terse
        if self.kind == "validation":
            # validation messages start with the field ("port: at most 64 characters")
            field = self.message.split(":", 1)[0].split("[", 1)[0]
            return f"Invalid value for {field}"
        return _TERSE.get(self.kind, self.message)


def iso(moment: datetime) -> str:
    """``2026-11-01T00:00:00Z``: UTC, whole seconds (sub-second clock time is cut, not rounded)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    """Parse an ISO 8601 date-time with a zone; raise ValueError otherwise."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError("date-time must carry a zone, e.g. 2026-12-01T00:00:00Z")
    return moment.astimezone(UTC)


def http_date(moment: datetime) -> str:
    """RFC 7231 form for the ``Date`` header."""
    return format_datetime(moment.astimezone(UTC), usegmt=True)


def public(record: dict) -> dict:
    """``record`` without its internal ``_`` keys (one level: nested objects are served whole)."""
    return {k: v for k, v in record.items() if not k.startswith("_")}


def _default(value: object) -> object:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime):
        return iso(value)
    raise TypeError(f"cannot serve {type(value).__name__} as JSON")


def dumps(payload: object) -> bytes:
    """Compact UTF-8 JSON in the dicts' own key order, so equal state gives equal bytes.

    What is stored can always be served: input checks keep lone surrogates and non-finite
    numbers out, but should one reach a record anyway (a control edit, a bug), the answer says
    it as JSON can (a ``\\ud800`` escape, ``null``) instead of failing every later read."""
    try:
        return json.dumps(
            payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_default
        ).encode()
    except (UnicodeEncodeError, ValueError):
        return json.dumps(
            _finite(payload), separators=(",", ":"), ensure_ascii=True, default=_default
        ).encode()


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Decimal) and not value.is_finite():
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def ok(data: object, meta: dict | None = None) -> dict:
    """The success envelope."""
    body = {"success": True, "data": data}
    if meta is not None:
        body["meta"] = meta
    return body


def fail(message: str) -> dict:
    """The failure envelope."""
    return {"success": False, "error": message}
