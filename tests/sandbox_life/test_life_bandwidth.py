"""Bandwidth growth on the sandbox clock, and the same history from the same seed and steps."""

from __future__ import annotations

import copy

from _life_fleet import DAY, HOUR, add_vm, at, empty_account

from svcnb.sandbox import (
    SandboxConfig,
    daily_rate_bytes,
    new_state,
    pack_bytes_of,
    wait_idle,
    will_exceed_pack,
)


def test_bytes_grow_only_on_whole_hours_and_only_while_running():
    state = empty_account("1000.00")
    running = add_vm(state, "12.50", at(days=20), used=1000)
    stopped = add_vm(state, "12.50", at(days=20), status="stopped", used=500)
    state.clock.advance(HOUR - 1)
    assert running["bandwidthUsedBytes"] == 1000  # the first hour has not ended
    state.clock.advance(1)
    first = running["bandwidthUsedBytes"]
    assert first > 1000
    assert running["bandwidthUsedBytes"] == first  # a second read at the same time agrees
    state.clock.advance(HOUR / 2)
    assert running["bandwidthUsedBytes"] == first
    state.clock.advance(DAY)
    assert running["bandwidthUsedBytes"] > first
    assert stopped["bandwidthUsedBytes"] == 500


def test_a_day_of_growth_is_near_the_seeded_rate():
    state = empty_account("1000.00")
    vm = add_vm(state, "12.50", at(days=20))
    mean = daily_rate_bytes(state.seed, vm["id"], pack_bytes_of(vm))
    assert mean == daily_rate_bytes(state.seed, vm["id"], pack_bytes_of(vm))  # pure
    for _ in range(10):
        state.clock.advance(DAY)
    assert 0.8 * 10 * mean <= vm["bandwidthUsedBytes"] <= 1.2 * 10 * mean


def test_the_vms_the_seeded_rates_pick_are_exactly_those_that_run_past_their_pack():
    state = new_state(SandboxConfig(seed=7, vms=40))
    running = {i for i, vm in state.backends.vms.vms.items() if vm["status"] == "running"}
    peak: dict[str, int] = {}
    renewed: set[str] = set()
    for _ in range(64):
        seen = len(state.events)
        state.clock.advance(DAY)
        new = state.events[seen:]
        renewed |= {e["data"]["vm"]["id"] for e in new if e["type"] == "vm.renewed"}
        for vm_id in running & renewed:  # count only whole cycles the sandbox itself ran
            used = state.backends.vms.vms[vm_id]["bandwidthUsedBytes"]
            peak[vm_id] = max(peak.get(vm_id, 0), used)
    steady = {i for i in running if state.backends.vms.vms[i]["status"] == "running"} & renewed
    fast = {i for i in steady if will_exceed_pack(7, i, pack_bytes_of(state.backends.vms.vms[i]))}
    assert 1 <= len(fast) < len(steady) / 2, "a few VMs, not most, grow past their pack"
    over = {i for i in steady if peak[i] > pack_bytes_of(state.backends.vms.vms[i])}
    assert over == fast


def _history(steps: list[float]) -> dict:
    state = new_state(SandboxConfig(seed=11, vms=30))
    for seconds in steps:
        state.clock.advance(seconds)
    assert wait_idle(state, timeout=20)
    with state.lock:
        per_webhook = {
            w: [
                (d["id"], d["eventId"], d["attempts"], d["lastAttemptAt"], d["error"])
                for d in state.backends.webhooks.deliveries
                if d["_webhookId"] == w
            ]
            for w in state.backends.webhooks.webhooks
        }
        return copy.deepcopy(
            {
                "events": state.events,
                "vms": dict(state.backends.vms.vms),
                "wallet": state.backends.wallet.record,
                "webhooks": dict(state.backends.webhooks.webhooks),
                "deliveries": per_webhook,
            }
        )


def test_same_seed_and_clock_steps_give_the_same_history():
    daily = [DAY] * 45
    first = _history(daily)
    assert first == _history(daily)
    assert len([e for e in first["events"] if e["type"] == "vm.renewed"]) > 20
    # jobs run at their own times, so coarser steps over the same span agree too
    assert first == _history([DAY * 10] * 4 + [DAY * 5])
