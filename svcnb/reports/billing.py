"""Billing: upcoming renewals, run rate, wallet runway, low-balance forecast, balance history.

Money is never added across currencies: every amount column has a ``currency`` beside it and
every total is per currency.

Currency where the data does not say (``*_currency`` NA; the spec leaves money formats "not
shown" and the API states a currency only in the ``{amount, currency}`` form): an account bills in
one currency, so an unstated currency is taken to be **the account currency**, which is the
wallet's stated currency, else the one currency stated anywhere in the prices when exactly one is,
else unknown. Unknown stays NA and is its own group, never merged into a stated currency.

Renewal model (the sandbox's, ``svcnb/sandbox/_life.py``; the spec shows none):

- A VM renews at ``next_renewal_at`` and then every calendar month on the same day of the month
  (clamped to shorter months), debiting its monthly price when the balance covers it.
- Renewals are walked in time order; those at the same instant in VM id order (the service's
  order is not shown).
- A renewal the wallet cannot pay debits nothing; the VM then owes its price, turns ``overdue``
  and does not renew again until a top-up pays the debt (after 3 days it is suspended).
- Status words are read as classes through ``svcnb.vocab`` (``active`` may mean running,
  ``unpaid`` overdue). Terminated VMs are not billed. Suspended VMs and VMs that already owe
  (billing class ``owing`` or ``suspended``) do not renew; what the owing ones owe is counted as
  ``owed``. Running, stopped and transitional VMs with billing class ``paid`` renew.
- A VM whose status class is ``unknown``, or (not terminated) whose billing class is, cannot be
  placed: reports leave it out of every sum and forecast and count it as ``unknown_status``.
  A runway computed without some VMs says so (``complete`` False): it may come sooner.
- A VM whose record states no price is billed its plan's catalog price: the price every VM of
  the same plan states, when they agree (``price_source`` "plan"); otherwise it stays unknown.
- A renewal in a currency other than the wallet's, or with an unknown price, cannot be debited
  here and is listed with ``debitable`` False, never converted.
- The low-balance warning (``billing.low_balance``) compares the balance with what is owed plus
  the renewals due within the next 7 days (``DEFAULT_LOW_BALANCE_WINDOW``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from svcnb import files as _files
from svcnb.frames import ResourceName
from svcnb.money import exact_sum, plain_text, to_decimal
from svcnb.reports._classes import (
    LIVE,
    OWING,
    UNKNOWN,
    billing_classes,
    left_out_note,
    vm_classes,
)
from svcnb.reports._columns import MONEY_COLUMNS, currency_of
from svcnb.reports._display import day_text, kind
from svcnb.reports._duration import DurationError, duration, duration_text
from svcnb.reports._plots.billing import plot_balance, plot_renewals
from svcnb.reports._replay import as_of, latest_per_time, report, resolve_now
from svcnb.reports._reuse import active as reuse_active
from svcnb.reports._reuse import reusable, sharing
from svcnb.reports._view import (
    UNKNOWN_STATUS,
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
    "BILLING_HISTORY",
    "VIEW",
    "DEFAULT_CYCLE",
    "DEFAULT_LOW_BALANCE_WINDOW",
    "account_currency",
    "balance_history",
    "export_csv",
    "low_balance_forecast",
    "monthly_total",
    "overdue",
    "plot_balance",
    "plot_renewals",
    "prices",
    "renewal_positions",
    "renewal_schedule",
    "renewal_step",
    "renewal_steps",
    "renewals",
    "renewals_due",
    "run_rate",
    "runway",
    "unknown_status",
    "view",
]

# Billing cycle of a VM: a calendar month on the same day, as the sandbox renews.
DEFAULT_CYCLE = "month"
# The sandbox's billing.low_balance look-ahead (svcnb/sandbox/_life.py LOW_BALANCE_WINDOW).
DEFAULT_LOW_BALANCE_WINDOW = "7D"

BILLING_HISTORY: tuple[ResourceName, list[str]] = ("wallet", ["balance_amount", "balance_currency"])


def account_currency(vms: pd.DataFrame, wallet: pd.DataFrame | None = None) -> Any:
    """The currency an unstated amount is taken to be in (see module docstring), or NA.

    Reads ``wallet.balance_currency`` and ``vms.price_monthly_currency``.
    """
    if wallet is not None and not wallet.empty and "balance_currency" in wallet:
        stated = wallet["balance_currency"].dropna()
        if not stated.empty:
            return stated.iloc[0]
    if "price_monthly_currency" in vms:
        priced = vms["price_monthly_currency"].dropna().unique()
        if len(priced) == 1:
            return priced[0]
    return pd.NA


def _wallet_balance(wallet: pd.DataFrame | None, vms: pd.DataFrame) -> tuple[float, Any]:
    if wallet is None or wallet.empty:
        raise ValueError("the wallet frame is empty; load it with store.load('wallet')")
    amount = wallet["balance_amount"].iloc[0]
    if pd.isna(amount):
        raw = wallet["balance_raw"].iloc[0] if "balance_raw" in wallet else None
        raise ValueError(f"the wallet balance {raw!r} states no amount; cannot compute a runway")
    return float(amount), account_currency(vms, wallet)


def _placed(vms: pd.DataFrame) -> pd.DataFrame:
    """Per VM: its classes and what they mean for billing (``billed``, ``renews``, ``owes``),
    and whether it is left out because a word it needs is unknown (``unknown_vm`` for the VM
    status, ``unknown_billing`` for the billing status of a VM that is not terminated)."""
    vm, bill = vm_classes(vms), billing_classes(vms)
    terminated = vm == "terminated"
    unknown_vm = vm == UNKNOWN
    unknown_billing = ~terminated & ~unknown_vm & (bill == UNKNOWN)
    known = ~unknown_vm & ~unknown_billing
    return pd.DataFrame(
        {
            "vm_class": vm,
            "billing_class": bill,
            "billed": ~terminated & ~unknown_vm,
            "renews": vm.isin(LIVE) & (bill == "paid"),
            "owes": ~terminated & known & bill.isin(OWING),
            "unknown_vm": unknown_vm,
            "unknown_billing": unknown_billing,
        },
        index=vms.index,
    ).astype({"billed": bool, "renews": bool, "owes": bool})


@reusable
def _priced(vms: pd.DataFrame, currency: Any) -> pd.DataFrame:
    """Every VM with ``amount``, resolved ``currency``, whether it renews or owes, and whether it
    is left out (``unknown``: its status or billing word is unknown)."""
    placed = _placed(vms)
    stated = vms["price_monthly_currency"].astype("string")
    out = pd.DataFrame(
        {
            "vm_id": vms["id"].astype("string"),
            "name": vms["name"].astype("string"),
            "plan_slug": vms["plan_slug"].astype("string"),
            "region_slug": vms["region_slug"].astype("string"),
            "billing_status": vms["billing_status"].astype("string"),
            "next_renewal_at": pd.to_datetime(vms["next_renewal_at"], utc=True),
            "amount": vms["price_monthly_amount"].astype("Float64"),
            "currency": stated if pd.isna(currency) else stated.fillna(currency),
            "price_source": pd.array(["stated"] * len(vms), dtype="string"),
            "renews": placed["renews"].to_numpy(),
            "owes": placed["owes"].to_numpy(),
            "billed": placed["billed"].to_numpy(),
            "unknown_vm": placed["unknown_vm"].to_numpy(),
            "unknown": (placed["unknown_vm"] | placed["unknown_billing"]).to_numpy(),
            # provisioning and the like: no renewal date yet is what such a VM has
            "transitional": (placed["vm_class"] == "transitional").to_numpy(dtype=bool),
        },
        index=vms.index,
    ).reset_index(drop=True)
    return _price_from_plan(out)


def _price_from_plan(priced: pd.DataFrame) -> pd.DataFrame:
    """Give a VM that states no price the price every priced VM of its plan states, if they agree.

    The service bills such a VM its plan's catalog price (the sandbox does); the VMs of the same
    plan that do state one show it. ``price_source`` says "plan" for these, NA stays NA.
    """
    missing = (priced["amount"].isna() & priced["plan_slug"].notna()).to_numpy(dtype=bool)
    if missing.any():
        known = priced.dropna(subset=["amount", "plan_slug"])
        plans = known.groupby("plan_slug", sort=False)
        # a plan's price is taken when its priced VMs state one amount, and (where every one
        # states a currency) one currency; a currency some leave unstated is not given
        stated_all = ~known["currency"].isna().groupby(known["plan_slug"], sort=False).any()
        agree = (plans["amount"].nunique() == 1) & (
            ~stated_all | (plans["currency"].nunique() <= 1)
        )
        wanted = priced.loc[missing, "plan_slug"]
        rows = wanted.index[wanted.isin(agree.index[agree.to_numpy(dtype=bool)]).to_numpy(bool)]
        if len(rows):
            plan = priced.loc[rows, "plan_slug"]
            priced.loc[rows, "amount"] = plan.map(plans["amount"].first()).to_numpy()
            plan_says = plan.isin(stated_all.index[stated_all.to_numpy(dtype=bool)])
            unstated = priced.loc[rows, "currency"].isna()
            gets = (plan_says & unstated).to_numpy(dtype=bool)
            if gets.any():
                priced.loc[rows[gets], "currency"] = (
                    plan[gets].map(plans["currency"].first()).to_numpy()
                )
            priced.loc[rows, "price_source"] = "plan"
    priced.loc[priced["amount"].isna(), "price_source"] = pd.NA
    return priced


@reusable
def renewal_positions(vms: pd.DataFrame, wallet: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per VM, how the renewal model places it: the frame :func:`renewal_schedule` walks.

    Reads ``vms``: id, name, status, plan_slug, region_slug, billing_status, next_renewal_at,
    price_monthly_amount, price_monthly_currency; ``wallet``: balance_currency. Returns vm_id,
    name, plan_slug, region_slug, billing_status, next_renewal_at, amount, currency (unstated:
    the account currency), price_source, renews, owes (what it owes counts in ``owed``),
    billed, unknown_vm, unknown (left out: status or billing word unknown), debitable (its
    price can be taken from the wallet: known, and in the wallet's currency), in ``vms`` order.
    """
    currency = account_currency(vms, wallet)
    out = _priced(vms, currency)
    out["debitable"] = _debitable_all(out["amount"], out["currency"], currency)
    return out


