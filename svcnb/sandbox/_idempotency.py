"""Idempotency-Key handling (the rules: the README's table of what the sandbox does)."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from ._envelopes import ApiFailure
from ._state import State

KEY_MAX = 255
LIFETIME = timedelta(hours=24)


def fingerprint(method: str, route_path: str, body: bytes) -> str:
    """What makes two requests "the same": method, path under the prefix and the JSON body
    (compared parsed, so key order and spacing do not matter)."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode()
    except ValueError:
        canonical = body
    return hashlib.sha256(
        method.encode() + b" " + route_path.encode() + b"\n" + canonical
    ).hexdigest()


def check_key(key: str) -> None:
    if not 1 <= len(key) <= KEY_MAX:
        raise ApiFailure(422, f"Idempotency-Key: must be 1 to {KEY_MAX} characters, got {len(key)}")


def begin(state: State, token_id: str, key: str, print_: str) -> dict | None:
    """The stored entry to replay, or None after marking the key in flight for this request."""
    check_key(key)
    with state.lock:
        entry = state.idempotency.get((token_id, key))
        if entry is not None and state.now() - entry["createdAt"] >= LIFETIME:
            entry = None
        if entry is not None:
            if entry["fingerprint"] != print_:
                raise ApiFailure(
                    422,
                    "Idempotency-Key: this key was already used with another "
                    "request (method, path or body differ); use a new key "
                    "for a new request",
                )
            if entry["inFlight"]:
                raise ApiFailure(
                    409,
                    "Idempotency-Key: a request with this key is still being "
                    "processed; retry after it finishes",
                    kind="in_flight",
                    terse="Request in progress",
                )
            return entry
        state.idempotency[(token_id, key)] = {
            "fingerprint": print_,
            "inFlight": True,
            "createdAt": state.now(),
            "status": None,
            "body": None,
        }
        return None


def finish(state: State, token_id: str, key: str, status: int, body: bytes) -> None:
    with state.lock:
        entry = state.idempotency.get((token_id, key))
        if entry is None:
            return
        if status >= 500:
            del state.idempotency[(token_id, key)]
            return
        entry.update(inFlight=False, status=status, body=body)


def abandon(state: State, token_id: str, key: str) -> None:
    """Forget an in-flight key whose request died before it had an answer, so a retry runs."""
    with state.lock:
        entry = state.idempotency.get((token_id, key))
        if entry is not None and entry["inFlight"]:
            del state.idempotency[(token_id, key)]
