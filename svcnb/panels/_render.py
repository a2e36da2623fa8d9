"""HTML tables and PNG plots for panels: what a widget shows, built from frames and Figures."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import io
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets as widgets
import matplotlib
import numpy as np
import pandas as pd
import traitlets
from itables import JavascriptFunction
from itables.widget import ITable
from matplotlib.figure import Figure
from matplotlib.text import Text

from svcnb.panels._messages import redact

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType
from svcnb.reports import VALUES, display_frame, kind, label, value_label

# the tables, plots and styles a page without a kernel shows: one renderer, in the reports
# (a panel's static HTML and `svcnb report --format html` alike); frame_html handed on
from svcnb.reports.static import CLIP_OVER, FIGURE_KINDS, THEME_STYLE, column_looks, png
from svcnb.reports.static import frame_html as frame_html
from svcnb.reports.static import is_missing as _is_missing
from svcnb.reports.static import numeric_dtype as _numeric_dtype

# Set by ``svcnb demo`` for its kernels: pages rendered without a live kernel (or a CDN for
# widget scripts) need what each panel shows as plain HTML beside the widget view.
STATIC_ENV = "SVCNB_STATIC_HTML"

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
    hidden = len(frame) - limit
    more = f"<p><i>{hidden:,} more rows not shown.</i></p>" if hidden > 0 else ""
    return (
        f'{_TABLE_STYLE}<div class="svcnb-scroll"><table class="svcnb-table"><tr>{head}</tr>'
        f"{body}</table></div>{more}"
    )


def _cell_of(column: str, value: Any) -> str:
    # a code (a firewall check) reads as its words, as in the grids
    if column in VALUES and isinstance(value, str):
        return html.escape(value_label(column, value))
    return cell(value)


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


def svg(
    draw: Callable[[Any], Any],
    *,
    size: tuple[float, float] = (7.0, 3.2),
    layout: Layout | None = None,
) -> str:
    """SVG markup of a new Figure after ``draw(ax)``: transparent background, text and axes in
    ``currentColor``, so the plot reads in light, dark and high-contrast themes alike. Colours
    the report chose (status colours, series) are kept as drawn. Margins as
    ``Figure.tight_layout`` sets them; with ``layout``, those the same plot was drawn with last
    time when its labels still fit them (:class:`Layout`)."""
    text, fig = _svg_of(draw, size, layout, _TITLE_AT_TOP)
    if _title_may_rise(fig):
        text, fig = _svg_of(draw, size, layout, {})
    return text


# Where matplotlib places a title unless something stands above the axes: before each drawing
# (and each measure of the labels) it measures every tick label of the y axis once more to
# see whether one must push the title up, a fifth of a slider move's plotting. A plot is drawn
# with its titles there, and drawn again with matplotlib's placing when something could have
# pushed one (:func:`_title_may_rise`), so the markup is the same either way.
_TITLE_AT_TOP: dict[RcKeyType, float] = {"axes.titley": 1.0}


def _svg_of(
    draw: Callable[[Any], Any],
    size: tuple[float, float],
    layout: Layout | None,
    rc: Mapping[RcKeyType, Any],
) -> tuple[str, Figure]:
    with matplotlib.rc_context({**_THEMED, **rc}):
        fig = Figure(figsize=size, dpi=100)
        ax = fig.subplots()
        draw(ax)
        _ticks_placed_once(fig)
        with _texts_laid_out_once():
            if layout is None:
                fig.tight_layout()
                return _themed_svg(fig), fig
            return layout.drawn(fig), fig


def _ticks_placed_once(fig: Figure) -> None:
    """Each axis of ``fig`` asks its locators once per place and size of its axes, not at each
    of the 16 times matplotlib places a plot's ticks in one drawing and one measure of its
    labels (each axis, and each beside it, for the axis labels and the title): a date
    locator walks the calendar every time, a tenth of a panel plot's time. Its own Figure's
    axes only, for this drawing; a locator's ticks depend on the view limits and the axes'
    size (how many labels fit), both in the key, and on nothing a drawing changes."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for name in ("get_majorticklocs", "get_minorticklocs"):
                setattr(axis, name, _placed_once(axis, getattr(axis, name)))


def _placed_once(axis: Any, locate: Callable[[], Any]) -> Callable[[], Any]:
    placed: dict[tuple[Any, ...], Any] = {}

    def locs() -> Any:
        # the locators themselves, not their ids: an id may be a new locator's after the
        # old one is gone
        key = (
            tuple(axis.get_view_interval()),
            axis.axes.bbox.bounds,
            axis.major.locator,
            axis.minor.locator,
        )
        if key not in placed:
            placed[key] = locate()
        return np.array(placed[key], copy=True)

    return locs


# What a text's layout reads (``Text._get_layout``: its lines, their sizes and offsets from its
# anchor, never where it stands), beside the renderer's kind and scale, the figure's dpi and
# the text and font settings in force. A text that wraps, or turns with its transform, depends
# on where it stands too: it is laid out each time.
_LAID_OUT_BY = (
    "_text",
    "_usetex",
    "_parse_math",
    "_linespacing",
    "_multialignment",
    "_rotation",
    "_rotation_mode",
    "_horizontalalignment",
    "_verticalalignment",
)
_LAYOUTS: dict[tuple[Any, ...], Any] = {}
_LAYOUTS_KEPT = 4096
# matplotlib's own, private (its stubs do not name it): where a matplotlib has none, every text
# is laid out by matplotlib at each drawing, as before
_LAYOUT = "_get_layout"
_matplotlib_layout = getattr(Text, _LAYOUT, None)


