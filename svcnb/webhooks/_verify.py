"""Checking that a webhook request was signed with the subscription secret.

The spec: ``X-Service-Signature: sha256=<hex>`` where ``<hex>`` is the HMAC-SHA256 of the raw
request body keyed with the subscription secret, "written as lowercase hex". Everything here works
on the bytes as received; nothing is parsed until the signature has been checked, because a parser
is attack surface and a body re-serialised after parsing is not the body that was signed.

Uppercase hex is refused as malformed rather than accepted: the spec fixes one spelling, a sender
that uses another is not the service (or something between rewrote the header), and one canonical
form keeps the header byte-for-byte equal to what ``openssl dgst -sha256 -hmac`` prints.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping

from svcnb.webhooks._errors import MalformedSignature, MissingSignature, SignatureMismatch

__all__ = ["SIGNATURE_HEADER", "header_values", "verify"]

SIGNATURE_HEADER = "x-service-signature"
_PREFIX = "sha256="
_HEX_DIGITS = 64  # SHA-256 is 32 bytes
_LOWER_HEX = frozenset("0123456789abcdef")

Headers = Mapping[str, str] | Mapping[bytes, bytes] | Iterable[tuple[str | bytes, str | bytes]]


def header_values(headers: Headers, name: str) -> list[str]:
    """Every value of header ``name`` (any case) in ``headers``, in order, without surrounding OWS.

    ``headers`` may be a plain ``dict`` (keys of any case), ``starlette.datastructures.Headers``,
    ``httpx.Headers`` or the ASGI list of ``(bytes, bytes)`` pairs. Repeated headers are all kept so
    that a caller can refuse an ambiguous request instead of picking one of the values.
    """
    if hasattr(headers, "multi_items"):  # httpx.Headers: .items() would merge repeats
        items = headers.multi_items()
    elif hasattr(headers, "items"):
        items = headers.items()
    else:
        items = headers
    wanted = name.lower()
    values = []
    for key, value in items:
        key = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        if key.lower() == wanted:
            value = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            values.append(value.strip(" \t"))
    return values


def _secret_bytes(secret: str | bytes) -> bytes:
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if not key:
        raise ValueError(
            "the webhook secret is empty; pass the `secret` returned once when the subscription "
            "was created"
        )
    return key


def _shown(value: str) -> str:
    """The start of a received header, enough to recognise it in an error, never all of it."""
    return repr(value[:12] + ("..." if len(value) > 12 else ""))


def verify(raw_body: bytes, headers: Headers, secret: str | bytes) -> None:
    """Check the ``X-Service-Signature`` of a webhook request; return only if it is valid.

    Parameters
    ----------
    raw_body
        The request body exactly as received, before any decoding or JSON parsing.
    headers
        The request headers: a ``dict`` with names of any case, Starlette or httpx ``Headers``, or
        ASGI ``(bytes, bytes)`` pairs.
    secret
        The subscription secret (``str`` is encoded as UTF-8).

    Raises
    ------
    MissingSignature
        No ``X-Service-Signature`` header.
    MalformedSignature
        The header is repeated, lacks the ``sha256=`` prefix, or is not 64 lowercase hex digits.
    SignatureMismatch
        The digest is not the HMAC-SHA256 of ``raw_body`` under ``secret``: a forged or altered
        body, or a different subscription's secret.
    """
    if not isinstance(raw_body, bytes | bytearray | memoryview):
        raise TypeError(
            f"raw_body must be the request body as bytes, not {type(raw_body).__name__}: a decoded "
            "or re-serialised body is not the byte string the service signed"
        )
    key = _secret_bytes(secret)
    values = header_values(headers, SIGNATURE_HEADER)
    if not values:
        raise MissingSignature(
            "the request has no X-Service-Signature header; only requests signed by the service "
            "are accepted"
        )
    if len(values) > 1:
        raise MalformedSignature(
            f"the request has {len(values)} X-Service-Signature headers; exactly one is expected"
        )
    value = values[0]
    if not value.startswith(_PREFIX):
        raise MalformedSignature(
            f"X-Service-Signature {_shown(value)} does not start with 'sha256='; the service sends "
            "'sha256=' followed by 64 lowercase hex digits"
        )
    digest = value[len(_PREFIX) :]
    if len(digest) != _HEX_DIGITS:
        raise MalformedSignature(
            f"X-Service-Signature has {len(digest)} characters after 'sha256=', expected "
            f"{_HEX_DIGITS} hex digits"
        )
    if not _LOWER_HEX.issuperset(digest):
        kind = (
            "uppercase hex (the spec sends lowercase)"
            if _LOWER_HEX.issuperset(digest.lower())
            else "characters that are not hex digits"
        )
        raise MalformedSignature(f"X-Service-Signature has {kind} after 'sha256='")
    expected = hmac.new(key, bytes(raw_body), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode("ascii"), digest.encode("ascii")):
        raise SignatureMismatch(
            "X-Service-Signature does not match the body: it was altered, not sent by the service, "
            "or signed with another subscription's secret (check the secret this receiver uses)"
        )