def _debitable_all(amount: pd.Series, currency: pd.Series, wallet_currency: Any) -> np.ndarray:
    """Per (amount, currency) pair, whether the wallet can pay it: a known amount in the wallet's
    currency. Where either currency is unknown, only both unknown counts (the account's one
    currency); one unknown and one stated cannot be told apart."""
    priced = amount.notna().to_numpy(dtype=bool)
    if pd.isna(wallet_currency):
        return priced & currency.isna().to_numpy(dtype=bool)
    same = (currency == wallet_currency).fillna(False).to_numpy(dtype=bool)
    return priced & same


def renewal_step(cycle: str = DEFAULT_CYCLE) -> Callable[[pd.Timestamp, int], pd.Timestamp]:
    """``nth(start, k)``: the date ``k`` cycles after a renewal at ``start`` (``k`` calendar
    months on the same day, clamped to shorter months, for ``"month"``; ``k`` times a duration
    such as ``"30D"`` otherwise)."""
    if cycle == "month":

        def nth(start: pd.Timestamp, k: int) -> pd.Timestamp:
            return start + pd.DateOffset(months=k)

        return nth
    try:
        step = duration(cycle, name="cycle")
    except DurationError as exc:
        raise DurationError(f"{exc}; or cycle='month' for calendar months") from None
    if step <= pd.Timedelta(0):
        raise DurationError(f"cycle={cycle!r} must be more than 0, e.g. cycle='30d' or 'month'")

    def nth_step(start: pd.Timestamp, k: int) -> pd.Timestamp:
        return start + k * step

    return nth_step


def renewal_steps(starts: pd.DatetimeIndex, k: int, cycle: str = DEFAULT_CYCLE) -> pd.DatetimeIndex:
    """:func:`renewal_step`'s ``nth(start, k)`` for every date of ``starts`` at once (the same
    dates, in the same unit)."""
    if cycle == "month":
        return starts + pd.DateOffset(months=k)
    renewal_step(cycle)  # the same errors for a cycle that is not a duration
    return starts + k * pd.Timedelta(cycle)


def _finest(units: Iterable[str]) -> str:
    """The finest of datetime units (what ``pd.to_datetime`` of Timestamps in them gives)."""
    order = ["s", "ms", "us", "ns"]
    return max(units, key=order.index, default="s")


def _occurrences(
    priced: pd.DataFrame, now: pd.Timestamp, end: pd.Timestamp, cycle: str
) -> pd.DataFrame:
    """Each renewal in ``(now, end]`` of each VM that renews, in order: ``priced``'s columns
    with ``renewal_at`` first, one row per renewal.

    Monthly steps count from the first date (k months on), so a cycle on the 31st comes back to
    the 31st after a short month. A renewal date not after ``now`` (not yet processed when the
    data was read) falls due at ``now``. Renewals at the same instant are in VM id order, a VM's
    own in date order.
    """
    live = priced[priced["renews"].to_numpy(dtype=bool)].dropna(subset=["next_renewal_at"])
    starts = pd.DatetimeIndex(live["next_renewal_at"])
    rows, steps, dates = [], [], []
    alive = np.arange(len(live))
    k = 0
    # every VM's k-th renewal at once, for k = 0, 1, ... until none is within the horizon
    # (the k-th date grows with k, so a VM past ``end`` stays past it)
    while len(alive):
        when = renewal_steps(starts[alive], k, cycle)
        inside = np.asarray(when <= end, dtype=bool)
        alive, when = alive[inside], when[inside]
        rows.append(alive)
        steps.append(np.full(len(alive), k))
        dates.append(when.as_unit("ns").asi8)
        k += 1
    row = np.concatenate(rows) if rows else np.array([], dtype=int)
    step = np.concatenate(steps) if steps else np.array([], dtype=int)
    raw = np.concatenate(dates) if dates else np.array([], dtype="int64")
    now_ns = now.as_unit("ns").value
    due = np.maximum(raw, now_ns)  # a date not after now falls due at now
    # each VM's place in VM id order (text order, as str() of the id gives it), once per VM
    # rather than once per renewal: ranks sort as the ids they stand for
    ids = live["vm_id"].astype(object).fillna("<NA>").to_numpy(dtype=str)
    rank = np.unique(ids, return_inverse=True)[1].reshape(-1)[row]
    # at one instant in VM id order; one VM's renewals (due together at now) in date order
    order = np.lexsort((step, row, rank, due)) if len(row) else row
    out = live.iloc[row[order]].reset_index(drop=True)
    out.insert(0, "renewal_at", pd.DatetimeIndex(due[order].view("M8[ns]")).tz_localize("UTC"))
    # which renewals fall due at now: their time is now's, in now's unit (see _times)
    out["_at_now"] = raw[order] < now_ns
    out.attrs["units"] = (starts.unit, now.unit)
    return out


def _times(due: pd.DataFrame) -> pd.Series:
    """``due["renewal_at"]`` (rows of :func:`_occurrences`) in the unit ``pd.to_datetime`` gives
    the same Timestamps: the finest of the renewal dates' unit and now's, among those present."""
    start_unit, now_unit = due.attrs["units"]
    at_now = due["_at_now"].to_numpy(dtype=bool)
    units = ([start_unit] if (~at_now).any() else []) + ([now_unit] if at_now.any() else [])
    return due["renewal_at"].dt.as_unit(_finest(units))


RENEWAL_COLUMNS = [
    "renewal_at",
    "days_until",
    "vm_id",
    "name",
    "plan_slug",
    "region_slug",
    "billing_status",
    "amount",
    "currency",
    "price_source",
]