@contextlib.contextmanager
def _texts_laid_out_once() -> Iterator[None]:
    """While svcnb draws and measures its own plot, a text laid out as one before (the same
    words, font, size, angle and alignment) takes that layout again, across drawings.

    matplotlib lays out each text anew at every drawing and at each measure of it (tick labels
    measured for the margins, the title's place, the legend), asking the font for each line's
    size: a fifth of a panel plot's time, for labels ("2026-11", "0", the axis titles) that are
    the same from one snapshot to the next. The layout is the one matplotlib gives (the same
    SVG, byte for byte); only the plot svcnb draws inside the block uses it."""
    if _matplotlib_layout is None or getattr(Text, _LAYOUT) is not _matplotlib_layout:
        yield  # inside a block already, or no layout of matplotlib's to keep
        return
    layout = _matplotlib_layout
    rc = tuple(
        (k, repr(v))
        for k, v in matplotlib.rcParams.items()
        if k.startswith(("font.", "text.", "mathtext."))
    )

    def laid_out(text: Text, renderer: Any) -> Any:
        # ``figure``, not ``get_figure(root=True)`` (matplotlib 3.10 on): a subfigure's dpi is
        # its figure's
        fig = text.figure
        if fig is None or text.get_wrap() or text.get_transform_rotates_text():
            return layout(text, renderer)
        key = (
            # what draws: an SVG is drawn through a renderer that hands on to the SVG one
            type(getattr(renderer, "_renderer", renderer)),
            renderer.points_to_pixels(72.0),
            fig.dpi,
            text.get_fontproperties().copy(),
            *(getattr(text, name, None) for name in _LAID_OUT_BY),
            rc,
        )
        kept = _LAYOUTS.get(key)
        if kept is None:
            if len(_LAYOUTS) >= _LAYOUTS_KEPT:
                del _LAYOUTS[next(iter(_LAYOUTS))]
            kept = _LAYOUTS[key] = layout(text, renderer)
        bbox, lines, corner = kept
        return bbox.frozen(), list(lines), corner

    setattr(Text, _LAYOUT, laid_out)
    try:
        yield
    finally:
        setattr(Text, _LAYOUT, layout)


def _title_may_rise(fig: Figure) -> bool:
    """Whether matplotlib would have moved a title of ``fig`` (as drawn) above where
    :data:`_TITLE_AT_TOP` holds it: x ticks or the x label on top, or an offset text ("1e9")
    over a y axis (``Axes._update_title_position``)."""
    for ax in fig.axes:
        if ax.xaxis.get_ticks_position() in ("top", "unknown"):
            return True
        if ax.xaxis.get_label_position() == "top":
            return True
        offset = ax.yaxis.offsetText
        if offset.get_visible() and offset.get_text():
            return True
    return False


# A side of the margins may be this far (a fraction of the figure) from where the labels drawn
# want it and still be kept: 7 px of a 700 px wide plot, 3 px of 320 px high, within the
# padding tight_layout leaves around the labels (1.08 of the font size, 15 px).
_MARGIN_SLACK = 0.01
# A side may keep this much more room than its labels want (21 px of 700, 10 px of 320): a
# legend beside the axes holds VM names, a few pixels wider or narrower at each snapshot, and
# drawing the plot again to give back the few pixels a narrower one spared was six of that
# panel's seven second drawings in ten cold slider moves at 1,000 VMs
_MARGIN_SPARE = 0.03


class Layout:
    """The margins a plot (one :class:`PlotView`) was drawn with, tried first the next time.

    ``Figure.tight_layout`` measures every label of a plot before the plot is drawn, and saving
    it as SVG measures them all again: 40% of each plot's time, most of a slider move's. A plot
    drawn again for another snapshot keeps its axes, titles and tick labels of about the same
    size, so it is drawn once with the margins it had; what the labels need is then measured
    with that drawing's own renderer (its text sizes known already), and only when a side is
    more than :data:`_MARGIN_SLACK` short of it, or more than :data:`_MARGIN_SPARE` beyond it,
    is the plot drawn again with the margins measured. Nothing is ever cut off: a label that
    grew is drawn again with room for it."""

    def __init__(self) -> None:
        self.margins: dict[str, float] | None = None

    def drawn(self, fig: Figure) -> str:
        """``fig`` (drawn on, with one subplot grid) as :func:`_themed_svg` markup."""
        if self.margins is None:
            # tight_layout's own: a plot drawn again as of the same snapshot (Reload, a panel
            # opened anew) is the same picture
            fig.tight_layout()
            self.margins = _margins_of(fig)
            return _themed_svg(fig)
        fig.subplots_adjust(**self.margins)
        wanted: dict[str, float] = {}
        hook = fig.canvas.mpl_connect(
            "draw_event", lambda event: wanted.update(_wanted(fig, event))
        )
        text = _themed_svg(fig)
        fig.canvas.mpl_disconnect(hook)  # a drawing again has its margins: nothing to measure
        if wanted and _off(self.margins, wanted):
            fig.subplots_adjust(**wanted)
            self.margins = _margins_of(fig)
            text = _themed_svg(fig)
        return text


