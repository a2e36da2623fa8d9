"""Sandbox life: what happens to bandwidth, money and VMs as the sandbox clock moves.

The rules as a user sees them (bandwidth, renewal, low balance, the grace period, event data):
the README's table of what the sandbox does. Everything here runs as jobs on ``state.clock``
(with the state lock held and ``clock.now()`` pinned to the job's time), so the same seed and the
same clock steps give the same history.

Bandwidth: the rate comes from the seed and the VM id only (:func:`daily_rate_bytes`), and bytes
accrue at whole hours, so two reads at the same clock time see the same bytes. About one VM in
eight is a fast one using 2x to 3x its pack per 30 days (past its pack 10 to 19 days into a
cycle); the others use 5 % to 60 % of it.

Renewals: a VM stating no price is charged its catalog price. Stopped VMs renew; terminated and
suspended VMs do not, nor does a VM while it owes. The low-balance check runs at every full hour,
after a top-up, and when a VM starts or is terminated; a renewal takes its price from the balance
and from the need alike, so it does not move the margin by itself.

Debts: a renewal the wallet cannot pay leaves the VM running, ``overdue``, owing its price. VMs
seeded as overdue owe from the start; seeded as suspended, they owe and count as suspended for
non-payment. A top-up pays debts oldest first, stopping at the first it cannot cover. Paid within
the grace period, the cycle runs from the missed renewal; paid after suspension, the VM returns
to the status it had (``stopping`` comes back as ``stopped``; ``vm.started`` when it comes back
running) and a fresh cycle starts at the payment. A control start is an operator override: the
debt is forgiven and a fresh cycle starts then. A VM suspended through control when its grace
ends stays suspended after its debt is paid (only a control start lifts that).

While a VM owes, its internal record carries ``_amountDue`` (decimal string) and
``_overdueSince``, visible through ``GET /_sandbox/vms/{id}`` and never served publicly.
Every event is logged at INFO on the ``svcnb.sandbox.events`` logger, one line each.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import lru_cache

from ._clock import Job
from ._envelopes import iso, parse_iso
from ._plans_regions import GIB, GRACE_DAYS
from ._speak import read_money
from ._state import State
from .backends.vms import vm_brief

__all__ = [
    "BANDWIDTH_STEP",
    "GRACE",
    "LOW_BALANCE_WINDOW",
    "add_month",
    "daily_rate_bytes",
    "install",
    "price_of",
    "will_exceed_pack",
]

LOW_BALANCE_WINDOW = timedelta(days=7)
GRACE = timedelta(days=GRACE_DAYS)
BANDWIDTH_STEP = timedelta(hours=1)

# share of VMs that grow fast, and the per-mille of the pack used per 30 days by each kind
_FAST_SHARE = 0.125
_FAST_PERMILLE = (2000, 3000)
_SLOW_PERMILLE = (50, 600)
_NOISE_PERMILLE = (800, 1200)
_DEFAULT_PACK_BYTES = 1024 * GIB

_log = logging.getLogger(__name__)
_events_log = logging.getLogger("svcnb.sandbox.events")


# -- pure functions ----------------------------------------------------------------------------
def _unit(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts`` (stable across runs, processes and platforms)."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _pick(low: int, high: int, u: float) -> int:
    return low + int(u * (high - low + 1))


def daily_rate_bytes(seed: int, vm_id: str, pack_bytes: int) -> int:
    """Mean bytes per day a VM uses in the sandbox seeded with ``seed``.

    Fixed by the seed and the VM id: fast VMs use 2x to 3x ``pack_bytes`` per 30 days, the others
    5 % to 60 % of it. Actual days vary by a seeded 0.8x to 1.2x around this mean.
    """
    if _unit(seed, "bandwidth-kind", vm_id) < _FAST_SHARE:
        low, high = _FAST_PERMILLE
    else:
        low, high = _SLOW_PERMILLE
    permille = _pick(low, high, _unit(seed, "bandwidth-rate", vm_id))
    return pack_bytes * permille // (1000 * 30)


def will_exceed_pack(seed: int, vm_id: str, pack_bytes: int) -> bool:
    """Whether the seeded rate runs a VM past its pack within every cycle it runs whole.

    True exactly for the fast VMs: even on the slowest noise (0.8x) over the shortest month
    (28 days) they use more than the pack; the others stay under it even on 1.2x over 31 days.
    """
    return daily_rate_bytes(seed, vm_id, pack_bytes) * 30 > pack_bytes


def _day_bytes(seed: int, vm_id: str, mean: int, day: date) -> int:
    noise = _pick(*_NOISE_PERMILLE, _unit(seed, "bandwidth-noise", vm_id, day.isoformat()))
    return mean * noise // 1000


def pack_bytes_of(vm: dict) -> int:
    """The VM's pack in bytes: ``bandwidthPackBytes``, else ``bandwidth`` GiB, else 1 TiB."""
    try:
        pack = int(str(vm.get("bandwidthPackBytes")))
    except ValueError:
        pack = 0
    if pack <= 0 and isinstance(vm.get("bandwidth"), int) and vm["bandwidth"] > 0:
        pack = vm["bandwidth"] * GIB
    return pack if pack > 0 else _DEFAULT_PACK_BYTES