@report(frames={"vms": "vms", "wallet": "wallet"})
def renewals(
    vms: pd.DataFrame,
    wallet: pd.DataFrame | None = None,
    now: Any = None,
    within: str = "30D",
    cycle: str = DEFAULT_CYCLE,
) -> pd.DataFrame:
    """Every renewal falling in ``(now, now + within]``, earliest first.

    A VM renews every ``cycle``, so over 90 days it appears about three times. VMs that owe or
    are suspended do not renew and are not listed (see :func:`overdue`); nor are VMs whose status
    or billing word is unknown: ``attrs["unknown_status"]`` counts them (see
    :func:`unknown_status`).

    Reads ``vms``: id, name, status, plan_slug, region_slug, billing_status, next_renewal_at,
    price_monthly_amount, price_monthly_currency; ``wallet``: balance_currency (for NA currency).
    Returns renewal_at, days_until, vm_id, name, plan_slug, region_slug, billing_status,
    amount, currency, price_source ("stated", or "plan" when the VM states no price and its
    plan's VMs all state the same one; NA when unknown).
    """
    now = resolve_now(now)
    priced = _priced(vms, account_currency(vms, wallet))
    due = _occurrences(priced, now, now + duration(within, name="within"), cycle)
    if due.empty:
        out = pd.DataFrame([], columns=RENEWAL_COLUMNS)
        out["renewal_at"] = pd.to_datetime(out["renewal_at"], utc=True)
    else:
        at = _times(due)
        out = due.assign(renewal_at=at, days_until=(at - now) / pd.Timedelta(days=1))
        out = out[RENEWAL_COLUMNS]
        out.attrs = {}
    out = out.astype(
        {
            "days_until": "Float64",
            "vm_id": "string",
            "name": "string",
            "plan_slug": "string",
            "region_slug": "string",
            "billing_status": "string",
            "amount": "Float64",
            "currency": "string",
            "price_source": "string",
        }
    )
    out.attrs["unknown_status"] = _unknown(priced)
    # a VM left out of the walk (no readable renewal date while up, price unread) may renew
    # within the window: the list is then not whole, and says so
    walk = _walk_complete(vms, priced)
    out.attrs["complete"] = walk["complete"]
    out.attrs["reason"] = None if walk["complete"] else walk["reason"]
    return out


def _unknown(priced: pd.DataFrame) -> int:
    return int(priced["unknown"].sum())


@report(frames={"vms": "vms", "wallet": "wallet"})
def renewals_due(
    vms: pd.DataFrame,
    wallet: pd.DataFrame | None = None,
    now: Any = None,
    windows: Iterable[int] = (7, 30, 90),
    cycle: str = DEFAULT_CYCLE,
) -> pd.DataFrame:
    """Count and total of renewals due within each window (days), per currency.

    Reads the columns of :func:`renewals`. Returns within_days, currency, renewals, amount,
    unpriced (renewals whose price the data does not state, not counted in ``amount``),
    unknown_status (VMs left out because their status or billing word is unknown: the same on
    every row; a window with nothing due but such VMs gets a row of currency NA and 0 renewals).
    """
    now = resolve_now(now)
    windows = sorted(int(w) for w in windows)
    rows = []
    # One walk to the widest window: the renewals of a narrower one are those due by its end.
    widest = renewals(vms, wallet, now=now, within=f"{max(windows, default=0)}D", cycle=cycle)
    unknown = widest.attrs["unknown_status"]
    for days in windows:
        due = widest[widest["renewal_at"] <= now + pd.Timedelta(days=days)]
        if due.empty and unknown:
            rows.append(
                {"within_days": days, "currency": pd.NA, "renewals": 0, "amount": 0.0,
                 "unpriced": 0, "unknown_status": unknown}
            )  # fmt: skip
        for currency, part in due.groupby("currency", dropna=False, sort=True):
            rows.append(
                {
                    "within_days": days,
                    "currency": currency,
                    "renewals": len(part),
                    "amount": float(exact_sum(part["amount"], currency)),
                    "unpriced": int(part["amount"].isna().sum()),
                    "unknown_status": unknown,
                }
            )
    columns = ["within_days", "currency", "renewals", "amount", "unpriced", "unknown_status"]
    out = pd.DataFrame(rows, columns=columns)
    walk = {k: widest.attrs[k] for k in ("complete", "reason")}
    out = out.astype(
        {
            "within_days": "Int64",
            "currency": "string",
            "renewals": "Int64",
            "amount": "Float64",
            "unpriced": "Int64",
            "unknown_status": "Int64",
        }
    )
    out.attrs.update(walk)
    return out


@report(frames={"vms": "vms", "wallet": "wallet"})
def run_rate(
    vms: pd.DataFrame,
    wallet: pd.DataFrame | None = None,
    now: Any = None,
    by: str = "plan_slug",
) -> pd.DataFrame:
    """Monthly run rate of the VMs not terminated, grouped by ``by`` and currency.

    ``by`` is ``plan_slug`` or ``region_slug``. Reads ``vms``: id, status, ``by``,
    price_monthly_amount, price_monthly_currency. Returns ``by``, currency, vms, monthly_amount,
    unpriced (VMs whose price the data does not state), unknown_status (VMs of the group left
    out of ``vms`` and ``monthly_amount`` because their status word is unknown).
    """
    if by not in ("plan_slug", "region_slug"):
        raise ValueError(f"by={by!r}: run rate is grouped by 'plan_slug' or 'region_slug'")
    priced = _priced(vms, account_currency(vms, wallet))
    priced = priced[(priced["billed"] | priced["unknown_vm"]).to_numpy(dtype=bool)]
    counted = priced["billed"].to_numpy(dtype=bool)  # not terminated, status known
    amount = priced["amount"]
    rows = pd.DataFrame(
        {
            by: priced[by],
            "currency": priced["currency"],
            "counted": counted,
            "amount_counted": amount.where(counted),
            "unpriced": amount.isna().to_numpy(dtype=bool) & counted,
            "unknown_vm": priced["unknown_vm"],
        }
    )
    groups = rows.groupby([by, "currency"], dropna=False, sort=True)
    # counts summed by pandas; only the money is added in Python, exactly
    out = groups.agg(
        vms=("counted", "sum"),
        unpriced=("unpriced", "sum"),
        unknown_status=("unknown_vm", "sum"),
    )
    out.insert(1, "monthly_amount", groups["amount_counted"].agg(lambda s: float(exact_sum(s))))
    out = out.reset_index()
    return out.astype(
        {
            "vms": "Int64",
            "monthly_amount": "Float64",
            "unpriced": "Int64",
            "unknown_status": "Int64",
        }
    )


@report(frames={"vms": "vms", "wallet": "wallet"})
def monthly_total(
    vms: pd.DataFrame, wallet: pd.DataFrame | None = None, now: Any = None
) -> pd.DataFrame:
    """The fleet's monthly run rate, one row per currency: the one source of that figure.

    The sum of :func:`run_rate` over its groups (VMs not terminated, unstated currencies taken
    as the account currency, unstated prices from the plan), added as decimals. Returns
    currency, vms, monthly_amount, unpriced, unknown_status. The demo summary, the billing panel,
    the notebooks and ``svcnb report billing`` all show this frame's numbers.
    """
    rates = run_rate(vms, wallet, now=now, by="plan_slug")
    rows = [
        {
            "currency": currency,
            "vms": int(part["vms"].sum()),
            "monthly_amount": float(exact_sum(part["monthly_amount"], currency)),
            "unpriced": int(part["unpriced"].sum()),
            "unknown_status": int(part["unknown_status"].sum()),
        }
        for currency, part in rates.groupby("currency", dropna=False, sort=True)
    ]
    columns = ["currency", "vms", "monthly_amount", "unpriced", "unknown_status"]
    return pd.DataFrame(rows, columns=columns).astype(
        {
            "currency": "string",
            "vms": "Int64",
            "monthly_amount": "Float64",
            "unpriced": "Int64",
            "unknown_status": "Int64",
        }
    )


