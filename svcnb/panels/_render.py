"""HTML tables and PNG plots for panels: what a widget shows, built from frames and Figures."""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from svcnb.panels._messages import redact
from svcnb.reports._display import display_frame, label

# JupyterLab's theme variables (with light fallbacks outside Lab), so light, dark and
# high-contrast themes all keep text readable against its background.
THEME_STYLE = (
    "<style>.svcnb-table{border-collapse:collapse;font-size:12px;"
    "color:var(--jp-content-font-color1,#000);background:var(--jp-layout-color0,#fff)}"
    ".svcnb-table th,.svcnb-table td{border:1px solid var(--jp-border-color2,#ccc);"
    "padding:2px 6px;text-align:left}"
    ".svcnb-table th{background:var(--jp-layout-color2,#eee);"
    "color:var(--jp-ui-font-color0,#000);font-weight:600}"
    ".svcnb-panel,.svcnb-panel .widget-label,.svcnb-panel .widget-html-content{"
    "color:var(--jp-ui-font-color1,#000)}"
    # a button keeps its whole label ("Reload snapshots") instead of the short fixed width
    ".svcnb-panel .widget-button{width:auto;min-width:var(--jp-widgets-inline-width-short);"
    "flex-shrink:0}</style>"
)
_TABLE_STYLE = THEME_STYLE


def cell(value: Any) -> str:
    """A value as escaped text for a table cell; lists joined, missing values blank."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return html.escape(", ".join(str(v) for v in value)) or "<i>any</i>"
    if value is None or (not isinstance(value, str | bytes) and _is_missing(value)):
        return ""
    if isinstance(value, pd.Timestamp):
        return html.escape(value.strftime("%Y-%m-%d %H:%M"))
    if isinstance(value, float):
        return f"{value:,.2f}"
    return html.escape(redact(str(value)))


def flag(value: Any) -> bool:
    """A nullable boolean cell as a plain bool; unknown counts as False."""
    return False if value is None or _is_missing(value) else bool(value)


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def table(
    rows: pd.DataFrame | Iterable[Mapping[str, Any]],
    columns: Sequence[str] | None = None,
    *,
    empty: str = "Nothing to show.",
    limit: int = 200,
) -> str:
    """Escaped HTML table of ``rows`` (a frame or dicts), ``columns`` in order, ``limit`` rows,
    under the same human labels as the grids.

    Columns missing from ``rows`` are left out rather than raising, so a panel keeps working when
    a report adds or drops a column.
    """
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if columns is not None:
        frame = frame[[c for c in columns if c in frame.columns]]
    if frame.empty:
        return f"<p><i>{html.escape(empty)}</i></p>"
    shown = frame.head(limit)
    head = "".join(f"<th>{html.escape(label(str(c)))}</th>" for c in shown.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
        for row in shown.itertuples(index=False, name=None)
    )
    more = f"<p><i>{len(frame) - limit} more rows not shown.</i></p>" if len(frame) > limit else ""
    return f'{_TABLE_STYLE}<table class="svcnb-table"><tr>{head}</tr>{body}</table>{more}'


def png(draw: Callable[[Any], Any], *, size: tuple[float, float] = (7.0, 3.2)) -> bytes:
    """PNG bytes of a new Figure (no pyplot, so nothing leaks) after ``draw(ax)`` drew on it."""
    fig = Figure(figsize=size, dpi=100)
    ax = fig.subplots()
    draw(ax)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def grid(frame: pd.DataFrame | None = None, *, select: bool = False, page: int = 10) -> Any:
    """An interactive grid (ITables widget: sort, search, pages; ``selected_rows`` readable
    from Python) showing ``frame`` as given; pass frames through :func:`shown` first."""
    from itables.widget import ITable  # the grid's JavaScript ships inside the package

    return ITable(
        frame if frame is not None else pd.DataFrame(),
        select=select,
        pageLength=page,
        classes="display compact svcnb-grid",
    )


def shown(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``frame`` with human labels and formats for a grid; the frame itself is not changed."""
    return display_frame(frame, list(columns) if columns is not None else None)
