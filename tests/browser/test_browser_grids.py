"""Every row of a grid reaches the browser: the grid says how many it holds, and its own search
finds a row among the last ones (a byte budget once sent about half of 1,000 VMs, silently);
a cell listing thousands of VMs shows its start and how many more, in a row of normal height."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from test_browser_widgets import _write_notebook

NOTEBOOK = "grid_rows.ipynb"
ROWS = 5000  # about 600 kB of rows: far past ITables' default budget of 64 kB

_CELLS = [
    "import pandas as pd\n"
    "from svcnb.panels._render import grid\n"
    f"rows = {ROWS}\n"
    "frame = pd.DataFrame({\n"
    "    'Name': [f'web-{i:05d}' for i in range(rows)],\n"
    "    'VM id': [f'vm_{i:016x}' for i in range(rows)],\n"
    "    'Amount': [f'{i * 1.5:,.2f} EUR' for i in range(rows)],\n"
    "    'Reason': ['renewal unpaid, balance short by the amount shown'] * rows,\n"
    "})\n"
    "# one cell listing 3,000 VMs, as the runway's 'Unpaid then' does at 10,000 VMs\n"
    "frame['Unpaid then'] = ['']* rows\n"
    "frame.loc[0, 'Unpaid then'] = ', '.join(f'vm_{i:016x}' for i in range(3000))\n"
    "grid(frame).add_class('svcnb-test-grid')",
]


def _run_grid(lab, lab_root: Path, name: str, cells: list[str], css: str) -> tuple[Any, Any]:
    """Write and run notebook ``name``; the grid of CSS class ``css`` and its info line, once
    shown."""
    _write_notebook(lab_root / name, cells)
    lab.open(name)
    lab.run_all(timeout=120)
    box = lab.page.locator(f".{css}")
    info = box.locator(".dt-info")
    info.wait_for(state="visible", timeout=60_000)
    return box, info


def test_a_grid_holds_and_searches_every_row(lab, lab_root: Path) -> None:
    box, info = _run_grid(lab, lab_root, NOTEBOOK, _CELLS, "svcnb-test-grid")
    lab.assert_no_widget_errors()
    assert f"of {ROWS:,} entries" in info.inner_text(), info.inner_text()
    assert "downsampled" not in box.inner_text()

    # the long list shows its start and how many more it holds, not a row 1,500 px tall
    first = box.locator("table.dataTable tbody tr").first
    assert first.bounding_box()["height"] < 120, first.bounding_box()
    assert "and 2,9" in first.inner_text() and "more" in first.inner_text()

    last = f"web-{ROWS - 2:05d}"
    box.locator(".dt-search input").fill(last)
    lab.page.wait_for_function(
        "(el) => el.innerText.includes('of 1 entry')", arg=info.element_handle(), timeout=30_000
    )
    assert f"filtered from {ROWS:,} total entries" in info.inner_text(), info.inner_text()
    assert last in box.locator("table.dataTable tbody tr").first.inner_text()


SWAP = "grid_new_rows.ipynb"

_SWAP_CELLS = [
    "import pandas as pd\n"
    "import ipywidgets as widgets\n"
    "from svcnb.panels._render import grid\n"
    "def rows(prefix, n):\n"
    "    return pd.DataFrame({\n"
    "        'Name': [f'{prefix}-{i:02d}' for i in range(n)],\n"
    "        'Amount': [f'{i * 1.5:,.2f} EUR' for i in range(n)],\n"
    "        'Bytes': [2**60 + i for i in range(n)],\n"
    "    })\n"
    "g = grid(rows('old', 30), select=True).add_class('svcnb-test-swap')\n"
    "said = widgets.HTML('selected: []')\n"
    "def tell(change):\n"
    "    said.value = f'selected: {change[\"new\"]}'\n"
    "g.observe(tell, names='selected_rows')\n"
    "new = widgets.Button(description='New rows')\n"
    "new.on_click(lambda _b: g.update(rows('new', 40), selected_rows=[39]))\n"
    "widgets.VBox([new, said, g])",
]


def _wait_info(lab, text: str) -> None:
    """Wait until the swapped grid's info line (whichever element holds it) says ``text``."""
    lab.page.wait_for_function(
        "(text) => (document.querySelector('.svcnb-test-swap .dt-info')?.innerText ?? '')"
        ".includes(text)",
        arg=text,
        timeout=30_000,
    )


