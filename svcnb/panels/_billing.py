"""BillingPanel: the billing report as it stood at any snapshot, chosen with a date slider."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import pandas as pd

from svcnb.panels._asof import AsOfPanel
from svcnb.panels._render import THEME_STYLE
from svcnb.reports import billing
from svcnb.reports._classes import billing_classes, left_out_note, vm_classes
from svcnb.reports._duration import duration
from svcnb.store import Store


def _money(amount: Any, currency: Any) -> str:
    if amount is None or pd.isna(amount):
        return "unknown"
    unit = "" if currency is None or pd.isna(currency) else f" {currency}"
    return f"{float(amount):,.2f}{unit}"


def _date(value: Any) -> str:
    return "none within the horizon" if value is None or pd.isna(value) else f"{value:%Y-%m-%d}"


def _standing(vms: pd.DataFrame) -> dict[str, int]:
    """How many VMs owe (billing class owing), are suspended (VM or billing class), of all."""
    vm, bill = vm_classes(vms), billing_classes(vms)
    return {
        "vms_overdue": int((bill == "owing").sum()),
        "vms_suspended": int(((vm == "suspended") | (bill == "suspended")).sum()),
        "vms_total": len(vms),
    }


class BillingPanel(AsOfPanel):
    """Finance's view: renewals, run rate, runway and overdue VMs as of the chosen snapshot.

    Tables (``tables`` and export names): ``renewals_due`` (within_days, currency, renewals,
    amount, unpriced), ``renewals`` (the next ``within``, default 30 days, read by
    ``svcnb.reports.duration``: renewal_at, vm_id, name, plan_slug, region_slug, amount,
    currency), ``run_rate`` (plan_slug, currency, vms,
    monthly_amount, unknown_status), ``overdue``, ``balance_history`` and ``unknown_status``
    (the VMs left out because their status or billing word is unknown: name, vm_id, status,
    billing_status). Plots: ``renewals`` (calendar) and ``balance`` (history, projection and
    runway). ``figures`` holds the headline numbers shown in ``summary``: balance, currency,
    runway_at, runway_vm, low_balance_at, due_7d, due_30d, due_90d (amount in the wallet's
    currency), unknown_status (how many VMs were left out) and complete (False when some were:
    the figures are without them, and the runway may come sooner).
    """

    name = "billing"
    table_columns = {
        "renewals_due": ["within_days", "currency", "renewals", "amount", "unpriced"],
        "renewals": [
            "renewal_at",
            "days_until",
            "name",
            "vm_id",
            "plan_slug",
            "region_slug",
            "billing_status",
            "amount",
            "currency",
        ],
        "run_rate": ["plan_slug", "currency", "vms", "monthly_amount", "unknown_status"],
        "overdue": ["name", "vm_id", "status", "billing_status", "days_overdue", "amount"],
        "balance_history": ["server_time", "balance", "currency"],
        "unknown_status": ["name", "vm_id", "status", "billing_status"],
    }
    plot_names = ("renewals", "balance")

    def __init__(self, store: Store, *, within: str = "30d", horizon: str = "365d", **kw: Any):
        # read as every duration is (svcnb.reports.duration: a bare number is days)
        self.within = duration(within, name="within")
        self.horizon = duration(horizon, name="horizon")
        self.figures: dict[str, Any] = {}
        super().__init__(store, **kw)

    def compute(self, at: pd.Timestamp) -> dict[str, pd.DataFrame]:
        # One load of the snapshot's frames feeds every billing function.
        inputs = billing.renewals.inputs(self.store, at)
        vms, wallet, now = inputs["vms"], inputs["wallet"], inputs["now"]
        history = billing.balance_history.from_store(self.store, at=at)
        results = {
            "renewals_due": billing.renewals_due(vms, wallet, now=now),
            "renewals": billing.renewals(vms, wallet, now=now, within=self.within),
            "run_rate": billing.run_rate(vms, wallet, now=now),
            "overdue": billing.overdue(vms, now=now),
            "balance_history": history,
            "runway": billing.runway(vms, wallet, now=now, horizon=self.horizon),
            "low_balance": billing.low_balance_forecast(vms, wallet, now=now, horizon=self.horizon),
            "schedule": billing.renewal_schedule(vms, wallet, now=now, horizon="90D"),
            "unknown_status": billing.unknown_status(vms, now=now),
            "monthly_total": billing.monthly_total(vms, wallet, now=now),
        }
        runway = results["runway"].iloc[0]
        due = results["renewals_due"]
        currency = runway["currency"]
        self.figures = {
            "as_of": now,
            "balance": float(runway["balance"]),
            "currency": None if pd.isna(currency) else str(currency),
            "runway_at": runway["runway_at"],
            "runway_vm": None if pd.isna(runway["name"]) else str(runway["name"]),
            "low_balance_at": results["low_balance"]["low_at"].iloc[0],
            "unknown_status": int(runway["unknown_status"]),
            "complete": bool(runway["complete"]),
            "owed": float(runway["owed"]),
            **_standing(vms),
        }
        total = results["monthly_total"]
        mine = total if pd.isna(currency) else total[total["currency"] == currency]
        # billing.monthly_total is the one source of the run rate: the panel only picks its row
        self.figures["monthly_run_rate"] = (
            float(mine["monthly_amount"].iloc[0]) if len(mine) else 0.0
        )
        for days in (7, 30, 90):
            mine = due[(due["within_days"] == days)]
            if not pd.isna(currency):
                mine = mine[mine["currency"] == currency]
            # cents: a sum of float prices carries binary noise nobody should see in a figure
            self.figures[f"due_{days}d"] = (
                round(float(mine["amount"].sum()), 2) if len(mine) else 0.0
            )
        return results

    def summary_html(self) -> str:
        f = self.figures
        cur = f["currency"]
        rows = [
            ("Wallet balance", _money(f["balance"], cur)),
            (
                "Renewals due in 7 / 30 / 90 days",
                " / ".join(_money(f[f"due_{d}d"], cur) for d in (7, 30, 90)),
            ),
            (
                "Runway: first renewal the wallet cannot pay",
                _date(f["runway_at"]) + (f" ({f['runway_vm']})" if f["runway_vm"] else ""),
            ),
            ("Balance falls below the next week's renewals", _date(f["low_balance_at"])),
            ("Monthly run rate", _money(f["monthly_run_rate"], cur)),
            ("Owed now (overdue and suspended VMs)", _money(f["owed"], cur)),
            (
                "VMs overdue / suspended / of all",
                f"{f['vms_overdue']} / {f['vms_suspended']} / {f['vms_total']}",
            ),
        ]
        if not f["complete"]:
            # the walk is without these VMs: a date it found is a latest date, not the date
            rows[2:4] = [(k, f"by {v}" if v[0].isdigit() else v) for k, v in rows[2:4]]
            rows.append(("Left out", left_out_note(f["unknown_status"])))
        body = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows
        )
        return (
            f"<b>Billing as of {f['as_of']:%Y-%m-%d %H:%M} UTC</b>"
            f'{THEME_STYLE}<table class="svcnb-table svcnb-figures">{body}</table>'
        )

    def draw(self) -> dict[str, Callable[[Any], Any]]:
        r = self.results
        return {
            "renewals": lambda ax: billing.plot_renewals(r["renewals"], ax=ax),
            "balance": lambda ax: billing.plot_balance(
                r["balance_history"], r["schedule"], r["runway"], ax=ax
            ),
        }
