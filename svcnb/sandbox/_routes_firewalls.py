"""GET /firewalls, GET /firewalls/{id}/rules, PATCH /firewalls/{id}/rules/{ruleId}.

After a 502 (forced upstream-sync failure) the stored rule holds the new values and its
``updatedAt`` moved: the change is saved, only the security-group sync failed. Reading the rule
back shows the new values; sending the same PATCH again re-syncs.
"""

from __future__ import annotations

from . import _validate as v
from ._routes import Call, Route, find
from ._speak import Listing
from ._state import State
from ._wire import ApiFailure, ok

RULE_CHECKS = {
    "position": v.integer(0, 1000),
    "port": v.string(64),
    "sourceIps": v.string_list(50, 64),
    "destIps": v.string_list(50, 64),
    "description": v.string(255),
}


def list_firewalls(state: State, call: Call) -> tuple[int, Listing]:
    return 200, Listing(state.firewalls.values())


def list_rules(state: State, call: Call) -> tuple[int, Listing]:
    fw = find(state.firewalls, call.params["id"], "firewall")
    rules = [r for r in state.rules.values() if r["firewallId"] == fw["id"]]
    rules.sort(key=lambda r: (r["position"], r["id"]))
    return 200, Listing(rules)


def patch_rule(state: State, call: Call) -> tuple[int, dict]:
    fw = find(state.firewalls, call.params["id"], "firewall")
    rule = find(state.rules, call.params["ruleId"], "firewall rule")
    if rule["firewallId"] != fw["id"]:
        raise ApiFailure(404, f"firewall rule {rule['id']!r} not found in firewall {fw['id']!r}")
    changes = v.fields(call.body, RULE_CHECKS, at_least_one=True)
    rule.update(changes)
    state.touch(rule)
    if state.faults.upstreamSyncFail:
        raise ApiFailure(
            502,
            f"upstream sync failed: firewall {fw['id']} could not be re-synced "
            "to the security group; the rule is saved with the new values "
            "but may not be enforced yet; send the PATCH again to retry",
        )
    return 200, ok(dict(rule))


ROUTES = [
    Route(
        "GET",
        "/firewalls",
        "firewalls:read",
        list_firewalls,
        200,
        "List firewalls",
        "Firewall",
        listing=True,
        failures=(403, 422),
    ),
    Route(
        "GET",
        "/firewalls/{id}/rules",
        "firewalls:read",
        list_rules,
        200,
        "List the rules of a firewall",
        "FirewallRule",
        listing=True,
        failures=(403, 422),
    ),
    Route(
        "PATCH",
        "/firewalls/{id}/rules/{ruleId}",
        "firewalls:write",
        patch_rule,
        200,
        "Update a rule and re-sync the security group",
        "FirewallRule",
        body="RulePatch",
        failures=(400, 403, 409, 413, 422, 502),
    ),
]
