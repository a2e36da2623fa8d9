"""The notebooks svcnb ships are saved small: no widget state in their metadata (JupyterLab saves
none unless its widget manager's saveState setting is on; nbclient's store_widget_state adds
megabytes of it, ``bench/notebook_sizes.py`` measures both), each under 1 MB, with its outputs
kept so a notebook opened before it is run still shows them as text and images."""

from __future__ import annotations

import json

import pytest

from svcnb.jupyter.notebooks import shipped

NOTEBOOKS = sorted(shipped().glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_shipped_notebook_carries_no_widget_state_and_is_small(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert "widgets" not in nb["metadata"], f"{path.name} was saved with its widget state"
    assert path.stat().st_size < 1_000_000
    shown = [
        mime
        for cell in nb["cells"]
        for output in cell.get("outputs", [])
        for mime in output.get("data", {"text/plain": None})
    ]
    assert any(m in ("text/plain", "image/png") for m in shown), f"{path.name} shows nothing"
