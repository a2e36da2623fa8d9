"""API tokens: the account dashboard's side (create, revoke, delete) and the check per request.

Secrets are kept only as SHA-256 hashes; the secret itself is returned once, at creation, and
appears in no record, log line or error text. Expiry is compared with the sandbox clock, so
advancing the clock expires tokens.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from ._catalog import SCOPES
from ._state import State
from ._wire import ApiFailure, iso, parse_iso, public

DEFAULT_TOKENS = {
    "admin": list(SCOPES),
    "read": [s for s in SCOPES if s.endswith(":read")],
    "none": [],
}


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret() -> str:
    return "svc_" + secrets.token_urlsafe(30)


def create_token(
    state: State,
    name: str,
    scopes: list[str],
    expires_at: datetime | None = None,
    rate_limit: int | None = None,
    secret: str | None = None,
) -> tuple[dict, str]:
    """Store a token and return (record without secret, secret)."""
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise ApiFailure(422, f"scopes: unknown scope(s) {unknown}; known scopes are {SCOPES}")
    secret = secret or new_secret()
    with state.lock:
        token_id = state.new_id("tok")
        record = {
            "id": token_id,
            "name": name,
            "scopes": list(dict.fromkeys(scopes)),
            "expiresAt": iso(expires_at) if expires_at is not None else None,
            "rateLimit": rate_limit,
            "createdAt": state.stamp(),
            "revokedAt": None,
            "_hash": _hash(secret),
        }
        state.tokens[token_id] = record
        state.token_ids_by_hash[record["_hash"]] = token_id
    return public(record), secret


def install_default_tokens(state: State) -> None:
    """(Re)create the default tokens with the server's fixed secrets."""
    for name, scopes in DEFAULT_TOKENS.items():
        if name not in state.default_secrets:
            state.default_secrets[name] = new_secret()
        create_token(state, name, scopes, secret=state.default_secrets[name])


def revoke_token(state: State, token_id: str) -> dict:
    with state.lock:
        record = _get(state, token_id)
        if record["revokedAt"] is None:
            record["revokedAt"] = state.stamp()
        return public(record)


def delete_token(state: State, token_id: str) -> None:
    with state.lock:
        record = _get(state, token_id)
        del state.tokens[token_id]
        state.token_ids_by_hash.pop(record["_hash"], None)


def _get(state: State, token_id: str) -> dict:
    record = state.tokens.get(token_id)
    if record is None:
        raise ApiFailure(404, f"no token with id {token_id!r}; GET /_sandbox/tokens lists them")
    return record


@dataclass(frozen=True)
class AuthResult:
    """What the ``x-api-key`` header amounted to: a valid token, or why not (``problem``;
    ``kind`` ``revoked`` for a revoked or expired token, whose status dialects choose)."""

    token: dict | None
    problem: str | None
    kind: str = "auth"
    terse: str | None = None


def authenticate(state: State, header: str | None) -> AuthResult:
    """Resolve the header to a token; never puts the header's value in ``problem``."""
    if header is None or header.strip() == "":
        return AuthResult(None, "missing API token: send it in the x-api-key header")
    token_id = state.token_ids_by_hash.get(_hash(header.strip()))
    record = state.tokens.get(token_id) if token_id else None
    if record is None:
        return AuthResult(
            None,
            "invalid API token: it is unknown or was deleted; create one in "
            "the account dashboard (API keys settings)",
        )
    if record["revokedAt"] is not None:
        return AuthResult(
            None,
            f"API token {record['name']!r} was revoked at {record['revokedAt']}; create a new one",
            "revoked",
            "Token revoked",
        )
    if record["expiresAt"] is not None and parse_iso(record["expiresAt"]) <= state.now():
        return AuthResult(
            None,
            f"API token {record['name']!r} expired at {record['expiresAt']}; create a new one",
            "revoked",
            "Token expired",
        )
    return AuthResult(record, None)


def require_scope(token: dict, scope: str | None, what: str) -> None:
    if scope is not None and scope not in token["scopes"]:
        raise ApiFailure(
            403,
            f"{what} needs the scope {scope!r}, which token "
            f"{token['name']!r} does not have (it has: "
            f"{', '.join(token['scopes']) or 'no scopes'})",
        )
