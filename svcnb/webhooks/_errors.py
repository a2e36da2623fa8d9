"""Why a webhook request was refused.

::

    SignatureError (ValueError)   the request cannot be shown to come from the service
    ├── MissingSignature          no X-Service-Signature header
    ├── MalformedSignature        a header that is not ``sha256=<64 lowercase hex digits>``
    └── SignatureMismatch         well formed, but not the HMAC of this body under this secret
    PayloadError (ValueError)     signed by the service, but not a ``{id, type, createdAt, data}``

The messages never quote the secret, and quote a received header only in part, so they are safe to
log and to return to the sender.
"""

from __future__ import annotations

from svcnb.errors import SvcnbError

__all__ = [
    "MalformedSignature",
    "MissingSignature",
    "PayloadError",
    "SignatureError",
    "SignatureMismatch",
]


class SignatureError(SvcnbError, ValueError):
    """The request is not signed by the holder of the subscription secret."""


class MissingSignature(SignatureError):
    """The request carries no ``X-Service-Signature`` header."""


class MalformedSignature(SignatureError):
    """The ``X-Service-Signature`` header is not ``sha256=<64 lowercase hex digits>``."""


class SignatureMismatch(SignatureError):
    """The header is well formed but is not the HMAC-SHA256 of the body under the secret."""


class PayloadError(SvcnbError, ValueError):
    """A correctly signed body that is not the event object the spec describes."""
