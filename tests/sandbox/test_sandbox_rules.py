"""PATCH /firewalls/{id}/rules/{ruleId}: every bound at the bound and one past, the accepted
fields, and the 502 when the upstream sync fails."""

from __future__ import annotations

import pytest
from sandbox_support import failure


@pytest.fixture
def rule(api) -> dict:
    fw = api.data("/firewalls")[0]
    return api.data(f"/firewalls/{fw['id']}/rules")[0]


def _path(rule: dict) -> str:
    return f"/firewalls/{rule['firewallId']}/rules/{rule['id']}"


BOUNDS = [
    # (field, value at the bound, value one past it, text the error must hold)
    ("position", 0, -1, "position"),
    ("position", 1000, 1001, "position"),
    ("port", "1" * 64, "1" * 65, "port"),
    ("sourceIps", ["10.0.0.1"] * 50, ["10.0.0.1"] * 51, "sourceIps"),
    ("sourceIps", ["a" * 64], ["a" * 65], "sourceIps[0]"),
    ("destIps", ["10.0.0.1"] * 50, ["10.0.0.1"] * 51, "destIps"),
    ("destIps", ["b" * 64], ["b" * 65], "destIps[0]"),
    ("description", "d" * 255, "d" * 256, "description"),
]


@pytest.mark.parametrize(
    ("field", "at_bound", "past", "names"),
    BOUNDS,
    ids=[f"{b[0]}-{i}" for i, b in enumerate(BOUNDS)],
)
def test_rule_bound_is_accepted_at_the_bound_and_refused_one_past(
    api, rule, field, at_bound, past, names
):
    response = api.patch(_path(rule), json={field: past})
    error = failure(response, 422)
    assert error.startswith(names), error
    rules = api.data(f"/firewalls/{rule['firewallId']}/rules")
    assert next(r for r in rules if r["id"] == rule["id"]) == rule
    response = api.patch(_path(rule), json={field: at_bound})
    assert response.status_code == 200, response.text
    assert response.json()["data"][field] == at_bound


def test_refused_patch_leaves_the_rule_unchanged(api, rule):
    failure(api.patch(_path(rule), json={"port": "80", "position": 1001}), 422)
    rules = api.data(f"/firewalls/{rule['firewallId']}/rules")
    assert next(r for r in rules if r["id"] == rule["id"]) == rule


def test_patch_updates_fields_and_updated_at(api, rule):
    response = api.patch(
        _path(rule),
        json={
            "port": "8443",
            "sourceIps": ["192.0.2.0/24"],
            "destIps": [],
            "description": "tightened",
            "position": 5,
        },
    )
    updated = response.json()["data"]
    assert response.status_code == 200
    assert list(updated) == [
        "id",
        "firewallId",
        "position",
        "direction",
        "action",
        "protocol",
        "port",
        "sourceIps",
        "destIps",
        "description",
        "createdAt",
        "updatedAt",
    ]
    assert (updated["port"], updated["sourceIps"], updated["position"]) == (
        "8443",
        ["192.0.2.0/24"],
        5,
    )
    assert updated["updatedAt"] > rule["updatedAt"]
    assert updated["direction"] == rule["direction"] and updated["createdAt"] == rule["createdAt"]


@pytest.mark.parametrize("field", ["direction", "action", "protocol", "id", "firewallId"])
def test_fields_outside_the_spec_body_are_refused(api, rule, field):
    assert failure(api.patch(_path(rule), json={field: "IN"}), 422).startswith(field)


def test_upstream_sync_failure_is_502_and_the_rule_keeps_the_new_values(api, sandbox, rule):
    sandbox.control.set_faults(upstreamSyncFail=True)
    error = failure(api.patch(_path(rule), json={"description": "after 502"}), 502)
    assert "upstream sync failed" in error
    rules = api.data(f"/firewalls/{rule['firewallId']}/rules")
    assert next(r for r in rules if r["id"] == rule["id"])["description"] == "after 502"
    sandbox.control.set_faults()
    assert api.patch(_path(rule), json={"description": "after 502"}).status_code == 200


def test_rule_of_another_firewall_or_unknown_ids_is_404(api, rule):
    other = next(fw for fw in api.data("/firewalls") if fw["id"] != rule["firewallId"])
    failure(api.patch(f"/firewalls/{other['id']}/rules/{rule['id']}", json={"port": "1"}), 404)
    failure(api.patch(f"/firewalls/fw_missing/rules/{rule['id']}", json={"port": "1"}), 404)
    failure(api.patch(f"/firewalls/{rule['firewallId']}/rules/rule_x", json={"port": "1"}), 404)
    failure(api.get("/firewalls/fw_missing/rules"), 404)