def _off(kept: Mapping[str, float], wanted: Mapping[str, float]) -> bool:
    """Whether margins ``kept`` are too far from those the labels drawn want: a side short of
    its labels' room by more than :data:`_MARGIN_SLACK`, or with more than
    :data:`_MARGIN_SPARE` to spare (labels wanting more room raise the left and bottom
    margins, and lower the right and top ones: each is where the axes end, a fraction of the
    figure from its left or bottom edge)."""
    for side, at in kept.items():
        short = wanted[side] - at if side in ("left", "bottom") else at - wanted[side]
        if short > _MARGIN_SLACK or -short > _MARGIN_SPARE:
            return True
    return False


def _margins_of(fig: Figure) -> dict[str, float]:
    pars = fig.subplotpars
    return {"left": pars.left, "right": pars.right, "bottom": pars.bottom, "top": pars.top}


def _wanted(fig: Figure, event: Any) -> dict[str, float]:
    """The margins ``Figure.tight_layout`` (default padding) would give ``fig`` as just drawn:
    its axes moved so that what each draws (labels, ticks, legend) ends one padding inside the
    figure's edges, measured with the drawing's renderer."""
    renderer = event.renderer
    width, height = fig.bbox.width, fig.bbox.height
    pad = 1.08 * matplotlib.rcParams["font.size"] * fig.dpi / 72
    boxes = [b for ax in fig.axes if ax.get_visible() and (b := ax.get_tightbbox(renderer))]
    if not boxes:
        return {}
    x0 = min(b.x0 for b in boxes)
    x1 = max(b.x1 for b in boxes)
    y0 = min(b.y0 for b in boxes)
    y1 = max(b.y1 for b in boxes)
    pars = fig.subplotpars
    # as tight_layout: what reaches past a side of the axes, never less than nothing, and the pad
    wanted = {
        "left": max(pars.left - x0 / width, 0) + pad / width,
        "right": 1 - max(x1 / width - pars.right, 0) - pad / width,
        "bottom": max(pars.bottom - y0 / height, 0) + pad / height,
        "top": 1 - max(y1 / height - pars.top, 0) - pad / height,
    }
    if wanted["left"] >= wanted["right"] or wanted["bottom"] >= wanted["top"]:
        return {}  # labels wider than the figure: tight_layout gives up too; keep what is
    return wanted


_MPL_STYLE = '<style type="text/css">*{stroke-linejoin: round; stroke-linecap: butt}</style>'
_MPL_STROKES = 'stroke-linejoin="round" stroke-linecap="butt"'


def _themed_svg(fig: Any, **save: Any) -> str:
    """``fig`` as inline SVG markup: transparent, its ink (and black) in ``currentColor``."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "svcnb"}):
        fig.savefig(buf, format="svg", transparent=True, metadata={"Date": None}, **save)
    # black drawn on purpose by a report (a threshold line, hatching) is ink too; and text
    # matplotlib writes with no fill (its black) takes the ink from the <svg> element
    text = buf.getvalue().replace(_INK, "currentColor").replace("#000000", "currentColor")
    # matplotlib says its line joins and caps in a <style> whose rule is `*`: in an HTML page
    # that rule reaches every element of the page, so each plot drawn again made the browser
    # restyle all of JupyterLab. Said on the <svg> element, they reach what it draws alone.
    text = text.replace(_MPL_STYLE, "").replace("<defs>\n  \n </defs>\n", "")
    text = text.replace("<svg ", f'<svg fill="currentColor" {_MPL_STROKES} ', 1)
    # from the <svg> element on (no XML prolog or DOCTYPE inside an HTML page); it scales down
    # with the output area, never up past its drawn size
    text = text[text.index("<svg") :]
    return re.sub(
        r'<svg ([^>]*?)width="([\d.]+)pt" height="([\d.]+)pt"',
        r'<svg \1width="100%" style="max-width:\2pt;height:auto"',
        text,
        count=1,
    )


class Themed:
    """A notebook's own matplotlib figure shown as the panels show theirs (:func:`svg`): a
    transparent background, and text, axes and black lines in the theme's text colour, so a
    plot a notebook draws reads in JupyterLab Dark as in Light (the inline backend's PNG is
    white there). The figure is closed, so pyplot does not show it a second time. On a page
    rendered without a kernel (``SVCNB_STATIC_HTML=1``, as :class:`PlotView`) it is a PNG on
    white, since mail readers drop inline SVG."""

    def __init__(self, fig: Any) -> None:
        self.title = ", ".join(t for ax in fig.axes if (t := ax.get_title())) or "plot"
        self.png = b""
        if os.environ.get(STATIC_ENV) == "1":
            buf = io.BytesIO()
            fig.savefig(buf, format="png", bbox_inches="tight", facecolor="white")
            self.png = buf.getvalue()
        for ax in fig.axes:  # a legend's box is the theme's background, its frame ink
            legend = ax.get_legend()
            if legend is not None:
                legend.get_frame().set_facecolor("none")
                legend.get_frame().set_edgecolor(_INK)
        # tight: a legend outside the plot (legend_outside) is kept whole, never cut off
        self.svg = _themed_svg(fig, bbox_inches="tight")
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close(fig)

    def _repr_html_(self) -> str:
        if self.png:
            data = base64.b64encode(self.png).decode("ascii")
            alt = html.escape(self.title)
            return f'<p><img alt="{alt}" src="data:image/png;base64,{data}"></p>'
        return (
            f'<div class="svcnb-plot" style="color:var(--jp-ui-font-color1,#000)">{self.svg}</div>'
        )

    def __repr__(self) -> str:
        return f"<svcnb plot: {self.title}>"


def themed(fig: Any) -> Themed:
    """``fig`` (a matplotlib Figure a notebook drew) to show in the theme's colours: make it
    the cell's last expression instead of ``plt.show()``."""
    return Themed(fig)


