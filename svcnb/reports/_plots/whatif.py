"""The what-if report's plots: the top-up per horizon, the suspensions if nobody tops up, and
the scenario's top-up beside today's.

Each draws a frame :mod:`svcnb.reports.whatif` computed; ``svcnb.reports.whatif`` hands them
on under the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from svcnb.money import money_text
from svcnb.reports._timeaxis import (
    STATUS_COLOURS,
    axes,
    concise_dates,
    fit_rows,
    legend_outside,
    money_axis,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["SUSPENSIONS_SHOWN", "plot_suspensions", "plot_topup", "plot_what_if"]


def _currency(frame: pd.DataFrame) -> Any:
    stated = frame["currency"].dropna() if "currency" in frame else pd.Series([], dtype="string")
    return stated.iloc[0] if len(stated) else None


def plot_topup(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """What each horizon needs (owed + renewals due) against the balance, the top-up on top.

    ``frame`` is :func:`topup_needed`'s (horizon_days, balance, owed, due, topup, currency,
    complete).
    """
    ax = axes(ax)
    if frame.empty:
        ax.set_title("Top-up needed: no horizon")
        return ax
    labels = [f"{int(d)} days" for d in frame["horizon_days"]]
    owed = [float(v) for v in frame["owed"]]
    due = [float(v) for v in frame["due"]]
    ax.bar(labels, owed, label="owed now", color=STATUS_COLOURS["owing"])
    ax.bar(labels, due, bottom=owed, label="renewals due", color="#1565c0")
    ax.axhline(
        float(frame["balance"].iloc[0]),
        color=STATUS_COLOURS["paid"],
        linestyle="--",
        label="balance",
    )
    currency = _currency(frame)
    for x, (o, d, t, whole) in enumerate(
        zip(owed, due, frame["topup"], frame["complete"], strict=True)
    ):
        # on lines of their own: said on one, a seven-figure top-up "(at least)" ran into the
        # next bar's label and the legend
        text = "covered" if t == 0 else f"top up\n{money_text(t, currency)}"
        ax.annotate(
            text + ("" if bool(whole) else "\n(at least)"),
            (x, o + d),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.margins(y=0.25)  # room above the tallest bar for its "top up" label
    ax.set_title("Top-up needed to cover each horizon")
    ax.set_xlabel("horizon from now")
    money_axis(ax, currency, what="amount")
    legend_outside(ax)
    return ax


# VMs a suspensions plot draws at most (the first to go); the table lists them all.
SUSPENSIONS_SHOWN = 20


def plot_suspensions(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """When each VM fails its renewal and is suspended if nobody tops up: one row per VM.

    ``frame`` is :func:`suspensions`' (name, vm_id, failed_at, suspended_at, suspended_by).
    A VM whose suspension date is not shown is drawn at ``suspended_by`` as "at the latest".
    """
    # the assumption's name, read when drawing: svcnb.reports.whatif imports this module
    from svcnb.reports.whatif import GRACE

    ax = axes(ax)
    if frame.empty:
        ax.set_title("No suspension within the horizon if nobody tops up")
        return ax
    shown = frame.head(SUSPENSIONS_SHOWN)
    y = list(range(len(shown)))[::-1]
    # names alone (the table beside gives the ids); the id too where two VMs share a name
    plain = [
        str(v) if pd.isna(n) else str(n) for n, v in zip(shown["name"], shown["vm_id"], strict=True)
    ]
    names = [
        f"{n} ({v})" if plain.count(n) > 1 else n
        for n, v in zip(plain, shown["vm_id"], strict=True)
    ]
    known = shown["suspended_at"].notna().to_numpy(dtype=bool)
    fail = shown["failed_at"].notna().to_numpy(dtype=bool)

    def naive(col: str, mask: Any) -> Any:
        return shown.loc[mask, col].dt.tz_convert("UTC").dt.tz_localize(None)

    ys = pd.Series(y, index=shown.index)
    both = known & fail
    ax.hlines(ys[both], naive("failed_at", both), naive("suspended_at", both), color="#9e9e9e")
    later = ~known & shown["suspended_by"].notna().to_numpy(dtype=bool)
    series = [
        ("failed_at", fail, "o", STATUS_COLOURS["owing"], "renewal unpaid"),
        ("suspended_at", known, "X", STATUS_COLOURS["suspended"], "suspended"),
        ("suspended_by", later, "<", STATUS_COLOURS["unknown"], "suspended by (at the latest)"),
    ]
    # a series only where it has marks: the legend said "suspended" beside no suspension
    for column, mask, marker, colour, label in series:
        if mask.any():
            ax.scatter(naive(column, mask), ys[mask], marker=marker, color=colour, label=label)
    ax.set_yticks(y, names, fontsize="small")
    more = len(frame) - len(shown)
    undated = frame["suspended_by"].isna().all()
    # a line each: said on one, the title ran past both sides of the plot, its count cut off
    lines = ["Unpaid renewals if nobody tops up" if undated else "Suspensions if nobody tops up"]
    if undated:
        lines.append(f"suspension dates unknown: {GRACE} not pinned")
    if more:
        lines.append(f"the first {len(shown)}, and {more:,} more in the table")
    ax.set_title("\n".join(lines))
    ax.set_xlabel("time (UTC)")
    concise_dates(ax)
    legend_outside(ax)
    fit_rows(ax, len(shown), per_row=0.25)
    return ax


def plot_what_if(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """The top-up per horizon today and with the chosen VMs stopped or terminated.

    ``frame`` is :func:`what_if_stop`'s (horizon_days, topup_before, topup_after, how, currency).
    """
    ax = axes(ax)
    if frame.empty:
        ax.set_title("What if: no horizon")
        return ax
    x = list(range(len(frame)))
    how = str(frame["how"].iloc[0])
    done = "stopped" if how == "stop" else "terminated"
    ax.bar(
        [i - 0.2 for i in x], [float(v) for v in frame["topup_before"]], width=0.4, label="today"
    )
    ax.bar(
        [i + 0.2 for i in x],
        [float(v) for v in frame["topup_after"]],
        width=0.4,
        label=f"{int(frame['vms_changed'].iloc[0])} VM(s) {done}",
    )
    ax.set_xticks(x, [f"{int(d)} days" for d in frame["horizon_days"]])
    ax.set_title(f"Top-up needed, today and with the VMs {done}")
    ax.set_xlabel("horizon from now")
    money_axis(ax, _currency(frame), what="top-up")
    legend_outside(ax)
    return ax
