"""What the panels look like: grids that page and do not wrap short columns, plots that read in
light and dark themes, and the billing plot stating the currency its figures state."""

from __future__ import annotations

import re
from decimal import Decimal

import ipywidgets as widgets
import pandas as pd
import pytest
from _tiers import dialects

from svcnb.client import Client
from svcnb.panels import (
    BandwidthPanel,
    BillingPanel,
    Grid,
    PlotView,
    VmPanel,
    WebhooksPanel,
    grid,
    shown,
)
from svcnb.reports import STATUS_COLOURS, billing
from svcnb.reports.static import frame_html
from svcnb.store import Store

DIALECTS = ["default", "acme", "linkhdr", "cursor"]
WHITE, LAB_DARK = "#ffffff", "#111111"  # a light page; JupyterLab Dark's notebook background


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _grids(panel: object) -> list[Grid]:
    found = [getattr(panel, "table", None), getattr(panel, "deliveries_table", None)]
    found += list(getattr(panel, "tables", {}).values())
    return [g for g in found if g is not None]


@pytest.fixture
def store(sandbox, admin, tmp_path) -> Store:
    store = Store(tmp_path / "store")
    store.build_history(admin, 2, sandbox.control.advance)
    return store


def test_every_grid_offers_the_page_length_it_uses(admin, store, tmp_path):
    panels = [
        VmPanel(admin, watch_interval=None),
        WebhooksPanel(admin),
        BillingPanel(store, export_dir=tmp_path),
        BandwidthPanel(store, export_dir=tmp_path),
    ]
    checked = 0
    for panel in panels:
        for g in _grids(panel):
            assert isinstance(g, Grid)
            args = g._dt_args
            # DataTables shows a blank "entries per page" box for a length not in its menu
            assert args["pageLength"] in args["lengthMenu"], (type(panel).__name__, args)
            checked += 1
    assert VmPanel(admin, watch_interval=None).table._dt_args["pageLength"] == 15
    assert checked >= 10


def _defs(grid: Grid) -> dict[int, dict]:
    """The grid's DataTables options per column position."""
    return {d["targets"]: d for d in grid._dt_args["columnDefs"]}


def test_short_columns_stay_on_one_line_and_reasons_wrap(admin):
    panel = VmPanel(admin, watch_interval=None)
    shown = list(panel.table.df.columns)
    defs = _defs(panel.table)
    # status, region, plan, IP, ids: all short, none wraps
    assert sorted(defs) == list(range(len(shown)))
    assert all("dt-nowrap" in d["className"] for d in defs.values())

    g = Grid(pd.DataFrame())
    reason = "the rule allows 0.0.0.0/0 to reach port 22 on every VM it protects"
    g.update(pd.DataFrame({"Status": ["running"], "Monthly": ["1,204.50 EUR"], "Why": [reason]}))
    defs = _defs(g)
    assert defs[0]["className"] == "dt-nowrap" and defs[0]["type"] == "string"
    # money is a figure: one line, right-aligned, sorted by its number
    assert defs[1]["className"] == "dt-nowrap dt-right" and defs[1]["type"] == "num"
    assert defs[2]["className"] == "svcnb-wrap"
    # a new frame gives new options, never stale targets
    g.update(pd.DataFrame({"Why": [reason]}))
    assert list(_defs(g)) == [0]


def test_figures_align_right_and_long_urls_are_shortened_with_the_whole_on_hover():
    frame = pd.DataFrame(
        {
            "url": ["https://billing.example.org/webhooks/svc/with/a/long/path", "https://a.b/"],
            "amount": [Decimal("1749.93"), Decimal("239.40")],
            "currency": ["EUR", "EUR"],
            "failures": ["≥ 12", "unknown"],
        }
    )
    g = grid(shown(frame))
    defs = _defs(g)
    labels = list(g.df.columns)
    assert labels[:2] == ["URL", "Amount"]
    assert "dt-right" in defs[1]["className"]  # money, by its column's kind
    assert "dt-right" in defs[2]["className"]  # "≥ 12" and "unknown" read as a figure
    assert "svcnb-clip" in defs[0]["className"] and "render" in defs[0]
    assert ["columnDefs", 0, "render"] in g._dt_args["keys_to_be_evaluated"]
    # the grid box scrolls sideways (the style every panel holds says how)
    assert "svcnb-grid-box" in g._dom_classes
    # a static page: the same alignment, the URL shortened with the whole in its title
    page = frame_html(g.df)
    assert '<td class="svcnb-num">1,749.93 EUR</td>' in page
    assert 'title="https://billing.example.org/webhooks/svc/with/a/long/path"' in page
    assert ">https://billing.example.or\u2026/a/long/path<" in page
    assert '<div class="svcnb-scroll">' in page