@report(frames={"vms": "vms", "wallet": "wallet"})
def prices(vms: pd.DataFrame, wallet: pd.DataFrame | None = None, now: Any = None) -> pd.DataFrame:
    """The monthly price each VM is billed, as the billing reports read it: the one source of
    per-VM prices.

    Reads ``vms``: id, name, status, plan_slug, region_slug, billing_status,
    price_monthly_amount, price_monthly_currency. Returns vm_id, name, status, plan_slug,
    region_slug, amount, currency, price_source ("stated"; "plan" when the VM states none and its
    plan's VMs agree on one; NA when unknown), billed (False for terminated VMs and VMs whose
    status word is unknown: run rates leave those out).
    """
    priced = _priced(vms, account_currency(vms, wallet))
    out = priced[["vm_id", "name", "plan_slug", "region_slug", "amount", "currency"]].copy()
    out.insert(2, "status", vms["status"].astype("string").reset_index(drop=True))
    out["price_source"] = priced["price_source"]
    out["billed"] = priced["billed"].astype("boolean")
    return out.sort_values("vm_id").reset_index(drop=True)


SCHEDULE_COLUMNS = [
    "renewal_at",
    "vm_id",
    "name",
    "amount",
    "currency",
    "debitable",
    "paid",
    "balance_before",
    "balance_after",
    "owed_after",
]


@report(frames={"vms": "vms", "wallet": "wallet"})
def renewal_schedule(
    vms: pd.DataFrame,
    wallet: pd.DataFrame,
    now: Any = None,
    horizon: str = "365D",
    cycle: str = DEFAULT_CYCLE,
) -> pd.DataFrame:
    """Walk the renewals of the next ``horizon`` in date order, debiting the wallet balance.

    Follows the renewal model of the module docstring: a renewal is paid when the balance covers
    it; an unpaid one debits nothing, adds its amount to what is owed, and that VM renews no more
    within the walk. Non-debitable renewals leave the balance alone.

    Reads ``vms``: id, name, status, billing_status, next_renewal_at, price_monthly_amount,
    price_monthly_currency; ``wallet``: balance_amount, balance_currency.
    Returns renewal_at, vm_id, name, amount, currency, debitable, paid, balance_before,
    balance_after, owed_after (owed in the wallet's currency after this renewal);
    ``attrs["unknown_status"]`` counts the VMs left out (status or billing word unknown).
    """
    now = resolve_now(now)
    priced, _balance, _owed_now, _currency, out = _walk(vms, wallet, now, horizon, cycle)
    out.attrs["unknown_status"] = _unknown(priced)
    return out


def _walk(
    vms: pd.DataFrame, wallet: pd.DataFrame, now: pd.Timestamp, horizon: str, cycle: str
) -> tuple[pd.DataFrame, float, float, Any, pd.DataFrame]:
    """(priced VMs, balance, owed, wallet currency, the :func:`renewal_schedule` frame) of the
    walk over the next ``horizon``: what :func:`renewal_schedule`, :func:`runway` and
    :func:`low_balance_forecast` share.

    Inside a ``Reuse`` block (``svcnb.reports._reuse``; every report call opens one) one fleet
    and time is walked once: a walk to an earlier end is the first rows of the longer one, since
    the walk never looks ahead (a renewal is paid or not from the ones before it).
    """
    balance, currency = _wallet_balance(wallet, vms)
    priced = _priced(vms, currency)
    owed = _owed(priced, currency)
    end = now + duration(horizon, name="horizon")
    reuse = reuse_active()
    if reuse is None or end < now:
        walked = _walk_rows(priced, balance, owed, currency, now, end, cycle)
        return priced, balance, owed, currency, _schedule_frame(walked)
    # end -> the walk's rows to it; ("frame", end) -> its renewal_schedule frame
    walks = reuse.shared(("renewal walks", repr(now), cycle), (vms, wallet), dict)
    if ("frame", end) not in walks:
        ends = [e for e in walks if isinstance(e, pd.Timestamp)]
        longest = max(ends, default=None)
        if longest is not None and longest >= end:
            whole = walks[longest]
            walked = whole[(whole["renewal_at"] <= end).to_numpy(dtype=bool)]
        else:
            walked = walks[end] = _walk_rows(priced, balance, owed, currency, now, end, cycle)
        walks[("frame", end)] = _schedule_frame(walked)
    return priced, balance, owed, currency, walks[("frame", end)].copy()


def _walk_rows(
    priced: pd.DataFrame,
    balance: float,
    owed: float,
    wallet_currency: Any,
    now: pd.Timestamp,
    end: pd.Timestamp,
    cycle: str,
) -> pd.DataFrame:
    """The renewals of ``(now, end]`` as the walk takes them, starting from ``balance`` and
    ``owed``: the rows of :func:`_occurrences` it reaches, with debitable, paid, balance_before,
    balance_after and owed_after (see :func:`_schedule_frame`)."""
    due = _occurrences(priced, now, end, cycle)
    debitable = _debitable_all(due["amount"], due["currency"], wallet_currency)
    amounts = due["amount"].to_numpy(dtype=float, na_value=np.nan).tolist()
    can_pay = debitable.tolist()
    # The walk is exact: in whole units of the finest place any amount states (cents, as a
    # rule), as integers. As floats, 0.30 paid 0.10 twice and had 0.09999999999999998 left for
    # a third, which went unpaid; 23,631 renewals of a 10,000-VM fleet left
    # 20.440000003706842 of 20.44.
    debited = {a for a, c in zip(amounts, can_pay, strict=True) if c}  # a few distinct prices
    decimals = {a: to_decimal(a, wallet_currency) for a in debited}
    left = to_decimal(balance, wallet_currency) or Decimal(0)
    owes = to_decimal(owed, wallet_currency) or Decimal(0)
    known = [d for d in (*decimals.values(), left, owes) if d is not None]
    places = max([0, *(-int(d.as_tuple().exponent) for d in known)])
    scale = 10**places
    units = {a: int(d.scaleb(places)) for a, d in decimals.items() if d is not None}
    left_units, owed_units = int(left.scaleb(places)), int(owes.scaleb(places))
    ids = due["vm_id"].tolist()
    kept, paid_col, before_col, after_col, owed_col = [], [], [], [], []
    stopped: set[Any] = set()
    # the walk itself: each renewal in turn against the balance its predecessors left
    for i, (vm_id, amount, can) in enumerate(zip(ids, amounts, can_pay, strict=True)):
        if vm_id in stopped:
            continue
        before = left_units
        debit = units.get(amount) if can else None
        paid = False
        if debit is not None and left_units >= debit:
            paid = True
            left_units -= debit
        elif debit is not None:
            owed_units += debit
            stopped.add(vm_id)
        kept.append(i)
        paid_col.append(paid)
        # as floats (the schedule's columns are Float64): an integer over a power of ten is
        # the float nearest that decimal, which svcnb.money reads back as the decimal
        before_col.append(before / scale)
        after_col.append(left_units / scale)
        owed_col.append(owed_units / scale)
    columns = ["renewal_at", "_at_now", "vm_id", "name", "amount", "currency"]
    walked = due.iloc[kept][columns].reset_index(drop=True)
    walked["debitable"] = debitable[kept]
    walked["paid"] = paid_col
    walked["balance_before"] = before_col
    walked["balance_after"] = after_col
    walked["owed_after"] = owed_col
    walked.attrs = dict(due.attrs)
    return walked


def _schedule_frame(walked: pd.DataFrame) -> pd.DataFrame:
    """The :func:`renewal_schedule` frame of the rows of :func:`_walk_rows`."""
    if walked.empty:
        out = pd.DataFrame([], columns=SCHEDULE_COLUMNS)
        out["renewal_at"] = pd.to_datetime(out["renewal_at"], utc=True)
    else:
        out = pd.DataFrame(
            {
                # the array, not to_numpy(): that makes one Timestamp object per row
                "renewal_at": _times(walked).array,
                **{c: walked[c].to_numpy() for c in SCHEDULE_COLUMNS[1:]},
            },
            columns=SCHEDULE_COLUMNS,
        )
    return out.astype(
        {
            "vm_id": "string",
            "name": "string",
            "amount": "Float64",
            "currency": "string",
            "debitable": "boolean",
            "paid": "boolean",
            "balance_before": "Float64",
            "balance_after": "Float64",
            "owed_after": "Float64",
        }
    )


