"""The bandwidth report's plots: used against pack per VM, the top consumers over time, the
fleet's total and its months.

Each draws a frame :mod:`svcnb.reports.bandwidth` computed; ``svcnb.reports.bandwidth`` hands
them on under the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from svcnb.reports._display import GIB
from svcnb.reports._timeaxis import STATUS_COLOURS, axes, concise_dates, legend_outside, thousands

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_fleet_total", "plot_monthly_usage", "plot_top", "plot_usage"]


def plot_usage(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Horizontal bars per VM: the pack (light) and the bytes used (dark), in GiB.

    ``frame`` from :func:`usage`, :func:`top_consumers` or :func:`projection` (name or vm_id,
    used_bytes, pack_bytes; projected_bytes, when present, is drawn as a marker).
    """
    ax = axes(ax)
    if frame.empty:
        ax.set_title("Bandwidth: no VMs")
        return ax
    labels = frame["name"].fillna(frame["vm_id"]).astype(str).tolist()
    pack = frame["pack_bytes"].astype("Float64").fillna(0).astype(float) / GIB
    used = frame["used_bytes"].astype("Float64").fillna(0).astype(float) / GIB
    ax.barh(labels, pack, color="lightgray", label="pack")
    ax.barh(labels, used, height=0.5, color="tab:blue", label="used")
    if "projected_bytes" in frame:
        proj = frame["projected_bytes"].astype("Float64").astype(float) / GIB
        ax.plot(
            proj,
            labels,
            linestyle="none",
            marker="|",
            markersize=12,
            color="tab:red",
            label="projected at cycle end",
        )
    ax.invert_yaxis()
    ax.set_xlabel("GiB this cycle")
    thousands(ax, "x")
    ax.set_title("Bandwidth used against pack")
    legend_outside(ax)
    return ax


def plot_top(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """One line per VM of bytes used over time (GiB); ``frame`` from :func:`usage_over_time`."""
    ax = axes(ax)
    for vm_id, part in frame.groupby("vm_id", sort=True):
        label = part["name"].dropna().iloc[0] if part["name"].notna().any() else str(vm_id)
        ax.plot(
            part["server_time"].dt.tz_localize(None),
            part["used_bytes"].astype("Float64").astype(float) / GIB,
            marker=".",
            label=str(label),
        )
    concise_dates(ax)
    ax.set_xlabel("time (UTC)")
    ax.set_ylabel("GiB this cycle (restarts at each renewal)")
    thousands(ax)
    ax.set_title("Top consumers over time")
    legend_outside(ax)
    return ax


def plot_fleet_total(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Fleet bytes used over time against the fleet's total pack (GiB); from :func:`fleet_total`."""
    ax = axes(ax)
    when = frame["server_time"].dt.tz_localize(None)
    ax.plot(
        when,
        frame["used_bytes"].astype("Float64").astype(float) / GIB,
        label=_bounded_label("used", frame, "used"),
    )
    ax.plot(
        when,
        frame["pack_bytes"].astype("Float64").astype(float) / GIB,
        linestyle="--",
        label=_bounded_label("total pack", frame, "pack"),
    )
    concise_dates(ax)
    ax.set_xlabel("time (UTC)")
    ax.set_ylabel("GiB")
    thousands(ax)
    ax.set_title("Fleet bandwidth")
    legend_outside(ax)
    return ax


def plot_monthly_usage(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Bars of GiB the fleet used each month against its monthly packs; ``frame`` from
    :func:`monthly_usage`. A month the snapshots only partly cover is hatched."""
    ax = axes(ax)
    if frame.empty:
        ax.set_title("Fleet bandwidth per month: no snapshots")
        return ax
    labels = [f"{m:%Y-%m}" for m in frame["month"]]
    used = frame["used_bytes"].astype("Float64").fillna(0).astype(float) / GIB
    pack = frame["pack_bytes"].astype("Float64").fillna(0).astype(float) / GIB
    partial = frame["partial"].fillna(False).astype(bool).tolist()
    ax.bar(labels, pack, color="lightgray", label=_bounded_label("monthly packs", frame, "pack"))
    bars = ax.bar(
        labels,
        used,
        width=0.5,
        color=STATUS_COLOURS["running"],
        label=_bounded_label("used", frame, "used"),
    )
    for bar, part in zip(bars, partial, strict=True):
        if part:
            bar.set_hatch("//")
            bar.set_edgecolor("white")
    if any(partial):
        ax.bar(
            [labels[0]],
            [0],
            color=STATUS_COLOURS["running"],
            hatch="//",
            label="month partly covered",
        )
    ax.set_ylabel("GiB per month")
    thousands(ax)
    ax.set_title("Fleet bandwidth per month (renewals counted through)")
    legend_outside(ax)
    return ax


def _bounded_label(label: str, frame: pd.DataFrame, what: str) -> str:
    """The legend says "at least" when a bar of it is a bound (its ``_bound`` column)."""
    bound = frame.get(f"{what}_bytes_bound")
    if bound is not None and (bound.astype("string") != "exact").any():
        return f"{label} (at least)"
    return label
