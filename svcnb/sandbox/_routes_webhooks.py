"""Webhook subscriptions: POST, GET, PATCH, and GET /webhooks/{id}/deliveries (the rules live
in :mod:`.backends.webhooks`)."""

from __future__ import annotations

from ._envelopes import ok
from ._routes import Call, Route
from ._speak import Listing
from ._state import State


def create_webhook(state: State, call: Call) -> tuple[int, dict]:
    return 201, ok(state.backends.webhooks.create(call.body))


def list_webhooks(state: State, call: Call) -> tuple[int, Listing]:
    return 200, Listing(state.backends.webhooks.webhooks.records())


def patch_webhook(state: State, call: Call) -> tuple[int, dict]:
    return 200, ok(state.backends.webhooks.patch(call.params["id"], call.body))


def list_deliveries(state: State, call: Call) -> tuple[int, Listing]:
    return 200, Listing(state.backends.webhooks.deliveries_of(call.params["id"]))


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
