"""Errors raised by svcnb: one tree, rooted at ``SvcnbError``, so ``except SvcnbError`` catches
everything svcnb raises on purpose. Where a failure also is a builtin kind, the class subclasses
that builtin too (shown in brackets), so existing ``except ValueError`` code keeps working.

::

    SvcnbError
    ├── ApiError(status, message, method, path)     any failure answer from the API
    │   ├── AuthError            401, or a 403 whose text says the token is revoked/expired/invalid
    │   ├── Forbidden            403
    │   │   └── ScopeError       403 otherwise: per the spec a missing scope; ``.scope`` needed
    │   ├── LimitExceeded        an account cap (10 active webhooks...), whatever the status
    │   ├── NotFound             404
    │   ├── Conflict             409, or a 400/422 whose text speaks of state (``.status`` is real)
    │   ├── ValidationError      400/422 naming a field sent, or saying invalid/must/required
    │   ├── RateLimited          429 on every attempt, or a wait the server asks for that is
    │   │                        longer than ``max_wait`` or than the call's deadline leaves;
    │   │                        ``.retry_after`` seconds (the message names the wait)
    │   └── ServerError          5xx
    │       └── UpstreamSyncError  502 on a rule update; ``.rule`` is the rule as re-read after
    │   (an ApiError itself: a 2xx whose body is not the JSON envelope, or could not be decoded)
    ├── TransportError           no complete answer: the connection failed, dropped or timed out
    │                            on every attempt, or the call's deadline ran out
    ├── PagingError              a list could not be read to its end (page cap reached, the
    │                            server ignored paging, or announced too many pages)
    ├── WaitTimeout [TimeoutError]     a wait (``vms.stop(wait=True)``) ran out
    ├── MissingFieldError [KeyError]   a record lacks a key svcnb needs
    ├── RecordError [ValueError]       svcnb.frames: a value of the wrong type (``strict=True``)
    ├── UnknownMoneyKeyError [ValueError]  svcnb.frames.parse_money: a money key it cannot read
    ├── StoreError [RuntimeError]      svcnb.store: the store cannot be used as asked
    │   ├── MissingResourceError       a resource the snapshot asked for could not be read
    │   ├── DamagedCommitError         a commit of a store's table cannot be read (names it)
    │   └── OriginError                a snapshot of another server or account than the store
    │                                  holds under that name, or older than its latest
    ├── ConfigError [ValueError]       svcnb.config: the config file cannot be read or written
    ├── RefusedFile [OSError]          a file svcnb will not read (no regular file, too large, too
    │                                  slow) or write (a symbolic link not to be followed)
    ├── VocabularyError [ValueError]   svcnb.vocab: a status mapping names no known class
    ├── SignatureError [ValueError]    svcnb.webhooks: not signed by the subscription secret
    │   ├── MissingSignature           no X-Service-Signature header
    │   ├── MalformedSignature         not ``sha256=<64 hex digits>``
    │   └── SignatureMismatch          not the HMAC of this body under this secret
    ├── PayloadError [ValueError]      svcnb.webhooks: signed, but not an event object
    ├── DurationError [ValueError]     svcnb.reports.duration: not a duration (months refused)
    ├── TimeError [ValueError]         svcnb.times.to_utc: a time given (``at``, ``--at``, ...)
    │                                  that is not one, is empty, or is outside pandas' range
    ├── PlanError [ValueError]         svcnb.plans: a stop plan cannot be built, read or applied
    │   ├── PlanLimitError             it would stop more VMs than the limit of one action
    │   └── PlanChangedError           its content no longer gives the digest it was reviewed under
    └── DeliveryError                  svcnb.alerts: an alert was not delivered after every retry

The sandbox imports nothing of svcnb, so its one public error stands outside the tree:
``svcnb.sandbox.StateError [ValueError]``, a saved state it cannot start from (``svcnb sandbox
--state-file`` prints it in one line and exits 2).

Each class lives beside the layer that raises it and is exported there; the client's are here
and in ``svcnb``. ``tests/test_error_tree.py`` holds every exception class of svcnb to this tree
(or to its list of internal ones). Bad arguments raise plain ``ValueError``/``TypeError`` naming
the parameter, as Python code does. Why the class follows the text as well as the status:
``svcnb.client._failures``; why nothing is raised with a ``__context__``: ``svcnb.client._request``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError",
    "AuthError",
    "Conflict",
    "Forbidden",
    "IncompleteWarning",
    "LimitExceeded",
    "MissingFieldError",
    "NotFound",
    "PagingError",
    "PagingWarning",
    "RateLimited",
    "RefusedFile",
    "SchemaDriftWarning",
    "ScopeError",
    "ServerError",
    "SvcnbError",
    "TransportError",
    "UpstreamSyncError",
    "ValidationError",
    "WaitTimeout",
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
    """401 (or a 403 saying the token is no longer valid): ``reason`` is ``"missing"`` (no token
    was sent) or ``"rejected"``."""

    def __init__(self, *args: Any, reason: str = "rejected", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reason = reason


class Forbidden(ApiError):
    """403: the server refused the call for this token."""


class ScopeError(Forbidden):
    """403 that the spec explains as a missing scope: ``scope`` is the one the endpoint needs
    (named by the server, else by svcnb; ``None`` when neither knows it)."""

    def __init__(self, *args: Any, scope: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scope = scope


class NotFound(ApiError):
    """404: the addressed resource does not exist."""


class LimitExceeded(ApiError):
    """An account cap was reached (e.g. 10 active webhook subscriptions), whatever the status."""


class Conflict(ApiError):
    """409, or a 400/422 whose text speaks of the resource's state; ``status`` is the one sent."""


class ValidationError(ApiError):
    """400/422 the server explained as bad input; ``field`` names the field (of the body or the
    query) when the text names one that was sent."""

    def __init__(self, *args: Any, field: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.field = field


class RateLimited(ApiError):
    """429 on every attempt, or a wait the server asked for (``Retry-After``, a rate-limit
    reset) longer than ``Client(max_wait=)`` or than the call's deadline leaves: ``retry_after``
    is the wait in seconds the server asked for last (at most a day)."""

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
    """No complete answer came: connection refused, dropped, or timed out on every attempt, or
    the call's deadline (``Client(deadline=)``) ran out before the answer was whole."""

    def __init__(self, message: str, method: str, path: str) -> None:
        super().__init__(message)
        self.message = message
        self.method = method
        self.path = path


class PagingError(SvcnbError):
    """A list could not be read to its end; nothing is returned rather than a truncated list."""


class WaitTimeout(SvcnbError, TimeoutError):
    """A wait ran out before the state it waited for came; the action may still complete."""


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
    """A list read had duplicated ids (dropped), changed while it was read, ended short of
    the total the server announced, or may be incomplete (nothing the server said proved its
    end)."""


class IncompleteWarning(PagingWarning):
    """Stored rows were read from a list nothing proved complete; figures from them may be
    short."""


class RefusedFile(SvcnbError, OSError):
    """A file svcnb will not read or write as asked (``svcnb.files``): ``filename`` names it,
    ``strerror`` says why and what to do. An ``OSError``, so every handling of a file that
    cannot be read or written applies to it."""
