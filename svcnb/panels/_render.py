"""HTML tables and PNG plots for panels: what a widget shows, built from frames and Figures."""

from __future__ import annotations

import html
import io
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import matplotlib
import numpy as np
import pandas as pd
from itables import JavascriptFunction
from itables.widget import ITable
from matplotlib.figure import Figure

from svcnb.panels._messages import redact

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType
from svcnb.reports import VALUES, display_frame, kind, label, value_label

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
    # figures (money, counts, GiB, shares) right-aligned, so their digits line up
    ".svcnb-table th.svcnb-num,.svcnb-table td.svcnb-num,"
    ".svcnb-static .svcnb-table th.svcnb-num,.svcnb-static .svcnb-table td.svcnb-num"
    "{text-align:right;white-space:nowrap}"
    ".svcnb-table th{background:var(--jp-layout-color2,#eee);"
    "color:var(--jp-ui-font-color0,#000);font-weight:600}"
    # the rows a grid had selected, on a page that cannot show the selection itself
    ".svcnb-table tr.svcnb-selected td{font-weight:600}"
    ".svcnb-table tr.svcnb-selected td:first-child{"
    "box-shadow:inset 4px 0 0 var(--jp-brand-color1,#1976d2)}"
    # a table wider than the page scrolls sideways inside its own box, never cut off; as in
    # the grids, only free text wraps (an id or a name never breaks at its hyphen)
    ".svcnb-scroll{overflow-x:auto;max-width:100%}"
    ".svcnb-table td.svcnb-line,.svcnb-table th.svcnb-line{white-space:nowrap}"
    ".svcnb-table td.svcnb-wrap{min-width:18em;max-width:36em}"
    ".svcnb-panel,.svcnb-panel .widget-label,.svcnb-panel .widget-html-content{"
    "color:var(--jp-ui-font-color1,#000)}"
    # a button keeps its whole label ("Reload snapshots") instead of the short fixed width
    ".svcnb-panel .widget-button{width:auto;min-width:var(--jp-widgets-inline-width-short);"
    "flex-shrink:0}"
    # ... and one on a row of its own is as wide as that label, not the whole panel
    ".svcnb-panel.widget-vbox>.widget-button,.svcnb-panel .widget-vbox>.widget-button{"
    "align-self:flex-start}"
    # ipywidgets only fades a disabled button (60 %): a blue Save on a dark page still looks
    # ready. Disabled reads as disabled in every theme: no colour, muted text, dashed edge.
    ".svcnb-panel button.jupyter-button:disabled{background-color:var(--jp-layout-color2,#eee);"
    "color:var(--jp-ui-font-color2,#757575);border:1px dashed var(--jp-border-color1,#bdbdbd);"
    "box-shadow:none;opacity:1;cursor:not-allowed}"
    # grids: the table scrolls sideways in its box, with a scrollbar that stays visible
    # (overlay scrollbars hide until touched, so a cut-off grid looked complete)
    ".svcnb-grid-box .dt-layout-table>.dt-layout-cell{overflow-x:auto}"
    ".svcnb-grid-box .dt-layout-table>.dt-layout-cell::-webkit-scrollbar,"
    ".svcnb-scroll::-webkit-scrollbar{height:12px;background:var(--jp-layout-color2,#eee)}"
    ".svcnb-grid-box .dt-layout-table>.dt-layout-cell::-webkit-scrollbar-thumb,"
    ".svcnb-scroll::-webkit-scrollbar-thumb{"
    "background:var(--jp-layout-color3,#bdbdbd);border-radius:6px}"
    # free text wraps within a readable width; a shortened cell shows it has more on hover
    ".svcnb-grid-box table.dataTable td.svcnb-wrap{min-width:22em;max-width:36em}"
    ".svcnb-grid-box table.dataTable span.svcnb-short{text-decoration:underline dotted;"
    "cursor:help}"
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
    figures = {c for c in shown.columns if kind(str(c)) in FIGURE_KINDS or _numeric_dtype(shown[c])}

    def td(tag: str, column: Any, text: str) -> str:
        return (
            f'<{tag} class="svcnb-num">{text}</{tag}>'
            if column in figures
            else f"<{tag}>{text}</{tag}>"
        )

    head = "".join(td("th", c, html.escape(label(str(c)))) for c in shown.columns)
    body = "".join(
        "<tr>"
        + "".join(td("td", c, _cell_of(str(c), v)) for c, v in zip(shown.columns, row, strict=True))
        + "</tr>"
        for row in shown.itertuples(index=False, name=None)
    )
    more = f"<p><i>{len(frame) - limit} more rows not shown.</i></p>" if len(frame) > limit else ""
    return (
        f'{_TABLE_STYLE}<div class="svcnb-scroll"><table class="svcnb-table"><tr>{head}</tr>'
        f"{body}</table></div>{more}"
    )


