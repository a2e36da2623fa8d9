"""BandwidthPanel: the bandwidth report as it stood at any snapshot, chosen with a date slider."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import pandas as pd

from svcnb.panels._asof import AsOfPanel
from svcnb.panels._render import THEME_STYLE
from svcnb.reports import bandwidth
from svcnb.reports._classes import left_out_note
from svcnb.reports._duration import duration
from svcnb.store import Store

_GIB = bandwidth.GIB


def _with_gib(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` plus a ``*_gib`` column (GiB, 2 decimals) beside every ``*_bytes`` column."""
    out = frame.copy()
    for col in [c for c in frame.columns if c.endswith("_bytes")]:
        gib = (out[col].astype("Float64") / _GIB).round(2)
        out.insert(out.columns.get_loc(col) + 1, col.removesuffix("_bytes") + "_gib", gib)
    return out


class BandwidthPanel(AsOfPanel):
    """Analysts' view: who will blow through their pack, top consumers, the fleet over time.

    Tables (``tables`` and export names): ``exceeding`` (VMs over or projected over their pack:
    name, vm_id, used_gib, pack_gib, share, projected_share, exceeds_at, outlook),
    ``top_consumers`` and ``fleet_total``; every ``*_bytes`` column has a ``*_gib`` twin.
    Plots: ``usage`` (used against pack, with the projection), ``top`` (top consumers over
    time) and ``fleet`` (fleet total). ``figures`` holds the headline numbers shown in
    ``summary``: fleet_used_bytes, fleet_pack_bytes, vms_over, vms_will_exceed, first_exceeds_at,
    first_exceeds_vm and unknown_status (VMs whose status word is unknown: their projection is
    unknown, so they are not among those projected to exceed).
    """

    name = "bandwidth"
    table_columns = {
        "exceeding": [
            "name",
            "vm_id",
            "status",
            "used_gib",
            "pack_gib",
            "share",
            "projected_gib",
            "projected_share",
            "exceeds_at",
            "outlook",
        ],
        "top_consumers": ["name", "vm_id", "status", "plan_slug", "used_gib", "pack_gib", "share"],
        "fleet_total": ["server_time", "used_gib", "pack_gib", "vms"],
    }
    plot_names = ("usage", "top", "fleet")
    plot_sizes = {"usage": (7.0, 4.0)}

    def __init__(self, store: Store, *, top: int = 10, lookback: str = "7d", **kw: Any) -> None:
        self.top = top
        # read as every duration is (svcnb.reports.duration: a bare number is days)
        self.lookback = duration(lookback, name="lookback")
        self.figures: dict[str, Any] = {}
        super().__init__(store, **kw)

    def compute(self, at: pd.Timestamp) -> dict[str, pd.DataFrame]:
        # One load of the snapshot and its history feeds every bandwidth function.
        inputs = bandwidth.projection.inputs(self.store, at)
        vms, history, now = inputs["vms"], inputs["history"], inputs["now"]
        projection = bandwidth.projection(vms, history, now=now, lookback=self.lookback)
        exceeding = projection[projection["exceeds"].fillna(False)].reset_index(drop=True)
        results = {
            "exceeding": _with_gib(exceeding),
            "top_consumers": _with_gib(bandwidth.top_consumers(vms, n=self.top)),
            "fleet_total": _with_gib(bandwidth.fleet_total(history, now=now)),
            "projection": _with_gib(projection),
            "over_time": bandwidth.usage_over_time(vms, history, now=now, n=5),
            "fleet_now": bandwidth.fleet_now(vms, now=now),
            "monthly_usage": _with_gib(bandwidth.monthly_usage(history, now=now)),
        }
        fleet = results["fleet_now"].iloc[0]
        outlook = projection["outlook"].fillna("")
        first = exceeding.dropna(subset=["exceeds_at"]).sort_values("exceeds_at").head(1)
        self.figures = {
            "as_of": now,
            # bandwidth.fleet_now is the one source of the fleet figure (fleet_total agrees)
            "fleet_used_bytes": int(fleet["used_bytes"]),
            "fleet_pack_bytes": int(fleet["pack_bytes"]),
            "vms_over": int((outlook == "over").sum()),
            "vms_will_exceed": int((outlook == "will exceed").sum()),
            "first_exceeds_at": first["exceeds_at"].iloc[0] if len(first) else pd.NaT,
            "first_exceeds_vm": str(first["name"].iloc[0]) if len(first) else None,
            "unknown_status": int(projection.attrs.get("unknown_status", 0)),
        }
        return results

    def summary_html(self) -> str:
        f = self.figures
        first = (
            "none this cycle"
            if pd.isna(f["first_exceeds_at"])
            else f"{f['first_exceeds_at']:%Y-%m-%d} ({f['first_exceeds_vm']})"
        )
        rows = [
            (
                "Fleet used / total pack",
                f"{f['fleet_used_bytes'] / _GIB:,.2f} GiB / "
                f"{f['fleet_pack_bytes'] / _GIB:,.2f} GiB",
            ),
            ("VMs over their pack", str(f["vms_over"])),
            ("VMs projected to exceed this cycle", str(f["vms_will_exceed"])),
            ("First pack to run out", first),
        ]
        if f["unknown_status"]:
            rows.append(("Left out of the projection", left_out_note(f["unknown_status"])))
        body = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows
        )
        return (
            f"<b>Bandwidth as of {f['as_of']:%Y-%m-%d %H:%M} UTC</b>"
            f'{THEME_STYLE}<table class="svcnb-table svcnb-figures">{body}</table>'
        )

    def draw(self) -> dict[str, Callable[[Any], Any]]:
        r = self.results
        worst = r["projection"].sort_values("projected_share", ascending=False).head(self.top)
        return {
            "usage": lambda ax: bandwidth.plot_usage(worst, ax=ax),
            "top": lambda ax: bandwidth.plot_top(r["over_time"], ax=ax),
            "fleet": lambda ax: bandwidth.plot_monthly_usage(r["monthly_usage"], ax=ax),
        }
