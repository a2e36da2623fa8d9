"""Webhook subscriptions: POST, GET, PATCH, and GET /webhooks/{id}/deliveries.

HTTPS URLs only (422), at most ``ACTIVE_CAP`` active subscriptions per account (409 when a
create or a re-enable would pass it), the secret only in the creation response. PATCH with
``isActive: true`` re-enables and sets ``consecutiveFailures`` back to 0.
"""

from __future__ import annotations

import secrets

from . import _validate as v
from ._catalog import EVENT_TYPES
from ._routes import Call, Route, find
from ._speak import Listing
from ._state import State
from ._wire import ApiFailure, ok, public

ACTIVE_CAP = 10

_CHECKS = {
    "url": v.https_url,
    "events": v.choice_list(EVENT_TYPES),
    "description": v.string(255),
}


def _check_cap(state: State) -> None:
    active = sum(1 for w in state.webhooks.values() if w["isActive"])
    if active >= ACTIVE_CAP:
        raise ApiFailure(
            409,
            f"webhook cap reached: at most {ACTIVE_CAP} active subscriptions "
            "per account; deactivate one (PATCH isActive false) first",
            kind="cap",
        )


def create_webhook(state: State, call: Call) -> tuple[int, dict]:
    body = v.fields(call.body, _CHECKS, required=("url", "events"))
    _check_cap(state)
    wh_id = state.new_id("whk")
    secret = "whsec_" + secrets.token_hex(20)
    record = {
        "id": wh_id,
        "url": body["url"],
        "events": body["events"],
        "description": body.get("description", ""),
        "isActive": True,
        "createdAt": state.stamp(),
        "updatedAt": state.stamp(),
        "consecutiveFailures": 0,
        "_secret": secret,
    }
    state.webhooks[wh_id] = record
    return 201, ok({**public(record), "secret": secret})


def list_webhooks(state: State, call: Call) -> tuple[int, Listing]:
    return 200, Listing(state.webhooks.values())


def patch_webhook(state: State, call: Call) -> tuple[int, dict]:
    record = find(state.webhooks, call.params["id"], "webhook subscription")
    body = v.fields(call.body, {"isActive": v.boolean, **_CHECKS}, at_least_one=True)
    if body.get("isActive") is True:
        if not record["isActive"]:
            _check_cap(state)
        record["consecutiveFailures"] = 0
    record.update(body)
    state.touch(record)
    return 200, ok(public(record))


def list_deliveries(state: State, call: Call) -> tuple[int, Listing]:
    record = find(state.webhooks, call.params["id"], "webhook subscription")
    return 200, Listing([d for d in state.deliveries if d["_webhookId"] == record["id"]])


ROUTES = [
    Route(
        "POST",
        "/webhooks",
        "webhooks:write",
        create_webhook,
        201,
        "Create a webhook subscription (the secret is shown only here)",
        "WebhookCreated",
        body="WebhookCreate",
        failures=(400, 403, 409, 413, 422),
    ),
    Route(
        "GET",
        "/webhooks",
        "webhooks:read",
        list_webhooks,
        200,
        "List webhook subscriptions",
        "WebhookList",
        pageable=True,
        failures=(403,),
    ),
    Route(
        "PATCH",
        "/webhooks/{id}",
        "webhooks:write",
        patch_webhook,
        200,
        "Update a subscription; isActive true re-enables it",
        "Webhook",
        body="WebhookPatch",
        failures=(400, 403, 409, 413, 422),
    ),
    Route(
        "GET",
        "/webhooks/{id}/deliveries",
        "webhooks:read",
        list_deliveries,
        200,
        "Delivery attempts of a subscription",
        "Delivery",
        listing=True,
        failures=(403, 422),
    ),
]