def _owed(priced: pd.DataFrame, wallet_currency: Any) -> float:
    owing = priced[priced["owes"].to_numpy(dtype=bool)]
    debitable = _debitable_all(owing["amount"], owing["currency"], wallet_currency)
    # summed exactly (the figure the walk starts from), kept as the float nearest the sum
    amounts = owing["amount"].to_numpy(dtype=float, na_value=np.nan)[debitable]
    return float(exact_sum(amounts, wallet_currency))


@report(frames={"vms": "vms", "wallet": "wallet"})
def runway(
    vms: pd.DataFrame,
    wallet: pd.DataFrame,
    now: Any = None,
    horizon: str = "365D",
    cycle: str = DEFAULT_CYCLE,
) -> pd.DataFrame:
    """The first renewal the wallet cannot pay, and its date: one row.

    Reads the columns of :func:`renewal_schedule`. Returns now, balance, currency, owed (by VMs
    already overdue or suspended, which a top-up pays first; ``owed_bound`` "at least", or
    "unknown" when it is 0, while VMs of an unknown status or billing word are left out, since
    they may owe), runway_at (NaT when every renewal within the horizon is paid), runway_days,
    vm_id, name, amount (of the unpaid renewal), shortfall (its amount minus the balance left
    then), unpaid_then (ids of every VM whose renewal at that same instant goes unpaid),
    unscheduled (VMs that will renew but have
    no readable renewal date: still provisioning, or a date svcnb could not read; the walk
    cannot include them), horizon_end, unknown_status (VMs left out because their status or
    billing word is unknown), complete (False when a VM was left out of the walk: unknown
    status, a running or stopped VM without a readable renewal date, or a price that could not
    be read; the runway may then come sooner than runway_at says, and a NaT runway_at is
    unknown, not "none") and reason (why not complete; NA when complete).
    """
    now = resolve_now(now)
    priced, balance, owed, currency, schedule = _walk(vms, wallet, now, horizon, cycle)
    unpaid = schedule[schedule["debitable"] & ~schedule["paid"]]
    row: dict[str, Any] = {
        "now": now,
        "balance": balance,
        "currency": currency,
        "owed": owed,
        # VMs left out for a word svcnb does not know may owe too: at least 0 says nothing
        "owed_bound": "exact" if not _unknown(priced) else "at least" if owed else "unknown",
        "runway_at": pd.NaT,
        "runway_days": pd.NA,
        "vm_id": pd.NA,
        "name": pd.NA,
        "amount": pd.NA,
        "shortfall": pd.NA,
        "unpaid_then": [],
        "unscheduled": _unscheduled(priced),
        "horizon_end": now + duration(horizon, name="horizon"),
        "unknown_status": _unknown(priced),
        **_walk_complete(vms, priced),
    }
    if not unpaid.empty:
        first = unpaid.iloc[0]
        row.update(
            runway_at=first["renewal_at"],
            runway_days=(first["renewal_at"] - now) / pd.Timedelta(days=1),
            vm_id=first["vm_id"],
            name=first["name"],
            amount=first["amount"],
            shortfall=first["amount"] - first["balance_before"],
            unpaid_then=sorted(unpaid.loc[unpaid["renewal_at"] == first["renewal_at"], "vm_id"]),
        )
    out = pd.DataFrame([row])
    for col in ("now", "runway_at", "horizon_end"):
        out[col] = pd.to_datetime(out[col], utc=True)
    return out.astype(
        {
            "balance": "Float64",
            "currency": "string",
            "owed": "Float64",
            "owed_bound": "string",
            "runway_days": "Float64",
            "vm_id": "string",
            "name": "string",
            "amount": "Float64",
            "shortfall": "Float64",
            "unscheduled": "Int64",
            "unknown_status": "Int64",
            "complete": "boolean",
            "reason": "string",
        }
    )


def _unscheduled(priced: pd.DataFrame) -> int:
    return int((priced["renews"] & priced["next_renewal_at"].isna()).sum())


def _undated(priced: pd.DataFrame) -> int:
    """VMs that renew and are up (running or stopped) yet have no readable renewal date: the
    service gave one svcnb could not read, or none where one is due."""
    return int(
        (priced["renews"] & priced["next_renewal_at"].isna() & ~priced["transitional"]).sum()
    )


def _walk_complete(vms: pd.DataFrame, priced: pd.DataFrame) -> dict[str, Any]:
    """``complete`` and ``reason`` of a walk through the renewals: whole only when no VM that
    renews was left out of it (status unknown, no readable renewal date while up, price
    unread). A VM still provisioning has no date yet: counted in ``unscheduled``, as before."""
    why = []
    unknown, undated, unread = _unknown(priced), _undated(priced), _unread_price(vms, priced)
    if unknown:
        why.append(f"{unknown:,} VM(s) of unknown status or billing word left out")
    if undated:
        why.append(
            f"{undated:,} running or stopped VM(s) that renew have no readable renewal date "
            "and are not in the walk"
        )
    if unread:
        why.append(f"{unread:,} VM(s) that renew have a price svcnb could not read")
    return {
        "complete": not why,
        "reason": "; ".join(why) + ": it may come sooner" if why else pd.NA,
    }


def _unread_price(vms: pd.DataFrame, priced: pd.DataFrame) -> int:
    """VMs that renew whose price was stated but could not be read: a walk without them may
    pay renewals it could not, so it is not complete."""
    stated = vms["price_monthly_raw"].notna().to_numpy(dtype=bool)
    missing = priced["amount"].isna().to_numpy(dtype=bool)
    return int((priced["renews"].to_numpy(dtype=bool) & stated & missing).sum())


@report(frames={"vms": "vms", "wallet": "wallet"})
def low_balance_forecast(
    vms: pd.DataFrame,
    wallet: pd.DataFrame,
    now: Any = None,
    window: str = DEFAULT_LOW_BALANCE_WINDOW,
    horizon: str = "365D",
    cycle: str = DEFAULT_CYCLE,
) -> pd.DataFrame:
    """When the balance first falls below what is owed plus the renewals of the next ``window``.

    At each time t from ``now`` on, the balance and debts left by the renewals of
    :func:`renewal_schedule` up to t are set against the debitable renewals due in
    ``(t, t + window]``. (The sandbox checks hourly, so its ``billing.low_balance`` comes at the
    first full hour at or after ``low_at``.) Returns now, window_days, low_at (NaT when never
    within the horizon), balance_then, needed, currency, unscheduled, unknown_status,
    complete and reason (as in :func:`runway`: when not complete, ``low_at`` may come sooner,
    and a NaT is unknown).
    """
    now = resolve_now(now)
    span = duration(window, name="window")
    priced, balance, owed, currency, schedule = _walk(vms, wallet, now, horizon, cycle)
    dues = schedule[schedule["debitable"].to_numpy(dtype=bool)]
    found = _first_low(dues, now, span, balance, owed, currency)
    row = {
        "now": now,
        "window_days": span / pd.Timedelta(days=1),
        "low_at": found[0] if found else pd.NaT,
        "balance_then": found[1] if found else pd.NA,
        "needed": found[2] if found else pd.NA,
        "currency": currency,
        "unscheduled": _unscheduled(priced),
        "unknown_status": _unknown(priced),
        **_walk_complete(vms, priced),
    }
    out = pd.DataFrame([row])
    for col in ("now", "low_at"):
        out[col] = pd.to_datetime(out[col], utc=True)
    return out.astype(
        {
            "window_days": "Float64",
            "balance_then": "Float64",
            "needed": "Float64",
            "currency": "string",
            "unscheduled": "Int64",
            "unknown_status": "Int64",
            "complete": "boolean",
            "reason": "string",
        }
    )