class PlotView(widgets.HTML):
    """A panel's plot: inline SVG (see :func:`svg`) in the theme's text colour (CSS
    ``svcnb-plot``). ``svg`` holds the markup; pages rendered without a kernel
    (``SVCNB_STATIC_HTML=1``) also get ``png``, since mail readers drop inline SVG."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_class("svcnb-plot")
        self.svg = ""
        self.png = b""
        self._layouts: dict[tuple[float, float], Layout] = {}  # by figure size
        self.waiting = False  # showing :meth:`wait`'s line in the plot's room

    def draw(self, draw: Callable[[Any], Any], *, size: tuple[float, float] = (7.0, 3.2)) -> None:
        """Draw the plot again with ``draw(ax)``."""
        try:
            self.put(self.render(draw, size=size))
        finally:
            self.stop_waiting()

    def wait(self, size: tuple[float, float] = (7.0, 3.2)) -> None:
        """Until the plot is drawn: its room, as a drawing of ``size`` inches takes it, saying
        it is being drawn (the page does not jump when it comes). A plot drawn before stays
        until the new one replaces it."""
        if self.svg:
            return
        width, height = size
        self.waiting = True
        self.value = (
            f'<div style="color:var(--jp-ui-font-color2,#666);max-width:720px">'
            f'<div class="svcnb-plot-wait" style="width:100%;max-width:{width * 72:g}pt;'
            f"aspect-ratio:{width:g}/{height:g};display:flex;align-items:center;"
            f'justify-content:center">drawing the plot\u2026</div></div>'
        )

    def stop_waiting(self) -> None:
        """Leave the room empty if the plot was not drawn (its error is said elsewhere)."""
        if self.waiting:
            self.waiting = False
            self.value = ""

    def render(
        self, draw: Callable[[Any], Any], *, size: tuple[float, float] = (7.0, 3.2)
    ) -> tuple[str, bytes]:
        """(SVG, PNG) of the plot ``draw(ax)`` draws; the PNG only for pages rendered without a
        kernel, else empty."""
        static = os.environ.get(STATIC_ENV) == "1"
        layout = self._layouts.setdefault(size, Layout())
        return svg(draw, size=size, layout=layout), png(draw, size=size) if static else b""

    def forget(self) -> None:
        """Draw the next plot with the margins a new panel's plot has (``tight_layout``'s), not
        those kept from the plots drawn before (:class:`Layout`)."""
        self._layouts.clear()

    def put(self, drawn: tuple[str, bytes]) -> None:
        """Show what :meth:`render` gave."""
        self.svg, self.png = drawn
        self.waiting = False
        self.value = (
            f'<div style="color:var(--jp-ui-font-color1,#000);max-width:720px">{self.svg}</div>'
        )


# Page lengths a grid offers; a panel's own page length is added, so the "entries per page"
# box always shows the length in use (DataTables leaves it blank for a length not in its menu).
_PAGE_LENGTHS = (10, 25, 50, 100)
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


# A free-text cell longer than this shows its start, and the whole on hover: the runway's
# "Unpaid then" lists every VM left unpaid, and at 10,000 VMs that one cell made its row
# 1,500 px tall. A list of ids says how many more it holds.
WRAP_LIMIT = 240
_SHORTEN_WRAP = JavascriptFunction(
    "function (data, type) { if (type !== 'display' || typeof data !== 'string') return data;"
    " var box = document.createElement('textarea'); box.innerHTML = data;"
    " var text = box.value;"
    f" if (text.length <= {WRAP_LIMIT}) return data;"
    " var esc = function (s) { return s.replace(/&/g, '&amp;').replace(/</g, '&lt;')"
    ".replace(/>/g, '&gt;').replace(/\"/g, '&quot;'); };"
    f" var cut = text.slice(0, {WRAP_LIMIT}), more = '\u2026';"
    " if (/^[^,\\s]+(, [^,\\s]+)+$/.test(text)) {"
    "  cut = cut.slice(0, cut.lastIndexOf(', '));"
    "  var left = text.split(', ').length - cut.split(', ').length;"
    "  more = ' \u2026 and ' + left.toLocaleString('en-US') + ' more'; }"
    " return '<span class=\"svcnb-short\" title=\"' + esc(text) + '\">' + esc(cut) + more"
    " + '</span>'; }"
)


def page_lengths(page: int) -> list[int]:
    """The page lengths a grid showing ``page`` rows offers: the usual ones and ``page``."""
    return sorted({page, *_PAGE_LENGTHS})


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
            defs.append(
                {
                    "targets": i,
                    "className": "svcnb-wrap",
                    "type": "string",
                    "render": _SHORTEN_WRAP,
                }
            )
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


# ITables' Select code deselects every row before it selects the kernel's: on a fresh grid, with
# nothing selected, that cost 1 ms a row (DataTables builds an API object per row), 2.6 s of a
# billing slider move at 1,000 VMs. Deselecting the selected rows alone leaves the same grid.
_DESELECT = ("this.dt.rows().deselect(),", "this.dt.rows({selected:!0}).deselect(),")


def grid_script(esm: str) -> str:
    """ITables' script with :data:`_DESELECT` applied (unchanged if its code differs)."""
    return esm.replace(*_DESELECT, 1)


