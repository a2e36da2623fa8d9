"""The OpenAPI 3.1 document of the public API (served at ``/openapi.json``), built from the
route table so it cannot drift from what is served. Every operation lists its success envelope
and every failure status it can answer, each with the failure envelope and the rate-limit
headers."""

from __future__ import annotations

from ._config import MAX_BODY_BYTES
from ._plans_regions import EVENT_TYPES
from ._public import PREFIXES, ROUTES, WRITE_METHODS
from ._routes import PAGE_MAX
from .backends.webhooks import ACTIVE_CAP

_STR = {"type": "string"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_TIME = {"type": "string", "format": "date-time"}
_ANY: dict = {}  # priceMonthly, balance: number, numeric string or {amount, currency}


def _obj(props: dict, required: list[str] | None = None, closed: bool = True) -> dict:
    schema: dict = {
        "type": "object",
        "properties": props,
        "required": list(props) if required is None else required,
    }
    if closed:
        schema["additionalProperties"] = False
    return schema


def _nullable(schema: dict) -> dict:
    return {"anyOf": [schema, {"type": "null"}]}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


_NAMED_REF = _obj({"id": _STR, "name": _STR})
_VM_BASE = {
    "id": _STR,
    "name": _STR,
    "hostname": _STR,
    "status": _STR,
    "vcpu": _INT,
    "ram": _INT,
    "disk": _INT,
    "bandwidth": _INT,
    "networkSpeed": _INT,
    "network10gEnabled": _BOOL,
    "dailyBackupEnabled": _BOOL,
    "isProtected": _BOOL,
    "ipAddress": _nullable(_STR),
    "region": _nullable(_obj({"slug": _STR, "name": _STR})),
    "plan": _nullable(_obj({"slug": _STR, "name": _STR, "priceMonthly": _ANY}, ["slug", "name"])),
    "osTemplate": _nullable(_obj({"slug": _STR, "name": _STR, "version": _nullable(_STR)})),
    "billing": _nullable(
        _obj(
            {"priceMonthly": _ANY, "nextRenewalAt": _nullable(_TIME), "status": _STR},
            ["nextRenewalAt", "status"],
        )
    ),
    "createdAt": _TIME,
    "bandwidthUsedBytes": {"type": "number"},
    "bandwidthPackBytes": _STR,
}
_IPS = {"type": "array", "maxItems": 50, "items": {"type": "string", "maxLength": 64}}
_RULE_PATCH = {
    "position": {"type": "integer", "minimum": 0, "maximum": 1000},
    "port": {"type": "string", "maxLength": 64},
    "sourceIps": _IPS,
    "destIps": _IPS,
    "description": {"type": "string", "maxLength": 255},
}
_EVENTS = {"type": "array", "minItems": 1, "items": {"enum": EVENT_TYPES}}
_WEBHOOK = {
    "id": _STR,
    "url": _STR,
    "events": {"type": "array", "items": _STR},
    "description": _STR,
    "isActive": _BOOL,
    "createdAt": _TIME,
    "updatedAt": _TIME,
    "consecutiveFailures": _INT,
}
_ATTACHMENT = {
    "id": _STR,
    "vmId": _STR,
    "networkId": _STR,
    "privateIp": _STR,
    "netInterface": _STR,
    "attachedAt": _TIME,
}
_BRIEF = _obj({"id": _STR, "name": _STR, "hostname": _STR, "status": _STR})

SCHEMAS: dict[str, dict] = {
    "Failure": _obj({"success": {"const": False}, "error": _STR}),
    "Meta": _obj({"page": _INT, "perPage": _INT, "total": _INT, "totalPages": _INT}),
    "VMSummary": _obj({**_VM_BASE, "updatedAt": _TIME}),
    "VM": _obj(
        {
            **_VM_BASE,
            "sshKeys": {
                "type": "array",
                "items": _obj({"id": _STR, "name": _STR, "fingerprint": _STR}),
            },
            "firewalls": {"type": "array", "items": _NAMED_REF},
            "privateNetworks": {"type": "array", "items": _NAMED_REF},
            "updatedAt": _TIME,
        }
    ),
    "ActionRef": _obj({"actionId": _STR}),
    "Firewall": _obj(
        {"id": _STR, "name": _STR, "description": _STR, "createdAt": _TIME, "updatedAt": _TIME}
    ),
    "FirewallRule": _obj(
        {
            "id": _STR,
            "firewallId": _STR,
            "position": _INT,
            "direction": {"enum": ["IN", "OUT"]},
            "action": {"enum": ["ACCEPT", "DROP", "REJECT"]},
            "protocol": {"enum": ["TCP", "UDP", "ICMP", "ESP", "GRE", "ANY"]},
            "port": _STR,
            "sourceIps": {"type": "array", "items": _STR},
            "destIps": {"type": "array", "items": _STR},
            "description": _STR,
            "createdAt": _TIME,
            "updatedAt": _TIME,
        }
    ),
    "RulePatch": {**_obj(_RULE_PATCH, []), "minProperties": 1},
    "Network": _obj(
        {
            "id": _STR,
            "name": _STR,
            "region": _obj({"slug": _STR, "name": _STR}),
            "ipRange": _STR,
            "createdAt": _TIME,
            "updatedAt": _TIME,
        }
    ),
    "Attachment": _obj(_ATTACHMENT),
    "AttachmentCreated": _obj({**_ATTACHMENT, "vm": _BRIEF}),
    "AttachmentCreate": _obj(
        {
            "vmId": {"type": "string", "minLength": 1, "maxLength": 200},
            "privateIp": {"type": "string", "format": "ipv4"},
        },
        ["vmId"],
    ),
    "Detached": _obj({"vmId": _STR, "networkId": _STR}),
    "Wallet": _obj({"id": _STR, "createdAt": _TIME, "updatedAt": _TIME, "balance": _ANY}),
    "Webhook": _obj(_WEBHOOK),
    "WebhookList": {"type": "array", "items": _ref("Webhook")},
    "WebhookCreated": _obj({**_WEBHOOK, "secret": _STR}),
    "WebhookCreate": _obj(
        {
            "url": {"type": "string", "pattern": "^https://[^/\\s]+"},
            "events": _EVENTS,
            "description": {"type": "string", "maxLength": 255},
        },
        ["url", "events"],
    ),
    "WebhookPatch": {
        **_obj(
            {
                "isActive": _BOOL,
                "url": {"type": "string", "pattern": "^https://[^/\\s]+"},
                "events": _EVENTS,
                "description": {"type": "string", "maxLength": 255},
            },
            [],
        ),
        "minProperties": 1,
    },
    "Delivery": _obj(
        {
            "id": _STR,
            "eventId": _STR,
            "event": _STR,
            "url": _STR,
            "statusCode": _nullable(_INT),
            "success": _BOOL,
            "attempts": _INT,
            "createdAt": _TIME,
            "lastAttemptAt": _TIME,
            "error": _nullable(_STR),
        }
    ),
}

_FAILURE_TEXT = {
    400: "malformed JSON body",
    401: "token missing, unknown, deleted, expired or revoked",
    403: "the token lacks the scope the endpoint needs (the error names it)",
    404: "the addressed resource (or path) does not exist",
    405: "the path exists but not with this method",
    409: "state conflict (or the Idempotency-Key is still in flight)",
    413: f"request body over {MAX_BODY_BYTES} bytes",
    422: "validation failed; the error starts with the field",
    429: "rate limit exceeded; the error names the bucket and the seconds to wait",
    500: "internal error (only when the sandbox injects one)",
    502: "the upstream security-group sync failed; the rule holds the new values",
}
_RATE_HEADERS = {
    name: {
        "description": text,
        "required": True,
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    }
    for name, text in [
        ("X-RateLimit-Limit", "maximum requests in the current window"),
        ("X-RateLimit-Remaining", "requests left in the current window"),
        ("X-RateLimit-Reset", "seconds until the window resets"),
    ]
}


def _envelope(route_data: str, listing: bool) -> dict:
    data = _ref(route_data)
    if listing:
        return _obj(
            {
                "success": {"const": True},
                "data": {"type": "array", "items": data},
                "meta": _ref("Meta"),
            }
        )
    return _obj({"success": {"const": True}, "data": data})


def _response(description: str, schema: dict, retry_after: bool = False) -> dict:
    headers = dict(_RATE_HEADERS)
    if retry_after:
        headers["Retry-After"] = {
            "description": "seconds to wait",
            "required": True,
            "schema": {"type": "string", "pattern": "^[0-9]+$"},
        }
    return {
        "description": description,
        "headers": headers,
        "content": {"application/json": {"schema": schema}},
    }


def _operation(route) -> dict:
    params = [
        {"name": n, "in": "path", "required": True, "schema": _STR} for n in route.regex.groupindex
    ]
    if route.listing:
        params += [
            {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1}},
            {
                "name": "perPage",
                "in": "query",
                "schema": {"type": "integer", "minimum": 1, "maximum": PAGE_MAX},
            },
        ]
    if route.method in WRITE_METHODS:
        params.append(
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": False,
                "description": "kept 24 h per token; a replay answers the stored "
                "response with Idempotent-Replayed: true",
                "schema": {"type": "string", "minLength": 1, "maxLength": 255},
            }
        )
    statuses = {401, 404, 405, 429, 500, *route.failures}
    if route.method in WRITE_METHODS:
        statuses |= {400, 409, 413, 422}
    if route.listing or params:
        statuses.add(422)
    responses = {str(route.success): _response("success", _envelope(route.data, route.listing))}
    for status in sorted(statuses):
        responses[str(status)] = _response(
            _FAILURE_TEXT[status], _ref("Failure"), retry_after=status == 429
        )
    operation = {
        "operationId": (
            route.method.lower()
            + route.template.replace("/", "_").replace("{", "").replace("}", "")
        ),
        "summary": route.summary,
        "security": [{"apiKey": []}],
        "parameters": params,
        "responses": responses,
        "x-scope": route.scope,
    }
    if route.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _ref(route.body)}},
        }
    return operation


def openapi_document() -> dict:
    """The whole document (paths under the canonical ``/api/public/v1`` prefix)."""
    paths: dict[str, dict] = {}
    for route in ROUTES:
        path = PREFIXES[1] + route.template
        paths.setdefault(path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "VM hosting public API (svcnb sandbox)",
            "version": "1.0.0",
            "description": (
                "Served by the svcnb sandbox. Every path is also served under "
                f"{PREFIXES[0]}. Rate limits: 600 requests per minute per token, 100 per minute "
                f"per IP without a valid token; at most {ACTIVE_CAP} active webhook "
                "subscriptions. Scopes per operation are in x-scope. This document describes "
                "the default dialect; a sandbox started in another dialect says the same "
                "account differently (paging, words, money, times, statuses), and "
                "GET /_sandbox/dialect tells the active one."
            ),
        },
        "components": {
            "securitySchemes": {"apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"}},
            "schemas": SCHEMAS,
        },
        "paths": paths,
    }
