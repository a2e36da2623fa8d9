"""The webhooks report's plot: each subscription's run of failed attempts against the
auto-disable.

It draws :func:`svcnb.reports.webhooks.health`'s frame; ``svcnb.reports.webhooks`` hands it on
under the same name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from svcnb.reports._timeaxis import axes, fit_rows, short_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["MAX_BARS", "plot_health"]


# Bars a failure-run plot draws at most: beyond that the longest runs are drawn, the title
# says how many more there are, and the health table lists them all.
MAX_BARS = 12


def plot_health(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Bars of each subscription's current run of failed attempts, against the 50 auto-disable.

    ``frame`` from :func:`health` (webhook_id, url, is_active, consecutive_failures,
    consecutive_failures_bound). Disabled subscriptions are drawn in red, active ones in blue;
    each bar is labelled with its run (and "disabled"). A run that is only a lower bound is a
    hatched bar labelled "≥ N" (it may reach further); an unknown run has no bar, only the word
    "unknown". Each row is named by its URL, shortened (the table shows it whole; the id is
    added when two would read alike). With more than :data:`MAX_BARS` subscriptions the longest
    runs are drawn and the title says how many more there are.
    """
    # the model's rule and bound words, read when drawing: svcnb.reports.webhooks imports this
    from svcnb.reports.webhooks import AUTO_DISABLE_AFTER, EXACT, UNKNOWN_FIGURE, bounded_text

    ax = axes(ax)
    if frame.empty:
        ax.set_title("Webhook subscriptions: none")
        return ax
    runs_all = frame["consecutive_failures"].astype("Float64")
    shown = frame
    if len(frame) > MAX_BARS:
        longest = runs_all.fillna(-1).astype(float).sort_values(ascending=False, kind="stable")
        shown = frame.loc[sorted(longest.index[:MAX_BARS], key=list(frame.index).index)]
    more = len(frame) - len(shown)
    names = [
        short_label(str(u)) if not pd.isna(u) else str(w)
        for w, u in zip(shown["webhook_id"], shown["url"], strict=True)
    ]
    labels = [
        f"{n} ({w})" if names.count(n) > 1 else n
        for n, w in zip(names, shown["webhook_id"], strict=True)
    ]
    active = shown["is_active"].fillna(True).astype(bool).tolist()
    colours = ["tab:blue" if a else "tab:red" for a in active]
    runs = shown["consecutive_failures"].astype("Float64")
    if "consecutive_failures_bound" in shown:
        bounds = shown["consecutive_failures_bound"].astype("string").fillna(EXACT)
    else:
        bounds = pd.Series(EXACT, index=shown.index, dtype="string")
    bounds = bounds.where(runs.notna().to_numpy(dtype=bool), UNKNOWN_FIGURE)
    rows = list(range(len(shown)))
    bars = ax.barh(rows, runs.fillna(0), color=colours, height=0.6)
    ax.set_yticks(rows, labels)
    widest = max(float(runs.max()) if runs.notna().any() else 0.0, float(AUTO_DISABLE_AFTER))
    for bar, run, bound, on in zip(bars, runs, bounds, active, strict=True):
        if bound not in (EXACT, UNKNOWN_FIGURE):
            bar.set_hatch("//")
            bar.set_alpha(0.6)
        x = 0.0 if pd.isna(run) else float(run)
        words = (bounded_text(run, bound) if bound != EXACT else f"{int(run)}") + (
            "" if on else " · disabled"
        )
        middle = bar.get_y() + bar.get_height() / 2
        if x >= widest * 0.45 and bound == EXACT:
            # a long bar holds its label, clear of the auto-disable line and the legend
            ax.text(widest * 0.02, middle, words, va="center", fontsize="small", color="white")
        else:
            ax.text(x + widest * 0.015, middle, words, va="center", fontsize="small")
    line = ax.axvline(AUTO_DISABLE_AFTER, color="black", linestyle="--", label="auto-disable (50)")
    # room right of a short bar for its label
    ax.set_xlim(0, widest * 1.1)
    ax.invert_yaxis()
    bounded = bool((bounds != EXACT).any())
    ax.set_xlabel(
        "consecutive failed attempts"
        + (" (≥ N: at least N, the run may be longer)" if bounded else "")
    )
    title = "Webhook subscriptions: failure runs"
    if more:
        title = f"Failure runs: the {len(shown)} longest ({more:,} more in the table)"
    ax.set_title(title)
    from matplotlib.patches import Patch

    kinds = [Patch(color="tab:blue", label="active"), Patch(color="tab:red", label="disabled")]
    # under the plot, not beside it: the URLs already take the width the bars could use
    ax.legend(
        handles=[*kinds, line],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.3 if bounded else -0.22),
        ncol=3,
        frameon=False,
        fontsize="small",
    )
    fit_rows(ax, len(shown), per_row=0.45, around=1.7)
    return ax