def _cell_of(column: str, value: Any) -> str:
    # a code (a firewall check) reads as its words, as in the grids
    if column in VALUES and isinstance(value, str):
        return html.escape(value_label(column, value))
    return cell(value)


def _numeric_dtype(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(
        values.dtype
    )


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
_THEMED: dict[RcKeyType, str | None] = {
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
_WRAP_OVER = 40
# A cell with no space longer than this (a webhook URL, a long token) shows its start and end
# around "…"; hovering shows it whole (its title), and search and sort use it whole.
CLIP_OVER = 40
# Kinds of result column (svcnb.reports._columns) whose cells are figures: right-aligned
FIGURE_KINDS = frozenset({"money", "bytes", "bytes_per_day", "share", "days", "count", "number"})
# a figure as a table shows it when no kind is known: "1,234.50 EUR", "≥ 12", "42 %"
_FIGURE_TEXT = re.compile(r"^(?:[≥≤] )?-?[\d,]*\.?\d+(?: ?%| [A-Z]{3})?$")

# DataTables renderers. Grid cells arrive as escaped HTML text (ITables escapes them); a
# figure sorts by its number ("1,749.93 EUR" after "239.40 EUR"; "unknown" and blanks first).
_FIGURE_SORT = JavascriptFunction(
    "function (data, type) { if (type !== 'sort' && type !== 'type') return data;"
    " var n = parseFloat(String(data).replace(/[^0-9.\\-]/g, ''));"
    " return isNaN(n) ? -Infinity : n; }"
)
_SHORTEN = JavascriptFunction(
    "function (data, type) { if (type !== 'display' || typeof data !== 'string') return data;"
    " var box = document.createElement('textarea'); box.innerHTML = data;"
    " var text = box.value;"
    f" if (text.length <= {CLIP_OVER}) return data;"
    " var esc = function (s) { return s.replace(/&/g, '&amp;').replace(/</g, '&lt;')"
    ".replace(/>/g, '&gt;').replace(/\"/g, '&quot;'); };"
    f" var short = text.slice(0, {CLIP_OVER - 14}) + '\u2026' + text.slice(-12);"
    " return '<span class=\"svcnb-short\" title=\"' + esc(text) + '\">' + esc(short)"
    " + '</span>'; }"
)


def page_lengths(page: int) -> list[int]:
    """The page lengths a grid showing ``page`` rows offers: the usual ones and ``page``."""
    return sorted({page, *_PAGE_LENGTHS})


def figure_columns(frame: pd.DataFrame) -> list[int]:
    """Positions of ``frame``'s columns that hold figures (right-aligned wherever shown).

    By the kind of each column where :func:`shown` recorded it (``attrs["kinds"]``); a text
    column (or one of no known kind) by a numeric dtype, or text that reads as a figure in
    every cell (blanks and "unknown" aside).
    """
    kinds = frame.attrs.get("kinds") or {}
    found = []
    for i, column in enumerate(frame.columns):
        if kinds.get(column) in FIGURE_KINDS:
            found.append(i)
            continue
        if kinds.get(column, "text") != "text":
            continue  # times, flags, lists
        if _numeric_dtype(frame[column]):
            found.append(i)
            continue
        texts = [
            v
            for v in frame[column].tolist()
            if isinstance(v, str) and v.strip() not in ("", "unknown")
        ]
        if texts and all(_FIGURE_TEXT.match(v.strip()) for v in texts):
            found.append(i)
    return found


def column_looks(frame: pd.DataFrame) -> list[str]:
    """How each column of ``frame`` (as shown) is laid out: "figure" (right-aligned, one
    line), "wrap" (free text longer than ``_WRAP_OVER`` characters, wrapping within a readable
    width), "clip" (text with no space longer than ``CLIP_OVER``: shortened, whole on hover) or
    "line" (one line: statuses, names, ids, times)."""
    figures = set(figure_columns(frame))
    looks = []
    for i, column in enumerate(frame.columns):
        texts = [v for v in frame[column].tolist() if isinstance(v, str)]
        if i in figures:
            looks.append("figure")
        elif any(len(v) > _WRAP_OVER and " " in v.strip() for v in texts):
            looks.append("wrap")
        elif any(len(v) > CLIP_OVER and " " not in v.strip() for v in texts):
            looks.append("clip")
        else:
            looks.append("line")
    return looks


def column_defs(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """DataTables column options for ``frame`` (as shown), one per column, by
    :func:`column_looks`: figures right-aligned and sorted as numbers, free text wrapping,
    long unbroken text shortened (whole on hover), the rest on one line; every column but the
    figures sorts as text (DataTables' own guess would right-align times)."""
    defs: list[dict[str, Any]] = []
    for i, look in enumerate(column_looks(frame)):
        if look == "figure":
            defs.append(
                {
                    "targets": i,
                    "className": "dt-nowrap dt-right",
                    "type": "num",
                    "render": _FIGURE_SORT,
                }
            )
        elif look == "wrap":
            defs.append({"targets": i, "className": "svcnb-wrap", "type": "string"})
        elif look == "clip":
            defs.append(
                {
                    "targets": i,
                    "className": "dt-nowrap svcnb-clip",
                    "type": "string",
                    "render": _SHORTEN,
                }
            )
        else:
            defs.append({"targets": i, "className": "dt-nowrap", "type": "string"})
    return defs


# Every row goes to the browser: ITables' default byte budget (64 KB) sends a sample of a
# larger frame, so a grid of 1,000 VMs showed about half of them, its search answered "No
# matching records" for a VM that exists and a chooser offered half the fleet. 0: no budget.
_WHOLE: dict[str, Any] = {"maxBytes": 0, "maxRows": 0, "maxColumns": 0}


class Grid(ITable):
    """An interactive grid (ITables widget: sort, search, pages; ``selected_rows`` readable
    from Python) holding every row of its frame. Every ``update`` with a new frame sets which
    columns may wrap, so no panel passes grid options of its own."""

    def update(self, df: Any = None, caption: str | None = None, **kwargs: Any) -> None:
        kwargs = {**_WHOLE, **kwargs}
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
    # DataTables options, passed only when there are some
    options: dict[str, Any] = {"columnDefs": defs} if defs else {}
    return Grid(
        frame,
        select=select,
        pageLength=page,
        lengthMenu=page_lengths(page),
        classes="display compact svcnb-grid",
        # flush left under the panel's title and controls (ITables centres tables by default)
        style="table-layout:auto;width:auto;margin:0;caption-side:bottom",
        maxBytes=0,
        maxRows=0,
        maxColumns=0,
        **options,
    ).add_class("svcnb-grid-box")


def short_text(text: str) -> str:
    """``text`` as a grid shows it: whole up to ``CLIP_OVER`` characters or when it has spaces
    (free text wraps), else its start and end around "…" (as the grids' renderer does)."""
    if len(text) <= CLIP_OVER or " " in text.strip():
        return text
    return text[: CLIP_OVER - 14] + "\u2026" + text[-12:]


def frame_html(
    frame: pd.DataFrame, *, limit: int | None = None, selected: Sequence[int] = ()
) -> str:
    """A grid's frame (as :func:`shown` made it: labels and text) as a static HTML table in a
    box that scrolls sideways: figures right-aligned, long unbroken text shortened with the
    whole of it in the cell's title, the ``selected`` rows (positions) marked, at most ``limit``
    rows (and every selected one) with a line saying how many more there are."""
    classes = {
        "figure": "svcnb-num",
        "wrap": "svcnb-wrap",
        "clip": "svcnb-line",
        "line": "svcnb-line",
    }
    looks = [classes[look] for look in column_looks(frame)]
    chosen = {int(i) for i in selected if 0 <= int(i) < len(frame)}
    keep = [i for i in range(len(frame)) if limit is None or i < limit or i in chosen]

    def cell_html(i: int, value: Any, tag: str = "td") -> str:
        text = "" if value is None or _is_missing(value) else str(value)
        short = short_text(text)
        title = f' title="{html.escape(redact(text), quote=True)}"' if short != text else ""
        return f'<{tag} class="{looks[i]}"{title}>{html.escape(redact(short))}</{tag}>'

    head = "".join(cell_html(i, c, "th") for i, c in enumerate(frame.columns))
    body = "".join(
        ('<tr class="svcnb-selected">' if r in chosen else "<tr>")
        + "".join(cell_html(i, v) for i, v in enumerate(frame.iloc[r].tolist()))
        + "</tr>"
        for r in keep
    )
    notes = []
    if chosen:
        notes.append(f"{len(chosen)} selected row{'' if len(chosen) == 1 else 's'} marked.")
    if len(keep) < len(frame):
        notes.append(
            f"{len(keep)} of {len(frame)} rows shown; the panel in the live notebook pages "
            "through them all."
        )
    more = f"<p><i>{' '.join(notes)}</i></p>" if notes else ""
    return (
        f'{THEME_STYLE}<div class="svcnb-scroll"><table class="svcnb-table"><thead><tr>{head}'
        f"</tr></thead><tbody>{body}</tbody></table></div>{more}"
    )


def theme_style() -> widgets.HTML:
    """An invisible widget holding the panels' style (:data:`THEME_STYLE`); every panel holds
    one, so its grids, buttons and tables are styled even before any table of its is shown."""
    return widgets.HTML(THEME_STYLE, layout=widgets.Layout(display="none"))


def shown(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``frame`` with human labels and formats for a grid; the frame itself is not changed."""
    return display_frame(frame, list(columns) if columns is not None else None)
