"""The public API pipeline, in the order a request meets it.

1. rate limit: a valid token's bucket, else the caller IP's bucket (429, ``Retry-After``);
2. authentication (401 names what is wrong with the token, never its value);
3. routing under the dialect's base paths (404 unknown path, 405 known path with another method);
4. scope (403 names the missing scope); query and body checks (422, 400, 413);
5. Idempotency-Key (replay, 409 in flight, 422 reused for another request);
6. injected faults (latency, 500 per route: nothing changes), then the handler under the state
   lock, its canonical answer said in the active dialect (:mod:`._speak`);
7. the answer, with ``X-RateLimit-*`` and the sandbox ``Date`` on every response; with the
   ``dropRate`` fault the request is processed but the connection is cut mid-body.

Failures are raised with the default dialect's status and a kind; the dialect picks the status
and wording on the way out.
"""

from __future__ import annotations

import asyncio
import logging

from . import _faults, _idempotency, _ratelimit
from ._envelopes import ApiFailure, dumps, fail, http_date
from ._http import parse_json_body, parse_query, read_body, send_response
from ._routes import Call, Route
from ._routes_firewalls import ROUTES as FIREWALL_ROUTES
from ._routes_networks import ROUTES as NETWORK_ROUTES
from ._routes_vms import ROUTES as VM_ROUTES
from ._routes_wallet import ROUTES as WALLET_ROUTES
from ._routes_webhooks import ROUTES as WEBHOOK_ROUTES
from ._speak import Request, ignores_unknown_query, query_names, speak, speak_failure
from ._state import State
from .backends.tokens import require_scope

_log = logging.getLogger(__name__)

PREFIXES = ("/api/v1/api/public/v1", "/api/public/v1")
ROUTES: list[Route] = [
    *VM_ROUTES,
    *FIREWALL_ROUTES,
    *NETWORK_ROUTES,
    *WALLET_ROUTES,
    *WEBHOOK_ROUTES,
]
WRITE_METHODS = ("POST", "PATCH", "PUT", "DELETE")


def strip_prefix(path: str, prefixes: tuple[str, ...] = PREFIXES) -> str | None:
    for prefix in prefixes:
        if path.startswith(prefix + "/") or path == prefix:
            return path[len(prefix) :] or "/"
    return None


def match(method: str, sub: str) -> tuple[Route, dict[str, str]]:
    allowed: list[str] = []
    for route in ROUTES:
        found = route.regex.match(sub)
        if found is None:
            continue
        if route.method == method:
            return route, found.groupdict()
        allowed.append(route.method)
    if allowed:
        raise ApiFailure(
            405,
            f"method {method} is not allowed on this path; allowed: {', '.join(allowed)}",
            {"allow": ", ".join(allowed)},
        )
    raise ApiFailure(404, "no such endpoint; see /openapi.json for the public API")


def _count(state: State, status: int) -> None:
    with state.lock:
        state.stats["requests"] += 1
        by_status = state.stats["byStatus"]
        by_status[str(status)] = by_status.get(str(status), 0) + 1


async def handle_public(state: State, scope: dict, receive, send, headers: dict[str, str]) -> None:
    method = scope["method"]
    path = scope["path"]
    client = scope.get("client")
    peer = client[0] if client else "unknown"
    extra: dict[str, str] = {}
    drop = False
    with state.lock:
        dialect = state.dialect
        ip = _ratelimit.caller_ip(
            peer, headers.get("x-forwarded-for"), tuple(state.settings.trustedProxies)
        )
        auth = state.backends.tokens.authenticate(headers.get("x-api-key"))
        verdict = _ratelimit.count(state, auth.token, ip)
    extra.update(verdict.headers())
    try:
        if not verdict.allowed:
            raise ApiFailure(
                429,
                verdict.message or "rate limit exceeded",
                terse=f"Too many requests. Retry after {verdict.reset_seconds} seconds",
            )
        token = auth.token
        if token is None:
            raise ApiFailure(
                401, auth.problem or "invalid API token", kind=auth.kind, terse=auth.terse
            )
        sub = strip_prefix(path, dialect.prefixes)
        if sub is None:
            served = dialect.prefixes
            raise ApiFailure(
                404,
                f"no endpoint at this path; the public API lives under {served[-1]}"
                + (f" (or {served[0]})" if len(served) > 1 else ""),
            )
        route, params = match(method, sub)
        require_scope(token, route.scope, route.name)
        paged = route.paged(dialect)
        query = parse_query(
            scope.get("query_string", b""),
            query_names(dialect, paged),
            ignores_unknown_query(dialect),
        )
        raw = await read_body(receive, headers) if method in WRITE_METHODS else b""
        body = parse_json_body(raw, route.body is not None)
        key = headers.get("idempotency-key") if method in WRITE_METHODS else None
        if key is not None:
            with state.lock:
                stored = _idempotency.begin(
                    state, token["id"], key, _idempotency.fingerprint(method, sub, raw)
                )
            if stored is not None:
                extra["idempotent-replayed"] = "true"
                await _answer(state, send, stored["status"], stored["body"], extra)
                return
        try:
            if state.faults.latencyMs > 0:
                await asyncio.sleep(state.faults.latencyMs / 1000)
            call = Call(method, sub, params, query, body, token)
            request = Request(
                method, scope.get("scheme", "http"), _host(scope, headers), path, query
            )
            status, encoded, headers_out = _run(state, route, call, request, paged)
            extra.update(headers_out)
        except BaseException:
            if key is not None:  # e.g. the client went away during the latency fault
                _idempotency.abandon(state, token["id"], key)
            raise
        if key is not None:
            _idempotency.finish(state, token["id"], key, status, encoded)
        drop = _faults.drops_connection(state)
    except ApiFailure as exc:
        status, message = speak_failure(dialect, exc)
        encoded = dumps(fail(message))
        extra.update(exc.headers)
    await _answer(state, send, status, encoded, extra, drop)


def _host(scope: dict, headers: dict[str, str]) -> str:
    if headers.get("host"):
        return headers["host"]
    server = scope.get("server") or ("127.0.0.1", 80)
    return f"{server[0]}:{server[1]}"


def _run(
    state: State, route: Route, call: Call, request: Request, paged: bool
) -> tuple[int, bytes, dict[str, str]]:
    """The wire status, bytes and extra headers of the handler's answer."""
    if _faults.injects_error(state, call.method, route.template):
        return (
            500,
            dumps(
                fail(
                    f"injected fault: internal server error on {route.name} (the sandbox's "
                    "errorRate fault; nothing was changed)"
                )
            ),
            {},
        )
    try:
        with state.lock:
            dialect = state.dialect
            status, payload = route.handler(state, call)
            status, body, headers = speak(dialect, route.data, paged, request, status, payload)
            # encoded under the lock: the answer may share nested objects with live records
            return status, dumps(body), headers
    except ApiFailure as exc:
        status, message = speak_failure(state.dialect, exc)
        return status, dumps(fail(message)), {}
    except Exception:
        _log.exception("sandbox handler %s failed", route.name)
        return (
            500,
            dumps(fail(f"internal server error in the sandbox while handling {route.name}")),
            {},
        )


async def _answer(
    state: State, send, status: int, body: bytes, extra: dict[str, str], drop: bool = False
) -> None:
    _count(state, status)
    headers = {"date": http_date(state.now()), **extra}
    await send_response(send, status, body, headers, drop)
