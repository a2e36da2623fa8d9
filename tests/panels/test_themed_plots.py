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
