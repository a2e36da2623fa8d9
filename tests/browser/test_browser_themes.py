"""The panels in JupyterLab's light, dark and dark high-contrast themes: text contrast from computed
styles, pictures (light and dark kept under docs/).

One notebook builds the VM panel, the rule editor and the billing panel against the shared
sandbox (its own store, so other tests' history is untouched), and the billing panel over a
store of two accounts (the shared sandbox and a second one in another dialect): one tab each.
In each theme every header, label and tab title a reader relies on, and the text of the billing
panel's plots, must reach WCAG AA (4.5:1) against the background it is drawn on: the first
non-transparent background up its ancestors, across the ITables grid's shadow root.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "out"
DOCS = REPO / "docs"
NOTEBOOK = "themes_panels.ipynb"
AA = 4.5
LIGHT = "JupyterLab Light"
DARK = "JupyterLab Dark"
HIGH_CONTRAST = "JupyterLab Dark High Contrast"
SHORT = {LIGHT: "light", DARK: "dark", HIGH_CONTRAST: "high-contrast"}
# the themes whose pictures are kept under docs/
DOCUMENTED = ("light", "dark")

# What is measured in each panel: grid (ITables/DataTables) headers and cells, the panels' own
# HTML tables, widget labels and the panels' summary and title lines.
CHECKED = {
    "vm-panel": (
        ".svcnb-vm-panel",
        [
            "table.dataTable thead th",
            "table.dataTable tbody td",
            ".dt-info",
            ".dt-search label",
            ".widget-label",
        ],
    ),
    "rule-editor": (
        ".svcnb-rule-editor",
        [".widget-label", ".svcnb-status .widget-html-content", ".svcnb-table th"],
    ),
    "billing-panel": (
        ".svcnb-billing-panel",
        [
            ".svcnb-summary b",
            ".svcnb-table th",
            ".svcnb-table td",
            ".svcnb-title",
            "table.dataTable thead th",
            "table.dataTable tbody td",
            ".dt-info",
            ".widget-label",
            # plots: inline SVG whose text takes the theme's colour (currentColor)
            ".svcnb-plot svg text",
        ],
    ),
    "account-tabs": (
        ".svcnb-account-tabs",
        [".lm-TabBar-tabLabel", ".svcnb-summary b", ".svcnb-title", ".svcnb-table th"],
    ),
}
ACCOUNTS = ["main", "second"]

# Every element matching a selector inside the panel (through open shadow roots), and each
# descendant holding text of its own, with its contrast against the background painted under
# it: backgrounds up the ancestors are composited until an opaque one, text colour over that.
_CONTRAST_JS = """
([rootSel, selectors]) => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) throw new Error('colour not in rgb(): ' + c);
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => {
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a)).concat([1]);
  };
  const up = (el) => el.parentElement || (el.getRootNode() && el.getRootNode().host) || null;
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = up(e)) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let bg = [255, 255, 255, 1];  // the canvas when nothing is opaque
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const lum = (c) => {
    const ch = c.slice(0, 3).map(v => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  };
  const all = (root, sel) => {
    const found = Array.from(root.querySelectorAll(sel));
    for (const e of root.querySelectorAll('*')) {
      if (e.shadowRoot) found.push(...all(e.shadowRoot, sel));
    }
    return found;
  };
  const visible = (e) =>
    e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const ownText = (e) => Array.from(e.childNodes)
    .filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
  const panel = document.querySelector(rootSel);
  if (!panel) return {missing: rootSel};
  const rows = [];
  for (const sel of selectors) {
    const matched = all(panel, sel).filter(visible);
    const measured = [];
    for (const m of matched.slice(0, 40)) {
      const texts = [m, ...m.querySelectorAll('*')].filter(e => visible(e) && ownText(e));
      for (const e of texts) {
        const bg = background(e);
        // SVG text is painted with its fill, HTML text with its colour
        const ink = e instanceof SVGElement ? getComputedStyle(e).fill : getComputedStyle(e).color;
        const fg = over(parse(ink), bg);
        const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
        measured.push({text: ownText(e).slice(0, 40), ratio: (a + 0.05) / (b + 0.05),
                       fg: ink,
                       bg: 'rgb(' + bg.slice(0, 3).map(Math.round) + ')'});
      }
    }
    measured.sort((x, y) => x.ratio - y.ratio);
    rows.push({selector: sel, count: measured.length, worst: measured[0] || null});
  }
  return {rows};
}
"""

MEASURED: dict[str, dict[str, dict[str, float]]] = {}


def _cells(store: Path) -> list[str]:
    return [
        "import svcnb\n"
        "from svcnb.store import Store\n"
        "client = svcnb.connect(progress=False)\n"
        f"store = Store({str(store)!r})\n"
        "store.take(client)",
        "from svcnb.panels import VmPanel\nVmPanel(client, watch_interval=None)",
        "from svcnb.panels import RuleEditor\nRuleEditor(client, store)",
        "from svcnb.panels import BillingPanel\n"
        f"BillingPanel(store, export_dir={str(store.parent / 'exports')!r})",
        # two accounts, two servers: the second sandbox lives only as long as its snapshot
        "from svcnb.sandbox import serve\n"
        f"two = Store({str(store.parent / 'two')!r})\n"
        f"two.take(client, account={ACCOUNTS[0]!r})\n"
        "with serve(vms=6, seed=12, dialect='acme') as second:\n"
        "    with svcnb.Client(second.tokens['admin'], second.base_url, progress=False) as c:\n"
        f"        two.take(c, account={ACCOUNTS[1]!r})",
        f"BillingPanel(two, account='*', export_dir={str(store.parent / 'exports')!r})",
    ]


def _write_notebook(path: Path, cells: list[str]) -> None:
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
    path.write_text(json.dumps(nb), encoding="utf-8")


@pytest.fixture(scope="module")
def panels_page(shared_lab, lab_root: Path, lab_tmp: Path):
    """One page with the three panels rendered; the theme is put back to light afterwards."""
    _write_notebook(lab_root / NOTEBOOK, _cells(lab_tmp / "themes-store" / "store"))
    # Tall enough that the billing panel's summary, plots and first tables fit in one picture.
    lab = shared_lab(1400, 2200)
    try:
        lab.open(NOTEBOOK)
        # the file browser would take a third of the width the grids need
        lab.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        lab.run_all(timeout=300)
        for _name, (root, _selectors) in CHECKED.items():
            lab.page.locator(root).first.wait_for(state="visible", timeout=60_000)
        # the grids draw their rows after the widget is displayed
        lab.page.locator(".svcnb-vm-grid tbody td").first.wait_for(timeout=60_000)
        lab.assert_no_widget_errors()
        yield lab
    finally:
        # The theme is a user setting saved on the server: later tests must find the light one.
        try:
            _apply(lab, LIGHT)
        except Exception as exc:  # the page may be gone; the test's own error matters more
            print(f"could not restore the light theme ({type(exc).__name__})")


def _apply(lab: Any, theme: str) -> None:
    lab.set_theme(theme)
    # CSS variables switch at once; give the widgets' transitions a moment to finish painting.
    lab.page.wait_for_timeout(800)


def _shoot(lab: Any, root: str, name: str) -> None:
    panel = lab.page.locator(root).first
    panel.evaluate("(el) => el.scrollIntoView({block: 'start'})")
    lab.page.wait_for_timeout(300)
    box = panel.bounding_box()
    # only what the notebook shows: not the status bar or anything else drawn over its bottom
    view = lab.page.locator(".jp-NotebookPanel .jp-Notebook").first.bounding_box()
    top = max(box["y"], view["y"])
    clip = {
        "x": box["x"],
        "y": top,
        "width": min(box["width"], view["x"] + view["width"] - box["x"]),
        "height": min(box["y"] + box["height"], view["y"] + view["height"]) - top,
    }
    OUT.mkdir(exist_ok=True)
    lab.page.screenshot(path=str(OUT / f"{name}.png"), clip=clip)
    if os.environ.get("SVCNB_UPDATE_DOCS") == "1" and name.endswith(DOCUMENTED):
        # The documentation pictures are refreshed only on request, so test runs leave git clean.
        lab.page.screenshot(path=str(DOCS / f"{name}.png"), clip=clip)


@pytest.mark.parametrize("theme", list(SHORT), ids=list(SHORT.values()))
def test_headers_and_labels_reach_wcag_aa_contrast(panels_page, theme: str) -> None:
    lab = panels_page
    _apply(lab, theme)
    short = SHORT[theme]
    failures = []
    for name, (root, selectors) in CHECKED.items():
        result = lab.page.evaluate(_CONTRAST_JS, [root, selectors])
        assert "missing" not in result, f"{name}: no {root} on the page"
        for row in result["rows"]:
            worst = row["worst"]
            if worst is None:
                continue  # e.g. a panel with no HTML table of its own in this state
            MEASURED.setdefault(short, {}).setdefault(name, {})[row["selector"]] = round(
                worst["ratio"], 2
            )
            if worst["ratio"] < AA:
                failures.append(
                    f"{name} {row['selector']}: {worst['ratio']:.2f}:1 for {worst['text']!r} "
                    f"({worst['fg']} on {worst['bg']})"
                )
        _shoot(lab, root, f"{name}-{short}")
    print(json.dumps(MEASURED.get(short, {}), indent=1))
    assert not failures, f"text under {AA}:1 in {theme}:\n" + "\n".join(failures)
    lab.assert_no_widget_errors()
    # headers of every kind were found, so the check cannot pass by measuring nothing
    seen = MEASURED[short]
    assert "table.dataTable thead th" in seen["vm-panel"]
    assert "table.dataTable thead th" in seen["billing-panel"]
    assert ".svcnb-table th" in seen["billing-panel"]
    assert ".widget-label" in seen["rule-editor"]
    assert ".svcnb-plot svg text" in seen["billing-panel"]
    assert ".lm-TabBar-tabLabel" in seen["account-tabs"]


def test_each_account_has_its_tab_and_its_own_panel(panels_page) -> None:
    lab = panels_page
    _apply(lab, LIGHT)
    tabs = lab.page.locator(".svcnb-account-tabs").first
    labels = tabs.locator(".lm-TabBar-tabLabel")
    assert labels.all_inner_texts() == ACCOUNTS
    shown = []
    for i, name in enumerate(ACCOUNTS):
        labels.nth(i).click()
        summary = tabs.locator(".svcnb-billing-panel:visible .svcnb-summary").first
        summary.wait_for(state="visible", timeout=30_000)
        shown.append(summary.inner_text())
        _shoot(lab, ".svcnb-account-tabs", f"account-tabs-{name}-light")
    # each tab shows its own account: the second sandbox's wallet is not the first one's
    assert shown[0] != shown[1]
    assert all("Wallet balance" in text for text in shown)
    lab.assert_no_widget_errors()


def test_a_grid_below_the_fold_shows_its_rows_once_scrolled_to(panels_page) -> None:
    # grids and plots out of view are laid out only when scrolled to (content-visibility): the
    # billing panel's last grid, below the fold, reads whole once the user scrolls to it
    lab = panels_page
    _apply(lab, LIGHT)
    panel = lab.page.locator(".svcnb-billing-panel").first
    panel.evaluate("(el) => el.scrollIntoView({block: 'start'})")
    row = panel.locator(".svcnb-grid-box").last.locator("table.dataTable tbody tr").first
    held = row.text_content().strip()
    assert held  # the page holds its rows all along
    row.scroll_into_view_if_needed()
    lab.page.wait_for_function(
        "([el, text]) => el.innerText.replace(/\\s+/g, '') === text.replace(/\\s+/g, '')",
        arg=[row.element_handle(), held],
        timeout=5_000,
    )
    assert row.bounding_box()["height"] > 10
