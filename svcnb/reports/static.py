"""A report's view as HTML without a kernel: the one renderer of tables, plots and whole pages.

The panels' static output (what ``svcnb demo`` pages show of a panel: its figures, its plots as
PNG, each grid's frame as a table, see ``svcnb.panels._display``) and ``svcnb report KIND
--format html`` / ``svcnb pages`` build on the same pieces: :func:`frame_html` for a table
(figures right-aligned, long unbroken text shortened with the whole of it in the cell's
title), :func:`png` for a plot, ``View.figures_html`` for the headline figures, and
:data:`THEME_STYLE` for how they look in JupyterLab's light, dark and high-contrast themes and
on a page of their own. :func:`page` is a whole view as one self-contained HTML document
(no script, no link, plots inline): what finance opens or mails without Jupyter.
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from svcnb.client import redact
from svcnb.reports._display import display_frame, text_table

if TYPE_CHECKING:
    from svcnb.reports._view import View

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
    # ... and its first column, the row's key (a VM's name, a time, a horizon), stays in view
    # while the rest passes under it, so a scrolled row still says whose figures it shows
    ".svcnb-scroll .svcnb-table tr>:first-child{position:sticky;left:0;z-index:1}"
    ".svcnb-scroll .svcnb-table tr>td:first-child{background:var(--jp-layout-color0,#fff)}"
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
    # ... its first column, the row's key (a VM's name, a finding's state), stays in view while
    # the rest scrolls under it, painted in the theme's background. CSS sticky rather than
    # DataTables' FixedColumns: that needs scrollX, which splits the header into a table of its
    # own whose widths go wrong for a grid drawn in a hidden tab
    ".svcnb-grid-box table.dataTable>thead>tr>:first-child,"
    ".svcnb-grid-box table.dataTable>tbody>tr>:first-child{position:sticky;left:0;z-index:1;"
    "background-color:var(--jp-layout-color0,#fff);"
    "border-right:1px solid var(--jp-border-color2,#ccc)}"
    # free text wraps within a readable width; a shortened cell shows it has more on hover
    ".svcnb-grid-box table.dataTable td.svcnb-wrap{min-width:22em;max-width:36em}"
    ".svcnb-grid-box table.dataTable span.svcnb-short{text-decoration:underline dotted;"
    "cursor:help}"
    # a grid or plot out of view is laid out and painted only when scrolled to (its rows are
    # in the page all along, and its search finds them; only their drawing waits): a slider
    # move changes every one, and the page laid out the billing panel's eleven grids, most
    # below the fold
    ".svcnb-panel .svcnb-grid-box,.svcnb-panel .svcnb-plot{content-visibility:auto;"
    "contain-intrinsic-size:auto 320px}"
    # ipywidgets draws a tab that is not chosen at 54 % opacity: 4.2-4.4:1, under WCAG AA; the
    # chosen tab stays marked by its background and top border
    ".svcnb-account-tabs .lm-TabBar-tabLabel{color:var(--jp-ui-font-color1,#000)}</style>"
)


def is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def numeric_dtype(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(
        values.dtype
    )


# A column whose longest cell is free text (has a space) longer than this may wrap; every other
# column (status, region, money, ids, times) stays on one line.
_WRAP_OVER = 40
# A cell with no space longer than this (a webhook URL, a long token) shows its start and end
# around "…"; hovering shows it whole (its title), and search and sort use it whole.
CLIP_OVER = 40
# Kinds of result column (svcnb.reports._columns) whose cells are figures: right-aligned
FIGURE_KINDS = frozenset({"money", "bytes", "bytes_per_day", "share", "days", "count", "number"})
# a figure as a table shows it when no kind is known: "1,234.50 EUR", "≥ 12", "42 %"
# a list of words ("vm.created, vm.started"), never a figure ("1,234.50 EUR")
_WORD_LIST = re.compile(r"[A-Za-z][\w.]*, [A-Za-z]")
_FIGURE_TEXT = re.compile(r"^(?:[≥≤] )?-?[\d,]*\.?\d+(?: ?%| [A-Z]{3})?$")


def png(draw: Callable[[Any], Any], *, size: tuple[float, float] = (7.0, 3.2)) -> bytes:
    """PNG bytes of a new Figure (no pyplot, so nothing leaks) after ``draw(ax)`` drew on it."""
    # matplotlib only to draw: svcnb.reports (which hands on static.table) loads without it
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=100)
    ax = fig.subplots()
    draw(ax)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _distinct(values: pd.Series) -> list[Any]:
    """Each value of ``values`` once (every value when some are unhashable). How a column is
    laid out depends on which texts it holds, not how often: a grid of 10,000 VMs holds a few
    dozen statuses, plans and dates, and checking every cell of it took a third of a second
    of each billing slider move."""
    try:
        return values.unique().tolist()
    except TypeError:  # lists in cells
        return values.tolist()


def _distinct_cells(frame: pd.DataFrame) -> list[list[Any]]:
    """:func:`_distinct` of each column of ``frame``, in order: read once for both
    :func:`figure_columns` and :func:`column_looks` (pandas' cost per column, not per cell, was
    most of a grid's layout at a slider move: the billing panel's runway is one row of 15)."""
    return [_distinct(frame.iloc[:, i]) for i in range(frame.shape[1])]


def figure_columns(frame: pd.DataFrame, cells: list[list[Any]]) -> list[int]:
    """Positions of ``frame``'s columns that hold figures (right-aligned wherever shown).

    By the kind of each column where :func:`shown` recorded it (``attrs["kinds"]``); a text
    column (or one of no known kind) by a numeric dtype, or text that reads as a figure in
    every cell (blanks and "unknown" aside). ``cells``: :func:`_distinct_cells` of ``frame``.
    """
    kinds = frame.attrs.get("kinds") or {}
    found = []
    for i, column in enumerate(frame.columns):
        if kinds.get(column) in FIGURE_KINDS:
            # a name a report uses for a count and another for a list ("events": how many, or
            # which a subscription wants) is a figure only when it holds no list of words
            if not any(isinstance(v, str) and _WORD_LIST.search(v) for v in cells[i]):
                found.append(i)
            continue
        if kinds.get(column, "text") != "text":
            continue  # times, flags, lists
        if numeric_dtype(frame.iloc[:, i]):
            found.append(i)
            continue
        # read lazily: the first text that is no figure (a name) settles the column
        texts = (v.strip() for v in cells[i] if isinstance(v, str))
        texts = (v for v in texts if v not in ("", "unknown"))
        first = next(texts, None)
        figure = first is not None and _FIGURE_TEXT.match(first)
        if figure and all(_FIGURE_TEXT.match(v) for v in texts):
            found.append(i)
    return found


def column_looks(frame: pd.DataFrame) -> list[str]:
    """How each column of ``frame`` (as shown) is laid out: "figure" (right-aligned, one
    line), "wrap" (free text longer than ``_WRAP_OVER`` characters, wrapping within a readable
    width), "clip" (text with no space longer than ``CLIP_OVER``: shortened, whole on hover) or
    "line" (one line: statuses, names, ids, times)."""
    distinct = _distinct_cells(frame)
    figures = set(figure_columns(frame, distinct))
    shortest = min(_WRAP_OVER, CLIP_OVER)
    looks = []
    for i, cells in enumerate(distinct):
        if i in figures:
            looks.append("figure")
            continue
        texts = [v for v in cells if isinstance(v, str) and len(v) > shortest]
        if any(len(v) > _WRAP_OVER and " " in v.strip() for v in texts):
            looks.append("wrap")
        elif any(len(v) > CLIP_OVER and " " not in v.strip() for v in texts):
            looks.append("clip")
        else:
            looks.append("line")
    return looks


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
        text = "" if value is None or is_missing(value) else str(value)
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


class Table:
    """A report frame (or any frame) shown in a notebook as svcnb shows tables: an HTML table
    (labels, money with its currency, figures right-aligned, scrolling in its own box) where
    HTML is shown, and :func:`text_table` as its plain text. ``missing``: what an empty cell
    says ("unknown", "not seen"; blank by default)."""

    def __init__(
        self, frame: pd.DataFrame, columns: Sequence[str] | None = None, missing: str = ""
    ) -> None:
        self.frame = frame
        self.columns = list(columns) if columns is not None else None
        self.missing = missing

    def _repr_html_(self) -> str:
        if self.frame.empty:
            return "<p><i>(none)</i></p>"
        shown = display_frame(self.frame, self.columns)
        if self.missing:
            shown = shown.replace("", self.missing)
        return frame_html(shown)

    def __repr__(self) -> str:
        return text_table(self.frame, columns=self.columns, missing=self.missing)


def table(frame: pd.DataFrame, columns: Sequence[str] | None = None, missing: str = "") -> Table:
    """``frame`` (``columns`` of it, in order) to show as the last expression of a notebook
    cell: an HTML table in JupyterLab and on a rendered page, the text table as plain text."""
    return Table(frame, columns, missing)


# The page around a view: readable from a phone's width up (tables scroll sideways in their
# own box, plots shrink), in the reader's light or dark colours.
_PAGE_STYLE = (
    "<style>body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
    "max-width:1100px;padding:1em;line-height:1.4}"
    "img{max-width:100%;height:auto}"
    ".svcnb-figures th{text-align:left;font-weight:600}"
    ".svcnb-page-foot{color:#666;font-size:12px;margin-top:2em}"
    # a table reads at a laptop's or a phone's width as a printed report does: headers wrap
    # between words ("Runs out / (UTC day)"), figures, dates and ids stay whole, free text
    # wraps; on a narrow screen the type is a little smaller. A table that still does not fit
    # scrolls inside its own box (its key column stays), never the page.
    "html body .svcnb-static .svcnb-table th,html body .svcnb-static .svcnb-table th.svcnb-num,"
    "html body .svcnb-static .svcnb-table th.svcnb-line{white-space:normal;vertical-align:bottom;"
    "min-width:3em}"
    "@media (max-width:900px){body{padding:0.5em}"
    "html body .svcnb-static .svcnb-table{font-size:11px}"
    "html body .svcnb-static .svcnb-table th,html body .svcnb-static .svcnb-table td"
    "{padding:2px 4px}"
    "html body .svcnb-static .svcnb-table td.svcnb-wrap{min-width:14em}}"
    "@media (prefers-color-scheme:dark){body{background:#111;color:#eee}"
    ".svcnb-table{background:#111;color:#eee}.svcnb-table th{background:#333;color:#eee}"
    ".svcnb-scroll .svcnb-table tr>td:first-child{background:#111}}"
    "</style>"
)


def page(view: View, *, tables: Sequence[str] | None = None, source: str = "") -> str:
    """``view`` as one self-contained HTML document: its heading, its figures (each label's
    title says what it counts), its notes, its plots as PNG and every table it holds (or those
    named in ``tables``) with every row, under the same labels and formats as the panels and
    ``svcnb report``. ``source`` (a sentence: where it was read from) goes at the foot."""
    wanted = None if tables is None else set(tables)
    heading = html.escape(view.heading())
    # the page's own heading says it once (the figures' table opens with it too)
    figures = view.figures_html(style=THEME_STYLE).removeprefix(f"<b>{heading}</b>")
    parts = [f"<h1>{heading}</h1>", figures, ""]
    sizes = {p.name: p.size for p in view.spec.plots}
    for name, draw in view.plots.items():
        data = base64.b64encode(png(draw, size=sizes.get(name, (7.0, 3.2)))).decode("ascii")
        title = next((p.title for p in view.spec.plots if p.name == name), name)
        alt = html.escape(title, quote=True)
        parts.append(f'<p><img alt="{alt}" src="data:image/png;base64,{data}"></p>')
    # every table holds every row (a page of 1,000 VMs is tens of thousands of pixels long):
    # a list at the top goes to each, with its row count
    contents = []
    for spec, frame in view.shown_tables():
        if wanted is not None and spec.name not in wanted:
            continue
        columns = list(spec.columns) if spec.columns else None
        title = html.escape(view.title(spec.name))
        rows = f"{len(frame):,} row{'' if len(frame) == 1 else 's'}"
        anchor = html.escape(f"table-{spec.name}", quote=True)
        contents.append(f'<li><a href="#{anchor}">{title}</a> ({rows})</li>')
        parts.append(
            f"<h2 id='{anchor}' title='{html.escape(spec.means, quote=True)}'>{title}"
            f" <small>({rows})</small></h2>"
        )
        shown = display_frame(frame, columns)
        parts.append(frame_html(shown) if len(shown) else "<p><i>Nothing to show.</i></p>")
    if len(contents) > 1:
        parts[2] = f'<nav class="svcnb-contents"><b>Tables</b><ul>{"".join(contents)}</ul></nav>'
    if source:
        parts.append(f'<p class="svcnb-page-foot">{html.escape(source)}</p>')
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(view.heading())}</title>{_PAGE_STYLE}</head>"
        f'<body><div class="svcnb-static">{"".join(parts)}</div></body></html>\n'
    )
