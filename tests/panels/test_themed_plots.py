"""A plot a notebook draws itself reads in JupyterLab Dark as in Light (``svcnb.panels.themed``):
no white background, text and axes in the theme's colour, a legend outside the plot kept whole
and on no box of its own colour, and pyplot does not show the figure a second time."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from svcnb.panels import themed  # noqa: E402
from svcnb.reports import legend_outside  # noqa: E402


def test_a_notebook_figure_takes_the_theme_colours() -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3), layout="constrained")
    left.plot([1, 2, 3], label="used")
    legend_outside(left)
    right.bar(["a"], [1])
    left.set_title("usage")
    shown = themed(fig)

    assert plt.get_fignums() == []  # closed: the inline backend does not add a white PNG
    page = shown._repr_html_()
    assert repr(shown) == "<svcnb plot: usage>"
    # nothing painted white or black: backgrounds transparent, ink the theme's text colour
    colours = {c.lower() for c in re.findall(r"#[0-9a-fA-F]{6}\b", shown.svg)}
    assert not colours & {"#ffffff", "#000000"}, colours
    assert re.search(r'<svg fill="currentColor"', shown.svg)  # text written without a fill
    assert "var(--jp-ui-font-color1" in page
    # the legend outside the left plot is in the picture, on no box of its own
    assert ">used</text>" in shown.svg
    assert "fill: #ffffff" not in shown.svg


def test_a_page_without_a_kernel_shows_a_notebook_figure_as_png(monkeypatch) -> None:
    # svcnb demo renders the notebooks as pages to mail: readers drop inline SVG
    monkeypatch.setenv("SVCNB_STATIC_HTML", "1")
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3])
    ax.set_title("usage")
    page = themed(fig)._repr_html_()
    assert 'alt="usage" src="data:image/png;base64,' in page
    assert "<svg" not in page
    assert plt.get_fignums() == []


def _left_spine_x(svg: str) -> float:
    """Where the plot's left axis line stands, in the SVG's points."""
    spine = re.search(r'<g id="patch_3">\s*<path d="M ([\d.]+) ', svg)
    assert spine, "no left spine in the SVG"
    return float(spine.group(1))


def test_a_plot_drawn_again_makes_room_for_longer_labels_as_a_first_drawing_would() -> None:
    # a panel's plot keeps its margins from one snapshot to the next (drawing it is then about
    # half the work); a snapshot whose figures are longer must still show them whole
    from svcnb.panels import PlotView

    def figures(top: float, label: str):
        def draw(ax) -> None:
            ax.plot([1, 2, 3], [0, top / 2, top])
            ax.yaxis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:,.0f}"))
            ax.set_ylabel(label)
            ax.set_title("used")

        return draw

    short, long_ = figures(9, "GiB"), figures(9_000_000_000, "GiB used this month, at least")
    plot = PlotView()
    drawn = [plot.render(d)[0] for d in (short, long_, short, short)]
    fresh = {id(d): PlotView().render(d)[0] for d in (short, long_)}
    for d, svg in zip((short, long_, short, short), drawn, strict=True):
        # within 7 px (the slack) of where a plot drawn for the first time puts its axis
        assert abs(_left_spine_x(svg) - _left_spine_x(fresh[id(d)])) <= 7 * 72 / 100
    assert _left_spine_x(drawn[1]) > _left_spine_x(drawn[0]) + 30  # room for "9,000,000,000"
    assert drawn[3] == drawn[2]  # the same plot drawn again is the same picture


def _right_spine_x(svg: str) -> float:
    """Where the plot's right axis line stands, in the SVG's points."""
    spine = re.search(r'<g id="patch_4">\s*<path d="M ([\d.]+) ', svg)
    assert spine, "no right spine in the SVG"
    return float(spine.group(1))


def test_a_narrower_legend_beside_the_plot_keeps_its_room_and_a_wider_one_gets_more() -> None:
    # the bandwidth panel's legend of VM names beside the axes is a few pixels wider or
    # narrower at each snapshot; drawing the plot a second time only to give back what a
    # narrower one spared was most of that panel's second drawings
    from svcnb.panels import PlotView

    def legend(name: str):
        def draw(ax) -> None:
            ax.plot([1, 2, 3], label=name)
            ax.set_title("top")
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)

        return draw

    narrow, wide = legend("vm-xxxxxxxxxx"), legend("vm-xxxxxxxxxxxx")
    plot = PlotView()
    drawn = [plot.render(d)[0] for d in (narrow, wide, narrow)]
    fresh = {id(d): PlotView().render(d)[0] for d in (narrow, wide)}
    # the wider legend is given its room (within 7 px of a first drawing's)...
    assert _right_spine_x(drawn[1]) < _right_spine_x(drawn[0]) - 5
    assert abs(_right_spine_x(drawn[1]) - _right_spine_x(fresh[id(wide)])) <= 7 * 72 / 100
    # ...which the narrower one then keeps: at most 21 px more than it needs
    assert _right_spine_x(drawn[2]) == _right_spine_x(drawn[1])
    assert 0 < _right_spine_x(fresh[id(narrow)]) - _right_spine_x(drawn[2]) <= 21 * 72 / 100
    # a plot forgotten (a panel's reading computed anew) is drawn as a new panel draws it
    plot.forget()
    assert plot.render(narrow)[0] == fresh[id(narrow)]


def _text_y(svg: str, text: str) -> float:
    found = re.search(rf'<text [^>]*y="([\d.]+)"[^>]*>{re.escape(text)}</text>', svg)
    assert found, f"no text {text!r} in the plot"
    return float(found.group(1))


def test_a_title_rises_above_the_offset_of_large_figures_as_matplotlib_places_it() -> None:
    # a plot is drawn with its title at the axes' top (matplotlib's measuring of what could push
    # it up is a fifth of a move's plotting) and drawn again when something stands there
    from svcnb.panels import PlotView

    def draw(ax) -> None:
        ax.plot([0, 1, 2], [1e9, 1e9 + 1, 1e9 + 2])  # ticks 0 to 2, "+1e9" over the axis
        ax.set_title("fleet", loc="left")

    plot = PlotView()
    for svg in (plot.render(draw)[0], plot.render(draw)[0], PlotView().render(draw)[0]):
        # SVG y grows downwards: the title's baseline sits above the offset text's top
        assert _text_y(svg, "fleet") < _text_y(svg, "+1e9") - 10


def _x_ticks(svg: str) -> list[str]:
    return re.findall(r'<g id="xtick_\d+">.*?<text [^>]*>([^<]*)</text>', svg, flags=re.S)


def test_a_panel_plot_has_the_ticks_matplotlib_places_on_its_axes_as_drawn() -> None:
    # a panel plot's axes ask their locators once per place and size of the axes: the margins
    # made for wide labels leave a narrow x axis, which holds fewer ticks than the axes measured
    # before those margins were set, and the drawing has the narrow axis' ticks
    import io

    from matplotlib.figure import Figure

    from svcnb.panels import PlotView

    def draw(ax) -> None:
        ax.plot([0, 100], [0, 10**15])
        ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.0f}")

    size = (3.2, 2.0)
    drawn = PlotView().render(draw, size=size)[0]
    fig = Figure(figsize=size, dpi=100)
    ax = fig.subplots()
    draw(ax)

    def drawn_ticks() -> list[str]:  # those within the axis' limits: the ones drawn
        low, high = ax.get_xlim()
        return [t.get_text() for t in ax.get_xticklabels() if low <= t.get_position()[0] <= high]

    wide = drawn_ticks()  # before the margins
    fig.tight_layout()
    fig.savefig(io.StringIO(), format="svg")
    narrow = drawn_ticks()
    assert len(narrow) < len(wide)
    assert _x_ticks(drawn) == narrow


def _text_places(svg: str) -> list[str]:
    return re.findall(r'<text [^>]*?((?:x="[^"]*" y="[^"]*" )?transform="[^"]*")', svg)


def test_a_panel_plot_places_each_text_where_matplotlib_places_it() -> None:
    # a panel plot lays out a text once and takes that layout again for the same words in the
    # same font, size, angle, alignment and spacing: the same words set any other way are
    # laid out as themselves, here all in one plot (and its ticks and title)
    import io

    from matplotlib.figure import Figure

    from svcnb.panels import PlotView

    words = ["2026-11-30", "runway\nends here", r"$x^2$ paid", "EUR 1,234.50"]
    # turned a little and right-aligned unless said otherwise: a text's place in the SVG then
    # shows its width and height (matplotlib writes a level text at its anchor)
    ways = [
        {},
        {"ha": "left"},
        {"ha": "center"},
        {"fontsize": 14},
        {"fontweight": "bold"},
        {"family": "monospace"},
        {"rotation": 0},
        {"rotation": 30},
        {"rotation": 30, "rotation_mode": "anchor"},
        {"va": "top"},
        {"va": "baseline"},
        {"va": "center_baseline"},
        {"multialignment": "center"},
        {"linespacing": 2.0},
        {"parse_math": False},
    ]

    def draw(ax) -> None:
        ax.plot([0, 3], [0, 3])
        for i, way in enumerate(ways):
            for j, word in enumerate(words):
                ax.text(j * 0.75, i * 0.2, word, **{"ha": "right", "rotation": 15, **way})
        ax.set_xticks(range(3), words[:3], rotation=30, ha="right")
        ax.set_title(words[1], linespacing=2.0)

    size = (9.0, 7.0)
    drawn = PlotView().render(draw, size=size)[0]
    # matplotlib alone, with the settings a panel plot is drawn with (text as text; the title
    # where it stands when nothing is above the axes)
    with matplotlib.rc_context({"svg.fonttype": "none", "axes.titley": 1.0}):
        fig = Figure(figsize=size, dpi=100)
        draw(fig.subplots())
        fig.tight_layout()
        plain = io.StringIO()
        fig.savefig(plain, format="svg")
    places = _text_places(drawn)
    assert len(places) > len(ways) * len(words) + 3 + 1  # the texts, 3 x ticks, title; y ticks
    assert places == _text_places(plain.getvalue())
