"""Renewals, the wallet, low balance, overdue, suspension and resumption on the sandbox clock."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from _life_fleet import (
    DAY,
    add_vm,
    advance_to,
    at,
    empty_account,
    events_of,
    iso,
    parse_iso,
    served_price,
    topup,
)

from svcnb.sandbox import GRACE, LOW_BALANCE_WINDOW, add_month


def _renewed_for(state, vm_id: str) -> list[dict]:
    return [e for e in events_of(state, "vm.renewed") if e["data"]["vm"]["id"] == vm_id]


def test_balance_after_renewals_is_start_minus_the_prices_paid_in_every_price_form():
    state = empty_account("1000.00")
    vms = [
        add_vm(state, 4.5, at(days=2)),  # a JSON number on billing
        add_vm(state, "12.50", at(days=5), where="plan"),  # a numeric string, on the plan only
        add_vm(state, {"amount": "39.90", "currency": "EUR"}, at(days=10, hours=13.75)),
    ]
    for _ in range(75):
        state.clock.advance(DAY)

    renewals = events_of(state, "vm.renewed")
    assert len(renewals) == 9  # each VM on its day of November, December and January
    paid = sum((served_price(vm) for vm in vms), Decimal(0)) * 3
    assert paid == Decimal("170.70")
    assert state.backends.wallet.balance == Decimal("1000.00") - paid
    assert renewals[-1]["data"]["balance"] == "829.30"
    for vm in vms:
        mine = _renewed_for(state, vm["id"])
        assert [Decimal(e["data"]["amount"]) for e in mine] == [served_price(vm)] * 3
        # each renewal happens exactly when it was due, and moves a calendar month on
        assert [e["createdAt"] for e in mine[1:]] == [e["data"]["nextRenewalAt"] for e in mine[:-1]]
        assert vm["billing"]["nextRenewalAt"] == mine[-1]["data"]["nextRenewalAt"]
        assert vm["billing"]["status"] == "active"
    assert [e["createdAt"] for e in _renewed_for(state, vms[2]["id"])] == [
        "2026-11-11T13:45:00Z",
        "2026-12-11T13:45:00Z",
        "2027-01-11T13:45:00Z",
    ]


def test_renewal_resets_the_bandwidth_cycle_and_bumps_updated_at():
    state = empty_account("100.00")
    vm = add_vm(state, "12.50", at(days=2), used=123_456_789)
    advance_to(state, at(days=2))
    assert vm["bandwidthUsedBytes"] == 0
    assert vm["updatedAt"] == iso(at(days=2))
    assert vm["billing"]["nextRenewalAt"] == iso(at(days=32))  # Nov 3 -> Dec 3
    state.clock.advance(3600)
    assert vm["bandwidthUsedBytes"] > 0  # the new cycle counts from the renewal on


def test_a_month_on_keeps_the_day_of_month_and_clamps_short_months():
    jan31 = parse_iso("2027-01-31T09:30:00Z")
    feb = add_month(jan31, 31)
    assert iso(feb) == "2027-02-28T09:30:00Z"
    assert iso(add_month(feb, 31)) == "2027-03-31T09:30:00Z"
    assert iso(add_month(parse_iso("2026-12-15T00:00:00Z"), 15)) == "2027-01-15T00:00:00Z"


def _starving_account():
    """X (12.50, due Nov 3) is paid; Y (39.90, due Nov 10) is the first the wallet cannot pay."""
    state = empty_account("50.00")
    x = add_vm(state, "12.50", at(days=2))
    y = add_vm(state, {"amount": "39.90", "currency": "EUR"}, at(days=9))
    return state, x, y


def test_first_unpaid_renewal_goes_overdue_then_suspends_after_the_grace_with_a_warning_first():
    state, x, y = _starving_account()
    due = at(days=9)
    advance_to(state, due)
    assert x["billing"]["status"] == "active"
    assert state.backends.wallet.balance == Decimal("37.50")
    assert y["status"] == "running"
    assert y["billing"]["status"] == "overdue"
    assert y["billing"]["nextRenewalAt"] == iso(due)  # still showing the unpaid renewal
    assert not events_of(state, "vm.suspended")

    advance_to(state, due + GRACE - timedelta(seconds=1))
    assert y["status"] == "running"
    advance_to(state, due + GRACE)
    assert y["status"] == "suspended"
    assert y["billing"]["status"] == "suspended"
    (suspended,) = events_of(state, "vm.suspended")
    assert suspended["createdAt"] == iso(due + GRACE)
    assert suspended["data"]["vm"]["id"] == y["id"]
    assert suspended["data"]["amountDue"] == "39.90"
    assert state.backends.wallet.balance == Decimal("37.50")  # nothing was taken for Y

    warnings = events_of(state, "billing.low_balance")
    assert len(warnings) == 1  # once per crossing, not on every hourly check
    assert parse_iso(warnings[0]["createdAt"]) < due
    assert parse_iso(warnings[0]["createdAt"]) >= due - LOW_BALANCE_WINDOW
    assert Decimal(warnings[0]["data"]["balance"]) < Decimal(warnings[0]["data"]["required"])
    assert state.events.index(warnings[0]) < state.events.index(suspended)

    # the suspended VM no longer renews; X still does while the wallet can pay it
    advance_to(state, at(days=40))
    assert [e["data"]["vm"]["id"] for e in events_of(state, "vm.renewed")] == [x["id"], x["id"]]
    assert state.backends.wallet.balance == Decimal("25.00")


def test_top_up_that_covers_the_debt_pays_it_and_resumes_the_vm():
    state, x, y = _starving_account()
    advance_to(state, at(days=20))
    assert y["status"] == "suspended"
    paid_at = at(days=20, hours=5)
    advance_to(state, paid_at)

    topup(state, "100.00")
    assert y["status"] == "running"
    assert y["billing"]["status"] == "active"
    assert state.backends.wallet.balance == Decimal("37.50") + Decimal("100.00") - Decimal("39.90")
    kinds = [(e["type"], e["data"].get("vm", {}).get("id")) for e in state.events[-3:]]
    assert kinds == [
        ("billing.payment_received", None),
        ("vm.renewed", y["id"]),
        ("vm.started", y["id"]),
    ]
    # suspended time is not billed: the paid cycle starts at the payment
    assert y["billing"]["nextRenewalAt"] == iso(add_month(paid_at, paid_at.day))
    assert "_amountDue" not in y
    advance_to(state, at(days=60))
    assert y["status"] == "running"
    assert len(events_of(state, "vm.suspended")) == 1


def test_top_up_during_the_grace_pays_the_missed_renewal_and_keeps_the_cycle():
    state, x, y = _starving_account()
    advance_to(state, at(days=10))
    assert y["billing"]["status"] == "overdue"
    topup(state, "10.00")
    (renewed,) = _renewed_for(state, y["id"])
    assert renewed["data"]["periodStart"] == iso(at(days=9))
    assert y["billing"]["nextRenewalAt"] == iso(add_month(at(days=9), 10))
    assert y["billing"]["status"] == "active"
    assert state.backends.wallet.balance == Decimal("7.60")
    advance_to(state, at(days=15))
    assert y["status"] == "running"
    assert not events_of(state, "vm.suspended")


def test_top_up_too_small_for_the_debt_leaves_the_vm_suspended():
    state, x, y = _starving_account()
    advance_to(state, at(days=13))
    topup(state, "1.00")
    assert y["status"] == "suspended"
    assert y["_amountDue"] == "39.90"
    assert state.backends.wallet.balance == Decimal("38.50")
    topup(state, "1.40")  # exactly what is owed
    assert y["status"] == "running"
    assert state.backends.wallet.balance == Decimal("0.00")


def test_debts_are_paid_oldest_first_and_stop_at_the_first_the_balance_cannot_cover():
    state = empty_account("0.00")
    old = add_vm(state, "30.00", at(days=2))
    new = add_vm(state, "5.00", at(days=4))
    advance_to(state, at(days=10))
    assert old["status"] == new["status"] == "suspended"
    topup(state, "20.00")  # covers only the younger, cheaper debt: nothing is paid
    assert old["status"] == new["status"] == "suspended"
    topup(state, "12.00")  # 32: the old debt, then 2 left for the 5.00 one
    assert old["status"] == "running"
    assert new["status"] == "suspended"
    assert state.backends.wallet.balance == Decimal("2.00")


def test_low_balance_is_armed_again_after_a_top_up_covers_the_need():
    state, x, y = _starving_account()
    advance_to(state, at(days=8))
    assert len(events_of(state, "billing.low_balance")) == 1
    topup(state, "1000.00")
    state.clock.advance(3600)
    assert len(events_of(state, "billing.low_balance")) == 1
    state.backends.wallet.record["_balance"] = Decimal("1.00")  # spent elsewhere
    state.clock.advance(3600)
    second = events_of(state, "billing.low_balance")
    assert len(second) == 2
    assert second[1]["data"]["windowDays"] == 7


def test_seeded_overdue_and_suspended_vms_owe_their_price_from_the_start():
    from svcnb.sandbox import SandboxConfig, new_state

    state = new_state(SandboxConfig(seed=7, vms=40))
    overdue = [
        v
        for v in state.backends.vms.vms.values()
        if v["billing"] and v["billing"]["status"] == "overdue"
    ]
    assert overdue, "seed 7 has VMs seeded overdue"
    for vm in overdue:
        assert vm["_amountDue"] == f"{served_or_catalog(vm):.2f}"
    advance_to(state, at(days=3))
    for vm in overdue:
        if vm["status"] != "provisioning":
            assert vm["status"] == "suspended", vm["name"]
            assert vm["billing"]["status"] == "suspended"
    fresh = [e for e in events_of(state, "vm.suspended") if e["data"].get("reason")]
    assert {e["data"]["vm"]["id"] for e in fresh} == {
        vm["id"] for vm in overdue if vm["status"] == "suspended"
    }
    assert {e["createdAt"] for e in fresh} == {iso(at(days=3))}


def served_or_catalog(vm: dict) -> Decimal:
    try:
        return served_price(vm)
    except AssertionError:
        return vm["_price"]


def test_starting_a_vm_suspended_for_nonpayment_through_control_forgives_the_debt():
    state, x, y = _starving_account()
    advance_to(state, at(days=13))
    assert y["status"] == "suspended"
    with state.lock:
        state.backends.vms.control_action(y["id"], "start")
    assert y["status"] == "running"
    assert y["billing"]["status"] == "active"
    assert "_amountDue" not in y
    assert y["billing"]["nextRenewalAt"] == iso(add_month(at(days=13), 14))
    assert state.backends.wallet.balance == Decimal("37.50")  # nothing was charged for the override


def test_terminating_a_vm_that_owes_drops_the_debt_and_its_renewals():
    state, x, y = _starving_account()
    advance_to(state, at(days=10))
    assert y["billing"]["status"] == "overdue"
    with state.lock:
        state.backends.vms.control_action(y["id"], "terminate")
    advance_to(state, at(days=50))
    assert y["status"] == "terminated"
    assert not [e for e in events_of(state, "vm.suspended")]
    assert {e["data"]["vm"]["id"] for e in events_of(state, "vm.renewed")} == {x["id"]}
    topup(state, "100.00")
    assert state.backends.wallet.balance == Decimal("37.50") - Decimal("12.50") + Decimal("100.00")
