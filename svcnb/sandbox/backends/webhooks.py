"""Webhook subscriptions and the record of their deliveries.

HTTPS URLs only (422), at most ``ACTIVE_CAP`` active subscriptions per account (409 when a
create or a re-enable would pass it), the secret only in the creation response. PATCH with
``isActive: true`` re-enables and sets ``consecutiveFailures`` back to 0. Deliveries are made
by the courier (``_deliveries``), which appends every attempt to ``deliveries``.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from .. import _validate as v
from .._catalog import EVENT_TYPES
from .._wire import ApiFailure, public
from ._base import find

if TYPE_CHECKING:
    from .._state import State

ACTIVE_CAP = 10

_CHECKS = {
    "url": v.https_url,
    "events": v.choice_list(EVENT_TYPES),
    "description": v.string(255),
}


class WebhookBackend:
    """``webhooks`` by id; ``deliveries`` in the order attempts were recorded."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.webhooks: dict[str, dict] = {}
        self.deliveries: list[dict] = []

    def get(self, webhook_id: str) -> dict:
        return find(self.webhooks, webhook_id, "webhook subscription")

    def _check_cap(self) -> None:
        active = sum(1 for w in self.webhooks.values() if w["isActive"])
        if active >= ACTIVE_CAP:
            raise ApiFailure(
                409,
                f"webhook cap reached: at most {ACTIVE_CAP} active subscriptions "
                "per account; deactivate one (PATCH isActive false) first",
                kind="cap",
            )

    def create(self, body: object) -> dict:
        """A new subscription; the answer alone carries its ``secret``."""
        body = v.fields(body, _CHECKS, required=("url", "events"))
        self._check_cap()
        state = self.state
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
        self.webhooks[wh_id] = record
        return {**public(record), "secret": secret}

    def patch(self, webhook_id: str, body: object) -> dict:
        record = self.get(webhook_id)
        body = v.fields(body, {"isActive": v.boolean, **_CHECKS}, at_least_one=True)
        if body.get("isActive") is True:
            if not record["isActive"]:
                self._check_cap()
            record["consecutiveFailures"] = 0
        record.update(body)
        self.state.touch(record)
        return public(record)

    def deliveries_of(self, webhook_id: str) -> list[dict]:
        record = self.get(webhook_id)
        return [d for d in self.deliveries if d["_webhookId"] == record["id"]]
