"""Notebooks 04 and 05 make the history they need, on a fresh store, after the others, or twice.

The history cell of each notebook is run as it is written (its source read from the .ipynb) with
the notebook's names bound to a test sandbox and store, and the span it reports is checked.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import nbformat
import pytest

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


@pytest.mark.parametrize("name", ["04_billing_review", "05_bandwidth_report"])
def test_alone_after_the_others_and_twice(name, sandbox, tmp_path):
    code = _history_cell(name)
    with Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client:
        # alone, on a fresh store
        fresh = Store(tmp_path / "fresh")
        names = {"client": client, "store": fresh, "sandbox": sandbox.control}
        _text, span = _run(code, names)
        assert span >= 14
        # twice: nothing more is needed, the same span is reported
        count = len(fresh.snapshots())
        _text, again = _run(code, names)
        assert again == span and len(fresh.snapshots()) == count

        # after the other notebooks took a snapshot or two within the same day
        shared = Store(tmp_path / "shared")
        shared.take(client)
        sandbox.control.advance(3600)
        shared.take(client)
        text, span = _run(code, {"client": client, "store": shared, "sandbox": sandbox.control})
        assert span >= 14, text
        assert "less than" not in text


def test_real_api_says_how_much_it_has(sandbox, tmp_path):
    code = _history_cell("04_billing_review")
    with Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client:
        store = Store(tmp_path / "store")
        # no sandbox control: as against the real service, it can only take one snapshot
        text, span = _run(code, {"client": client, "store": store, "sandbox": None})
    assert span == 0
    assert "less than 14 days" in text