def _first_low(
    dues: pd.DataFrame,
    now: pd.Timestamp,
    span: pd.Timedelta,
    balance: float,
    owed: float,
    currency: Any = None,
) -> tuple[Any, float, float] | None:
    """The first instant at which the balance left by the renewals ``dues`` (debitable rows of a
    schedule, in time order) up to it is below the debts plus the renewals of the next ``span``;
    (when, balance then, needed) or None.

    The need changes when a renewal enters the window, the balance when one is processed: those
    instants (and now) are the only places the balance can first drop below the need. Every
    candidate is screened at once with running sums; only those the screen cannot rule out are
    checked with the exact sums (decimals in the wallet's ``currency``), in time order, so the
    first found is the same instant (and the same figures) a check of every candidate in turn
    gives.
    """
    times = dues["renewal_at"]
    amounts = dues["amount"].astype(float)
    stamps = pd.DatetimeIndex(times).as_unit("ns").asi8
    span_ns, now_ns = span.as_unit("ns").value, now.as_unit("ns").value
    early = stamps - span_ns
    cands = np.unique(np.concatenate([[now_ns], stamps, early[early > now_ns]]))
    # per candidate: renewals processed by then (times <= when), and those due by when + span
    done = np.searchsorted(stamps, cands, side="right")
    until = np.searchsorted(stamps, cands + span_ns, side="right")
    after = dues["balance_after"].to_numpy(dtype=float, na_value=np.nan)
    debts = dues["owed_after"].to_numpy(dtype=float, na_value=np.nan)
    bal = np.where(done > 0, after[np.maximum(done - 1, 0)] if len(after) else balance, balance)
    debt = np.where(done > 0, debts[np.maximum(done - 1, 0)] if len(debts) else owed, owed)
    values = amounts.to_numpy(dtype=float, na_value=np.nan)
    running = np.concatenate([[0.0], np.cumsum(values)])
    coming = running[until] - running[done]
    # a running sum differs from the exact one by rounding only: screen with room for it
    slack = 1e-9 * (np.abs(values).sum() + abs(balance) + abs(owed)) + 1e-9
    maybe = np.flatnonzero(bal < debt + coming + slack)
    when_all = pd.DatetimeIndex(cands.view("M8[ns]")).tz_localize("UTC")
    for i in maybe.tolist():
        when = _stamp_like(when_all[i], now, times, span)
        inside = (times > when) & (times <= when + span)
        # as floats, 0.10 three times came to 0.30000000000000004, and a balance of 0.30 that
        # covers them was called low
        needed = (to_decimal(debt[i], currency) or Decimal(0)) + exact_sum(
            amounts[inside], currency
        )
        then = to_decimal(bal[i], currency) or Decimal(0)
        if then < needed:
            return when, float(then), float(needed)
    return None


def _stamp_like(
    when: pd.Timestamp, now: pd.Timestamp, times: pd.Series, span: pd.Timedelta
) -> pd.Timestamp:
    """Candidate ``when`` as it was first written among now, the renewal times and the times a
    window before them (so in the unit it had there, which the frame built from it keeps)."""
    if when == now:
        return now
    if (times == when).any():
        return when.as_unit(times.dt.unit)
    return when.as_unit((when.as_unit(times.dt.unit) - span).unit)


