"""GET /firewalls, GET /firewalls/{id}/rules, PATCH /firewalls/{id}/rules/{ruleId} (the rules
live in :mod:`.backends.firewalls`)."""

from __future__ import annotations

from ._envelopes import ok
from ._routes import Call, Route
from ._speak import Listing
from ._state import State


def list_firewalls(state: State, call: Call) -> tuple[int, Listing]:
    return 200, Listing(state.backends.firewalls.firewalls.records())


def list_rules(state: State, call: Call) -> tuple[int, Listing]:
    return 200, Listing(state.backends.firewalls.rules_of(call.params["id"]))


def patch_rule(state: State, call: Call) -> tuple[int, dict]:
    rule = state.backends.firewalls.patch_rule(call.params["id"], call.params["ruleId"], call.body)
    return 200, ok(rule)


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
