"""Webhook subscriptions and the record of their deliveries (the rules: the README's table of what
the sandbox does). The courier (``_deliveries``) hands every attempt to ``record_attempt``, which
keeps the record and the failure count that turns a subscription off.
"""

from __future__ import annotations

import copy
import logging
import secrets

from .. import _validate as v
from .._envelopes import ApiFailure, public
from .._plans_regions import EVENT_TYPES
from ._account import Account
from ._base import Table, find

ACTIVE_CAP = 10
AUTO_DISABLE_AFTER = 50

_log = logging.getLogger(__name__)

_CHECKS = {
    "url": v.https_url,
    "events": v.choice_list(EVENT_TYPES),
    "description": v.string(255),
}


def new_secret() -> str:
    return "whsec_" + secrets.token_hex(20)


class WebhookBackend:
    """``webhooks`` by id; ``deliveries`` in the order attempts were recorded, and each
    subscription's own in that order."""

    def __init__(self, state: Account) -> None:
        self.state = state
        self.webhooks = Table()
        self.deliveries: list[dict] = []
        self._deliveries_of: dict[str, list[dict]] = {}

    def get(self, webhook_id: str) -> dict:
        return find(self.webhooks, webhook_id, "webhook subscription")

    def add(self, record: dict) -> dict:
        self.webhooks[record["id"]] = record
        return record

    def clear(self) -> None:
        """No subscriptions and no deliveries (for accounts built by hand)."""
        self.webhooks.clear()
        self.deliveries.clear()
        self._deliveries_of.clear()

    def add_delivery(self, record: dict) -> dict:
        """Keep one attempt's record (``_webhookId`` names its subscription)."""
        self.deliveries.append(record)
        self._deliveries_of.setdefault(record["_webhookId"], []).append(record)
        return record

    def record_attempt(self, record: dict) -> None:
        """Keep the record of an attempt the courier made and count it against its
        subscription (auto-disable: the README's sandbox table)."""
        self.add_delivery(record)
        sub = self.webhooks.get(record["_webhookId"])
        if sub is None:
            return
        if record["success"]:
            sub["consecutiveFailures"] = 0
            return
        count = sub.get("consecutiveFailures")
        count = count if isinstance(count, int) and count < AUTO_DISABLE_AFTER else 0
        sub["consecutiveFailures"] = count + 1
        if count + 1 >= AUTO_DISABLE_AFTER and sub.get("isActive"):
            sub["isActive"] = False
            # the attempt's sandbox time, never earlier than the last change
            sub["updatedAt"] = max(str(sub.get("updatedAt") or ""), record["lastAttemptAt"])
            _log.info(
                "%s webhook %s disabled after %d consecutive failed delivery attempts; "
                "PATCH /webhooks/%s with isActive true to enable it again",
                record["lastAttemptAt"],
                sub["id"],
                AUTO_DISABLE_AFTER,
                sub["id"],
            )

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
        secret = new_secret()
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
        self.add(record)
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
        return self._deliveries_of.get(record["id"], [])

    # -- saved state (``_saved``) --
    def export(self) -> dict:
        """Subscriptions without their secrets, and every delivery record in order."""
        webhooks = [
            copy.deepcopy({k: v for k, v in w.items() if k != "_secret"})
            for w in self.webhooks.values()
        ]
        return {"webhooks": webhooks, "deliveries": copy.deepcopy(self.deliveries)}

    def restore(self, saved: dict) -> None:
        """Add what :meth:`export` gave; each subscription gets a fresh secret (a saved state
        never holds one)."""
        for record in saved.get("webhooks", []):
            self.add({**copy.deepcopy(record), "_secret": new_secret()})
        for record in saved.get("deliveries", []):
            self.add_delivery(copy.deepcopy(record))
