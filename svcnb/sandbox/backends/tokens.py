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

from .._envelopes import ApiFailure, iso, parse_iso, public
from .._plans_regions import SCOPES
from ._account import Account
from ._base import Table, find

DEFAULT_TOKENS = {
    "admin": list(SCOPES),
    "read": [s for s in SCOPES if s.endswith(":read")],
    "none": [],
}


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret() -> str:
    return "svc_" + secrets.token_urlsafe(30)


@dataclass(frozen=True)
class AuthResult:
    """What the ``x-api-key`` header amounted to: a valid token, or why not (``problem``;
    ``kind`` ``revoked`` for a revoked or expired token, whose status dialects choose)."""

    token: dict | None
    problem: str | None
    kind: str = "auth"
    terse: str | None = None


class TokenBackend:
    """The account's API tokens by id, and the index of their secrets' hashes."""

    def __init__(self, state: Account) -> None:
        self.state = state
        self.tokens = Table()
        self.ids_by_hash: dict[str, str] = {}

    def create(
        self,
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
        state = self.state
        with state.lock:
            token_id = state.new_id("tok")
            digest = _hash(secret)
            record = {
                "id": token_id,
                "name": name,
                "scopes": list(dict.fromkeys(scopes)),
                "expiresAt": iso(expires_at) if expires_at is not None else None,
                "rateLimit": rate_limit,
                "createdAt": state.stamp(),
                "revokedAt": None,
                "_hash": digest,
            }
            self.tokens[token_id] = record
            self.ids_by_hash[digest] = token_id
        return public(record), secret

    def install_defaults(self) -> None:
        """(Re)create the default tokens with the server's fixed secrets."""
        secrets_ = self.state.default_secrets
        for name, scopes in DEFAULT_TOKENS.items():
            if name not in secrets_:
                secrets_[name] = new_secret()
            self.create(name, scopes, secret=secrets_[name])

    def revoke(self, token_id: str) -> dict:
        with self.state.lock:
            record = self._get(token_id)
            if record["revokedAt"] is None:
                record["revokedAt"] = self.state.stamp()
            return public(record)

    def update(self, token_id: str, changes: dict) -> dict:
        """``rateLimit`` and/or ``expiresAt`` (a datetime or None)."""
        record = find(self.tokens, token_id, "token")
        if "rateLimit" in changes:
            record["rateLimit"] = changes["rateLimit"]
        if "expiresAt" in changes:
            expiry = changes["expiresAt"]
            record["expiresAt"] = None if expiry is None else iso(expiry)
        return public(record)

    def delete(self, token_id: str) -> None:
        with self.state.lock:
            record = self._get(token_id)
            del self.tokens[token_id]
            self.ids_by_hash.pop(record["_hash"], None)

    def _get(self, token_id: str) -> dict:
        record = self.tokens.get(token_id)
        if record is None:
            raise ApiFailure(404, f"no token with id {token_id!r}; GET /_sandbox/tokens lists them")
        return record

    def authenticate(self, header: str | None) -> AuthResult:
        """Resolve the header to a token; never puts the header's value in ``problem``."""
        if header is None or header.strip() == "":
            return AuthResult(None, "missing API token: send it in the x-api-key header")
        token_id = self.ids_by_hash.get(_hash(header.strip()))
        record = self.tokens.get(token_id) if token_id else None
        if record is None:
            return AuthResult(
                None,
                "invalid API token: it is unknown or was deleted; create one in "
                "the account dashboard (API keys settings)",
            )
        if record["revokedAt"] is not None:
            return AuthResult(
                None,
                f"API token {record['name']!r} was revoked at {record['revokedAt']}; "
                "create a new one",
                "revoked",
                "Token revoked",
            )
        if record["expiresAt"] is not None and parse_iso(record["expiresAt"]) <= self.state.now():
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
