"""WhatIfPanel: finance's what-if money as of any snapshot: the top-up that covers a horizon,
who is suspended if nobody tops up, and what stopping or terminating chosen VMs changes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ipywidgets as widgets
import pandas as pd

from svcnb.panels._asof import AsOfPanel
from svcnb.panels._quiet import quietly
from svcnb.panels._render import grid, shown
from svcnb.reports import View, billing, whatif
from svcnb.store import Store

_VM_COLUMNS = [
    "name",
    "id",
    "status",
    "plan_slug",
    "price_monthly_amount",
    "price_source",
    "next_renewal_at",
]


class WhatIfPanel(AsOfPanel):
    """What-if money as of the chosen snapshot (the renewal model of ``svcnb.reports.billing``).

    Controls (stable attribute names) besides the base's slider: ``horizon`` (days, from
    ``horizons``), ``how`` ("stop" or "terminate"), ``vm_grid`` (the VMs of the snapshot; its
    selection is what the what-if stops, read by ``selected_ids``, set by ``select(ids)``).
    ``choose(horizon=..., how=..., vm_ids=...)`` sets any of them and recomputes, as the widgets
    do. Figures, tables and plots are the what-if view's (``svcnb.reports.whatif.VIEW``, as
    ``svcnb report whatif`` prints them) for the chosen horizon and VMs: ``figures`` holds each
    figure by name (balance, owed, renewals_if_paid, topup, suspended, first_suspended_at,
    already_suspended, chosen, topup_after, topup_saved, runway_before, runway_after; money as
    ``Decimal``) plus as_of, currency and complete. The view's notes (what is left out or
    assumed) are shown once, under the figures (``summary``), as on every surface.
    """

    name = "whatif"
    spec = whatif.VIEW

    def __init__(
        self,
        store: Store,
        *,
        horizons: Iterable[int] = whatif.DEFAULT_HORIZONS,
        **kw: Any,
    ) -> None:
        self.horizons = sorted({int(d) for d in horizons})
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
        super().__init__(store, **kw)
        self.horizon.observe(self._on_change, names="value")
        self.how.observe(self._on_change, names="value")
        self.vm_grid.observe(self._on_change, names="selected_rows")
        children = list(self.widget.children)
        controls = [
            widgets.HTML(
                "<h4 class='svcnb-title'>Choose the horizon and the VMs to stop or terminate</h4>"
            ),
            widgets.HBox([self.horizon, self.how]),
            self.vm_grid,
        ]
        # below the slider and status, above the figures they change
        below = children.index(self.status) + 1
        self.widget.children = [*children[:below], *controls, *children[below:]]

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

    def compute(self, at: pd.Timestamp) -> View:
        snap = self.store.at(at)
        inputs = whatif.topup_needed.inputs(snap)
        vms = inputs["vms"]
        if self._grid_at != at:  # the grid lists the snapshot's VMs: refilled when it changes
            self._fill_grid(vms, inputs.get("wallet"))
            self._grid_at = at
        listed = set(self._vm_ids)
        chosen = [v for v in self._chosen if v in listed]
        self._what_if_key = (tuple(chosen), self.how.value)
        view = whatif.view(
            snap,
            horizons=self.horizons,
            horizon=int(self.horizon.value),
            how=self.how.value,
            vm_ids=chosen,
        )
        return view

    def _fill_grid(self, vms: pd.DataFrame, wallet: pd.DataFrame | None) -> None:
        # each VM's price as the billing reports bill it (billing.prices, the one source): the
        # currency the VM states, else its plan's, said in "Price from"; the raw column showed
        # "119.00 EUR" beside a bare "39.90" where a VM stated no currency
        priced = billing.prices(vms, wallet).set_index("vm_id")
        ids = vms["id"].astype("string")
        frame = vms.drop(
            columns=["price_monthly_amount", "price_monthly_currency"], errors="ignore"
        )
        frame = frame.assign(
            price_monthly_amount=ids.map(priced["amount"]).to_numpy(),
            price_monthly_currency=ids.map(priced["currency"]).to_numpy(),
            price_source=ids.map(priced["price_source"]).to_numpy(),
        )
        frame = frame.sort_values(["name", "id"]).reset_index(drop=True)
        keep = set(self._chosen)
        with quietly(self.vm_grid, self._on_change, "selected_rows"):
            self._vm_ids = [str(v) for v in frame["id"].tolist()]  # tolist: not cell by cell
            self.vm_grid.update(
                shown(frame, _VM_COLUMNS),
                selected_rows=[i for i, v in enumerate(self._vm_ids) if v in keep],
            )
