"""WhatIfPanel: finance's what-if money as of any snapshot: the top-up that covers a horizon,
who is suspended if nobody tops up, and what stopping or terminating chosen VMs changes."""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as widgets
import pandas as pd

from svcnb.money import money_text
from svcnb.panels._asof import AsOfPanel
from svcnb.panels._quiet import quietly
from svcnb.panels._render import THEME_STYLE, grid, shown
from svcnb.reports import whatif
from svcnb.reports._classes import left_out_note
from svcnb.store import Store

_VM_COLUMNS = ["name", "id", "status", "plan_slug", "price_monthly_amount", "next_renewal_at"]


def _date(value: Any) -> str:
    return "none" if value is None or pd.isna(value) else f"{value:%Y-%m-%d}"


class WhatIfPanel(AsOfPanel):
    """What-if money as of the chosen snapshot (the renewal model of ``svcnb.reports.billing``).

    Controls (stable attribute names) besides the base's slider: ``horizon`` (days, from
    ``horizons``), ``how`` ("stop" or "terminate"), ``vm_grid`` (the VMs of the snapshot; its
    selection is what the what-if stops, read by ``selected_ids``, set by ``select(ids)``).
    ``choose(horizon=..., how=..., vm_ids=...)`` sets any of them and recomputes, as the widgets
    do. Tables: ``topup`` (:func:`whatif.topup_needed`), ``suspensions`` (within the horizon),
    ``what_if`` (:func:`whatif.what_if_stop` for the selection). ``figures``: as_of, currency,
    horizon_days, balance, owed, topup (``Decimal``), covered, suspended (count within the
    horizon), first_suspended_at, first_suspended, chosen (VMs selected), how, topup_after,
    topup_saved, runway_before, runway_after, complete, notes (sentences on what is left out).
    """

    name = "whatif"
    table_columns = {
        "topup": ["horizon_days", "balance", "owed", "renewals", "due", "topup", "complete"],
        "suspensions": [
            "suspended_by",
            "name",
            "vm_id",
            "basis",
            "failed_at",
            "amount",
            "balance_then",
        ],
        "what_if": [
            "horizon_days",
            "vms_changed",
            "topup_before",
            "topup_after",
            "topup_saved",
            "suspended_before",
            "suspended_after",
            "runway_before",
            "runway_after",
        ],
    }
    plot_names = ("topup", "suspensions", "what_if")
    plot_sizes = {"suspensions": (7.0, 4.5)}

    def __init__(
        self,
        store: Store,
        *,
        horizons: Iterable[int] = whatif.DEFAULT_HORIZONS,
        **kw: Any,
    ) -> None:
        self.horizons = sorted({int(d) for d in horizons})
        self.figures: dict[str, Any] = {}
        self._vm_ids: list[str] = []
        self._chosen: list[str] = []
        self._grid_at: pd.Timestamp | None = None  # the as-of time the VM grid lists
        self._what_if_key: tuple[Any, ...] = ()  # the VMs and how the what-if table shows
        self.horizon = widgets.Dropdown(
            description="Horizon",
            options=[(f"{d} days", d) for d in self.horizons],
            value=self.horizons[-1],
        )
        self.how = widgets.ToggleButtons(
            description="What if",
            options=[("stopped", "stop"), ("terminated", "terminate")],
            value="stop",
        )
        self.vm_grid = grid(select=True, page=10).add_class("svcnb-whatif-vms")
        self.notes = widgets.HTML().add_class("svcnb-whatif-notes")
        super().__init__(store, **kw)
        self.horizon.observe(self._on_change, names="value")
        self.how.observe(self._on_change, names="value")
        self.vm_grid.observe(self._on_change, names="selected_rows")
        children = list(self.widget.children)
        controls = [
            widgets.HTML(
                f"{THEME_STYLE}<h4 class='svcnb-title'>Choose the horizon and the VMs to stop "
                "or terminate</h4>"
            ),
            widgets.HBox([self.horizon, self.how]),
            self.vm_grid,
            self.notes,
        ]
        # below the slider and status, above the figures they change
        self.widget.children = [*children[:3], *controls, *children[3:]]

    # --- choosing ---------------------------------------------------------------------------

    @property
    def selected_ids(self) -> list[str]:
        """The VM ids of the rows selected in the grid, in grid order."""
        rows = sorted(set(self.vm_grid.selected_rows))
        return [self._vm_ids[i] for i in rows if 0 <= i < len(self._vm_ids)]

    def select(self, ids: Iterable[str]) -> None:
        """Select the VMs ``ids`` in the grid, as a click would (the figures follow)."""
        wanted = {str(v) for v in ids}
        self.vm_grid.selected_rows = [i for i, v in enumerate(self._vm_ids) if v in wanted]

    def choose(
        self,
        horizon: int | None = None,
        how: str | None = None,
        vm_ids: Iterable[str] | None = None,
    ) -> None:
        """Set the horizon, stop/terminate and the VMs, then recompute once."""
        with (
            quietly(self.horizon, self._on_change),
            quietly(self.how, self._on_change),
            quietly(self.vm_grid, self._on_change, "selected_rows"),
        ):
            if horizon is not None:
                self.horizon.value = int(horizon)
            if how is not None:
                self.how.value = how
            if vm_ids is not None:
                self.select(vm_ids)
        self._on_change()

    def _on_change(self, _change: object = None) -> None:
        self._chosen = self.selected_ids
        if self.at is not None:
            self.show_at(self.at)

    # --- the base's hooks -------------------------------------------------------------------

    def view_key(self, name: str) -> Any:
        # the top-up covers every horizon; the suspensions are the chosen horizon's; the
        # what-if is the chosen VMs' (all as of the snapshot)
        if name == "suspensions":
            return int(self.horizon.value)
        if name == "what_if":
            return self._what_if_key
        return None

    def forget(self) -> None:
        super().forget()
        self._grid_at = None

    def compute(self, at: pd.Timestamp) -> dict[str, pd.DataFrame]:
        inputs = whatif.topup_needed.inputs(self.store, at)
        vms, wallet, now = inputs["vms"], inputs["wallet"], inputs["now"]
        if self._grid_at != at:  # the grid lists the snapshot's VMs: refilled when it changes
            self._fill_grid(vms)
            self._grid_at = at
        days = int(self.horizon.value)
        listed = set(self._vm_ids)
        chosen = [v for v in self._chosen if v in listed]
        self._what_if_key = (tuple(chosen), self.how.value)
        # the what-if first: it walks the longest (its runway's year), the others reuse it
        wif = whatif.what_if_stop(
            vms, wallet, chosen, now=now, how=self.how.value, horizons=self.horizons
        )
        top = whatif.topup_needed(vms, wallet, now=now, horizons=self.horizons)
        sus = whatif.suspensions(vms, wallet, now=now, horizon=f"{days}D")
        row = top[top["horizon_days"] == days].iloc[0]
        change = wif[wif["horizon_days"] == days].iloc[0]
        within = sus[sus["suspended_by"] <= row["horizon_end"]]
        currency = row["currency"]
        notes = self._notes(row, sus.attrs, wif)
        self.figures = {
            "as_of": now,
            "currency": None if pd.isna(currency) else str(currency),
            "horizon_days": days,
            "balance": row["balance"],
            "owed": row["owed"],
            "topup": row["topup"],
            "covered": bool(row["covered"]),
            "suspended": len(within),
            "first_suspended_at": within["suspended_by"].iloc[0] if len(within) else pd.NaT,
            "first_suspended": str(within["name"].iloc[0]) if len(within) else None,
            "already_suspended": int(sus.attrs["already_suspended"]),
            "chosen": len(chosen),
            "how": self.how.value,
            "topup_after": change["topup_after"],
            "topup_saved": change["topup_saved"],
            "runway_before": change["runway_before"],
            "runway_after": change["runway_after"],
            "complete": bool(row["complete"]) and bool(sus.attrs["complete"]),
            "notes": notes,
        }
        self.notes.value = "".join(f"<p>{html.escape(n)}</p>" for n in notes)
        return {"topup": top, "suspensions": within.reset_index(drop=True), "what_if": wif}

    def _fill_grid(self, vms: pd.DataFrame) -> None:
        frame = vms.sort_values(["name", "id"]).reset_index(drop=True)
        keep = set(self._chosen)
        with quietly(self.vm_grid, self._on_change, "selected_rows"):
            self._vm_ids = [str(v) for v in frame["id"]]
            self.vm_grid.update(
                shown(frame, _VM_COLUMNS),
                selected_rows=[i for i, v in enumerate(self._vm_ids) if v in keep],
            )

    def _notes(self, row: pd.Series, left: dict, wif: pd.DataFrame) -> list[str]:
        notes = []
        if self.how.value == "stop" and len(wif.attrs["changed"]):
            notes.append(whatif.STOP_NOTE)
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
        return notes

    def summary_html(self) -> str:
        f = self.figures
        cur = f["currency"]
        days = f["horizon_days"]
        at_least = "" if f["complete"] else "at least "
        topup = "nothing (covered)" if f["covered"] else at_least + money_text(f["topup"], cur)
        first = (
            f"{_date(f['first_suspended_at'])} ({f['first_suspended']})"
            if f["first_suspended"]
            else "none"
        )
        done = "stopped" if f["how"] == "stop" else "terminated"
        rows = [
            ("Wallet balance", money_text(f["balance"], cur)),
            ("Owed now (paid first by a top-up)", money_text(f["owed"], cur)),
            (f"Top-up to pay everything due in {days} days", topup),
            (
                f"If nobody tops up: VMs suspended within {days} days (first)",
                f"{f['suspended']} (first {first})",
            ),
            ("Already suspended", str(f["already_suspended"])),
        ]
        if f["chosen"]:
            rows += [
                (
                    f"With the {f['chosen']} chosen VM(s) {done}: top-up in {days} days",
                    f"{money_text(f['topup_after'], cur)} "
                    f"(saves {money_text(f['topup_saved'], cur)})",
                ),
                (
                    "Runway: today / with them " + done,
                    f"{_date(f['runway_before'])} / {_date(f['runway_after'])}",
                ),
            ]
        body = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows
        )
        return (
            f"<b>What if, as of {f['as_of']:%Y-%m-%d %H:%M} UTC</b>"
            f'{THEME_STYLE}<table class="svcnb-table svcnb-figures">{body}</table>'
        )

    def draw(self) -> dict[str, Callable[[Any], Any]]:
        r = self.results
        return {
            "topup": lambda ax: whatif.plot_topup(r["topup"], ax=ax),
            "suspensions": lambda ax: whatif.plot_suspensions(r["suspensions"], ax=ax),
            "what_if": lambda ax: whatif.plot_what_if(r["what_if"], ax=ax),
        }
