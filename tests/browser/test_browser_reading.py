"""Reading the panels at any width, in JupyterLab Dark: a grid wider than the page scrolls to its
last column, a status box does not glare, a disabled button looks disabled, codes read as words.

One notebook (its own store, one snapshot of the shared sandbox) shows the firewall audit panel
and the rule editor in a window narrower than the audit grid.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOK = "reading_panels.ipynb"
DARK = "JupyterLab Dark"
LIGHT = "JupyterLab Light"

# Relative luminance of a computed CSS colour (as WCAG defines it).
_LUMINANCE_JS = """
(colour) => {
  const p = colour.match(/rgba?\\(([^)]+)\\)/)[1].split(/[ ,/]+/).filter(Boolean).map(Number);
  const ch = p.slice(0, 3).map(v => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
}
"""


def _cells(store: Path) -> list[str]:
    return [
        "import svcnb\n"
        "from svcnb.store import Store\n"
        "client = svcnb.connect(progress=False)\n"
        f"store = Store({str(store)!r})\n"
        "store.take(client)",
        "from svcnb.panels import FirewallAuditPanel\n"
        "audit = FirewallAuditPanel(store, client)\n"
        "audit",
        "from svcnb.panels import RuleEditor\nRuleEditor(client, store)",
    ]


@pytest.fixture(scope="module")
def reading_page(shared_lab, lab_root: Path, lab_tmp: Path):
    cells = _cells(lab_tmp / "reading-store" / "store")
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"c{i}",
                "metadata": {},
                "outputs": [],
                "source": src,
            }
            for i, src in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (lab_root / NOTEBOOK).write_text(json.dumps(nb), encoding="utf-8")
    # narrower than the audit grid's columns
    lab = shared_lab(900, 1600)
    try:
        lab.open(NOTEBOOK)
        lab.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        lab.run_all(timeout=300)
        lab.page.locator(".svcnb-finding-grid tbody td").first.wait_for(timeout=60_000)
        lab.page.locator(".svcnb-rule-editor").first.wait_for(state="visible", timeout=60_000)
        lab.set_theme(DARK)
        lab.page.wait_for_timeout(800)
        lab.assert_no_widget_errors()
        yield lab
    finally:
        try:
            lab.set_theme(LIGHT)  # the next test shares this page
        except Exception as exc:  # the page may be gone; the test's own error matters more
            print(f"could not restore the light theme ({type(exc).__name__})")


def test_a_grid_wider_than_the_page_scrolls_to_its_last_column(reading_page) -> None:
    page = reading_page.page
    grid = page.locator(".svcnb-finding-grid").first
    box = grid.locator(".dt-layout-table > .dt-layout-cell").first
    sizes = box.evaluate(
        "(el) => [el.scrollWidth, el.clientWidth, getComputedStyle(el).overflowX,"
        " getComputedStyle(el, '::-webkit-scrollbar').height]"
    )
    assert sizes[0] > sizes[1], f"the grid fits the page ({sizes}): the test shows nothing"
    assert sizes[2] == "auto"
    # a scrollbar with a style of its own is drawn at that size, always: never an overlay
    # scrollbar that shows only while scrolling (macOS), so a cut-off grid does not look whole
    assert sizes[3] == "12px", sizes
    last = grid.locator("thead th").last
    assert last.inner_text().strip() == "Protocol"
    # the decision's columns come first: Reason, Accepted by and until within the first screen
    heads = [h.strip() for h in grid.locator("thead th").all_inner_texts()]
    assert heads.index("Accepted until") < heads.index("Rule id"), heads
    box.evaluate("(el) => { el.scrollLeft = el.scrollWidth; }")
    page.wait_for_timeout(200)
    seen, head = box.bounding_box(), last.bounding_box()
    # scrolled to the end, the last header lies wholly inside the grid's visible box
    assert head["x"] >= seen["x"] - 1 and head["x"] + head["width"] <= seen["x"] + seen["width"] + 1


def test_the_key_column_stays_in_view_when_the_grid_scrolls_sideways(reading_page) -> None:
    """Scrolled to Reason, Accepted by and Until, the finding's state (the grid's first, key
    column) is still there, drawn over the cells that pass under it, in the theme's colours."""
    page = reading_page.page
    grid = page.locator(".svcnb-finding-grid").first
    box = grid.locator(".dt-layout-table > .dt-layout-cell").first
    head = grid.locator("thead th").first
    cell = grid.locator("tbody tr").first.locator("td").first
    assert head.inner_text().strip() == "State"
    box.evaluate("(el) => { el.scrollLeft = el.scrollWidth; }")
    page.wait_for_timeout(300)
    assert box.evaluate("(el) => el.scrollLeft") > 100, "the grid did not scroll"
    seen = box.bounding_box()
    for pinned in (head, cell):
        at = pinned.bounding_box()
        assert at["x"] >= seen["x"] - 1 and at["x"] + at["width"] <= seen["x"] + seen["width"]
        # on top: what the page shows at the cell's centre is the cell itself
        on_top = pinned.evaluate(
            "(el) => { const r = el.getBoundingClientRect();"
            " const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
            " return el === hit || el.contains(hit); }"
        )
        assert on_top, "a scrolled cell is drawn over the key column"
    # its background is the dark theme's, not DataTables' white
    background = cell.evaluate("(el) => getComputedStyle(el).backgroundColor")
    assert page.evaluate(_LUMINANCE_JS, background) < 0.1, background
    box.evaluate("(el) => { el.scrollLeft = 0; }")


def test_checks_read_as_words_in_the_grid_and_the_filter(reading_page) -> None:
    grid = reading_page.page.locator(".svcnb-finding-grid").first
    texts = " ".join(grid.locator("tbody td").all_inner_texts())
    assert "Sensitive port open to any source" in texts
    assert "exposed_sensitive_port" not in texts
    select = reading_page.page.locator(".svcnb-audit-panel select").nth(1)
    options = select.inner_text().replace("\xa0", " ")  # ipywidgets writes NBSPs
    assert "VM without a firewall" in options and "vm_without_firewall" not in options


def test_status_boxes_do_not_glare_in_the_dark_theme(reading_page) -> None:
    page = reading_page.page
    status = page.locator(".svcnb-audit-panel .svcnb-msg").first
    background = status.evaluate("(el) => getComputedStyle(el).backgroundColor")
    text = status.evaluate("(el) => getComputedStyle(el).color")
    lum_bg = page.evaluate(_LUMINANCE_JS, background)
    lum_text = page.evaluate(_LUMINANCE_JS, text)
    # a dark box with light text, as the page around it (the light theme's #e8f1fa was 0.87)
    assert lum_bg < 0.1, background
    assert (lum_text + 0.05) / (lum_bg + 0.05) >= 4.5


def test_a_disabled_save_looks_disabled(reading_page) -> None:
    page = reading_page.page
    editor = page.locator(".svcnb-rule-editor").first
    save = editor.locator("button.widget-button").filter(has_text="Save").first
    assert save.is_disabled()  # nothing edited yet
    style = save.evaluate(
        "(el) => { const s = getComputedStyle(el);"
        " return [s.backgroundColor, s.color, s.borderStyle, s.opacity]; }"
    )
    brand = page.evaluate(
        "() => getComputedStyle(document.body).getPropertyValue('--jp-brand-color1').trim()"
    )
    # not the primary blue at a lower opacity: a flat grey with muted text and a dashed edge
    assert style[3] == "1" and style[2] == "dashed", style
    assert brand not in style[0]
    assert page.evaluate(_LUMINANCE_JS, style[0]) < 0.1  # the dark theme's raised surface
