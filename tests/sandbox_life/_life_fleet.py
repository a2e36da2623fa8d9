"""Small hand-made accounts for the sandbox-life tests, built on the sandbox's own State."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from svcnb.sandbox import PLANS, SandboxConfig, State, new_state, new_vm_record

EPOCH = SandboxConfig().epoch  # where a sandbox's clock starts unless told
HOUR = 3600
DAY = 86400


def iso(moment: datetime) -> str:
    """A time as the sandbox writes it in its default dialect, stated here rather than taken
    from the sandbox: ``2026-11-01T00:00:00Z`` (UTC, whole seconds)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    """A time the sandbox wrote, which must carry its zone."""
    moment = datetime.fromisoformat(text)
    assert moment.tzinfo is not None, f"{text!r} carries no zone"
    return moment.astimezone(UTC)


def empty_account(balance: str, seed: int = 7, **config: object) -> State:
    """A sandbox account with no VMs and no webhook subscriptions, holding ``balance``."""
    state = new_state(SandboxConfig(seed=seed, vms=0, **config))
    with state.lock:
        state.backends.webhooks.clear()
        state.events.clear()
        state.backends.wallet.record["_balance"] = Decimal(balance)
    return state


def add_vm(
    state: State,
    price: object,
    due: datetime,
    *,
    where: str = "billing",
    status: str = "running",
    used: int = 0,
) -> dict:
    """A VM in the spec's shape whose price is stated as ``price`` on ``billing`` or ``plan``.

    No event announces it, so the life engine picks it up at its daily sweep (the next sandbox
    midnight); give it a renewal due after that.
    """
    with state.lock:
        index = len(state.backends.vms.vms)
        vm = new_vm_record(
            state, random.Random(index), index, status, EPOCH - timedelta(days=40), plan=PLANS[1]
        )
        vm["plan"] = {"slug": vm["plan"]["slug"], "name": vm["plan"]["name"]}
        vm["billing"] = {"nextRenewalAt": iso(due), "status": "active"}
        if where == "billing":
            vm["billing"] = {"priceMonthly": price, **vm["billing"]}
        else:
            vm["plan"]["priceMonthly"] = price
        vm["bandwidthUsedBytes"] = used
        vm.pop("_price", None)
        state.backends.vms.add(vm)
        return vm


def served_price(vm: dict) -> Decimal:
    """The price a client reads off the VM: billing.priceMonthly, else plan.priceMonthly, in any
    of the three forms (written here from the spec, independent of the sandbox's parser)."""
    for holder in (vm["billing"], vm["plan"]):
        if holder and "priceMonthly" in holder:
            value = holder["priceMonthly"]
            if isinstance(value, dict):
                value = value["amount"]
            return Decimal(json.dumps(value).strip('"'))
    raise AssertionError(f"VM {vm['id']} states no price")


def topup(state: State, amount: str) -> dict:
    """What ``POST /_sandbox/wallet/topup`` does: credit the wallet, emit payment_received."""
    with state.lock:
        state.backends.wallet.record["_balance"] += Decimal(amount)
        return state.emit(
            "billing.payment_received",
            {"amount": amount, "balance": f"{state.backends.wallet.balance:.2f}"},
        )


def events_of(state: State, type_: str) -> list[dict]:
    with state.lock:
        return [e for e in state.events if e["type"] == type_]


def at(days: float = 0, hours: float = 0, seconds: float = 0) -> datetime:
    return EPOCH + timedelta(days=days, hours=hours, seconds=seconds)


def advance_to(state: State, moment: datetime) -> None:
    state.clock.advance((moment - state.clock.now()).total_seconds())
