"""The notebooks read as the panels do: every plot in the theme's colours
(``svcnb.panels.themed``, never the inline backend's white PNG, which stays white in JupyterLab
Dark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _cells(path: Path) -> list[dict]:
    return [
        c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"
    ]


def _texts(cell: dict) -> list[str]:
    """What a reader sees of a cell's outputs, as text: printed lines and plain reprs."""
    out = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            out.append("".join(output["text"]))
        out.append("".join(output.get("data", {}).get("text/plain", "")))
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_plot_a_notebook_draws_follows_the_theme(path: Path) -> None:
    for cell in _cells(path):
        source = "".join(cell["source"])
        assert "plt.show()" not in source, f"{path.stem} {cell['id']}: plt.show(), not themed"
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            plain = "".join(data.get("text/plain", ""))
            # the inline backend's figure: a PNG on white, whatever the theme
            assert "image/png" not in data, f"{path.stem} {cell['id']}: an inline PNG plot"
            assert not plain.startswith("<Figure size"), f"{path.stem} {cell['id']}: {plain}"
            if plain.startswith("<svcnb plot"):
                assert "currentColor" in "".join(data["text/html"])
