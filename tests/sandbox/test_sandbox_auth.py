"""Authentication and scopes: the matrix of every endpoint against every token state."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sandbox_support import account_view, failure


def _endpoints(api) -> list[tuple[str, str, dict | None, str, int]]:
    """(method, path, body, scope, success status) with real ids of the seeded account."""
    vms = api.data("/vms", params={"perPage": 100})
    running = next(vm for vm in vms if vm["status"] == "running")
    fw = api.data("/firewalls")[0]
    rule = api.data(f"/firewalls/{fw['id']}/rules")[0]
    nets = api.data("/networks")
    att = next(a for n in nets for a in api.data(f"/networks/{n['id']}/attachments"))
    net = next(n for n in nets if n["id"] == att["networkId"])
    free_vm = next(
        vm
        for vm in vms
        if vm["region"]["slug"] == net["region"]["slug"]
        and vm["status"] != "terminated"
        and vm["id"] != att["vmId"]
        and not any(p["id"] == net["id"] for p in api.data(f"/vms/{vm['id']}")["privateNetworks"])
    )
    webhook = api.data("/webhooks")[0]
    return [
        ("GET", "/vms", None, "vms:read", 200),
        ("GET", f"/vms/{running['id']}", None, "vms:read", 200),
        ("POST", f"/vms/{running['id']}/stop", None, "vms:write", 202),
        ("GET", "/firewalls", None, "firewalls:read", 200),
        ("GET", f"/firewalls/{fw['id']}/rules", None, "firewalls:read", 200),
        (
            "PATCH",
            f"/firewalls/{fw['id']}/rules/{rule['id']}",
            {"description": "x"},
            "firewalls:write",
            200,
        ),
        ("GET", "/networks", None, "networks:read", 200),
        ("GET", f"/networks/{net['id']}/attachments", None, "networks:read", 200),
        (
            "POST",
            f"/networks/{net['id']}/attachments",
            {"vmId": free_vm["id"]},
            "networks:write",
            201,
        ),
        ("DELETE", f"/networks/{net['id']}/attachments/{att['vmId']}", None, "networks:write", 200),
        ("GET", "/wallet", None, "billing:read", 200),
        (
            "POST",
            "/webhooks",
            {"url": "https://example.com/h", "events": ["vm.stopped"]},
            "webhooks:write",
            201,
        ),
        ("GET", "/webhooks", None, "webhooks:read", 200),
        ("PATCH", f"/webhooks/{webhook['id']}", {"description": "y"}, "webhooks:write", 200),
        ("GET", f"/webhooks/{webhook['id']}/deliveries", None, "webhooks:read", 200),
    ]


def _token_in_state(sandbox, state: str) -> str | None:
    control = sandbox.control
    if state == "missing":
        return None
    if state == "unknown":
        return "svc_" + "x" * 40
    token = control.create_token(
        f"{state} token",
        [
            "vms:read",
            "vms:write",
            "firewalls:read",
            "firewalls:write",
            "networks:read",
            "networks:write",
            "billing:read",
            "webhooks:read",
            "webhooks:write",
        ],
    )
    if state == "deleted":
        control.delete_token(token["id"])
    elif state == "revoked":
        control.revoke_token(token["id"])
    elif state == "expired":
        control.update_token(
            token["id"],
            expiresAt=(control.now() + timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        control.advance(60)
    return token["secret"]


@pytest.mark.parametrize("state", ["missing", "unknown", "deleted", "expired", "revoked"])
def test_every_endpoint_answers_401_for_a_token_that_is(api, sandbox, state):
    endpoints = _endpoints(api)
    token = _token_in_state(sandbox, state)
    before = account_view(api)
    for method, path, body, _scope, _ok in endpoints:
        response = api.request(method, path, token=token, json=body)
        error = failure(response, 401)
        if token is not None:
            assert token not in error and token not in response.text
    # nothing was changed by any of the refused writes
    assert account_view(api) == before


def test_every_endpoint_answers_403_naming_the_scope_it_needs(api, sandbox):
    for method, path, body, scope, _ok in _endpoints(api):
        others = [
            s
            for s in [
                "vms:read",
                "vms:write",
                "firewalls:read",
                "firewalls:write",
                "networks:read",
                "networks:write",
                "billing:read",
                "webhooks:read",
                "webhooks:write",
            ]
            if s != scope
        ]
        token = sandbox.control.create_token("all but one", others)["secret"]
        error = failure(api.request(method, path, token=token, json=body), 403)
        assert repr(scope) in error, (method, path, error)


def test_every_endpoint_works_with_exactly_its_own_scope(api, sandbox):
    for method, path, body, scope, success in _endpoints(api):
        token = sandbox.control.create_token(f"only {scope}", [scope])["secret"]
        response = api.request(method, path, token=token, json=body)
        assert response.status_code == success, (method, path, response.text)
        assert response.json()["success"] is True


def test_missing_token_on_unknown_route_is_401_not_404(api):
    failure(api.get("/no/such/thing", token=None), 401)


def test_token_valid_until_its_expiry_then_401(api, sandbox):
    control = sandbox.control
    expiry = (control.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    token = control.create_token("short", ["vms:read"], expires_at=expiry)
    assert token["expiresAt"] == expiry and "secret" in token
    control.advance(3599)
    assert api.get("/vms", token=token["secret"]).status_code == 200
    control.advance(1)
    assert "expired" in failure(api.get("/vms", token=token["secret"]), 401)


def test_token_without_expiry_stays_valid_until_revoked(api, sandbox):
    token = sandbox.control.create_token("forever", ["vms:read"])
    sandbox.control.advance(365 * 86400)
    assert api.get("/vms", token=token["secret"]).status_code == 200
    sandbox.control.revoke_token(token["id"])
    assert "revoked" in failure(api.get("/vms", token=token["secret"]), 401)


def test_token_secret_is_shown_only_at_creation(sandbox):
    token = sandbox.control.create_token("once", ["vms:read"])
    assert token["secret"].startswith("svc_")
    listed = sandbox.control.tokens()
    assert all("secret" not in t for t in listed)
    assert token["secret"] not in repr(listed)
    assert token["secret"] not in repr(sandbox) and sandbox.tokens["admin"] not in repr(sandbox)


def test_read_token_cannot_write(api):
    vm = next(v for v in api.data("/vms", params={"perPage": 100}) if v["status"] == "running")
    assert "'vms:write'" in failure(api.post(f"/vms/{vm['id']}/stop", token="read"), 403)
    assert api.data(f"/vms/{vm['id']}")["status"] == "running"


def test_unknown_scope_is_refused_at_creation(sandbox):
    with pytest.raises(RuntimeError, match="scopes"):
        sandbox.control.create_token("bad", ["vms:admin"])