class _GridCode(anywidget.AnyWidget):
    """The grids' table code (ITables' DataTables bundle, its script and style), as a model
    never shown: sent to the page once per kernel, not once per grid. The page loads it as
    soon as it has the model (:data:`_CODE_ESM`), while the kernel is still computing what
    the first panel shows, not when the first grid is drawn."""

    _esm = traitlets.Unicode().tag(sync=True)
    esm = traitlets.Unicode().tag(sync=True)
    css = traitlets.Unicode().tag(sync=True)
    digest = traitlets.Unicode().tag(sync=True)


_CODE: list[_GridCode] = []


def _grid_code() -> _GridCode:
    """The kernel's one :class:`_GridCode` (made again if it was closed)."""
    if not _CODE or _CODE[0].comm is None:
        esm, css = grid_script(str(ITable._esm)), str(ITable._css)
        digest = hashlib.sha256((esm + css).encode()).hexdigest()[:16]
        _CODE[:] = [_GridCode(_esm=_CODE_ESM, esm=esm, css=css, digest=digest)]
    return _CODE[0]


# Each grid's script: fetch the shared code's model, import its script once per page (keyed by
# its digest) and add its style once, then draw with ITables' own render. ITables' widget sent
# its 620 kB script and 107 kB style with every grid, and the page compiled the script again
# for each: 8.5 MB and 12 s for the billing panel's 11 grids at 1,000 VMs, almost all of it
# the same code. The code's model may be created after a grid's when the page restores widgets,
# so it is waited for.
#
# ITables draws a new DataTable whenever its options change, new rows included: a slider move
# of the billing panel at 1,000 VMs built 11 DataTables again, most of 5 s of the page's CPU.
# When only the rows changed, they replace the rows of the DataTable drawn, which then stands
# as a new one would: the search, order, page and page length it was first drawn with, the
# kernel's selection. Any other change draws it anew, as ITables does.
#
# Both scripts load the code through one function (:data:`_CODE_LOADER`), once per page.
_CODE_LOADER = """
const loaded = (globalThis.__svcnbGridCode ??= new Map());
function load(code) {
  const key = code.get("digest");
  if (!loaded.has(key)) {
    loaded.set(key, (async () => {
      const style = document.createElement("style");
      style.id = "svcnb-grid-style-" + key;
      style.textContent = code.get("css");
      document.head.appendChild(style);
      const url = URL.createObjectURL(new Blob([code.get("esm")], {type: "text/javascript"}));
      try {
        const render = (await import(/* webpackIgnore: true */ url)).default.render;
        // the script sets window.$ to its jQuery, which holds its DataTables
        return {render, jquery: globalThis.$};
      }
      finally { URL.revokeObjectURL(url); }
    })());
  }
  return loaded.get(key);
}
"""
_CODE_ESM = (
    _CODE_LOADER
    + """
export default { initialize({model}) { load(model); } };
"""
)
_GRID_ESM = (
    _CODE_LOADER
    + """
async function codeModel(model) {
  const id = String(model.get("_code")).replace(/^IPY_MODEL_/, "");
  for (let tries = 0; ; tries++) {
    try { return await model.widget_manager.get_model(id); }
    catch (err) { if (tries >= 100) throw err; }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
async function library(model) {
  return load(await codeModel(model));
}
// the rows as ITables reads them: integers past 2**53 exact, NaN and infinities from its markers;
// text with neither (no number of 16 digits, no marker) is read with no reviver, which at
// 10,000 rows takes a tenth of the time (16 ms against 210)
function rowsOf(text) {
  if (!/[[,:]\\s*-?\\d{16}|___/.test(text || "")) return JSON.parse(text || "[]");
  return JSON.parse(text || "[]", (key, value, context) =>
    typeof value === "number" && !Number.isSafeInteger(value) && context
      && /^-?\\d+$/.test(context.source) ? BigInt(context.source)
    : value === "___NaN___" ? NaN : value === "___Infinity___" ? Infinity
    : value === "___-Infinity___" ? -Infinity : value);
}
// the options but the rows, as text: read before ITables draws, which writes the functions it
// evaluates into them
function optionsOf(args) {
  const {data_json: _rows, svcnbRows: _version, ...rest} = args || {};
  return JSON.stringify(rest);
}
export default {
  async render(context) {
    const {render, jquery} = await library(context.model);
    const model = context.model;
    let redraw = () => {}, reselect = () => {}, first = null;
    let drawn = optionsOf(model.get("_dt_args"));
    // A grid the kernel pages (serverSide): DataTables asks for the rows it shows, the kernel
    // answers with them and their numbers in the whole frame (onPage), which map the kernel's
    // selection (of the whole frame) to the rows on the page and back.
    const paged = () => Boolean((model.get("_dt_args") || {}).serverSide);
    const asked = new Map();
    let asks = 0, lastDraw = 0, onPage = [], plain = false;
    const pager = (data, callback) => {
      const id = ++asks;
      lastDraw = data.draw;
      asked.set(id, callback);
      model.send({svcnbPage: {
        id, draw: data.draw, start: data.start, length: data.length,
        search: (data.search && data.search.value) || "",
        order: (data.order || []).map((o) => [o.column, o.dir]),
      }});
    };
    model.on("msg:custom", (msg) => {
      const got = msg && msg.svcnbPage, done = got && asked.get(got.id);
      if (!done) return;
      asked.delete(got.id);
      if (got.draw >= lastDraw) onPage = got.ids;  // DataTables drops an older draw's answer
      done({draw: got.draw, recordsTotal: got.total, recordsFiltered: got.found,
            data: rowsOf(got.rows)});
    });
    const table = () => {
      const node = context.el.querySelector("table.dataTable");
      const ok = node && jquery && jquery.fn.dataTable && jquery.fn.dataTable.isDataTable(node);
      return ok ? jquery(node).DataTable() : null;
    };
    const remember = () => {
      const dt = table();
      // a copy: DataTables changes its order array in place as the user sorts
      const order = dt && JSON.parse(JSON.stringify(dt.order()));
      first = dt && {order, search: dt.search(), length: dt.page.len()};
    };
    const onArgs = () => {
      const args = model.get("_dt_args"), options = optionsOf(args), dt = table();
      if (dt && first && options === drawn && paged()) {
        // new rows in the kernel: the first page of them, as first drawn
        dt.search(first.search).columns().search("");
        dt.order(first.order).page.len(first.length);
        dt.draw();
      } else if (dt && first && options === drawn) {
        dt.clear().rows.add(rowsOf(args.data_json));
        dt.search(first.search).columns().search("");
        dt.order(first.order).page.len(first.length);
        dt.draw();
        reselect();
      } else {
        redraw();
        remember();
      }
      drawn = options;
    };
    // ITables' render, its listener of new options taken by onArgs
    const proxy = {
      get(name) {
        const value = model.get(name);
        if (name === "_dt_args" && value && value.serverSide) return {...value, ajax: pager};
        if (name === "selected_rows" && paged()) {
          const chosen = new Set(value || []);
          return onPage.map((row, i) => (chosen.has(row) ? i : -1)).filter((i) => i >= 0);
        }
        return value;
      },
      set(name, value) {
        if (name === "selected_rows" && paged()) {
          // the rows on the page as the user left them; a plain click chooses its row alone,
          // as in a grid holding every row, and with Ctrl, Cmd or Shift the rows chosen on
          // other pages or outside the search are kept
          const here = new Set(onPage);
          const before = plain ? [] : model.get("selected_rows") || [];
          const kept = before.filter((row) => !here.has(row));
          plain = false;
          const now = (value || []).map((i) => onPage[i]).filter((row) => row !== undefined);
          value = [...new Set([...kept, ...now])].sort((a, b) => a - b);
        }
        return model.set(name, value);
      },
      save_changes: () => model.save_changes(),
      send: (...args) => model.send(...args),
      off: (name, callback) => model.off(name, callback),
      widget_manager: model.widget_manager,
      on(name, callback) {
        if (name === "change:_dt_args") { redraw = callback; model.on(name, onArgs); return; }
        if (name === "change:selected_rows") reselect = callback;
        model.on(name, callback);
      },
    };
    const out = render({...context, model: proxy});
    remember();
    // each page of a kernel-paged grid drawn shows the kernel's selection of its rows
    jquery(context.el).on("draw.dt", () => { if (paged()) reselect(); });
    jquery(context.el).on("user-select.dt", (_e, _dt, _type, _cell, event) => {
      const keys = event && (event.ctrlKey || event.metaKey || event.shiftKey);
      plain = !keys;
    });
    return out;
  },
};
"""
)


