"""What-if money: the top-up that covers the next 30/60/90 days, the VMs suspended if nobody tops
up, and what stopping or terminating some VMs changes, all from the runway's renewal model.

Every figure comes from :mod:`svcnb.reports.billing` (``runway``, ``renewals``,
``renewal_schedule``, ``renewal_positions``): this module changes the question, never the model.
Read the renewal model in that module's docstring first; what this one adds is the sandbox's
(``svcnb/sandbox/_life.py``), since the spec shows no billing rule at all:

- A top-up pays what is owed first (oldest debt first), then renewals take their price as they
  fall due. So a top-up of ``owed + renewals due - balance`` (exactly, in the wallet currency)
  pays everything in the horizon, and nothing less does. A VM whose debt the top-up pays renews
  again: one owing since its renewal (``next_renewal_at`` at or before now) one cycle after
  that renewal; one suspended for non-payment, or owing with no renewal date, one cycle after
  the payment; one owing whose ``next_renewal_at`` is still ahead (the data does not show since
  when it owes) at that date.
- Nobody tops up: a renewal the wallet cannot pay leaves the VM owing, and it is suspended
  ``grace`` later. A VM owing now is suspended ``grace`` after the renewal it missed; where the
  data does not show that date, by ``now + grace`` at the latest. The spec states no grace
  period, so ``grace`` is the assumption ``billing.grace``: the argument, else pinned (the
  config file, a sandbox's dialect, the pins a snapshot was taken with), else unknown: every
  suspension date is NaT, with one ``AssumptionWarning`` naming it and how to pin it.
- Stopped VMs still renew in this model (the sandbox bills them; the spec does not say): stopping
  VMs changes no money figure. Terminated VMs are not billed and their debt is dropped.

Nothing is guessed: a VM whose status or billing word is unknown, whose price is unknown, whose
price is in another currency than the wallet's, or that will renew but has no renewal date yet
is counted in its own column and makes ``complete`` False (a top-up then is at least the amount
shown, a suspension may come sooner). Amounts are exact ``Decimal`` in the wallet's currency.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pandas as pd

from svcnb import vocab
from svcnb.assumptions import Decision, Pins, assumption, decide
from svcnb.config import config_path
from svcnb.config import pins as config_pins
from svcnb.frames import AssumptionWarning
from svcnb.money import exact_sum, to_decimal
from svcnb.reports import billing
from svcnb.reports._classes import billing_classes, left_out_note, vm_classes
from svcnb.reports._duration import duration
from svcnb.reports._plots.whatif import (
    SUSPENSIONS_SHOWN,
    plot_suspensions,
    plot_topup,
    plot_what_if,
)
from svcnb.reports._replay import report, resolve_now
from svcnb.reports._reuse import reusable, sharing
from svcnb.reports._view import (
    Figure,
    FigureSpec,
    PlotSpec,
    TableSpec,
    View,
    ViewSpec,
    view_notes,
    view_of,
)

__all__ = [
    "DEFAULT_HORIZONS",
    "HOWS",
    "STOP_NOTE",
    "SUSPENSIONS_SHOWN",
    "VIEW",
    "plot_suspensions",
    "plot_topup",
    "plot_what_if",
    "scenario",
    "suspensions",
    "topup_needed",
    "view",
    "what_if_stop",
]

DEFAULT_HORIZONS = (30, 60, 90)
# "stop": the VMs are stopped (still billed in this model); "terminate": they are not renewed.
HOWS = ("stop", "terminate")
STOP_NOTE = (
    "Stopped VMs still renew in the renewal model (the sandbox bills them; the spec does not "
    "say), so stopping them changes no money figure; choose 'terminate' to see what not "
    "renewing them saves."
)


TOPUP_COLUMNS = [
    "horizon_days",
    "horizon_end",
    "currency",
    "balance",
    "owed",
    "renewals",
    "due",
    "needed",
    "topup",
    "covered",
    "unpriced",
    "other_currency",
    "unscheduled",
    "unknown_status",
    "complete",
]
SUSPENSION_COLUMNS = [
    "vm_id",
    "name",
    "status",
    "billing_status",
    "basis",
    "failed_at",
    "suspended_at",
    "suspended_by",
    "days_until",
    "amount",
    "currency",
    "balance_then",
]
WHAT_IF_COLUMNS = [
    "horizon_days",
    "horizon_end",
    "currency",
    "how",
    "vms_changed",
    "not_found",
    "topup_before",
    "topup_after",
    "topup_saved",
    "due_before",
    "due_after",
    "due_saved",
    "suspended_before",
    "suspended_after",
    "runway_before",
    "runway_after",
    "complete",
]


def _days(horizons: Iterable[int]) -> list[int]:
    days = sorted({int(d) for d in horizons})
    if not days or days[0] <= 0:
        raise ValueError(f"horizons={list(horizons)!r}: give whole days above 0, e.g. (30, 60, 90)")
    return days


GRACE = "billing.grace"


def grace_decision(
    grace: Any = None, pins: Pins | None = None
) -> tuple[pd.Timedelta | None, Decision]:
    """The grace period and what it rests on: ``grace`` given (the caller's word), else the
    pin of ``billing.grace`` in ``pins`` (None: the config file's), else unknown (None)."""
    if grace is not None:
        return duration(grace, name="grace"), Decision(GRACE, "pinned", str(grace), where="grace=")
    decided = decide(GRACE, config_pins() if pins is None else pins, None, True)
    if decided.state != "pinned" or decided.value is None:
        return None, decided
    return duration(decided.value, name="grace"), decided


def grace_unknown_text() -> str:
    """One sentence: the suspension dates are unknown, why, and the line that pins it."""
    return (
        f"Suspension dates unknown: the service states no grace period ({GRACE} is not "
        f"pinned), so when an unpaid VM is suspended is not known; "
        + assumption(GRACE).hint(config_path())
    )


def warn_grace(stacklevel: int = 3) -> None:
    warnings.warn(grace_unknown_text(), AssumptionWarning, stacklevel=stacklevel)


def _word(kind: vocab.Kind, cls: str) -> str:
    """A status word the current vocabulary reads as ``cls`` (the class name itself if it is)."""
    words = vocab.current().words[kind]
    if words.get(cls) == cls:
        return cls
    for word, found in words.items():
        if found == cls:
            return word
    raise ValueError(f"the vocabulary maps no {kind} word to {cls!r}; map one (svcnb.vocab)")


@reusable
def _paid_up(vms: pd.DataFrame, now: pd.Timestamp, cycle: str) -> pd.DataFrame:
    """``vms`` as they stand once a top-up has paid every debt (module docstring): owing and
    suspended-for-non-payment VMs back in good standing, with the renewal date they then get."""
    out = vms.copy()
    positions = billing.renewal_positions(vms)
    bill = billing_classes(vms).to_numpy()
    vm = vm_classes(vms).to_numpy()
    owes = positions["owes"].to_numpy(dtype=bool)
    nth = billing.renewal_step(cycle)
    when = pd.to_datetime(out["next_renewal_at"], utc=True)
    renew = when.to_numpy(dtype=object).copy()
    status = out["status"].astype(object).to_numpy().copy()
    billing_status = out["billing_status"].astype(object).to_numpy().copy()
    unknown_when = when.isna().to_numpy(dtype=bool)
    # a fresh cycle starts at the payment for a VM suspended, or owing since when not shown
    fresh = owes & ((bill == "suspended") | (vm == "suspended") | unknown_when)
    # one owing since a renewal it missed: that renewal's cycle runs on
    missed = owes & ~fresh & ~unknown_when & (when <= now).to_numpy(dtype=bool)
    if fresh.any():
        renew[fresh] = nth(now, 1)
    if missed.any():
        renew[missed] = list(billing.renewal_steps(pd.DatetimeIndex(when[missed]), 1, cycle))
    back = owes & (vm == "suspended")
    if back.any():
        # it returns to the status it had, which the data no longer shows: any live class
        # renews alike
        status[back] = _word("vm_status", "running")
    if owes.any():
        billing_status[owes] = _word("billing_status", "paid")
    out["next_renewal_at"] = pd.to_datetime(pd.Series(renew, index=out.index), utc=True)
    out["status"] = pd.array(status, dtype="string")
    out["billing_status"] = pd.array(billing_status, dtype="string")
    return out


class _Money:
    """:func:`svcnb.money.to_decimal`, each distinct (amount, currency) read once: a walk
    repeats a handful of prices, and the balance stands still once it cannot pay."""

    def __init__(self) -> None:
        self._read: dict[tuple[Any, ...], Decimal | None] = {}

    def __call__(self, value: Any, currency: Any) -> Decimal | None:
        if type(value) is not float or value == 0:  # -0.0 reads apart from 0.0: not kept
            return to_decimal(value, currency)
        key = (value, currency)
        if key not in self._read:
            self._read[key] = to_decimal(value, currency)
        return self._read[key]


@report(frames={"vms": "vms", "wallet": "wallet"})
def topup_needed(
    vms: pd.DataFrame,
    wallet: pd.DataFrame,
    now: Any = None,
    horizons: Iterable[int] = DEFAULT_HORIZONS,
    cycle: str = billing.DEFAULT_CYCLE,
) -> pd.DataFrame:
    """How much to top up now so that every debt and every renewal of the next N days is paid.

    Reads ``vms``: id, name, status, plan_slug, region_slug, billing_status, next_renewal_at,
    price_monthly_amount, price_monthly_currency; ``wallet``: balance_amount, balance_currency.
    Returns one row per horizon: horizon_days, horizon_end, currency (the wallet's), balance,
    owed (debts of overdue and suspended VMs, paid first), renewals (how many fall due, VMs
    whose debt the top-up pays included), due (their amount), needed (owed + due), topup
    (needed - balance, 0 when the balance covers it; ``Decimal``), covered (topup is 0),
    unpriced (renewals and debts whose price is unknown), other_currency (those not in the
    wallet's currency: never converted), unscheduled (VMs that will renew but have no date),
    unknown_status (VMs left out: status or billing word unknown), complete (all four are 0;
    otherwise the top-up is at least ``topup``). Money columns hold exact ``Decimal`` values.
    """
    now = resolve_now(now)
    days = _days(horizons)
    widest = f"{days[-1]}D"
    run = billing.runway(vms, wallet, now=now, horizon=widest, cycle=cycle).iloc[0]
    currency = run["currency"]
    balance = to_decimal(run["balance"], currency) or Decimal(0)
    owed = to_decimal(run["owed"], currency) or Decimal(0)
    positions = billing.renewal_positions(vms, wallet)
    owing = positions[positions["owes"]]
    owed_unpriced = int(owing["amount"].isna().sum())
    owed_other = int((owing["amount"].notna() & ~owing["debitable"]).sum())

    paid_up = _paid_up(vms, now, cycle)
    due = billing.renewals(paid_up, wallet, now=now, within=widest, cycle=cycle)
    after = billing.renewal_positions(paid_up, wallet)
    debitable = dict(zip(after["vm_id"], after["debitable"], strict=True))
    unscheduled = int((after["renews"] & after["next_renewal_at"].isna()).sum())
    unknown = int(run["unknown_status"])
    ok = due["vm_id"].map(debitable).fillna(False).astype(bool)

    rows = []
    for d in days:
        end = now + pd.Timedelta(days=d)
        inside = (due["renewal_at"] <= end).to_numpy(dtype=bool)
        part, part_ok = due[inside], ok[inside].to_numpy(dtype=bool)
        due_amount = exact_sum(part["amount"][part_ok], currency)
        needed = owed + due_amount
        topup = max(needed - balance, Decimal(0))
        unpriced = owed_unpriced + int(part["amount"].isna().sum())
        other = owed_other + int((part["amount"].notna().to_numpy(dtype=bool) & ~part_ok).sum())
        rows.append(
            {
                "horizon_days": d,
                "horizon_end": end,
                "currency": currency,
                "balance": balance,
                "owed": owed,
                "renewals": len(part),
                "due": due_amount,
                "needed": needed,
                "topup": topup,
                "covered": topup == 0,
                "unpriced": unpriced,
                "other_currency": other,
                "unscheduled": unscheduled,
                "unknown_status": unknown,
                "complete": unpriced == 0 and other == 0 and unscheduled == 0 and unknown == 0,
            }
        )
    out = pd.DataFrame(rows, columns=TOPUP_COLUMNS)
    out["horizon_end"] = pd.to_datetime(out["horizon_end"], utc=True)
    return out.astype(
        {
            "horizon_days": "Int64",
            "currency": "string",
            "renewals": "Int64",
            "covered": "boolean",
            "unpriced": "Int64",
            "other_currency": "Int64",
            "unscheduled": "Int64",
            "unknown_status": "Int64",
            "complete": "boolean",
        }
    )


@report(frames={"vms": "vms", "wallet": "wallet"})
def suspensions(
    vms: pd.DataFrame,
    wallet: pd.DataFrame,
    now: Any = None,
    horizon: str = "90D",
    cycle: str = billing.DEFAULT_CYCLE,
    grace: str | None = None,
    pins: Pins | None = None,
) -> pd.DataFrame:
    """Which VMs are suspended, and when, if nobody tops up: soonest first.

    The walk is :func:`billing.renewal_schedule` over ``horizon``; each renewal it cannot pay
    suspends its VM ``grace`` later. VMs owing now are listed too (module docstring).
    ``grace`` None: the pin of ``billing.grace`` in ``pins`` (a snapshot's, from the store;
    None: the config file's); unpinned, suspended_at, suspended_by and days_until are NA, the
    rows sorted by failed_at, with one ``AssumptionWarning`` (``attrs["grace"]`` None).
    Reads the columns of :func:`topup_needed`. Returns vm_id, name, status, billing_status,
    basis ("renewal unpaid": a renewal in the walk; "owes now": its renewal date is past;
    "owes now, since when not shown": ``suspended_at`` unknown, ``suspended_by`` the latest),
    failed_at (the unpaid renewal; NaT when not shown), suspended_at (NaT when not known),
    suspended_by (the latest it comes), days_until (from now to suspended_by), amount (what it
    then owes; ``Decimal``, None when unknown), currency, balance_then (the balance left when
    the renewal failed; ``Decimal``). ``attrs``: already_suspended (VMs suspended now, not
    listed), not_debitable (renewals in the walk whose price is unknown or in another currency:
    the walk could not take them, so later failures may come sooner), unscheduled,
    unknown_status, complete (all of those but already_suspended are 0).
    """
    now = resolve_now(now)
    grace_td, decided = grace_decision(grace, pins)
    out = _suspensions(vms, wallet, now, horizon, cycle, grace_td)
    out.attrs["assumptions"] = {GRACE: decided}
    if grace_td is None and len(out):
        warn_grace()
    return out


@reusable
def _suspensions(
    vms: pd.DataFrame,
    wallet: pd.DataFrame,
    now: pd.Timestamp,
    horizon: str,
    cycle: str,
    grace_td: pd.Timedelta | None,
) -> pd.DataFrame:
    """:func:`suspensions` with the grace decided (None: unknown), warning of nothing."""
    schedule = billing.renewal_schedule(vms, wallet, now=now, horizon=horizon, cycle=cycle)
    placed = billing.renewal_positions(vms, wallet)
    positions = placed.set_index("vm_id", drop=False)
    # lists, not the Series: iterating a string Series reads its cells one by one (10,000 VMs)
    ids = vms["id"].astype("string")
    statuses = dict(zip(ids.tolist(), vms["status"].astype("string").tolist(), strict=True))
    currency = billing.account_currency(vms, wallet)
    rows = []
    money = _Money()
    unpaid = schedule[(schedule["debitable"] & ~schedule["paid"]).fillna(False).to_numpy(bool)]
    columns = ["vm_id", "name", "renewal_at", "amount", "currency", "balance_before"]
    for vm_id, name, at, amount, cur, before in zip(
        *(unpaid[c].tolist() for c in columns), strict=True
    ):
        rows.append(
            {
                "vm_id": vm_id,
                "name": name,
                "basis": "renewal unpaid",
                "failed_at": at,
                "suspended_at": pd.NaT if grace_td is None else at + grace_td,
                "amount": money(amount, cur),
                "currency": cur,
                "balance_then": money(before, currency),
            }
        )
    bill, vm = billing_classes(vms).to_numpy(), vm_classes(vms).to_numpy()
    owes = placed["owes"].to_numpy(dtype=bool)
    owing_now = owes & (bill == "owing") & (vm != "suspended")
    already = ((vm == "suspended") | (owes & (bill == "suspended"))) & (vm != "terminated")
    for vm_id in ids[owing_now].tolist():
        p = positions.loc[vm_id]
        when = p["next_renewal_at"]
        known = not pd.isna(when) and when <= now
        rows.append(
            {
                "vm_id": vm_id,
                "name": p["name"],
                "basis": "owes now" if known else "owes now, since when not shown",
                "failed_at": when if known else pd.NaT,
                "suspended_at": when + grace_td if known and grace_td is not None else pd.NaT,
                "amount": to_decimal(p["amount"], p["currency"]),
                "currency": p["currency"],
                "balance_then": None,
            }
        )
    out = pd.DataFrame(rows).reindex(columns=SUSPENSION_COLUMNS)
    for col in ("failed_at", "suspended_at"):
        out[col] = pd.to_datetime(out[col], utc=True)
    # where the data does not show since when a VM owes: by now + grace at the latest
    latest = out["suspended_at"] if grace_td is None else out["suspended_at"].fillna(now + grace_td)
    out["suspended_by"] = latest
    out["days_until"] = (out["suspended_by"] - now) / pd.Timedelta(days=1)
    out["status"] = out["vm_id"].map(statuses)
    words = zip(positions["vm_id"].tolist(), positions["billing_status"].tolist(), strict=True)
    out["billing_status"] = out["vm_id"].map(dict(words))
    out = out.astype(
        {
            "vm_id": "string",
            "name": "string",
            "status": "string",
            "billing_status": "string",
            "basis": "string",
            "days_until": "Float64",
            "currency": "string",
        }
    )
    # without a grace every date is unknown: the renewals that fail, in the order they fail
    order = ["suspended_by", "vm_id"] if grace_td is not None else ["failed_at", "vm_id"]
    out = out.sort_values(order, kind="stable").reset_index(drop=True)
    not_debitable = int((~schedule["debitable"].fillna(False)).sum())
    unscheduled = int((positions["renews"] & positions["next_renewal_at"].isna()).sum())
    unknown = int(schedule.attrs.get("unknown_status", 0))
    out.attrs = {
        "now": now,
        "horizon_end": now + duration(horizon, name="horizon"),
        "already_suspended": int(already.sum()),
        "not_debitable": not_debitable,
        "unscheduled": unscheduled,
        "unknown_status": unknown,
        "complete": not_debitable == 0 and unscheduled == 0 and unknown == 0,
        "grace": grace_td,
    }
    return out


def scenario(vms: pd.DataFrame, vm_ids: Iterable[str], how: str = "stop") -> pd.DataFrame:
    """``vms`` as they would be with the VMs ``vm_ids`` stopped or terminated, for any billing
    report to answer "what if" with.

    ``how="stop"``: VMs whose status class is running get a stopped word (the public stop acts
    on running VMs only); ``"terminate"``: every VM not terminated yet gets a terminated word.
    Reads ``vms``: id, status. Returns ``vms`` with those statuses changed; ``attrs["changed"]``
    lists the ids changed, ``attrs["not_found"]`` the ids ``vms`` does not hold.
    """
    if how not in HOWS:
        raise ValueError(f"how={how!r}: choose one of {', '.join(HOWS)}")
    wanted = list(dict.fromkeys(str(v) for v in vm_ids))
    ids = vms["id"].astype("string")
    known = set(ids.dropna().tolist())
    cls = vm_classes(vms)
    target, word = ("running", "stopped") if how == "stop" else (None, "terminated")
    hit = ids.isin(wanted).fillna(False).to_numpy(dtype=bool)
    if target is None:
        hit = hit & (cls != "terminated").to_numpy(dtype=bool)
    else:
        hit = hit & (cls == target).to_numpy(dtype=bool)
    out = vms.copy()
    status = out["status"].astype(object).to_numpy().copy()
    status[hit] = _word("vm_status", word)
    out["status"] = pd.array(status, dtype="string")
    out.attrs = {
        "changed": [str(v) for v in ids[hit]],
        "not_found": [v for v in wanted if v not in known],
    }
    return out


@report(frames={"vms": "vms", "wallet": "wallet"})
def what_if_stop(
    vms: pd.DataFrame,
    wallet: pd.DataFrame,
    vm_ids: Iterable[str] = (),
    now: Any = None,
    how: str = "stop",
    horizons: Iterable[int] = DEFAULT_HORIZONS,
    cycle: str = billing.DEFAULT_CYCLE,
    grace: str | None = None,
    pins: Pins | None = None,
) -> pd.DataFrame:
    """The top-up, renewals due, suspensions and runway with the VMs ``vm_ids`` stopped (or
    terminated, ``how``), beside today's, per horizon.

    Under the renewal model stopped VMs still renew, so ``how="stop"`` changes no money figure
    (:data:`STOP_NOTE`); ``how="terminate"`` shows what not renewing them saves.
    Reads the columns of :func:`topup_needed`. Returns horizon_days, horizon_end, currency,
    how, vms_changed (VMs whose status the scenario changed), not_found (ids the data does not
    hold), topup_before, topup_after, topup_saved (before - after), due_before, due_after,
    due_saved, suspended_before, suspended_after (VMs suspended by the horizon's end if nobody
    tops up; NA when the grace is unknown: ``grace`` and ``pins`` as :func:`suspensions`,
    one ``AssumptionWarning``), runway_before, runway_after (:func:`billing.runway`'s date, the
    same on every row), complete (both scenarios complete and every id found). Money is ``Decimal``.
    """
    now = resolve_now(now)
    days = _days(horizons)
    changed = scenario(vms, vm_ids, how)
    widest = f"{days[-1]}D"
    # a scenario that changes no VM is today's fleet: its figures are today's, computed once
    after = changed if changed.attrs["changed"] else vms
    # the runway's walk (a year) first: the top-up's and the suspensions' are its first rows
    runs = [billing.runway(f, wallet, now=now, cycle=cycle).iloc[0] for f in (vms, after)]
    top = [topup_needed(f, wallet, now=now, horizons=days, cycle=cycle) for f in (vms, after)]
    grace_td, decided = grace_decision(grace, pins)
    sus = [_suspensions(f, wallet, now, widest, cycle, grace_td) for f in (vms, after)]
    if grace_td is None and any(len(s) for s in sus):
        warn_grace()

    def suspended(frame: pd.DataFrame, end: pd.Timestamp) -> Any:
        return pd.NA if grace_td is None else int((frame["suspended_by"] <= end).sum())

    not_found = len(changed.attrs["not_found"])
    whole = not_found == 0 and all(s.attrs["complete"] for s in sus)
    rows = []
    for i, d in enumerate(days):
        b, a = top[0].iloc[i], top[1].iloc[i]
        end = b["horizon_end"]
        rows.append(
            {
                "horizon_days": d,
                "horizon_end": end,
                "currency": b["currency"],
                "how": how,
                "vms_changed": len(changed.attrs["changed"]),
                "not_found": not_found,
                "topup_before": b["topup"],
                "topup_after": a["topup"],
                "topup_saved": b["topup"] - a["topup"],
                "due_before": b["due"],
                "due_after": a["due"],
                "due_saved": b["due"] - a["due"],
                "suspended_before": suspended(sus[0], end),
                "suspended_after": suspended(sus[1], end),
                "runway_before": runs[0]["runway_at"],
                "runway_after": runs[1]["runway_at"],
                "complete": whole and bool(b["complete"]) and bool(a["complete"]),
            }
        )
    out = pd.DataFrame(rows, columns=WHAT_IF_COLUMNS)
    for col in ("horizon_end", "runway_before", "runway_after"):
        out[col] = pd.to_datetime(out[col], utc=True)
    out = out.astype(
        {
            "horizon_days": "Int64",
            "currency": "string",
            "how": "string",
            "vms_changed": "Int64",
            "not_found": "Int64",
            "suspended_before": "Int64",
            "suspended_after": "Int64",
            "complete": "boolean",
        }
    )
    out.attrs = {"changed": changed.attrs["changed"], "not_found": changed.attrs["not_found"]}
    return out


# --- the what-if view: what every surface shows (svcnb.reports._view) -------------------------
# Each figure's spec sits right above the function computing it from the view's ground.

_NONE_CHOSEN = "no VM chosen"


@dataclass(frozen=True)
class _Ground:
    """What the what-if figures are computed from, as of one snapshot."""

    top: pd.Series  # topup_needed's row of the chosen horizon
    change: pd.Series  # what_if_stop's row of the chosen horizon
    within: pd.DataFrame  # the suspensions within the horizon
    sus: pd.DataFrame  # every suspension (its attrs count the rest)
    wif: pd.DataFrame
    ids: list[str]
    days: int
    dated: bool  # the grace period is known
    currency: str | None

    @property
    def complete(self) -> bool:
        return bool(self.top["complete"]) and bool(self.sus.attrs["complete"])

    @property
    def bound(self) -> str:
        return "" if self.complete else "at least"

    def money(self, value: Any) -> Any:
        return to_decimal(value, self.currency)


def _balance(g: _Ground) -> Figure:
    return Figure(billing.BALANCE, g.money(g.top["balance"]), currency=g.currency)


def _owed(g: _Ground) -> Figure:
    return Figure(billing.OWED, g.money(g.top["owed"]), currency=g.currency)


RENEWALS_IF_PAID = FigureSpec(
    "renewals_if_paid",
    "Renewals due in {horizon} days once debts are paid",
    "money",
    "The renewals falling due within the horizon of every VM that renews once what it "
    "owes is paid: VMs in good standing and the overdue and suspended ones a top-up "
    "brings back (billing's 'Renewals due' counts good standing only); the count is in "
    "brackets.",
)


def _renewals_if_paid(g: _Ground) -> Figure:
    return Figure(
        RENEWALS_IF_PAID,
        g.money(g.top["due"]),
        currency=g.currency,
        qualifier=g.bound,
        detail=f"{int(g.top['renewals']):,} renewals",
    )


TOPUP = FigureSpec(
    "topup",
    "Top-up to pay owed + renewals of {horizon} days",
    "money",
    "Owed now plus those renewals, less the balance; 0 when the balance covers them.",
)


def _topup(g: _Ground) -> Figure:
    return Figure(
        TOPUP,
        g.money(g.top["topup"]),
        currency=g.currency,
        qualifier=g.bound,
        detail="covered" if bool(g.top["covered"]) else "",
    )


SUSPENDED = FigureSpec(
    "suspended",
    "VMs suspended within {horizon} days if nobody tops up",
    "count",
    "VMs whose renewal the wallet cannot pay within the horizon, suspended after the grace period.",
    left_out="at least",
)


def _suspended(g: _Ground) -> Figure:
    n = len(g.within)
    return Figure(
        SUSPENDED,
        n if g.dated or not n else None,
        complete=None if g.dated or not n else False,
        reason="" if g.dated else f"{GRACE} not pinned",
        detail="" if g.dated or not n else f"{n} unpaid renewal(s)",
    )


FIRST_SUSPENDED_AT = FigureSpec(
    "first_suspended_at",
    "First suspension if nobody tops up",
    "time",
    "When the first of those VMs is suspended (the VM in brackets).",
    left_out="by",
)


def _first_suspended_at(g: _Ground) -> Figure:
    within, dated = g.within, g.dated
    return Figure(
        FIRST_SUSPENDED_AT,
        within["suspended_by"].iloc[0] if len(within) else pd.NaT,
        empty=f"none within {g.days} days" if dated or not len(within) else "unknown",
        complete=None if g.complete and dated else False,
        qualifier="" if g.complete or not dated else "by",
        detail=str(within["name"].iloc[0]) if len(within) and dated else "",
        reason="" if dated else f"{GRACE} not pinned",
    )


ALREADY_SUSPENDED = FigureSpec(
    "already_suspended",
    "VMs already suspended",
    "count",
    "VMs suspended at the snapshot.",
    left_out="at least",
)


def _already_suspended(g: _Ground) -> Figure:
    return Figure(ALREADY_SUSPENDED, int(g.sus.attrs["already_suspended"]))


CHOSEN = FigureSpec("chosen", "VMs chosen", "count", "The VMs the what-if stops or terminates.")


def _chosen(g: _Ground) -> Figure:
    return Figure(CHOSEN, len(g.wif.attrs.get("changed", [])) if g.ids else 0)


TOPUP_AFTER = FigureSpec(
    "topup_after",
    "Top-up in {horizon} days with the chosen VMs {done}",
    "money",
    "The same top-up with the chosen VMs stopped (they still renew) or terminated "
    "(they no longer renew).",
)


def _topup_after(g: _Ground) -> Figure:
    return Figure(
        TOPUP_AFTER,
        g.money(g.change["topup_after"]) if g.ids else None,
        currency=g.currency,
        qualifier=g.bound if g.ids else "",
        empty=_NONE_CHOSEN,
    )


TOPUP_SAVED = FigureSpec(
    "topup_saved",
    "Saved by that",
    "money",
    "Top-up today less top-up with the chosen VMs changed.",
)


def _topup_saved(g: _Ground) -> Figure:
    return Figure(
        TOPUP_SAVED,
        g.money(g.change["topup_saved"]) if g.ids else None,
        currency=g.currency,
        empty=_NONE_CHOSEN,
    )


RUNWAY_BEFORE = FigureSpec(
    "runway_before",
    "Runway today",
    "time",
    "When the wallet first cannot pay a renewal, as things stand.",
)


def _runway_before(g: _Ground) -> Figure:
    return Figure(
        RUNWAY_BEFORE,
        g.change["runway_before"],
        empty="none within a year",
        complete=None if g.complete else False,
        qualifier="" if g.complete else "by",
    )


RUNWAY_AFTER = FigureSpec(
    "runway_after",
    "Runway with the chosen VMs {done}",
    "time",
    "The same with the chosen VMs changed.",
)


def _runway_after(g: _Ground) -> Figure:
    return Figure(
        RUNWAY_AFTER,
        g.change["runway_after"] if g.ids else pd.NaT,
        empty="none within a year" if g.ids else _NONE_CHOSEN,
        complete=None if g.complete or not g.ids else False,
        qualifier="" if g.complete or not g.ids else "by",
    )


WHAT_IF_TABLE = TableSpec(
    "what_if",
    "What if the {chosen} chosen VM(s) were {done}",
    (
        "horizon_days",
        "vms_changed",
        "topup_before",
        "topup_after",
        "topup_saved",
        "suspended_before",
        "suspended_after",
        "runway_before",
        "runway_after",
    ),
    "One row per horizon: today's figures beside the scenario's.",
)
TOPUP_TABLE = TableSpec(
    "topup",
    "Top-up needed to pay every debt and renewal of each horizon",
    ("horizon_days", "balance", "owed", "renewals", "due", "needed", "topup", "complete"),
    "One row per horizon.",
)
SUSPENSIONS_TABLE = TableSpec(
    "suspensions",
    "Suspended within {horizon} days if nobody tops up",
    ("suspended_by", "name", "vm_id", "basis", "failed_at", "amount", "balance_then"),
    "One row per VM, soonest first.",
)
TOPUP_PLOT = PlotSpec("topup", "Top-up per horizon")
SUSPENSIONS_PLOT = PlotSpec("suspensions", "Suspensions if nobody tops up", (7.0, 4.5))
WHAT_IF_PLOT = PlotSpec("what_if", "Top-up today and in the scenario")

VIEW = ViewSpec(
    report="whatif",
    title="What if",
    figures=(
        # the same figures as billing's, declared there once
        billing.BALANCE,
        billing.OWED,
        RENEWALS_IF_PAID,
        TOPUP,
        SUSPENDED,
        FIRST_SUSPENDED_AT,
        ALREADY_SUSPENDED,
        CHOSEN,
        TOPUP_AFTER,
        TOPUP_SAVED,
        RUNWAY_BEFORE,
        RUNWAY_AFTER,
    ),
    tables=(WHAT_IF_TABLE, TOPUP_TABLE, SUSPENSIONS_TABLE),
    plots=(TOPUP_PLOT, SUSPENSIONS_PLOT, WHAT_IF_PLOT),
)


@sharing
def view(
    store: Any,
    at: Any = None,
    *,
    horizons: Iterable[int] = DEFAULT_HORIZONS,
    horizon: int | None = None,
    how: str = "stop",
    vm_ids: Iterable[str] = (),
    account: str | None = None,
) -> View:
    """The what-if view as of the latest snapshot at or before ``at`` (see ``VIEW``).

    ``horizons``: the top-up table's horizons in days; ``horizon``: the one the figures and the
    suspensions are for (default the longest); ``how`` and ``vm_ids``: the scenario (no VM: the
    scenario figures say "no VM chosen"). An id the snapshot does not hold is a ValueError.
    """
    if how not in HOWS:
        raise ValueError(f"how={how!r}: choose one of {', '.join(HOWS)}")
    days = _days(horizons)
    chosen_days = days[-1] if horizon is None else int(horizon)
    if chosen_days not in days:
        days = sorted({*days, chosen_days})
    ids = [str(v) for v in vm_ids]
    inputs = what_if_stop.inputs(store, at, account)
    vms, wallet, now, pins = inputs["vms"], inputs["wallet"], inputs["now"], inputs["pins"]
    with warnings.catch_warnings():
        # said once below, in the view's notes too
        warnings.simplefilter("ignore", AssumptionWarning)
        wif = what_if_stop(vms, wallet, ids, now=now, how=how, horizons=days, pins=pins)
        sus = suspensions(vms, wallet, now=now, horizon=f"{chosen_days}D", pins=pins)
    dated = sus.attrs["grace"] is not None
    if not dated and len(sus):
        warn_grace()
    missing = wif.attrs.get("not_found") or []
    if missing:
        raise ValueError(
            f"no VM {', '.join(missing)} in the snapshot of {now:%Y-%m-%d %H:%M}; see the "
            "prices table of the billing report for the VMs it holds"
        )
    top = topup_needed(vms, wallet, now=now, horizons=days)
    row = top[top["horizon_days"] == chosen_days].iloc[0]
    change = wif[wif["horizon_days"] == chosen_days].iloc[0]
    # without a grace: the VMs whose renewal fails within the horizon (or failed already),
    # when each is suspended unknown
    when = sus["suspended_by"] if dated else sus["failed_at"]
    inside = (when <= row["horizon_end"]) | (when.isna() & ~dated)
    within = sus[inside.to_numpy(dtype=bool)].reset_index(drop=True)
    currency = None if pd.isna(row["currency"]) else str(row["currency"])
    g = _Ground(row, change, within, sus, wif, ids, chosen_days, dated, currency)
    done = "stopped" if how == "stop" else "terminated"
    tables = {TOPUP_TABLE: top, SUSPENSIONS_TABLE: within}
    plots = {
        TOPUP_PLOT: lambda ax: plot_topup(top, ax=ax),
        SUSPENSIONS_PLOT: lambda ax: plot_suspensions(within, ax=ax),
    }
    if ids:
        tables[WHAT_IF_TABLE] = wif
        plots[WHAT_IF_PLOT] = lambda ax: plot_what_if(wif, ax=ax)
    figures = [
        _balance(g),
        _owed(g),
        _renewals_if_paid(g),
        _topup(g),
        _suspended(g),
        _first_suspended_at(g),
        _already_suspended(g),
        _chosen(g),
        _topup_after(g),
        _topup_saved(g),
        _runway_before(g),
        _runway_after(g),
    ]
    notes = _view_notes(row, sus.attrs, wif, vms, ids, how)
    if not dated and len(sus):
        notes.append(grace_unknown_text())
    notes += view_notes(inputs, tables.values())
    return view_of(
        VIEW,
        now,
        figures,
        tables,
        plots,
        options={"horizon": chosen_days, "done": done, "chosen": len(ids)},
        notes=notes,
        complete=g.complete and not any("may be incomplete" in n for n in notes),
        left_out=len(billing.unknown_status(vms, now=now)),
    )


def _view_notes(
    row: pd.Series, left: dict, wif: pd.DataFrame, vms: pd.DataFrame, ids: list[str], how: str
) -> list[str]:
    """Sentences on what the what-if figures leave out or assume."""
    notes = []
    if how == "stop" and len(wif.attrs.get("changed", [])):
        notes.append(STOP_NOTE)
    if int(row["unknown_status"]):
        notes.append(left_out_note(int(row["unknown_status"])))
    counts = [
        (int(row["unpriced"]), "renewal(s) or debt(s) of unknown price"),
        (int(row["other_currency"]), "in a currency other than the wallet's (never converted)"),
        (int(row["unscheduled"]), "VM(s) that will renew but have no renewal date yet"),
    ]
    for n, what in counts:
        if n:
            notes.append(f"Not counted: {n} {what}; the top-up may be higher.")
    if left["not_debitable"]:
        notes.append(
            f"{left['not_debitable']} renewal(s) the walk could not debit: suspensions may "
            "come sooner."
        )
    if ids:
        priced = billing.prices(vms)
        by_plan = priced[priced["vm_id"].isin(ids) & (priced["price_source"] == "plan")]
        if len(by_plan):
            names = ", ".join(str(n) for n in by_plan["name"])
            notes.append(
                f"{len(by_plan)} chosen VM(s) state no price ({names}): what they save is their "
                "plan's price, the one every other VM of the plan states."
            )
    return notes
