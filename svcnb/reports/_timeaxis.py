"""What every plot the reports draw shares: the Axes it draws on, date and money axes, colours.

matplotlib is imported when a plot is drawn, not with the reports: ``svcnb report`` as a table
or CSV, and every frame a report computes, never load it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def axes(ax: Axes | None) -> Axes:
    """``ax``, or the Axes of a new pyplot figure when None (a report called without one)."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.figure().add_subplot()


def concise_dates(ax: Axes) -> Axes:
    """Put concise date labels on ``ax``'s x axis: one tick label per step, the year or month
    written once at the axis' offset instead of on every tick, so labels do not overlap."""
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    return ax


# One colour per class, the same in every plot, every run and every theme (never the colour
# cycle's order). Each keeps 3:1 (WCAG's bar for graphics) against a white page and against
# JupyterLab Dark's #111, since panel plots are drawn on a transparent background.
STATUS_COLOURS = {
    "running": "#2e7d32",
    "stopped": "#757575",
    "transitional": "#b26a00",
    "suspended": "#c62828",
    "terminated": "#8d6e63",
    "unknown": "#ab47bc",
    "paid": "#2e7d32",
    "owing": "#e65100",
    "over": "#c62828",
    "will exceed": "#e65100",
    "within pack": "#2e7d32",
}


def thousands(ax: Axes, axis: str = "y", unit: str = "") -> Axes:
    """Thousands separators (and ``unit`` after each number) on ``ax``'s ``axis`` ticks."""
    from matplotlib.ticker import FuncFormatter

    fmt = FuncFormatter(lambda v, _pos: f"{v:,.0f}{unit}" if abs(v) >= 10 else f"{v:,.1f}{unit}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)
    if axis == "x":
        from matplotlib.ticker import MaxNLocator

        # matplotlib chooses how many ticks by the axis' length and the font's size, not by how
        # wide the labels are: "5,000" to "35,000" every 5,000 ran into each other under the
        # bandwidth panel's bars, narrowed by their legend beside them
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    return ax


def money_axis(ax: Axes, currency: object, axis: str = "y", what: str = "amount") -> Axes:
    """Label a money axis with its currency ("amount (EUR)") and separate thousands."""
    unit = "" if currency is None or str(currency) in ("", "<NA>", "nan") else f" ({currency})"
    label = f"{what}{unit}" if unit else f"{what} (currency not stated)"
    (ax.set_ylabel if axis == "y" else ax.set_xlabel)(label)
    return thousands(ax, axis)


def legend_outside(ax: Axes, **kwargs: object) -> Axes:
    """The legend to the right of the plot, never over the data."""
    handles, _labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)
    return ax


def short_label(text: str, limit: int = 32) -> str:
    """``text`` for a plot's axis: a URL without its scheme, and anything longer than ``limit``
    characters as its start and end around "…" (the grids and tables show it whole)."""
    for scheme in ("https://", "http://"):
        if text.startswith(scheme) and len(text) > len(scheme):
            text = text[len(scheme) :]
            break
    if len(text) <= limit:
        return text
    tail = max(6, limit // 3)
    return text[: limit - tail - 1] + "\u2026" + text[-tail:]


def fit_rows(ax: Axes, rows: int, per_row: float = 0.4, around: float = 1.3) -> Axes:
    """Make ``ax``'s figure tall enough for ``rows`` rows of bars or labels (``per_row`` inches
    each, ``around`` inches for title and axis); a figure already taller is left as it is."""
    # the figure that has a size: an axes in a subfigure sizes the figure holding it
    figure = ax.figure.figure
    width, height = figure.get_size_inches()
    wanted = around + per_row * rows
    if wanted > height:
        figure.set_size_inches(width, wanted)
    return ax
