"""The control API under ``/_sandbox/`` (contracts section 2): the "account dashboard" and the
test knobs. No token; loopback callers only. Same envelopes as the public API."""

from __future__ import annotations

import logging
import os
import random
import ssl
from collections.abc import Callable
from dataclasses import asdict
from decimal import Decimal, InvalidOperation

import anyio

from . import _build, _deliveries, _faults, _saved
from . import _validate as v
from ._config import MAX_BODY_BYTES, SandboxConfig, proxy_list
from ._dialect import Dialect
from ._envelopes import ApiFailure, dumps, fail, http_date, ok, parse_iso, public
from ._http import parse_json_body, parse_query, read_body, send_response
from ._plans_regions import EVENT_TYPES, PLANS, REGIONS, SCOPES, plan_by_slug, region_by_slug
from ._routes import template_regex
from ._seed import new_vm_record
from ._state import State

_log = logging.getLogger(__name__)

LOOPBACK = ("127.0.0.1", "::1", "localhost")
MAX_VMS = 200_000

Handler = Callable[[State, SandboxConfig, dict[str, str], object], tuple[int, object]]


def _dialect_name(name: str, value: object) -> str:
    try:
        return Dialect.parse(value).name
    except ValueError as exc:
        raise ApiFailure(422, f"{name}: {exc}") from None