def price_of(vm: dict) -> Decimal:
    """What one renewal of ``vm`` costs: ``billing.priceMonthly``, else ``plan.priceMonthly``,
    else the internal catalog price, else 0."""
    for holder in (vm.get("billing"), vm.get("plan")):
        if isinstance(holder, dict) and "priceMonthly" in holder:
            amount = read_money(holder["priceMonthly"])
            if amount is not None:
                return amount
    internal = vm.get("_price")
    return internal if isinstance(internal, Decimal) else Decimal(0)


def add_month(moment: datetime, anchor_day: int) -> datetime:
    """``moment`` one calendar month on, on ``anchor_day`` clamped to the month's length
    (a cycle anchored on the 31st renews on Feb 28, then Mar 31)."""
    year, month = (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
    day = min(anchor_day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


@lru_cache(maxsize=8192)
def _parsed(text: str) -> datetime:
    return parse_iso(text)


def _money(amount: Decimal) -> str:
    return f"{amount:.2f}"


# -- the engine ----------------------------------------------------------------------------
@dataclass
class _Debt:
    """One unpaid renewal: ``amount`` owed since ``since``; the paid cycle would end at
    ``period_end``."""

    vm_id: str
    amount: Decimal
    since: datetime
    period_end: datetime | None
    suspended: bool = False
    status_before: str = "running"
    job: Job | None = field(default=None, repr=False)


@dataclass
class _Due:
    """The one scheduled renewal of a VM: at ``text`` (as served), costing ``price``."""

    text: str
    at: datetime
    price: Decimal
    job: Job = field(repr=False)


class _Life:
    def __init__(self, state: State) -> None:
        self.state = state
        # the backends of this build (a reset installs a new engine on new ones)
        self.vms = state.backends.vms
        self.wallet = state.backends.wallet
        self.clock = state.clock
        self.seed = state.seed
        self.renewal_jobs: dict[str, _Due] = {}
        self.anchors: dict[str, int] = {}
        self.debts: dict[str, _Debt] = {}
        self.low_warned = False
        self.rates: dict[str, tuple[int, int]] = {}  # vm id -> (pack bytes, mean bytes/day)
        self.day_totals: dict[str, int] = {}
        self.day_of_totals: date | None = None
        self.accrued_until = state.clock.now().replace(minute=0, second=0, microsecond=0)

    # -- setup --
    def start(self, saved: dict | None = None) -> None:
        if saved is not None:
            self._restore(saved)
            return
        now = self.clock.now()
        for vm in self.vms.vms.values():
            billing = vm.get("billing")
            if not isinstance(billing, dict) or vm.get("status") == "terminated":
                continue
            if billing.get("status") == "overdue":
                self._owe(vm, now, self._next_at(vm))
            elif billing.get("status") == "suspended" and vm.get("status") == "suspended":
                self._owe(vm, now, None, suspended=True)
        self._sync_renewals()
        self.clock.schedule(self.accrued_until + BANDWIDTH_STEP, self._hourly)

    def export(self) -> dict:
        """What the engine knows that the records do not say: debts, cycle anchors, whether
        the low-balance warning is out, and the hour accrued up to (for a saved state)."""
        return {
            "accruedUntil": iso(self.accrued_until),
            "lowWarned": self.low_warned,
            "anchors": dict(self.anchors),
            "debts": [
                {
                    "vmId": d.vm_id,
                    "amount": _money(d.amount),
                    "since": iso(d.since),
                    "periodEnd": None if d.period_end is None else iso(d.period_end),
                    "suspended": d.suspended,
                    "statusBefore": d.status_before,
                }
                for d in self.debts.values()
            ],
        }

    def _restore(self, saved: dict) -> None:
        self.accrued_until = parse_iso(saved["accruedUntil"])
        self.low_warned = bool(saved.get("lowWarned", False))
        self.anchors = {str(k): int(v) for k, v in saved.get("anchors", {}).items()}
        for item in saved.get("debts", []):
            vm = self.vms.get(item["vmId"])
            end = item.get("periodEnd")
            debt = self._owe(
                vm,
                parse_iso(item["since"]),
                None if end is None else parse_iso(end),
                suspended=bool(item.get("suspended")),
            )
            debt.amount = Decimal(item["amount"])
            debt.status_before = str(item.get("statusBefore") or "running")
            self.vms.owe(vm, debt.amount, debt.since)
        self._sync_renewals()
        self.clock.schedule(self.accrued_until + BANDWIDTH_STEP, self._hourly)

    def _next_at(self, vm: dict) -> datetime | None:
        text = (vm.get("billing") or {}).get("nextRenewalAt")
        return _parsed(text) if isinstance(text, str) else None

    # -- the hourly step --
    def _hourly(self) -> None:
        now = self.clock.now()
        self._catch_up(now)
        if now.hour == 0:
            # events keep the renewal jobs in step; this daily sweep only guards against a
            # change that came without one
            self._sync_renewals()
        self._check_low_balance()
        self.clock.schedule(now + BANDWIDTH_STEP, self._hourly)

    def _catch_up(self, now: datetime) -> None:
        """Accrue every whole hour that ended by ``now`` and is not accrued yet.

        A renewal due on the hour calls this first, so the hour that just ended counts towards
        the cycle it belongs to whichever of the two jobs the clock runs first.
        """
        while self.accrued_until + BANDWIDTH_STEP <= now:
            self._accrue(self.accrued_until)
            self.accrued_until += BANDWIDTH_STEP

    def _accrue(self, hour_start: datetime) -> None:
        day = hour_start.date()
        if day != self.day_of_totals:
            self.day_totals = {}
            self.day_of_totals = day
        totals = self.day_totals
        hour = hour_start.hour
        for vm_id, vm in self.vms.vms.items():
            if vm["status"] != "running":
                continue
            total = totals.get(vm_id)
            if total is None:
                pack = pack_bytes_of(vm)
                cached = self.rates.get(vm_id)
                if cached is None or cached[0] != pack:
                    cached = (pack, daily_rate_bytes(self.seed, vm_id, pack))
                    self.rates[vm_id] = cached
                total = totals[vm_id] = _day_bytes(self.seed, vm_id, cached[1], day)
            used = vm["bandwidthUsedBytes"]
            if type(used) is not int:
                used = 0
            vm["bandwidthUsedBytes"] = used + total // 24 + (1 if hour < total % 24 else 0)

    # -- renewals --
    def _sync_renewals(self) -> None:
        vms = self.vms.vms
        for vm_id, vm in vms.items():
            self._sync_vm(vm_id, vm)
        for vm_id in [v for v in self.renewal_jobs if v not in vms]:
            self.clock.cancel(self.renewal_jobs.pop(vm_id).job)

    def _sync_vm(self, vm_id: str, vm: dict) -> None:
        """Keep exactly one renewal job per billable VM, at its current ``nextRenewalAt``."""
        debt = self.debts.get(vm_id)
        if debt is not None:
            self._reconcile_debt(vm, debt)
        billing = vm.get("billing")
        text = billing.get("nextRenewalAt") if isinstance(billing, dict) else None
        # the renewal time of a VM that is billed, None for one that is not
        due = (
            text
            if isinstance(text, str)
            and vm.get("status") not in ("terminated", "suspended")
            and vm_id not in self.debts
            else None
        )
        current = self.renewal_jobs.get(vm_id)
        if current is not None and (due is None or current.text != text):
            self.clock.cancel(current.job)
            del self.renewal_jobs[vm_id]
            current = None
        if due is not None and current is None:
            at = _parsed(due)
            job = self.clock.schedule(at, lambda: self._renew_due(vm_id, due))
            self.renewal_jobs[vm_id] = _Due(due, at, price_of(vm), job)

    def _reconcile_debt(self, vm: dict, debt: _Debt) -> None:
        if vm.get("status") == "terminated" or not isinstance(vm.get("billing"), dict):
            self._forget_debt(vm, debt)
        elif debt.suspended and vm.get("status") != "suspended":
            # started through control while suspended for non-payment: the operator's override
            self._forget_debt(vm, debt)
            now = self.clock.now()
            self.anchors[vm["id"]] = now.day
            vm["billing"]["status"] = "active"
            vm["billing"]["nextRenewalAt"] = iso(add_month(now, now.day))

    def _forget_debt(self, vm: dict, debt: _Debt) -> None:
        if debt.job is not None:
            self.clock.cancel(debt.job)
        self.debts.pop(debt.vm_id, None)
        self.vms.forgive(vm)

    def _renew_due(self, vm_id: str, text: str) -> None:
        entry = self.renewal_jobs.get(vm_id)
        if entry is not None and entry.text == text:
            del self.renewal_jobs[vm_id]
        vm = self.vms.vms.get(vm_id)
        if vm is None:
            return
        billing = vm.get("billing")
        if (
            not isinstance(billing, dict)
            or billing.get("nextRenewalAt") != text
            or vm.get("status") in ("terminated", "suspended")
            or vm_id in self.debts
        ):
            self._sync_vm(vm_id, vm)
            return
        due = _parsed(text)
        anchor = self.anchors.setdefault(vm_id, due.day)
        price = price_of(vm)
        if self.wallet.balance >= price:
            self._charge(vm, price, due, add_month(due, anchor))
        else:
            self._owe(vm, due, add_month(due, anchor))
            self.vms.mark_overdue(vm)
            _log.info(
                "%s renewal of %s (%s) for %s not paid: balance %s; suspended at %s unless paid",
                iso(due),
                vm.get("name"),
                vm_id,
                _money(price),
                _money(self.wallet.balance),
                iso(due + GRACE),
            )
        # no low-balance check here: a renewal takes its price from the balance and from what
        # is needed alike, so only time (hourly), top-ups and fleet changes move the margin
        self._sync_vm(vm_id, vm)

    def _charge(self, vm: dict, price: Decimal, start: datetime, next_at: datetime) -> None:
        self._catch_up(self.clock.now())
        balance = self.wallet.debit(price)
        self.vms.renew(vm, next_at)
        self.state.emit(
            "vm.renewed",
            {
                "vm": vm_brief(vm),
                "amount": _money(price),
                "balance": _money(balance),
                "periodStart": iso(start),
                "nextRenewalAt": vm["billing"]["nextRenewalAt"],
            },
        )

    # -- debts and suspension --
    def _owe(
        self, vm: dict, since: datetime, period_end: datetime | None, suspended: bool = False
    ) -> _Debt:
        debt = _Debt(vm["id"], price_of(vm), since, period_end, suspended=suspended)
        if not suspended:
            debt.job = self.clock.schedule(since + GRACE, lambda: self._suspend(debt))
        self.debts[vm["id"]] = debt
        self.vms.owe(vm, debt.amount, since)
        return debt

    def _suspend(self, debt: _Debt) -> None:
        debt.job = None
        vm = self.vms.vms.get(debt.vm_id)
        if self.debts.get(debt.vm_id) is not debt or vm is None or debt.suspended:
            return
        if vm.get("status") == "terminated" or not isinstance(vm.get("billing"), dict):
            self._forget_debt(vm, debt)
            return
        if vm.get("status") == "provisioning":
            # a VM that is still being built is suspended once it exists
            debt.job = self.clock.schedule(
                self.clock.now() + BANDWIDTH_STEP, lambda: self._suspend(debt)
            )
            return
        debt.suspended = True
        debt.status_before = "stopped" if vm["status"] == "stopping" else vm["status"]
        if not self.vms.suspend_for_nonpayment(vm):
            # already suspended through control: paying later does not lift that suspension
            return
        self.state.emit(
            "vm.suspended",
            {
                "vm": vm_brief(vm),
                "reason": "nonpayment",
                "amountDue": _money(debt.amount),
                "overdueSince": iso(debt.since),
            },
        )

    def _pay_debts(self) -> None:
        """Pay what is owed, oldest first, while the balance covers the next debt."""
        for debt in sorted(self.debts.values(), key=lambda d: (d.since, d.vm_id)):
            if self.wallet.balance < debt.amount:
                break
            vm = self.vms.vms.get(debt.vm_id)
            if vm is None:
                self.debts.pop(debt.vm_id, None)
                continue
            self._forget_debt(vm, debt)
            now = self.clock.now()
            if debt.suspended or debt.period_end is None:
                self.anchors[vm["id"]] = now.day
                start, next_at = now, add_month(now, now.day)
            else:
                start, next_at = debt.since, debt.period_end
            if debt.suspended:
                vm["status"] = debt.status_before
            self._charge(vm, debt.amount, start, next_at)
            if debt.suspended and vm["status"] == "running":
                self.state.emit("vm.started", {"vm": vm_brief(vm), "reason": "payment_received"})
            self._sync_vm(vm["id"], vm)

    # -- low balance --
    def required(self) -> tuple[Decimal, int]:
        """What the wallet needs now: every debt plus every renewal due within the window."""
        horizon = self.clock.now() + LOW_BALANCE_WINDOW
        need = sum((d.amount for d in self.debts.values()), Decimal(0))
        count = len(self.debts)
        for due in self.renewal_jobs.values():
            if due.at <= horizon:
                need += due.price
                count += 1
        return need, count

    def _check_low_balance(self) -> None:
        need, count = self.required()
        balance = self.wallet.balance
        if balance >= need:
            self.low_warned = False
        elif not self.low_warned:
            self.low_warned = True
            self.state.emit(
                "billing.low_balance",
                {
                    "balance": _money(balance),
                    "required": _money(need),
                    "renewalsDue": count,
                    "windowDays": LOW_BALANCE_WINDOW.days,
                },
            )

    # -- listener --
    def on_event(self, event: dict) -> None:
        if event["type"] == "billing.payment_received":
            self._pay_debts()
            self._check_low_balance()
            return
        vm_ref = event["data"].get("vm") if isinstance(event.get("data"), dict) else None
        if event["type"].startswith("vm.") and isinstance(vm_ref, dict):
            vm = self.vms.vms.get(str(vm_ref.get("id")))
            if vm is not None:
                self._sync_vm(vm["id"], vm)
                if event["type"] in ("vm.terminated", "vm.started"):
                    self._check_low_balance()


# -- the event log ---------------------------------------------------------------------------
def describe(event: dict) -> str:
    """One human line for ``event``: time, type, the VM it is about, then its other fields."""
    given = event.get("data")
    data = given if isinstance(given, dict) else {}
    parts: list[str] = []
    vm = data.get("vm")
    if isinstance(vm, dict):
        parts.append(f"{vm.get('name')} ({vm.get('id')}) now {vm.get('status')}")
    for key, value in data.items():
        if key != "vm" and not isinstance(value, dict | list):
            parts.append(f"{_one_line(key)} {_one_line(value)}")
    text = ", ".join(parts) if parts else "(no data)"
    return f"{event.get('createdAt')} {event.get('type')}: {text}"


def _one_line(value: object, limit: int = 120) -> str:
    # event data can come from anyone with control access: keep each event on one log line
    text = str(value)
    if not text.isprintable():
        text = json.dumps(text, ensure_ascii=False)[1:-1]
    return text if len(text) <= limit else text[:limit] + "..."


def _log_event(event: dict) -> None:
    if _events_log.isEnabledFor(logging.INFO):
        _events_log.info("%s", describe(event))


def install(state: State, saved: dict | None = None) -> None:
    """Plug bandwidth growth, renewals, debts, suspension and the event log into ``state``.

    Called by the sandbox build after every seed or reset, with the state lock held. ``saved``
    is what ``export()`` of an earlier engine gave (a saved state); without it debts are read
    from the records' billing status, as for a freshly seeded account.
    """
    with state.lock:
        life = _Life(state)
        # the log listener goes first so nested events (a renewal inside a top-up) log in order
        state.listeners.insert(0, _log_event)
        state.listeners.append(life.on_event)
        state.life = life
        life.start(saved)
