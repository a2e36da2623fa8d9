"""Firewalls and their rules (the rule after a 502: docs/contracts.md §1; sending the same PATCH
again re-syncs).
"""

from __future__ import annotations

import copy

from .. import _validate as v
from .._envelopes import ApiFailure
from ._account import Account
from ._base import Table, find

RULE_CHECKS = {
    "position": v.integer(0, 1000),
    "port": v.string(64),
    "sourceIps": v.string_list(50, 64),
    "destIps": v.string_list(50, 64),
    "description": v.string(255),
}


class FirewallBackend:
    """``firewalls`` and ``rules`` by id, and each firewall's rule ids."""

    def __init__(self, state: Account) -> None:
        self.state = state
        self.firewalls = Table()
        self.rules = Table()
        self._rule_ids: dict[str, list[str]] = {}

    def get(self, firewall_id: str) -> dict:
        return find(self.firewalls, firewall_id, "firewall")

    def add(self, firewall: dict) -> dict:
        self.firewalls[firewall["id"]] = firewall
        self._rule_ids.setdefault(firewall["id"], [])
        return firewall

    def add_rule(self, rule: dict) -> dict:
        self.rules[rule["id"]] = rule
        self._rule_ids.setdefault(rule["firewallId"], []).append(rule["id"])
        return rule

    def rules_of(self, firewall_id: str) -> list[dict]:
        """The rules of a firewall in the order they apply (position, then id)."""
        fw = self.get(firewall_id)
        rules = [self.rules[r] for r in self._rule_ids.get(fw["id"], ())]
        rules.sort(key=lambda r: (r["position"], r["id"]))
        return rules

    def all_rules(self) -> list[dict]:
        """Every rule, firewall by firewall, each firewall's in the order they apply."""
        return [r for fw in self.firewalls for r in self.rules_of(fw)]

    def patch_rule(self, firewall_id: str, rule_id: str, body: object) -> dict:
        fw = self.get(firewall_id)
        rule = find(self.rules, rule_id, "firewall rule")
        if rule["firewallId"] != fw["id"]:
            raise ApiFailure(
                404, f"firewall rule {rule['id']!r} not found in firewall {fw['id']!r}"
            )
        changes = v.fields(body, RULE_CHECKS, at_least_one=True)
        rule.update(changes)
        self.state.touch(rule)
        if self.state.faults.upstreamSyncFail:
            raise ApiFailure(
                502,
                f"upstream sync failed: firewall {fw['id']} could not be re-synced "
                "to the security group; the rule is saved with the new values "
                "but may not be enforced yet; send the PATCH again to retry",
            )
        return dict(rule)

    # -- saved state (``_saved``) --
    def export(self) -> dict:
        """Firewalls and rules in the order they were added (rules in table order, not by
        position: restoring them in that order rebuilds each firewall's list the same)."""
        return {
            "firewalls": copy.deepcopy(list(self.firewalls.values())),
            "rules": copy.deepcopy(list(self.rules.values())),
        }

    def restore(self, saved: dict) -> None:
        for firewall in saved.get("firewalls", []):
            self.add(copy.deepcopy(firewall))
        for rule in saved.get("rules", []):
            self.get(rule["firewallId"])  # a rule of no firewall is a broken file: say which
            self.add_rule(copy.deepcopy(rule))
