"""The firewall audit's plot: findings per check, coloured by severity.

It draws :func:`svcnb.reports.firewall.audit`'s frame; ``svcnb.reports.firewall`` hands it on
under the same name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from svcnb.reports._columns import value_label
from svcnb.reports._timeaxis import axes, fit_rows

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_findings"]


def plot_findings(findings: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Horizontal bars: how many findings of each check, coloured by severity.

    ``findings`` from :func:`audit` (check, severity).
    """
    ax = axes(ax)
    if findings.empty:
        ax.set_title("Firewall audit: no findings")
        return ax
    counts = (
        findings.groupby(["check", "severity"], observed=True)
        .size()
        .reset_index(name="findings")
        .sort_values(["severity", "findings"], ascending=[False, True])
    )
    colours = {"high": "tab:red", "medium": "tab:orange", "low": "tab:olive", "info": "tab:gray"}
    labels = [
        f"{value_label('check', c)} ({s})"
        for c, s in zip(counts["check"], counts["severity"], strict=True)
    ]
    ax.barh(
        labels,
        counts["findings"],
        color=[colours.get(str(s), "tab:blue") for s in counts["severity"]],
    )
    ax.set_xlabel("findings")
    # whole counts, thousands separated as every count elsewhere ("2,000", not "2000")
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
    ax.set_title("Firewall audit findings")
    fit_rows(ax, len(counts), per_row=0.4)
    return ax
