"""The control API (contracts section 2): reset, clock, tokens, faults, settings, wallet,
events, VMs, stats; and the faults it injects, seeded."""

from __future__ import annotations

import time
from decimal import Decimal

import httpx
import pytest
from sandbox_support import failure


def _running(api) -> dict:
    return next(v for v in api.data("/vms", params={"perPage": 100}) if v["status"] == "running")


def test_clock_starts_at_the_epoch_frozen_and_moves_only_by_advance(sandbox):
    response = httpx.get(sandbox.control_url + "/clock").json()["data"]
    assert response == {"now": "2026-11-01T00:00:00Z", "timeScale": 0.0}
    assert sandbox.control.advance(90).isoformat() == "2026-11-01T00:01:30+00:00"
    assert sandbox.control.now().isoformat() == "2026-11-01T00:01:30+00:00"


def test_advance_refuses_bad_values(sandbox):
    for body in ({"seconds": -1}, {"seconds": "5"}, {}, {"seconds": 5, "x": 1}):
        failure(httpx.post(sandbox.control_url + "/clock/advance", json=body), 422)


def test_scaled_clock_runs_faster_than_real_time(make_sandbox):
    sb = make_sandbox(vms=2, time_scale=600.0)
    first = sb.control.now()
    time.sleep(0.3)
    moved = (sb.control.now() - first).total_seconds()
    assert moved >= 60  # 0.3 s of real time is at least 60 s of sandbox time at 600x


def test_reset_restores_the_seeded_account_and_default_tokens(api, sandbox):
    vm = _running(api)
    api.post(f"/vms/{vm['id']}/stop")
    made = sandbox.control.create_token("temp", ["vms:read"])
    admin_id = next(t["id"] for t in sandbox.control.tokens() if t["name"] == "admin")
    sandbox.control.revoke_token(admin_id)
    sandbox.control.set_faults(errorRate=0.5)
    sandbox.control.settings(defaultRateLimit=7)
    assert sandbox.control.reset(seed=7, vms=40) == {"seed": 7, "vms": 40}
    assert api.data(f"/vms/{vm['id']}")["status"] == "running"
    assert api.get("/vms", token=made["secret"]).status_code == 401
    assert sandbox.control.faults()["errorRate"] == 0
    assert sandbox.control.settings() == {
        "rateWindowSeconds": 60.0,
        "ipRateLimit": 100,
        "defaultRateLimit": 600,
    }
    assert sandbox.control.stats()["requests"] == 2
    assert sorted(t["name"] for t in sandbox.control.tokens()) == ["admin", "none", "read"]


def test_reset_to_another_size_and_seed(api, sandbox):
    sandbox.control.reset(seed=3, vms=12)
    assert api.get("/vms").json()["meta"]["total"] == 12
    failure(httpx.post(sandbox.control_url + "/reset", json={"vms": -1}), 422)


def test_delete_token_makes_it_unknown(api, sandbox):
    token = sandbox.control.create_token("gone", ["vms:read"])
    assert sandbox.control.delete_token(token["id"]) == {"id": token["id"]}
    assert token["id"] not in {t["id"] for t in sandbox.control.tokens()}
    failure(api.get("/vms", token=token["secret"]), 401)
    failure(httpx.delete(f"{sandbox.control_url}/tokens/{token['id']}"), 404)


def test_topup_adds_to_the_balance_and_emits_payment_received(api, sandbox):
    def amount(balance: object) -> Decimal:
        return Decimal(str(balance["amount"] if isinstance(balance, dict) else balance))

    before = amount(api.data("/wallet")["balance"])
    sandbox.control.topup("25.50")
    after = api.data("/wallet")
    event = next(
        e for e in reversed(sandbox.control.events()) if e["type"] == "billing.payment_received"
    )
    assert event["data"]["amount"] == "25.50"
    assert Decimal(event["data"]["balance"]) == before + Decimal("25.50")
    # listeners (the life engine) may charge VMs it resumes, never more than was there
    assert amount(after["balance"]) <= before + Decimal("25.50")
    for bad in (0, -5, "abc", True, None):
        failure(httpx.post(sandbox.control_url + "/wallet/topup", json={"amount": bad}), 422)


def test_emit_accepts_every_spec_event_type_only(sandbox):
    event = sandbox.control.emit("ticket.reply", {"ticketId": "t-1"})
    assert list(event) == ["id", "type", "createdAt", "data"]
    assert event == sandbox.control.events()[-1]
    failure(httpx.post(sandbox.control_url + "/events", json={"type": "vm.exploded"}), 422)


