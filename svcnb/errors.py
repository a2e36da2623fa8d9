"""Errors raised by svcnb, one type per failure the API names.

::

    SvcnbError
    ├── ApiError(status, message, method, path)     any failure envelope from the API
    │   ├── AuthError            401  token missing, or rejected (unknown, expired, revoked)
    │   ├── ScopeError           403  the token lacks ``.scope`` for the endpoint
    │   ├── NotFound             404
    │   ├── Conflict             409  state conflict (stop a VM that is not running, attach twice)
    │   ├── ValidationError      422  ``.field`` names the rejected field when the server said
    │   ├── RateLimited          429  ``.retry_after`` seconds; raised only once retries ran out
    │   └── ServerError          5xx
    │       └── UpstreamSyncError  502 on a rule update; ``.rule`` is the rule as re-read after
    ├── TransportError           the connection dropped or timed out on every attempt
    ├── PagingError              a list could not be read to its end (page cap reached)
    └── MissingFieldError        a record lacks a key svcnb needs (also a ``KeyError``)

Warnings: ``SchemaDriftWarning`` (a record carries keys the spec does not list; they are kept)
and ``PagingWarning`` (duplicated ids dropped, or the list changed while it was read).

No message ever holds an API token: where a token must be named it shows as ``svc_…`` and its
last four characters.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError",
    "AuthError",
    "Conflict",
    "MissingFieldError",
    "NotFound",
    "PagingError",
    "PagingWarning",
    "RateLimited",
    "SchemaDriftWarning",
    "ScopeError",
    "ServerError",
    "SvcnbError",
    "TransportError",
    "UpstreamSyncError",
    "ValidationError",
]


class SvcnbError(Exception):
    """Root of every error svcnb raises on purpose."""


class ApiError(SvcnbError):
    """The API answered with a failure status.

    ``message`` is the full explanation (what went wrong and what to do); ``server_message`` is
    the ``error`` text of the failure envelope as the server sent it (tokens masked).
    """

    def __init__(
        self,
        status: int,
        message: str,
        method: str,
        path: str,
        *,
        server_message: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.method = method
        self.path = path
        self.server_message = server_message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}(status={self.status}, {self.method} {self.path}: {self.message!r})"


class AuthError(ApiError):
    """401: ``reason`` is ``"missing"`` (no token was sent) or ``"rejected"``."""

    def __init__(self, *args: Any, reason: str = "rejected", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reason = reason


class ScopeError(ApiError):
    """403: the token lacks ``scope`` (``None`` when neither the server nor svcnb knows it)."""

    def __init__(self, *args: Any, scope: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scope = scope


class NotFound(ApiError):
    """404: the addressed resource does not exist."""


class Conflict(ApiError):
    """409: the request conflicts with the current state of the resource."""


class ValidationError(ApiError):
    """422: the server rejected the body; ``field`` names the field when it could be told."""

    def __init__(self, *args: Any, field: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.field = field


class RateLimited(ApiError):
    """429 on every attempt: ``retry_after`` is the wait in seconds the server asked for last."""

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class ServerError(ApiError):
    """5xx on every attempt (or a 5xx on a write that must not be repeated)."""


class UpstreamSyncError(ServerError):
    """502 on a rule update: the rule was stored but the security group was not re-synced.

    ``rule`` is the rule as re-read right after the failure (``None`` if that read failed too),
    so the caller sees which values the API now holds.
    """

    def __init__(self, *args: Any, rule: dict | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rule = rule


class TransportError(SvcnbError):
    """No answer came: connection refused, dropped, or timed out on every attempt."""

    def __init__(self, message: str, method: str, path: str) -> None:
        super().__init__(message)
        self.message = message
        self.method = method
        self.path = path


class PagingError(SvcnbError):
    """A list could not be read to its end; nothing is returned rather than a truncated list."""


class MissingFieldError(SvcnbError, KeyError):
    """A record lacks a key svcnb needs; names the resource, the record id and the key."""

    def __init__(self, resource: str, record_id: str | None, key: str) -> None:
        self.resource = resource
        self.record_id = record_id
        self.key = key
        where = f"{resource} {record_id!r}" if record_id is not None else f"a {resource} record"
        super().__init__(
            f"{where} has no {key!r} key, which svcnb needs; the API answered with an "
            "unexpected shape (check the base URL and the API version)"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class SchemaDriftWarning(UserWarning):
    """A record holds keys the spec does not list; they are kept as they came."""


class PagingWarning(UserWarning):
    """A list read had duplicated ids (dropped) or changed while it was read."""
