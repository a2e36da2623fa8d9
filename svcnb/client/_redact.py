"""Token masking: the one place that decides how an API token may be shown."""

from __future__ import annotations

TOKEN_PREFIX = "svc_"


def mask_token(token: str | None) -> str:
    """``svc_…`` plus the last four characters, or ``<none>``; never more of the secret."""
    if not token:
        return "<none>"
    # A short token would be revealed whole by its last four characters.
    tail = token[-4:] if len(token) >= 12 else ""
    return f"{TOKEN_PREFIX}…{tail}"


def scrub(text: str, token: str | None) -> str:
    """``text`` with every occurrence of ``token`` replaced by its mask (e.g. an echoing server)."""
    if token and token in text:
        return text.replace(token, mask_token(token))
    return text
