"""HTML tables and PNG plots for panels: what a widget shows, built from frames and Figures."""

from __future__ import annotations

import html
import io
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import matplotlib
import numpy as np
import pandas as pd
from itables.widget import ITable
from matplotlib.figure import Figure

from svcnb.panels._messages import redact
from svcnb.reports import display_frame, label

# Set by ``svcnb demo`` for its kernels: pages rendered without a live kernel (or a CDN for
# widget scripts) need what each panel shows as plain HTML beside the widget view.
STATIC_ENV = "SVCNB_STATIC_HTML"

# JupyterLab's theme variables (with light fallbacks outside Lab), so light, dark and
# high-contrast themes all keep text readable against its background.
THEME_STYLE = (
    "<style>.svcnb-table{border-collapse:collapse;font-size:12px;"
    "color:var(--jp-content-font-color1,#000);background:var(--jp-layout-color0,#fff)}"
    ".svcnb-table th,.svcnb-table td{border:1px solid var(--jp-border-color2,#ccc);"
    "padding:2px 6px;text-align:left}"
    # a page rendered without a kernel right-aligns every output table cell (nbconvert's
    # ":not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td"); the panel's wrapper outranks it
    ".svcnb-static .svcnb-table th,.svcnb-static .svcnb-table td{text-align:left}"
    ".svcnb-table th{background:var(--jp-layout-color2,#eee);"
    "color:var(--jp-ui-font-color0,#000);font-weight:600}"
    ".svcnb-panel,.svcnb-panel .widget-label,.svcnb-panel .widget-html-content{"
    "color:var(--jp-ui-font-color1,#000)}"
    # a button keeps its whole label ("Reload snapshots") instead of the short fixed width
    ".svcnb-panel .widget-button{width:auto;min-width:var(--jp-widgets-inline-width-short);"
    "flex-shrink:0}"
    # ipywidgets draws a tab that is not chosen at 54 % opacity: 4.2-4.4:1, under WCAG AA; the
    # chosen tab stays marked by its background and top border
    ".svcnb-account-tabs .lm-TabBar-tabLabel{color:var(--jp-ui-font-color1,#000)}</style>"
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


# Drawn in place of black, then written as ``currentColor``: text, axes, ticks and frames take
# the foreground colour of the theme around the plot. A colour no report uses on purpose.
_INK = "#010203"
_THEMED = {
    "text.color": _INK,
    "axes.labelcolor": _INK,
    "axes.edgecolor": _INK,
    "xtick.color": _INK,
    "ytick.color": _INK,
    "xtick.labelcolor": _INK,
    "ytick.labelcolor": _INK,
    "axes.facecolor": "none",
    "figure.facecolor": "none",
    "savefig.facecolor": "none",
    "legend.facecolor": "none",
    "legend.edgecolor": _INK,
    "legend.framealpha": None,
    # real text, in the page's font, so it stays sharp and selectable
    "svg.fonttype": "none",
    # ids from content, not random: the same plot gives the same SVG (nbval, git diffs)
    "svg.hashsalt": "svcnb",
}


def svg(draw: Callable[[Any], Any], *, size: tuple[float, float] = (7.0, 3.2)) -> str:
    """SVG markup of a new Figure after ``draw(ax)``: transparent background, text and axes in
    ``currentColor``, so the plot reads in light, dark and high-contrast themes alike. Colours
    the report chose (status colours, series) are kept as drawn."""
    with matplotlib.rc_context(_THEMED):
        fig = Figure(figsize=size, dpi=100)
        ax = fig.subplots()
        draw(ax)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", transparent=True, metadata={"Date": None})
    # black drawn on purpose by a report (a threshold line, hatching) is ink too
    text = buf.getvalue().replace(_INK, "currentColor").replace("#000000", "currentColor")
    # from the <svg> element on (no XML prolog or DOCTYPE inside an HTML page); it scales down
    # with the output area, never up past its drawn size
    text = text[text.index("<svg") :]
    return re.sub(
        r'<svg ([^>]*?)width="([\d.]+)pt" height="([\d.]+)pt"',
        r'<svg \1width="100%" style="max-width:\2pt;height:auto"',
        text,
        count=1,
    )


class PlotView(widgets.HTML):
    """A panel's plot: inline SVG (see :func:`svg`) in the theme's text colour (CSS
    ``svcnb-plot``). ``svg`` holds the markup; pages rendered without a kernel
    (``SVCNB_STATIC_HTML=1``) also get ``png``, since mail readers drop inline SVG."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_class("svcnb-plot")
        self.svg = ""
        self.png = b""

    def draw(self, draw: Callable[[Any], Any], *, size: tuple[float, float] = (7.0, 3.2)) -> None:
        """Draw the plot again with ``draw(ax)``."""
        self.svg = svg(draw, size=size)
        self.png = png(draw, size=size) if os.environ.get(STATIC_ENV) == "1" else b""
        self.value = (
            f'<div style="color:var(--jp-ui-font-color1,#000);max-width:720px">{self.svg}</div>'
        )


# Page lengths a grid offers; a panel's own page length is added, so the "entries per page"
# box always shows the length in use (DataTables leaves it blank for a length not in its menu).
_PAGE_LENGTHS = (10, 25, 50, 100)
# A column whose longest cell is free text (has a space) longer than this may wrap; every other
# column (status, region, money, ids, times) stays on one line.
_WRAP_OVER = 32


def page_lengths(page: int) -> list[int]:
    """The page lengths a grid showing ``page`` rows offers: the usual ones and ``page``."""
    return sorted({page, *_PAGE_LENGTHS})


def column_defs(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """DataTables column options for ``frame`` (as shown): short columns never wrap.

    Only free text (a reason, a detail, a list of names) longer than ``_WRAP_OVER`` characters
    wraps; ids have no spaces and stay whole, so they scroll rather than break.
    """
    nowrap = [
        i
        for i, column in enumerate(frame.columns)
        if not any(
            isinstance(v, str) and len(v) > _WRAP_OVER and " " in v.strip()
            for v in frame[column].tolist()
        )
    ]
    return [{"targets": nowrap, "className": "dt-nowrap"}] if nowrap else []


class Grid(ITable):
    """An interactive grid (ITables widget: sort, search, pages; ``selected_rows`` readable
    from Python). Every ``update`` with a new frame sets which columns may wrap, so no panel
    passes grid options of its own."""

    def update(self, df: Any = None, caption: str | None = None, **kwargs: Any) -> None:
        if df is not None and "columnDefs" not in kwargs:
            defs = column_defs(df)
            if defs:
                kwargs["columnDefs"] = defs
            elif "columnDefs" in self._dt_args:
                kwargs["columnDefs"] = None  # ITables' way to drop an option set before
        super().update(df, caption, **kwargs)


def grid(frame: pd.DataFrame | None = None, *, select: bool = False, page: int = 10) -> Grid:
    """A :class:`Grid` showing ``frame`` as given, ``page`` rows a page; pass frames through
    :func:`shown` first."""
    frame = frame if frame is not None else pd.DataFrame()
    defs = column_defs(frame)
    return Grid(
        frame,
        select=select,
        pageLength=page,
        lengthMenu=page_lengths(page),
        classes="display compact svcnb-grid",
        # flush left under the panel's title and controls (ITables centres tables by default)
        style="table-layout:auto;width:auto;margin:0;caption-side:bottom",
        **({"columnDefs": defs} if defs else {}),
    )


def shown(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``frame`` with human labels and formats for a grid; the frame itself is not changed."""
    return display_frame(frame, list(columns) if columns is not None else None)