def test_new_rows_replace_the_old_in_the_grid_drawn(lab, lab_root: Path) -> None:
    """New rows with the same columns fill the DataTable already drawn (ITables drew a new one
    for every change, most of a slider move's time in the page), and the grid then stands as a
    new one would: every row counted, the search and order it started with, the kernel's
    selection shown, a click's selection sent back."""
    box, info = _run_grid(lab, lab_root, SWAP, _SWAP_CELLS, "svcnb-test-swap")
    assert "of 30 entries" in info.inner_text(), info.inner_text()
    box.locator(".dt-container").evaluate("(el) => { el.dataset.svcnbMark = 'drawn'; }")
    search = box.locator(".dt-search input")
    search.fill("old-2")
    _wait_info(lab, "filtered from 30")
    # a header's text may be selected: its order icon sorts
    order = box.locator("thead th").filter(has_text="Amount").locator(".dt-column-order")
    # a click's redraw is not at once: Playwright's expect waits for the first name it gives
    first_name = box.locator("tbody tr").first.locator("td").first
    order.click()
    expect(first_name).to_have_text("old-20", timeout=30_000)  # by amount, lowest first
    order.click()  # by amount, highest first
    expect(first_name).to_have_text("old-29", timeout=30_000)

    lab.button("New rows").click()
    _wait_info(lab, "of 40 entries")
    lab.wait_for_text(r"selected: \[39\]", timeout=30)
    lab.assert_no_widget_errors()
    assert box.locator(".dt-container").get_attribute("data-svcnb-mark") == "drawn"
    assert search.input_value() == "" and "filtered" not in info.inner_text()
    assert box.locator("tbody tr").first.inner_text().startswith("new-00")

    search.fill("new-39")  # the kernel's selection, on the last page
    _wait_info(lab, "of 1 entry")
    row = box.locator("tbody tr").first
    assert "selected" in (row.get_attribute("class") or "")
    assert str(2**60 + 39) in row.inner_text()  # past 2**53, exact
    search.fill("new-05")
    box.locator("tbody tr").filter(has_text="new-05").click()
    lab.wait_for_text(r"selected: \[5\]", timeout=30)


PAGED = "grid_paged.ipynb"

_PAGED_CELLS = [
    "import pandas as pd\n"
    "import ipywidgets as widgets\n"
    "from svcnb.panels import PAGED_OVER, grid\n"
    "def rows(prefix, n):\n"
    "    return pd.DataFrame({\n"
    "        'Name': [f'{prefix}-{i:04d}' for i in range(n)],\n"
    "        'Amount': [f'{i:,.2f} EUR' for i in range(n)],\n"
    "    })\n"
    "g = grid(rows('row', 3000), select=True).add_class('svcnb-test-paged')\n"
    "assert len(g._df) > PAGED_OVER and 'data_json' not in g._dt_args\n"
    "g.selected_rows = [2500]\n"
    "said = widgets.HTML('selected: [2500]')\n"
    "def tell(change):\n"
    "    said.value = f'selected: {change[\"new\"]}'\n"
    "g.observe(tell, names='selected_rows')\n"
    "new = widgets.Button(description='New rows')\n"
    "new.on_click(lambda _b: g.update(rows('new', 4000)))\n"
    "widgets.VBox([new, said, g])",
]


def test_a_grid_the_kernel_pages_searches_sorts_and_selects_over_every_row(
    lab, lab_root: Path
) -> None:
    """A grid of more rows than the page should hold is paged by the kernel: the page holds ten
    rows, and the search, the order and the selection are still over every row of the frame,
    as in a grid holding them all."""
    box, info = _run_grid(lab, lab_root, PAGED, _PAGED_CELLS, "svcnb-test-paged")
    expect(info).to_contain_text("of 3,000 entries", timeout=30_000)
    lab.assert_no_widget_errors()
    assert box.locator("tbody tr").count() == 10

    search = box.locator(".dt-search input")
    search.fill("row-2500")  # the kernel's selection, far from the first page
    expect(info).to_contain_text("of 1 entry (filtered from 3,000 total entries)", timeout=30_000)
    row = box.locator("tbody tr").first
    expect(row).to_contain_text("2,500.00 EUR")
    expect(row).to_have_class(re.compile(r"\bselected\b"), timeout=30_000)

    search.fill("")
    expect(info).to_contain_text("Showing 1 to 10 of 3,000 entries", timeout=30_000)
    order = box.locator("thead th").filter(has_text="Amount").locator(".dt-column-order")
    first_amount = box.locator("tbody tr").first.locator("td").nth(1)
    order.click()
    expect(first_amount).to_have_text("0.00 EUR", timeout=30_000)
    order.click()  # highest first, by the number ("2,999.00" before "999.00")
    expect(first_amount).to_have_text("2,999.00 EUR", timeout=30_000)

    # a plain click chooses its row alone; with Ctrl another is added
    box.locator("tbody tr").filter(has_text="row-2999").click()
    lab.wait_for_text(r"selected: \[2999\]", timeout=30)
    box.locator("tbody tr").filter(has_text="row-2997").click(modifiers=["Control"])
    lab.wait_for_text(r"selected: \[2997, 2999\]", timeout=30)

    lab.button("New rows").click()
    expect(info).to_contain_text("of 4,000 entries", timeout=30_000)
    expect(box.locator("tbody tr").first).to_contain_text("new-0000", timeout=30_000)
    lab.assert_no_widget_errors()
