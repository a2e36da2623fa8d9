"""Notebook 04's history cell against a service it cannot move in time says how much it has.

The cell is run as it is written (its source read from the .ipynb) with the notebook's names bound
to a test sandbox and store but no sandbox control, as against the real service. That the
notebooks make the history they need alone, after the others and twice is checked by nbval
(each alone, on a fresh store) and ``test_notebook_stories.py`` (in order, then 03 and 04 again).
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import nbformat

from svcnb.client import Client
from svcnb.store import Store

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _history_cell(name: str) -> str:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    return next(c.source for c in nb.cells if c.cell_type == "code" and "WANTED_DAYS" in c.source)


def _run(code: str, names: dict) -> tuple[str, int]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<history cell>", "exec"), names)  # noqa: S102 - the notebook's cell
    text = out.getvalue()
    found = re.search(r"history: (\d+) snapshots? over (\d+) days?", text)
    assert found, text
    return text, int(found.group(2))


def test_real_api_says_how_much_it_has(sandbox, tmp_path):
    code = _history_cell("04_billing_review")
    with Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client:
        store = Store(tmp_path / "store")
        # no sandbox control: as against the real service, it can only take one snapshot
        text, span = _run(code, {"client": client, "store": store, "sandbox": None})
    assert span == 0
    assert "less than 14 days" in text
