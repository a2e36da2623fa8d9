"""Sandbox life driven only through control and read only through the public API."""

from __future__ import annotations

import json
from decimal import Decimal

from _life_fleet import parse_iso
from _loopback import loopback_client

DAY = 86400
CATALOG = {"s-2vcpu-4gb": Decimal("12.50"), "c-4vcpu-8gb": Decimal("39.90")}


def _amount(value: object) -> Decimal:
    """Any served money form (number, numeric string, {amount, currency}) as a Decimal."""
    if isinstance(value, dict):
        value = value["amount"]
    return Decimal(json.dumps(value).strip('"'))


def test_renewals_drain_the_wallet_until_a_vm_is_suspended_and_a_top_up_resumes_it(
    make_sandbox,
):
    sb = make_sandbox(vms=0, seed=7, time_scale=0.0)
    api = loopback_client(sb.api_root, headers={"x-api-key": sb.tokens["admin"]})

    def wallet() -> Decimal:
        return _amount(api.get("/wallet").json()["data"]["balance"])

    def vm(vm_id: str) -> dict:
        return api.get(f"/vms/{vm_id}").json()["data"]

    start = wallet()
    began = sb.control.now()
    sb.control.topup("100.00")
    assert wallet() == start + Decimal("100.00")
    plans = ["s-2vcpu-4gb", "s-2vcpu-4gb", "c-4vcpu-8gb"]
    ids = [sb.control.create_vm(plan=p)["id"] for p in plans]
    sb.control.advance(DAY)  # provisioned
    for vm_id, plan in zip(ids, plans, strict=True):
        record = vm(vm_id)
        assert record["status"] == "running"
        for holder in (record["billing"], record["plan"]):
            if "priceMonthly" in holder:  # where the price is stated, it is the plan's
                assert _amount(holder["priceMonthly"]) == CATALOG[plan]

    for _ in range(34):
        sb.control.advance(DAY)
    # every VM renewed once, all paid
    assert wallet() == start + Decimal("100.00") - sum(CATALOG[p] for p in plans)

    for _ in range(35):
        sb.control.advance(DAY)
    # the two small ones renewed again; the big one could not be paid and is suspended
    assert wallet() == start + Decimal("100.00") - sum(CATALOG[p] for p in plans) - Decimal("25.00")
    big = vm(ids[2])
    assert (big["status"], big["billing"]["status"]) == ("suspended", "suspended")
    assert all(vm(i)["status"] == "running" for i in ids[:2])

    # the seeded account holds a few past events; look only at what happened since
    events = [e for e in sb.control.events() if parse_iso(e["createdAt"]) >= began]
    renewed = [e for e in events if e["type"] == "vm.renewed"]
    assert [e["data"]["vm"]["id"] for e in renewed] == [ids[0], ids[1], ids[2], ids[0], ids[1]]
    (suspended,) = [e for e in events if e["type"] == "vm.suspended"]
    low = [e for e in events if e["type"] == "billing.low_balance"]
    assert low and events.index(low[0]) < events.index(suspended)
    assert parse_iso(low[0]["createdAt"]) < parse_iso(renewed[-1]["createdAt"])

    before = wallet()
    sb.control.topup("50.00")
    assert wallet() == before + Decimal("50.00") - Decimal("39.90")
    big = vm(ids[2])
    assert (big["status"], big["billing"]["status"]) == ("running", "active")
    tail = [e["type"] for e in sb.control.events()[-3:]]
    assert tail == ["billing.payment_received", "vm.renewed", "vm.started"]
    api.close()
