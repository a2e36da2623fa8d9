"""Date formatting shared by every time axis the reports draw."""

from __future__ import annotations

import matplotlib.dates as mdates
from matplotlib.axes import Axes


def concise_dates(ax: Axes) -> Axes:
    """Put concise date labels on ``ax``'s x axis: one tick label per step, the year or month
    written once at the axis' offset instead of on every tick, so labels do not overlap."""
    locator = mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    return ax
