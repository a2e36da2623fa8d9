"""What a failure answer means: its error class from the status *and* the server's text.

Servers differ in the status they give one failure (a state conflict as 409, 422 or 400; the
webhook cap as 409, 403 or 422; a revoked token as 401 or 403), so the status alone misleads.
The text chooses among the classes a status allows; where it says nothing, the class is the one
the spec gives the status and the message says so, quoting the server.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["auth", "limit", "scope", "conflict", "validation", "other"]

_TOKEN = r"(?:api[ _-]?)?(?:token|key|credentials?)"
# "expired"/"revoked" mean a token on a 403 even when the text does not say "token"; "invalid"
# alone does not (an invalid field), so it counts only next to a token word.
_TOKEN_DEAD_RE = re.compile(
    rf"\b(?:revoked|expired)\b|\b(?:invalid|unknown|deleted|disabled|inactive)\s+{_TOKEN}\b"
    rf"|(?<!idempotency-)\b{_TOKEN}\b[^.;]*\b(?:invalid|unknown|deleted|disabled|inactive)\b",
    re.IGNORECASE,
)
_LIMIT_RE = re.compile(
    r"\b(?:limits?|maximum|max|caps?|capped|quotas?|exceed(?:s|ed)?|too many)\b", re.IGNORECASE
)
# Words that make a "max"/"at most" about the size of one value, not an account cap.
_SIZE_RE = re.compile(r"\b(?:length|characters?|chars|long|digits|bytes|items?)\b", re.IGNORECASE)
_STATE_RE = re.compile(
    r"\b(?:not running|already|state|conflicts?|in use|mismatch|taken|only an? \w+ \w+ can"
    r"|is (?:now )?(?:stopped|stopping|terminated|suspended|provisioning|running|deleted"
    r"|disabled|locked|busy))\b",
    re.IGNORECASE,
)
_INVALID_RE = re.compile(r"\b(?:invalid|must|required|not valid)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    field: str | None = None  # the field of ours the text names
    field_in: Literal["body", "query"] | None = None


def classify(status: int, text: str, *, body: Any, params: Mapping[str, Any] | None) -> Verdict:
    """The class of a 401/403/400/409/422 answer whose error text is ``text``.

    ``body`` and ``params`` are what the call sent: a field counts as named only when it was
    sent, so a field named by the text is never mistaken for one of ours.
    """
    field, field_in = _field_named(text, body, params)
    limit = bool(_LIMIT_RE.search(text)) and not _SIZE_RE.search(text)
    if status == 401:
        return Verdict("auth")
    if status == 403:
        if _TOKEN_DEAD_RE.search(text):
            return Verdict("auth")
        return Verdict("limit") if limit else Verdict("scope")
    if status not in (400, 409, 422):
        return Verdict("other")
    if limit and field is None:
        return Verdict("limit")
    if status == 409 or _STATE_RE.search(text):
        return Verdict("conflict")
    if field is not None or _INVALID_RE.search(text):
        return Verdict("validation", field, field_in)
    return Verdict("other")


def _spellings(key: str) -> set[str]:
    snake = re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()
    return {key, snake}


def _field_named(
    text: str, body: Any, params: Mapping[str, Any] | None
) -> tuple[str | None, Literal["body", "query"] | None]:
    """The first key of the body (then of the query) that ``text`` names, in either spelling."""
    sources: list[tuple[Literal["body", "query"], Any]] = [("body", body), ("query", params)]
    for where, sent in sources:
        if not isinstance(sent, Mapping):
            continue
        for key in sent:
            for spelling in _spellings(str(key)):
                if re.search(rf"(?<![\w.-]){re.escape(spelling)}(?![\w-])", text):
                    return str(key), where
    return None, None