def _reset(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    """Seed the account again; ``dialect`` switches how it is said (left out: the dialect the
    server started with)."""
    body = v.fields(
        body if body is not None else {},
        {
            "seed": v.integer(-(2**62), 2**62),
            "vms": v.integer(0, MAX_VMS),
            "dialect": _dialect_name,
        },
    )
    config = base.with_changes(
        seed=body.get("seed", base.seed),
        vms=body.get("vms", base.vms),
        dialect=body.get("dialect", base.dialect),
    )
    # a sandbox loaded from a saved state goes back to it unless a fleet is asked for
    _build.reset(state, config, reseed="seed" in body or "vms" in body)
    answer: dict[str, int | str] = {"seed": config.seed, "vms": config.vms}
    if "dialect" in body:
        answer["dialect"] = config.dialect
    return 200, answer


def _dialect(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    return 200, {"name": state.dialect.name, "choices": state.dialect.choices()}


def _truth(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    """The account as the default dialect says it, whatever dialect is active."""
    b = state.backends
    return 200, {
        "vms": [public(vm) for vm in b.vms.vms.values()],
        "wallet": b.wallet.view(),
        "firewalls": list(b.firewalls.firewalls.values()),
        "rules": b.firewalls.all_rules(),
        "networks": [public(n) for n in b.networks.networks.values()],
        "attachments": list(b.networks.attachments.values()),
        "webhooks": [public(w) for w in b.webhooks.webhooks.values()],
        "deliveries": [{**public(d), "webhookId": d["_webhookId"]} for d in b.webhooks.deliveries],
    }


def _get_state(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    """The whole account as a saved state document (``_saved``)."""
    return 200, _saved.export_state(state)


def _put_state(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    """Replace the account with a saved state document; a reset then goes back to it."""
    try:
        _saved.check_document(body)
    except _saved.StateError as exc:
        raise ApiFailure(422, str(exc)) from None
    before = _saved.export_state(state)
    try:
        _saved.import_state(state, body, state.config)  # type: ignore[arg-type]
    except _saved.StateError as exc:
        _saved.import_state(state, before, state.config)
        raise ApiFailure(422, f"{exc}; nothing was changed") from None
    state.start_doc = body  # type: ignore[assignment]
    b = state.backends
    return 200, {
        "now": state.stamp(),
        "vms": len(b.vms.vms),
        "firewalls": len(b.firewalls.firewalls),
        "networks": len(b.networks.networks),
        "webhooks": len(b.webhooks.webhooks),
    }


def _instance(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    """Which server this is (drawn at its start, the same after a reset): a connection file
    records it, so a reader can tell a sandbox started since on the same port (``_connection``)."""
    return 200, {"instance": state.instance}


def _clock(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    return 200, {"now": state.stamp(), "timeScale": state.clock.time_scale}


def _advance(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    def seconds(name: str, value: object) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not (0 <= value <= 10 * 365 * 86400)
        ):
            raise ApiFailure(422, f"{name}: must be a number of seconds from 0 to ten years")
        return float(value)

    body = v.fields(body, {"seconds": seconds}, required=("seconds",))
    state.clock.advance(body["seconds"])
    return 200, {"now": state.stamp()}


def _expiry(name: str, value: object) -> object:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ApiFailure(422, f"{name}: must be an ISO 8601 date-time with a zone, or null")
    try:
        return parse_iso(value)
    except ValueError:
        raise ApiFailure(
            422,
            f"{name}: {value[:40]!r} is not an ISO 8601 date-time with a "
            "zone, e.g. 2026-12-01T00:00:00Z",
        ) from None


def _rate(name: str, value: object) -> object:
    if value is None:
        return None
    return v.integer(1, 10**9)(name, value)


def _scopes(name: str, value: object) -> list[str]:
    scopes = v.string_list(len(SCOPES), 64)(name, value)
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise ApiFailure(422, f"{name}: unknown scope {unknown[0]!r}; known: {', '.join(SCOPES)}")
    return scopes


def _tokens(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    return 200, [public(t) for t in state.backends.tokens.tokens.values()]


def _create_token(
    state: State, base: SandboxConfig, params: dict, body: object
) -> tuple[int, object]:
    body = v.fields(
        body,
        {"name": v.string(200, 1), "scopes": _scopes, "expiresAt": _expiry, "rateLimit": _rate},
        required=("name", "scopes"),
    )
    record, secret = state.backends.tokens.create(
        body["name"], body["scopes"], body.get("expiresAt"), body.get("rateLimit")
    )
    return 201, {**record, "secret": secret}


def _revoke(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    return 200, state.backends.tokens.revoke(params["id"])


def _update_token(
    state: State, base: SandboxConfig, params: dict, body: object
) -> tuple[int, object]:
    body = v.fields(body, {"rateLimit": _rate, "expiresAt": _expiry}, at_least_one=True)
    return 200, state.backends.tokens.update(params["id"], body)


def _delete_token(
    state: State, base: SandboxConfig, params: dict, body: object
) -> tuple[int, object]:
    state.backends.tokens.delete(params["id"])
    return 200, {"id": params["id"]}


def _get_faults(
    state: State, base: SandboxConfig, params: dict, body: object
) -> tuple[int, object]:
    return 200, asdict(state.faults)


def _put_faults(
    state: State, base: SandboxConfig, params: dict, body: object
) -> tuple[int, object]:
    if not isinstance(body, dict):
        raise ApiFailure(400, "request body must be a JSON object")
    return 200, asdict(_faults.set_faults(state, body))


def _settings_view(state: State) -> dict:
    # caBundle and trustedProxies are listed only once set, so a sandbox that never had them
    # answers exactly the three rate-limit settings of the contract.
    view = asdict(state.settings)
    if not view["trustedProxies"]:
        del view["trustedProxies"]  # listed once set, like caBundle
    if state.config.ca_bundle:
        view["caBundle"] = state.config.ca_bundle
    return view


def _get_settings(
    state: State, base: SandboxConfig, params: dict, body: object
) -> tuple[int, object]:
    return 200, _settings_view(state)


def _ca_bundle(name: str, value: object) -> str | None:
    """An absolute path to a PEM file holding at least one certificate, or null to clear."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ApiFailure(422, f"{name}: must be the absolute path of a PEM file, or null")
    if not os.path.isabs(value):
        raise ApiFailure(
            422,
            f"{name}: {value[:200]!r} is not an absolute path; the sandbox process reads it, "
            "so give the full path",
        )
    try:
        # the check the deliveries will make: a file ssl cannot load would only fail later,
        # as a TLS error on every delivery
        ssl.create_default_context().load_verify_locations(cafile=value)
    except FileNotFoundError:
        raise ApiFailure(422, f"{name}: no file at {value[:200]!r}") from None
    except ssl.SSLError:  # before OSError, its base class
        raise ApiFailure(
            422, f"{name}: {value[:200]!r} holds no PEM certificate (expected a CA bundle)"
        ) from None
    except OSError as exc:
        raise ApiFailure(
            422, f"{name}: cannot read {value[:200]!r} ({exc.strerror or type(exc).__name__})"
        ) from None
    return value


def _trust_ca_bundle(state: State, path: str | None) -> None:
    """Make the webhook deliveries of ``state`` trust ``path`` (plus the system store) from the
    next attempt on; ``None`` goes back to the system store alone. A reset returns to the
    ``ca_bundle`` the sandbox was started with."""
    state.config = state.config.with_changes(ca_bundle=path)
    _deliveries.trust_ca_bundle(state, path)


def _trusted_proxies(name: str, value: object) -> list[str]:
    values = v.string_list(64, 64)(name, value)
    try:
        return list(proxy_list(values))
    except ValueError as exc:
        raise ApiFailure(422, f"{name}: {exc}") from None


def _put_settings(
    state: State, base: SandboxConfig, params: dict, body: object
) -> tuple[int, object]:
    def window(name: str, value: object) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not (0 < value <= 86400)
        ):
            raise ApiFailure(422, f"{name}: must be a number of seconds above 0, at most 86400")
        return float(value)

    body = v.fields(
        body,
        {
            "rateWindowSeconds": window,
            "ipRateLimit": v.integer(1, 10**9),
            "defaultRateLimit": v.integer(1, 10**9),
            "caBundle": _ca_bundle,
            "trustedProxies": _trusted_proxies,
        },
    )
    trust_only = set(body) == {"caBundle"}
    if "caBundle" in body:
        _trust_ca_bundle(state, body.pop("caBundle"))
    for name, value in body.items():
        setattr(state.settings, name, value)
    if not trust_only:
        state.rate_buckets.clear()  # a new limit or window starts from a fresh window
    return 200, _settings_view(state)


def _topup(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    def amount(name: str, value: object) -> Decimal:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ApiFailure(422, f"{name}: must be a number or a numeric string")
        try:
            parsed = Decimal(str(value))
        except InvalidOperation:
            raise ApiFailure(422, f"{name}: {str(value)[:40]!r} is not a number") from None
        if not parsed.is_finite() or not Decimal("0.01") <= parsed <= Decimal("1000000000"):
            raise ApiFailure(422, f"{name}: must be from 0.01 to 1000000000")
        return parsed.quantize(Decimal("0.01"))

    body = v.fields(body, {"amount": amount}, required=("amount",))
    return 200, state.backends.wallet.topup(body["amount"])


def _emit(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    def event_type(name: str, value: object) -> str:
        if value not in EVENT_TYPES:
            raise ApiFailure(422, f"{name}: unknown event type; known: {', '.join(EVENT_TYPES)}")
        return value

    def data(name: str, value: object) -> dict:
        if not isinstance(value, dict):
            raise ApiFailure(422, f"{name}: must be a JSON object")
        return value

    body = v.fields(body, {"type": event_type, "data": data}, required=("type",))
    return 201, state.emit(body["type"], body.get("data", {}))


def _events(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    return 200, list(state.events)


def _actions(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    return 200, list(state.backends.vms.actions.values())


def _stats(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    return 200, {**state.stats, "byStatus": dict(state.stats["byStatus"])}


def _create_vm(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    def region(name: str, value: object) -> tuple:
        found = region_by_slug(value) if isinstance(value, str) else None
        if found is None:
            raise ApiFailure(
                422, f"{name}: unknown region; known: {', '.join(r[0] for r in REGIONS)}"
            )
        return found

    def plan(name: str, value: object) -> tuple:
        found = plan_by_slug(value) if isinstance(value, str) else None
        if found is None:
            raise ApiFailure(422, f"{name}: unknown plan; known: {', '.join(p[0] for p in PLANS)}")
        return found

    body = v.fields(
        body if body is not None else {}, {"name": v.string(63, 1), "region": region, "plan": plan}
    )
    count = len(state.backends.vms.vms)
    rng = random.Random(f"{state.seed}:vm:{count}")
    vm = new_vm_record(
        state,
        rng,
        count,
        "provisioning",
        state.now(),
        region=body.get("region"),
        plan=body.get("plan"),
    )
    if "name" in body:
        vm["name"] = body["name"]
        vm["hostname"] = f"{body['name']}.{vm['region']['slug']}.vm.example.net"
    vm["updatedAt"] = vm["createdAt"]
    return 201, public(state.backends.vms.provision(vm))


def _vm_action(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    return 200, public(state.backends.vms.control_action(params["id"], params["action"]))


def _vm(state: State, base: SandboxConfig, params: dict, body: object) -> tuple[int, object]:
    return 200, dict(state.backends.vms.get(params["id"]))


_TABLE: list[tuple[str, str, Handler]] = [
    ("POST", "/reset", _reset),
    ("GET", "/dialect", _dialect),
    ("GET", "/truth", _truth),
    ("GET", "/state", _get_state),
    ("PUT", "/state", _put_state),
    ("GET", "/instance", _instance),
    ("GET", "/clock", _clock),
    ("POST", "/clock/advance", _advance),
    ("GET", "/tokens", _tokens),
    ("POST", "/tokens", _create_token),
    ("POST", "/tokens/{id}/revoke", _revoke),
    ("PATCH", "/tokens/{id}", _update_token),
    ("DELETE", "/tokens/{id}", _delete_token),
    ("GET", "/faults", _get_faults),
    ("PUT", "/faults", _put_faults),
    ("GET", "/settings", _get_settings),
    ("PUT", "/settings", _put_settings),
    ("POST", "/wallet/topup", _topup),
    ("POST", "/events", _emit),
    ("GET", "/events", _events),
    ("GET", "/actions", _actions),
    ("GET", "/stats", _stats),
    ("POST", "/vms", _create_vm),
    ("POST", "/vms/{id}/{action}", _vm_action),
    ("GET", "/vms/{id}", _vm),
]
# at most one delivery timeout (15 s) plus slack is waited for after an advance
ADVANCE_WAIT_SECONDS = 20.0
# a saved state holds the whole account: far past the public API's body limit, loopback only
STATE_BODY_BYTES = 512 * 1024 * 1024
# routes whose body may be left out
_OPTIONAL_BODY = {"/reset", "/vms", "/tokens/{id}/revoke", "/vms/{id}/{action}"}
_COMPILED = [(m, t, template_regex(t), h) for m, t, h in _TABLE]


async def handle_control(
    state: State, base: SandboxConfig, scope: dict, receive, send, headers: dict[str, str]
) -> None:
    method = scope["method"]
    sub = scope["path"][len("/_sandbox") :] or "/"
    extra: dict[str, str] = {}
    try:
        client = scope.get("client")
        if client is not None and client[0] not in LOOPBACK:
            raise ApiFailure(403, "the sandbox control API answers loopback callers only")
        allowed: list[str] = []
        for m, template, regex, handler in _COMPILED:
            found = regex.match(sub)
            if found is None:
                continue
            if m != method:
                allowed.append(m)
                continue
            parse_query(scope.get("query_string", b""), ())
            body = None
            if method in ("POST", "PUT", "PATCH"):
                limit = STATE_BODY_BYTES if template == "/state" else MAX_BODY_BYTES
                raw = await read_body(receive, headers, limit)
                if raw.strip() or template not in _OPTIONAL_BODY:
                    body = parse_json_body(raw, True)
            with state.lock:
                status, data = handler(state, base, found.groupdict(), body)
                encoded = dumps(ok(data))
            if template == "/clock/advance":
                # Deliveries run on courier threads that need the lock; waiting here, outside it
                # and off the event loop, lets HTTP-only callers see every attempt that fell due
                # (the answer, the time reached, is already written and does not change).
                await anyio.to_thread.run_sync(_deliveries.wait_idle, state, ADVANCE_WAIT_SECONDS)
            break
        else:
            if allowed:
                extra["allow"] = ", ".join(allowed)
                raise ApiFailure(
                    405,
                    f"method {method} is not allowed on /_sandbox{sub}; "
                    f"allowed: {', '.join(allowed)}",
                    extra,
                )
            raise ApiFailure(404, "no such control endpoint under /_sandbox/; see the contracts")
    except ApiFailure as exc:
        status, encoded = exc.status, dumps(fail(exc.message))
    except Exception:
        _log.exception("sandbox control %s %s failed", method, sub)
        status, encoded = 500, dumps(fail(f"internal error in the sandbox control {method} {sub}"))
    await send_response(send, status, encoded, {"date": http_date(state.now()), **extra})