def test_plots_are_transparent_svg_in_the_themes_text_colour():
    view = PlotView()

    def draw(ax):
        ax.plot([0, 1], [2, 3], label="balance", color=STATUS_COLOURS["running"])
        ax.set_ylabel("balance (EUR)")
        ax.axvline(0.5, color="black")
        ax.legend()

    view.draw(draw)
    svg = view.svg
    assert svg.startswith("<svg") and 'width="100%"' in svg
    assert "balance (EUR)" in svg  # real text, not glyph outlines
    # no painted background: the theme's shows through
    for colour in ("#ffffff", "white", "#000000"):
        assert colour not in svg.lower()
    assert "#010203" not in svg  # the placeholder ink is all replaced
    # no rule of the plot's reaches the rest of the page: matplotlib's `*{stroke-linejoin...}`
    # restyled all of JupyterLab each time a plot was drawn again
    assert "<style" not in svg
    assert 'stroke-linejoin="round" stroke-linecap="butt"' in svg.partition(">")[0]
    assert svg.count("currentColor") > 10  # labels, ticks, spines, legend, the black line
    assert STATUS_COLOURS["running"] in svg  # status colours stay as chosen
    assert "var(--jp-ui-font-color1" in view.value
    assert view.png == b""  # PNG only for pages without a kernel


def test_an_as_of_move_sends_no_style_sheet_to_the_page(store):
    """The panel holds its style once: a style sheet in a title or the figures, sent again at
    each move, made the browser restyle the whole page each time."""
    panel = BillingPanel(store)
    sheets = [w for w in _html_widgets(panel.widget) if "<style" in w.value]
    assert len(sheets) == 1 and sheets[0].layout.display == "none"
    before = {id(w): w.value for w in _html_widgets(panel.widget)}
    panel.show_at(panel.snapshot_times()[0])
    changed = [w for w in _html_widgets(panel.widget) if before[id(w)] != w.value]
    assert changed  # the figures, plots and status moved
    assert not [w for w in changed if "<style" in w.value]
    # a page without a kernel still carries the style, once before the rest
    from svcnb.panels import static_html

    assert static_html(panel.widget).startswith('<div class="svcnb-static"><style>')


def _html_widgets(w):
    if isinstance(w, widgets.HTML):
        yield w
    for child in getattr(w, "children", ()):
        yield from _html_widgets(child)


@pytest.mark.parametrize("status", sorted(STATUS_COLOURS))
def test_status_colours_read_on_light_and_dark_backgrounds(status):
    colour = STATUS_COLOURS[status]
    # WCAG 2.1 non-text contrast: 3:1 for the parts of a graphic needed to understand it
    assert _contrast(colour, WHITE) >= 3.0, (status, colour)
    assert _contrast(colour, LAB_DARK) >= 3.0, (status, colour)


@pytest.mark.parametrize("dialect", dialects(DIALECTS))
def test_balance_plot_states_the_currency_the_summary_states(make_sandbox, tmp_path, dialect):
    sb = make_sandbox(vms=8, seed=7, time_scale=0.0, dialect=dialect)
    with Client(sb.tokens["admin"], sb.base_url, progress=False) as client:
        store = Store(tmp_path / "store")
        store.build_history(client, 2, sb.control.advance)
    panel = BillingPanel(store, export_dir=tmp_path)
    currency = panel.figures["currency"]
    axis = re.search(r">balance \(([^)<]+)\)<", panel.plots["balance"].svg)
    if currency is None:
        assert axis is not None and axis.group(1) == "currency not stated"
        return
    assert f"{panel.figures['balance']:,.2f} {currency}" in panel.summary.value
    assert axis is not None and axis.group(1) == currency
    # as does the report a notebook plots on its own, without the runway beside it
    assert (billing.balance_history.from_store(store)["currency"] == currency).all()
    # the balance and overdue tables say the same currency on every row
    assert panel.tables["balance_history"].df["Balance"].str.endswith(f" {currency}").all()
    owed = panel.tables["overdue"].df["Amount"]
    assert owed[owed != ""].str.endswith(f" {currency}").all()
    # and its rows add up to the owed figure of the summary
    overdue = panel.results["overdue"]
    mine = overdue[overdue["currency"] == currency]["amount"].astype(float).sum()
    assert round(mine, 2) == round(panel.figures["owed"], 2)


def test_pages_without_a_kernel_get_png_plots_and_left_aligned_tables(store, tmp_path, monkeypatch):
    monkeypatch.setenv("SVCNB_STATIC_HTML", "1")
    page = BillingPanel(store, export_dir=tmp_path)._repr_mimebundle_()["text/html"]
    # mail readers drop inline SVG: the plots go as PNG
    assert page.count('src="data:image/png;base64,') == 2
    assert "<svg" not in page
    assert ".svcnb-table th,.svcnb-table td{" in page and "text-align:left" in page