def test_created_vm_provisions_and_emits_vm_created(api, sandbox):
    vm = sandbox.control.create_vm(name="new-one", region="eu-west-1", plan="s-1vcpu-1gb")
    assert vm["status"] == "provisioning" and vm["region"]["slug"] == "eu-west-1"
    assert api.data(f"/vms/{vm['id']}")["status"] == "provisioning"
    sandbox.control.advance(60)
    assert api.data(f"/vms/{vm['id']}")["status"] == "running"
    assert any(
        e["type"] == "vm.created" and e["data"]["vm"]["id"] == vm["id"]
        for e in sandbox.control.events()
    )
    failure(httpx.post(sandbox.control_url + "/vms", json={"region": "mars-1"}), 422)


@pytest.mark.parametrize(
    ("action", "status", "event"),
    [
        ("start", "running", "vm.started"),
        ("restart", "running", "vm.restarted"),
        ("suspend", "suspended", "vm.suspended"),
        ("terminate", "terminated", "vm.terminated"),
    ],
)
def test_vm_actions_change_status_and_emit(api, sandbox, action, status, event):
    vm = _running(api)
    assert sandbox.control.vm_action(vm["id"], action)["status"] == status
    assert api.data(f"/vms/{vm['id']}")["status"] == status
    last = sandbox.control.events()[-1]
    assert last["type"] == event and last["data"]["vm"]["id"] == vm["id"]


def test_touch_bumps_updated_at_and_name(api, sandbox):
    vm = api.data("/vms")[0]
    sandbox.control.vm_action(vm["id"], "touch")
    after = api.data(f"/vms/{vm['id']}")
    assert after["updatedAt"] > vm["updatedAt"] and after["name"] != vm["name"]
    sandbox.control.vm_action(vm["id"], "touch")
    assert api.data(f"/vms/{vm['id']}")["updatedAt"] > after["updatedAt"]


def test_internal_vm_record_is_available_to_control_only(api, sandbox):
    vm = api.data("/vms")[0]
    internal = sandbox.control.vm(vm["id"])
    assert "_price" in internal
    assert not any(k.startswith("_") for k in api.data(f"/vms/{vm['id']}"))


def test_stats_count_public_requests_by_status(api, sandbox):
    api.get("/vms")
    api.get("/vms", token=None)
    api.get("/vms/none")
    assert sandbox.control.stats() == {"requests": 3, "byStatus": {"200": 1, "401": 1, "404": 1}}


def test_error_rate_fault_is_seeded_per_route_and_changes_nothing(api, sandbox):
    def pattern() -> list[int]:
        sandbox.control.set_faults(errorRate=0.5, errorRoutes=["GET /vms"], seed=42)
        return [api.get("/vms").status_code for _ in range(20)]

    first = pattern()
    assert set(first) == {200, 500}
    assert pattern() == first
    assert all(api.get("/wallet").status_code == 200 for _ in range(10))
    sandbox.control.set_faults(errorRate=1.0, errorRoutes=["/vms/{id}/stop"])
    vm = _running(api)
    assert "injected" in failure(api.post(f"/vms/{vm['id']}/stop"), 500)
    assert api.data(f"/vms/{vm['id']}")["status"] == "running"


def test_dropped_connection_cuts_the_body_after_the_request_was_processed(api, sandbox):
    vm = _running(api)
    sandbox.control.set_faults(dropRate=1.0)
    with pytest.raises(httpx.TransportError):
        api.post(f"/vms/{vm['id']}/stop")
    sandbox.control.set_faults()
    assert api.data(f"/vms/{vm['id']}")["status"] == "stopping"


def test_latency_fault_delays_answers(api, sandbox):
    sandbox.control.set_faults(latencyMs=300)
    response = api.get("/wallet")
    assert response.status_code == 200 and response.elapsed.total_seconds() >= 0.3


@pytest.mark.parametrize(
    "body",
    [
        {"errorRate": 2},
        {"dropRate": -0.1},
        {"latencyMs": "x"},
        {"upstreamSyncFail": 1},
        {"errorRoutes": "GET /vms"},
        {"bogus": True},
    ],
)
def test_bad_fault_settings_are_refused(sandbox, body):
    failure(httpx.put(sandbox.control_url + "/faults", json=body), 422)


def test_settings_refuse_bad_values(sandbox):
    for body in ({"ipRateLimit": 0}, {"rateWindowSeconds": 0}, {"defaultRateLimit": "600"}):
        failure(httpx.put(sandbox.control_url + "/settings", json=body), 422)