@report(frames={"vms": "vms"})
def overdue(vms: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """VMs whose billing class is owing or suspended (``overdue``, ``unpaid``, ...), or whose
    status class is suspended.

    Reads ``vms``: id, name, status, billing_status, next_renewal_at, price_monthly_amount,
    price_monthly_currency. Returns vm_id, name, status, billing_status, next_renewal_at,
    days_overdue (since next_renewal_at, when past), amount and currency (a price the VM does
    not state is its plan's, in the account currency, as :func:`runway` prices what is owed).
    The companion count
    ``attrs["unknown_status"]`` is the number of VMs not listed whose status or billing word is
    unknown, so that may owe too (:func:`unknown_status` lists them).
    """
    now = resolve_now(now)
    placed = _placed(vms)
    bill, vm = placed["billing_class"], placed["vm_class"]
    listed = (bill.isin(OWING) | (vm == "suspended")).to_numpy(dtype=bool)
    unknown = ~listed & (placed["unknown_vm"] | placed["unknown_billing"]).to_numpy(dtype=bool)
    hit = vms[listed]
    renew = pd.to_datetime(hit["next_renewal_at"], utc=True)
    late = (now - renew) / pd.Timedelta(days=1)
    # priced as the owed figure prices them: a price the VM does not state is its plan's, in
    # the account currency, so the rows add up to what the runway calls owed
    priced = _priced(vms, account_currency(vms))[listed]
    out = pd.DataFrame(
        {
            "vm_id": hit["id"].astype("string"),
            "name": hit["name"].astype("string"),
            "status": hit["status"].astype("string"),
            "billing_status": hit["billing_status"].astype("string"),
            "next_renewal_at": renew,
            "days_overdue": late.where(late > 0).astype("Float64"),
            "amount": priced["amount"].array,
            "currency": priced["currency"].array,
        }
    )
    out = out.sort_values(["next_renewal_at", "vm_id"]).reset_index(drop=True)
    out.attrs["unknown_status"] = int(unknown.sum())
    # a listed VM whose renewal date was served but could not be read: its days overdue are
    # unknown, not "not overdue"
    unread = int(vms.attrs.get("unreadable", {}).get("next_renewal_at", 0))
    undated = int(out["next_renewal_at"].isna().sum())
    if unread and undated:
        out.attrs["complete"] = False
        out.attrs["reason"] = (
            f"{min(unread, undated)} listed VM(s) may have a renewal date svcnb could not read: "
            "their days overdue are unknown"
        )
    return out


UNKNOWN_COLUMNS = ["vm_id", "name", "status", "billing_status", "vm_class", "billing_class"]


@report(frames={"vms": "vms"})
def unknown_status(vms: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """The VMs billing reports leave out: status word unknown, or (not terminated) billing word
    unknown. Map their words with ``svcnb.vocab.extend`` to count them in.

    Reads ``vms``: id, name, status, billing_status. Returns vm_id, name, status,
    billing_status, vm_class, billing_class ("unknown" where the word is not in the vocabulary
    or missing).
    """
    placed = _placed(vms)
    hit = (placed["unknown_vm"] | placed["unknown_billing"]).to_numpy(dtype=bool)
    rows = vms[hit]
    out = pd.DataFrame(
        {
            "vm_id": rows["id"].astype("string"),
            "name": rows["name"].astype("string"),
            "status": rows["status"].astype("string"),
            "billing_status": rows["billing_status"].astype("string"),
            "vm_class": placed.loc[hit, "vm_class"],
            "billing_class": placed.loc[hit, "billing_class"],
        },
        columns=UNKNOWN_COLUMNS,
    )
    return out.sort_values("vm_id").reset_index(drop=True)


@report(frames={"vms": "vms"}, histories={"history": BILLING_HISTORY})
def balance_history(
    history: pd.DataFrame, now: Any = None, vms: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Wallet balance at each snapshot up to ``now``.

    Reads ``store.history('wallet', ['balance_amount', 'balance_currency'])``: snapshot_id,
    server_time, balance_amount, balance_currency; and ``vms`` (price_monthly_currency), when
    given, for the account currency. Returns server_time, balance, currency: one row per server
    time (the latest snapshot taken at that time). Where the wallet states no currency, the
    account currency (:func:`account_currency`: the wallet's latest stated one, else the prices'
    one currency), as every other billing figure says; NA when neither says.
    """
    hist = latest_per_time(history, now=now)
    out = pd.DataFrame(
        {
            "server_time": pd.to_datetime(hist["server_time"], utc=True),
            "balance": hist["balance_amount"].astype("Float64"),
            "currency": hist["balance_currency"].astype("string"),
        }
    )
    out = out.sort_values("server_time").reset_index(drop=True)
    stated = out["currency"].dropna()
    wallet = pd.DataFrame({"balance_currency": stated.iloc[-1:]})
    account = account_currency(vms if vms is not None else pd.DataFrame(), wallet)
    return out if pd.isna(account) else out.assign(currency=out["currency"].fillna(account))


# a cell a spreadsheet would run as a formula (OWASP "CSV injection"): starting with =, +, -,
# @, a tab or a carriage return. Text that is a plain number (-12.50, +3, 1e5) is a number
# there, never a formula, and stays as it is
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER_TEXT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet shows as text: a text a spreadsheet would read as a
    formula gets a leading ``'`` (which spreadsheets hide); numbers and other text unchanged."""
    formula = isinstance(value, str) and value.startswith(_FORMULA_START)
    return "'" + value if formula and not _NUMBER_TEXT.fullmatch(value) else value


def export_csv(frame: pd.DataFrame, path: Any = None) -> str | None:
    """Write a report frame as CSV; returns the text when ``path`` is None.

    Times are ISO 8601 UTC, days (a ``date`` column) their UTC date; money columns are the
    exact decimal text (``760.18``, never ``760.1800000000001``); list cells are joined with
    ", ". A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
    (a VM named ``=HYPERLINK(...)``) is written with a leading ``'``, so a spreadsheet shows it
    as text instead of running it;
    numbers, negative ones included, stay numbers. A ``path`` is written through
    :func:`svcnb.files.write` (whole or not at all, never through a symbolic link).
    """
    out = frame.copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.DatetimeTZDtype):
            # a day is its date, as the text and the page show it; a time is ISO 8601
            write = day_text if kind(str(col)) == "date" else pd.Timestamp.isoformat
            out[col] = [write(t) if not pd.isna(t) else "" for t in out[col]]
        elif col in MONEY_COLUMNS:
            cur = currency_of(frame, col)
            out[col] = [plain_text(v, c) for v, c in zip(frame[col], cur, strict=True)]
        elif out[col].dtype == object:
            out[col] = out[col].map(lambda v: ", ".join(map(str, v)) if isinstance(v, list) else v)
        if out[col].dtype == object or isinstance(out[col].dtype, pd.StringDtype):
            out[col] = out[col].astype(object).map(safe_cell)
    out.columns = [safe_cell(str(c)) for c in out.columns]
    # a CR inside a cell is quoted only when it is part of the line end (Python's csv): such an
    # export ends its rows as RFC 4180 does, CR LF, so the cell stays one cell
    carriage = any(
        out[c].astype(object).map(lambda v: isinstance(v, str) and "\r" in v).any()
        for c in out.columns
    )
    text = out.to_csv(index=False, lineterminator="\r\n" if carriage else "\n")
    if path is None:
        return text
    if hasattr(path, "write"):  # an open file or buffer, as pandas' to_csv takes
        path.write(text)
    else:
        _files.write(path, text, secret=False)
    return None


# --- the billing view: what every surface shows (svcnb.reports._view) -------------------------
# Each figure's spec sits right above the function computing it from the view's ground.


@dataclass(frozen=True)
class _Ground:
    """What the billing figures are computed from, as of one snapshot."""

    vms: pd.DataFrame
    vm: pd.Series  # each VM's status class
    bill: pd.Series  # each VM's billing class
    walk: pd.Series  # the runway's one row
    currency: str | None
    due: pd.DataFrame  # renewals_due, in the account currency
    rate: pd.DataFrame  # monthly_total, in the account currency
    low_at: Any
    horizon: pd.Timedelta

    @property
    def complete(self) -> bool:
        return bool(self.walk["complete"])

    @property
    def why(self) -> str:
        """Why the walk is not complete ("" when it is)."""
        return "" if self.complete else str(self.walk["reason"])


BALANCE = FigureSpec("balance", "Wallet balance", "money", "The wallet's balance at the snapshot.")


def _balance(g: _Ground) -> Figure:
    return Figure(BALANCE, to_decimal(g.walk["balance"], g.currency), currency=g.currency)


_GOOD_STANDING = (
    "the prices of the renewals falling due in the next {days} days of VMs in good standing "
    "(paid up, not suspended); what overdue and suspended VMs owe is under Owed now, and they "
    "do not renew until it is paid"
)
# (days, spec) per horizon
RENEWALS_DUE = tuple(
    (
        d,
        FigureSpec(
            f"renewals_{d}d",
            f"Renewals due in {d} days (VMs in good standing)",
            "money",
            _GOOD_STANDING.format(days=d)[:1].upper()
            + _GOOD_STANDING.format(days=d)[1:]
            + "; the count of renewals is in brackets.",
        ),
    )
    for d in (7, 30, 90)
)


def _renewals_due(g: _Ground, days: int, spec: FigureSpec) -> Figure:
    """The rows of :func:`renewals_due` within ``days`` in the account currency: exact, "at
    least" when renewals were left out (unknown price, VMs the walk could not place), and unknown
    (never 0) when nothing was counted but something was left out."""
    rows = g.due[g.due["within_days"] == days]
    count = int(rows["renewals"].sum())
    unpriced = int(rows["unpriced"].sum())
    total = exact_sum(rows["amount"].dropna(), g.currency)
    whole = g.complete and not unpriced
    why = [g.why] if g.why else []
    if unpriced:
        why.append(f"{unpriced:,} renewal(s) of unknown price not in the sum")
    if not whole and (count - unpriced) == 0:
        # "at least 0.00" says nothing: nothing known was counted
        return Figure(spec, None, currency=g.currency, reason="; ".join(why) or "")
    return Figure(
        spec,
        total,
        currency=g.currency,
        qualifier="" if whole else "at least",
        detail=f"{count:,} renewals",
        reason="; ".join(why),
    )


OWED = FigureSpec(
    "owed",
    "Owed now (overdue and suspended VMs)",
    "money",
    "The unpaid renewals of overdue and suspended VMs: the first thing a top-up pays.",
    left_out="at least",
)


def _owed_now(g: _Ground) -> Figure:
    return Figure(OWED, to_decimal(g.walk["owed"], g.currency), currency=g.currency)


RUN_RATE = FigureSpec(
    "monthly_run_rate",
    "Monthly run rate",
    "money",
    "The monthly prices of every billed VM (not terminated, status known), in the "
    "wallet's currency.",
    left_out="at least",
)


def _run_rate(g: _Ground) -> Figure:
    return Figure(
        RUN_RATE,
        exact_sum(g.rate["monthly_amount"].dropna(), g.currency),
        currency=g.currency,
        # a VM of unknown price adds an unknown amount: the rate is at least this
        qualifier="at least" if int(g.rate["unpriced"].sum()) else "",
    )


RUNWAY_AT = FigureSpec(
    "runway_at",
    "Runway: first renewal the wallet cannot pay",
    "time",
    "When the balance, walked through every renewal in time order, first fails to pay "
    "one (within the horizon); the VM is in brackets. 'by' when VMs were left out: it "
    "may come sooner.",
)


def _runway_at(g: _Ground) -> Figure:
    when, name = g.walk["runway_at"], g.walk["name"]
    return Figure(
        RUNWAY_AT,
        when,
        qualifier="" if g.complete else "by",
        empty=f"none within {duration_text(g.horizon)}",
        detail="" if pd.isna(when) or pd.isna(name) else name,
        complete=None if g.complete else False,
        reason=g.why,
    )


LOW_BALANCE_AT = FigureSpec(
    "low_balance_at",
    "Balance falls below owed + next week's renewals",
    "time",
    "When the balance first falls below what is owed plus the renewals of the following "
    "7 days (the service's low-balance warning).",
)


def _low_balance_at(g: _Ground) -> Figure:
    return Figure(
        LOW_BALANCE_AT,
        g.low_at,
        qualifier="" if g.complete else "by",
        empty=f"none within {duration_text(g.horizon)}",
        complete=None if g.complete else False,
        reason=g.why,
    )


VMS_OVERDUE = FigureSpec(
    "vms_overdue",
    "VMs overdue",
    "count",
    "VMs whose billing status means they owe (overdue, unpaid).",
    left_out="at least",
)


def _vms_overdue(g: _Ground) -> Figure:
    return Figure(VMS_OVERDUE, int((g.bill == "owing").sum()))


VMS_SUSPENDED = FigureSpec(
    "vms_suspended",
    "VMs suspended",
    "count",
    "VMs suspended by their status or their billing status.",
    left_out="at least",
)


def _vms_suspended(g: _Ground) -> Figure:
    suspended = (g.vm == "suspended") | (g.bill == "suspended")
    return Figure(VMS_SUSPENDED, int(suspended.sum()))


VMS_TOTAL = FigureSpec("vms_total", "VMs in the snapshot", "count", "Every VM listed, any status.")


def _vms_total(g: _Ground) -> Figure:
    return Figure(VMS_TOTAL, len(g.vms))


def _unknown_status(g: _Ground) -> Figure:
    return Figure(UNKNOWN_STATUS, int(g.walk["unknown_status"]))


RENEWALS_TABLE = TableSpec(
    "renewals",
    "Renewals within {within}",
    (
        "renewal_at",
        "days_until",
        "name",
        "vm_id",
        "plan_slug",
        "billing_status",
        "amount",
        "currency",
        "price_source",
    ),
    "One row per renewal of a VM in good standing, soonest first.",
)
RENEWALS_DUE_TABLE = TableSpec(
    "renewals_due",
    "Renewals due in 7, 30 and 90 days (VMs in good standing)",
    ("within_days", "currency", "renewals", "amount", "unpriced"),
    "Per horizon and currency: how many renewals fall due and their amount.",
)
OVERDUE_TABLE = TableSpec(
    "overdue",
    "Overdue or suspended VMs (what they owe is Owed now)",
    (
        "name",
        "vm_id",
        "status",
        "billing_status",
        "next_renewal_at",
        "days_overdue",
        "amount",
        "currency",
    ),  # fmt: skip
    "One row per VM that owes or is suspended.",
)
# Whether the walk is whole, and why not, come before its figures: a walk that left VMs out
# gives bounds (a runway that may come sooner, a shortfall that may be larger), and the row
# said so only past the right edge of the grid.
RUNWAY_TABLE = TableSpec(
    "runway",
    "Runway",
    (
        "now",
        "complete",
        "reason",
        "unknown_status",
        "balance",
        "currency",
        "owed",
        "runway_at",
        "runway_days",
        "vm_id",
        "name",
        "amount",
        "shortfall",
        "unpaid_then",
        "unscheduled",
        "horizon_end",
    ),
    "The runway walk's result; when not complete, what it says is a bound.",
)
LOW_BALANCE_TABLE = TableSpec(
    "low_balance",
    "Low-balance forecast",
    (
        "now",
        "complete",
        "reason",
        "unknown_status",
        "window_days",
        "low_at",
        "balance_then",
        "needed",
        "currency",
        "unscheduled",
    ),
    "When the low-balance warning comes; when not complete, it may come sooner.",
)
MONTHLY_TOTAL_TABLE = TableSpec("monthly_total", "Monthly run rate", None, "Per currency.")
RUN_RATE_PLAN_TABLE = TableSpec(
    "run_rate_plan",
    "Monthly run rate by plan",
    ("plan_slug", "currency", "vms", "monthly_amount", "unpriced", "unknown_status"),
    "Per plan and currency.",
)
RUN_RATE_REGION_TABLE = TableSpec(
    "run_rate_region",
    "Monthly run rate by region",
    ("region_slug", "currency", "vms", "monthly_amount", "unpriced", "unknown_status"),
    "Per region and currency.",
)
PRICES_TABLE = TableSpec(
    "prices",
    "Monthly price per VM",
    ("name", "vm_id", "status", "plan_slug", "amount", "currency", "price_source"),
    "One row per VM: its monthly price and where it comes from.",
)
BALANCE_HISTORY_TABLE = TableSpec(
    "balance_history",
    "Wallet balance per snapshot",
    ("server_time", "balance", "currency"),
    "One row per snapshot up to the one shown.",
)
UNKNOWN_STATUS_TABLE = TableSpec(
    "unknown_status",
    "VMs left out: status or billing word unknown",
    ("name", "vm_id", "status", "billing_status"),
    "Map their words with svcnb.vocab.extend to count them in.",
)
RENEWALS_PLOT = PlotSpec("renewals", "Renewals by day")
BALANCE_PLOT = PlotSpec("balance", "Balance: history, projection and runway")

VIEW = ViewSpec(
    report="billing",
    title="Billing",
    figures=(
        BALANCE,
        *(spec for _, spec in RENEWALS_DUE),
        OWED,
        RUN_RATE,
        RUNWAY_AT,
        LOW_BALANCE_AT,
        VMS_OVERDUE,
        VMS_SUSPENDED,
        VMS_TOTAL,
        UNKNOWN_STATUS,
    ),
    tables=(
        RENEWALS_TABLE,
        RENEWALS_DUE_TABLE,
        OVERDUE_TABLE,
        RUNWAY_TABLE,
        LOW_BALANCE_TABLE,
        MONTHLY_TOTAL_TABLE,
        RUN_RATE_PLAN_TABLE,
        RUN_RATE_REGION_TABLE,
        PRICES_TABLE,
        BALANCE_HISTORY_TABLE,
        UNKNOWN_STATUS_TABLE,
    ),
    plots=(RENEWALS_PLOT, BALANCE_PLOT),
)


@sharing
def view(
    store: Any,
    at: Any = None,
    *,
    within: Any = "30d",
    horizon: Any = "365d",
    account: str | None = None,
) -> View:
    """The billing view as of the latest snapshot at or before ``at`` (see ``VIEW``).

    ``within``: the renewals table's span; ``horizon``: how far the runway walks (both read by
    ``svcnb.reports.duration``: a bare number is days).
    """
    within_td = duration(within, name="within")
    horizon_td = duration(horizon, name="horizon")
    snap = as_of(store, at, account)
    inputs = renewal_schedule.inputs(snap)
    vms, wallet, now = inputs["vms"], inputs["wallet"], inputs["now"]
    history = balance_history.from_store(snap)
    walk = runway(vms, wallet, now=now, horizon=horizon_td)
    tables = {
        RENEWALS_TABLE: renewals(vms, wallet, now=now, within=within_td),
        RENEWALS_DUE_TABLE: renewals_due(vms, wallet, now=now),
        OVERDUE_TABLE: overdue(vms, now=now),
        RUNWAY_TABLE: walk,
        LOW_BALANCE_TABLE: low_balance_forecast(vms, wallet, now=now, horizon=horizon_td),
        MONTHLY_TOTAL_TABLE: monthly_total(vms, wallet, now=now),
        RUN_RATE_PLAN_TABLE: run_rate(vms, wallet, now=now, by="plan_slug"),
        RUN_RATE_REGION_TABLE: run_rate(vms, wallet, now=now, by="region_slug"),
        PRICES_TABLE: prices(vms, wallet, now=now),
        BALANCE_HISTORY_TABLE: history,
        UNKNOWN_STATUS_TABLE: unknown_status(vms, now=now),
    }
    schedule = renewal_schedule(vms, wallet, now=now, horizon="90D")
    row = walk.iloc[0]
    currency = None if pd.isna(row["currency"]) else str(row["currency"])
    due, total = tables[RENEWALS_DUE_TABLE], tables[MONTHLY_TOTAL_TABLE]
    g = _Ground(
        vms,
        vm_classes(vms),
        billing_classes(vms),
        row,
        currency,
        due if currency is None else due[due["currency"] == currency],
        total if currency is None else total[total["currency"] == currency],
        tables[LOW_BALANCE_TABLE]["low_at"].iloc[0],
        horizon_td,
    )
    figures = [
        _balance(g),
        *(_renewals_due(g, d, spec) for d, spec in RENEWALS_DUE),
        _owed_now(g),
        _run_rate(g),
        _runway_at(g),
        _low_balance_at(g),
        _vms_overdue(g),
        _vms_suspended(g),
        _vms_total(g),
        _unknown_status(g),
    ]
    notes = view_notes(inputs, tables.values())
    if int(row["unknown_status"]):
        notes.insert(0, left_out_note(int(row["unknown_status"])) + "; the runway may come sooner")
    if not g.complete:
        notes.append(f"Runway and renewals not complete: {g.why}")
    return view_of(
        VIEW,
        now,
        figures,
        tables,
        {
            RENEWALS_PLOT: lambda ax: plot_renewals(tables[RENEWALS_TABLE], ax=ax),
            BALANCE_PLOT: lambda ax: plot_balance(history, schedule, walk, ax=ax),
        },
        options={"within": duration_text(within_td), "horizon": duration_text(horizon_td)},
        notes=notes,
        complete=g.complete and not any("may be incomplete" in n for n in notes),
    )