class Grid(ITable):
    """An interactive grid (ITables widget: sort, search, pages; ``selected_rows`` readable
    from Python) holding every row of its frame. Every ``update`` with a new frame sets which
    columns may wrap, so no panel passes grid options of its own. The table code reaches the
    page once per kernel (:class:`_GridCode`), not with each grid."""

    # ITables declares these as files; anywidget takes a script's text as well
    _esm = _GRID_ESM  # type: ignore[assignment]
    _css = ""  # type: ignore[assignment]
    _code = traitlets.Instance(_GridCode, allow_none=True).tag(
        sync=True, **widgets.widget_serialization
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._pages: _Pages | None = None  # the rows of a grid the kernel pages (PAGED_OVER)
        self._version = 0
        super().__init__(*args, **kwargs)
        self._code = _grid_code()
        self.on_msg(self._answer)

    def update(self, df: Any = None, caption: str | None = None, **kwargs: Any) -> None:
        kwargs = {**_WHOLE, **kwargs}
        if df is not None and "columnDefs" not in kwargs:
            defs = column_defs(df)
            if defs:
                kwargs["columnDefs"] = defs
            elif "columnDefs" in self._dt_args:
                kwargs["columnDefs"] = None  # ITables' way to drop an option set before
        frame = self._df if df is None else df
        if not isinstance(frame, pd.DataFrame):
            super().update(df, caption, **kwargs)
            return
        selected = kwargs.pop("selected_rows", None)
        selected = list(self.selected_rows or []) if selected is None else list(selected)
        paged = len(frame) > PAGED_OVER
        rows = "" if paged else rows_json(frame)
        if df is not None and self._shows(frame, rows, caption, kwargs):
            # the page holds these rows and options already: nothing is sent again (a slider
            # move sent the billing panel's 1,000 prices, the same at every snapshot)
            self._df = frame
            self.selected_rows = selected
            return
        kwargs["selected_rows"] = []
        # ITables' options from the frame's columns alone, then the rows as text: ITables runs
        # every value through pandas' generic formatter (8 of a what-if move's 12 s at 10,000
        # VMs), where a grid's frame is text already (``shown``). One message to the page.
        with self.hold_sync():
            super().update(_stand_in(frame, {**self._dt_args, **kwargs}), caption, **kwargs)
            self._df = frame
            args = {k: v for k, v in self._dt_args.items() if k not in _PAGED_KEYS}
            if paged:
                self._pages = _Pages(frame, args.get("columnDefs") or [])
                self._version += 1
                # no rows: the page asks for the ones it shows (``_answer``); the version
                # tells it the rows changed
                args = {
                    **args,
                    "serverSide": True,
                    "svcnbRows": self._version,
                    # DataTables waits 400 ms after a key before asking; the kernel answers a
                    # search of 10,000 rows in 20 ms
                    "searchDelay": 150,
                    # what the page says while it waits, and for good in a notebook opened
                    # with no kernel (its rows are in no saved output)
                    "language": {
                        "loadingRecords": "Asking the kernel for these rows (this grid is "
                        "paged by the kernel: with none running, run the cell again)…"
                    },
                }
            else:
                self._pages = None
                args = {**args, "data_json": rows}
            self._dt_args = args
            self.selected_rows = selected

    def _shows(
        self, frame: pd.DataFrame, rows: str, caption: str | None, options: Mapping[str, Any]
    ) -> bool:
        """Whether the grid shows ``frame`` (its columns, ``rows`` as sent, or every row when
        the kernel pages it) with ``options`` and ``caption`` already, so that updating it would
        change nothing in the page."""
        shown_frame = self._df
        if not (
            caption in (None, self.caption)
            and isinstance(shown_frame, pd.DataFrame)
            and list(shown_frame.columns) == list(frame.columns)
            and set(options) <= {*_WHOLE, "columnDefs"}
            and options.get("columnDefs") == self._dt_args.get("columnDefs")
        ):
            return False
        if self._pages is not None:
            return not rows and shown_frame.equals(frame)
        return self._dt_args.get("data_json") == rows

    def _answer(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Answer the page's request for the rows a kernel-paged grid shows (DataTables'
        server-side processing: search, order, start and length)."""
        ask = content.get("svcnbPage") if isinstance(content, dict) else None
        if not isinstance(ask, dict):
            return
        pages = self._pages
        if pages is None:
            answer = {"id": ask.get("id"), "draw": ask.get("draw"), "total": 0, "found": 0}
            self.send({"svcnbPage": {**answer, "rows": "[]", "ids": []}})
            return
        ids, found = pages.ask(
            str(ask.get("search") or ""),
            [(int(c), str(d)) for c, d in ask.get("order") or []],
            max(int(ask.get("start") or 0), 0),
            int(ask.get("length") or 10),
        )
        self.send(
            {
                "svcnbPage": {
                    "id": ask.get("id"),
                    "draw": ask.get("draw"),
                    "total": pages.total,
                    "found": found,
                    "rows": pages.rows(ids),
                    "ids": ids,
                }
            }
        )


# A grid of more rows than this is paged by the kernel: the page holds the rows it shows and
# asks the kernel for others as the user pages, searches or sorts (DataTables' server-side
# processing). Every row of the billing panel's five grids at 10,000 VMs went to the page with
# each slider move, 2.3 MB, and DataTables took each into its own model again.
PAGED_OVER = 2000
_PAGED_KEYS = ("serverSide", "svcnbRows", "searchDelay", "data_json", "language")


class _Pages:
    """What a kernel-paged grid's frame answers to the page: which rows a search finds, in which
    order, as DataTables would find and order them in the page."""

    def __init__(self, frame: pd.DataFrame, defs: Sequence[Mapping[str, Any]]) -> None:
        self.columns = _cells_of(frame)
        self.total = len(frame)
        self.figures = {int(d["targets"]) for d in defs if d.get("type") == "num"}
        self._hay: pd.Series | None = None
        self._keys: dict[int, np.ndarray] = {}

    def ask(
        self, search: str, order: Sequence[tuple[int, str]], start: int, length: int
    ) -> tuple[list[int], int]:
        """(the frame's row numbers to show, how many rows the search found)."""
        found = np.arange(self.total)
        words = [w.lower() for w in _words(search)]
        if words:
            hay = self.hay()
            keep = np.ones(self.total, dtype=bool)
            for word in words:
                keep &= hay.str.contains(word, regex=False).to_numpy(dtype=bool)
            found = found[keep]
        order = [(c, d) for c, d in order if 0 <= c < len(self.columns)]
        if order and len(found):
            # lexsort: the last key first; the row number last of all, as DataTables keeps
            # rows that tie in their order
            keys = [found]
            for column, way in reversed(order):
                key = self.key(column)[found]
                keys.append(-key if way == "desc" else key)
            found = found[np.lexsort(keys)]
        if length < 0:
            return found[start:].tolist(), len(found)
        return found[start : start + length].tolist(), len(found)

    def hay(self) -> pd.Series:
        """Each row's cells as the page's search reads them: unescaped, lower case."""
        if self._hay is None:
            text = ["  ".join(str(v) for v in row) for row in zip(*self.columns, strict=True)]
            self._hay = pd.Series([html.unescape(t).lower() for t in text], dtype=object)
        return self._hay

    def key(self, column: int) -> np.ndarray:
        """The sort key of each row in ``column``: ranks, so that descending is its negation.
        A figure sorts by its number (:data:`_FIGURE_SORT`: blanks and "unknown" first), the
        rest as lower-case text."""
        if column not in self._keys:
            cells = pd.Series(self.columns[column], dtype=object).astype(str)
            if column in self.figures:
                digits = cells.str.replace(r"[^0-9.\-]", "", regex=True)
                lead = digits.str.extract(r"^(-?(?:\d+\.?\d*|\.\d+))", expand=False)
                values = pd.to_numeric(lead, errors="coerce").fillna(-np.inf)
                self._keys[column] = values.rank(method="dense").to_numpy()
            else:
                self._keys[column] = cells.str.lower().rank(method="dense").to_numpy()
        return self._keys[column]

    def rows(self, ids: Sequence[int]) -> str:
        """Rows ``ids`` as :func:`rows_json` writes them."""
        return json.dumps([[column[i] for column in self.columns] for i in ids])


def _words(search: str) -> list[str]:
    """The words of a search as DataTables' smart search splits them: at spaces, a quoted
    phrase one word."""
    return [w.strip('"') for w in re.findall(r'"[^"]*"|\S+', search) if w.strip('"')]


def _stand_in(frame: pd.DataFrame, options: Mapping[str, Any]) -> pd.DataFrame:
    """A frame ITables derives the same options from as from ``frame`` (its columns, and
    whether it fits on one page, which hides search, info and paging) at no formatting cost:
    zeros, ``frame``'s row count up to one more than the longest page."""
    menu = options.get("lengthMenu") or []
    longest = max(
        [int(options.get("pageLength") or 10), *(n for n in menu if isinstance(n, int) and n > 0)]
    )
    return pd.DataFrame(0, index=range(min(len(frame), longest + 1)), columns=frame.columns)


def rows_json(frame: pd.DataFrame) -> str:
    """``frame``'s rows as the JSON ITables gives DataTables: text HTML-escaped as ITables
    escapes it, integers and booleans as they are, a missing value blank."""
    columns = _cells_of(frame)
    return json.dumps(list(zip(*columns, strict=True)) if columns else [])


def _cells_of(frame: pd.DataFrame) -> list[list[Any]]:
    """``frame``'s cells column by column, as :func:`rows_json` sends them."""
    columns: list[list[Any]] = []
    for _, series in frame.items():
        if series.dtype.kind in "biu":
            columns.append(series.tolist())
            continue
        text = series.to_numpy(dtype=object, na_value="").tolist()
        if not isinstance(series.dtype, pd.StringDtype):  # its cells are text already
            text = [str(v) for v in text]
        joined = "".join(text)
        if "&" in joined or "<" in joined or ">" in joined:  # rare in a grid: escape then
            text = [v.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for v in text]
        columns.append(text)
    return columns


def grid(frame: pd.DataFrame | None = None, *, select: bool = False, page: int = 10) -> Grid:
    """A :class:`Grid` showing ``frame`` as given, ``page`` rows a page; pass frames through
    :func:`shown` first."""
    frame = frame if frame is not None else pd.DataFrame()
    defs = column_defs(frame)
    # DataTables options, passed only when there are some
    options: dict[str, Any] = {"columnDefs": defs} if defs else {}
    made = Grid(
        pd.DataFrame(columns=frame.columns),  # the rows through Grid.update, faster than ITables
        select=select,
        pageLength=page,
        lengthMenu=page_lengths(page),
        classes="display compact svcnb-grid",
        # the browser sizes the columns to the page shown: DataTables' own sizing measured a
        # hidden copy of the table on every new set of rows (a quarter of the page's time per
        # billing move at 1,000 VMs); its widths were only kept steadier across pages
        autoWidth=False,
        # a row's cells become page elements when a page shows it: at 10,000 VMs a slider move
        # built every row of every grid, 21,000 rows, to show ten of each
        deferRender=True,
        # flush left under the panel's title and controls (ITables centres tables by default)
        style="table-layout:auto;width:auto;margin:0;caption-side:bottom",
        maxBytes=0,
        maxRows=0,
        maxColumns=0,
        **options,
    ).add_class("svcnb-grid-box")
    if len(frame):
        made.update(frame)
    return made


def theme_style() -> widgets.HTML:
    """An invisible widget holding the panels' style (:data:`THEME_STYLE`); every panel holds
    one, so its grids, buttons and tables are styled even before any table of its is shown."""
    return widgets.HTML(THEME_STYLE, layout=widgets.Layout(display="none"))


def shown(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``frame`` with human labels and formats for a grid; the frame itself is not changed."""
    return display_frame(frame, list(columns) if columns is not None else None)
