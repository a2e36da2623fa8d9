"""Every row of a grid reaches the browser: the grid says how many it holds, and its own search
finds a row among the last ones (a byte budget once sent about half of 1,000 VMs, silently);
a cell listing thousands of VMs shows its start and how many more, in a row of normal height."""

from __future__ import annotations

from pathlib import Path

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


def test_a_grid_holds_and_searches_every_row(lab, lab_root: Path) -> None:
    _write_notebook(lab_root / NOTEBOOK, _CELLS)
    lab.open(NOTEBOOK)
    lab.run_all(timeout=120)
    box = lab.page.locator(".svcnb-test-grid")
    info = box.locator(".dt-info")
    info.wait_for(state="visible", timeout=60_000)
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
