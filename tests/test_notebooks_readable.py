"""The notebooks read as the panels and ``svcnb report`` do: every plot in the theme's colours
(``svcnb.panels.themed``, never the inline backend's white PNG, which stays white in JupyterLab
Dark), and every output a user reads written through svcnb's tables and money (labels, money
with its currency, times in UTC to the minute, tables that fit the width), never a raw pandas
print: no ``<NA>``, ``None`` or ``NaT`` cells, no bare amounts, no table rows wider than a
page."""

from __future__ import annotations

import json
import re
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


# an amount (two decimals) with no currency after it, in an output that speaks of money
_BARE_MONEY = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})*\.\d{2}(?!\d)(?! [A-Z]{3}\b)")
_MONEY_WORDS = re.compile(r"\b(EUR|USD|amount|balance|price|owed|top up|cost)\b", re.IGNORECASE)
# a row of a table: at least two gaps of two spaces or more between values
_ROW = re.compile(r"\S {2,}\S.* {2,}\S")
_RAW = {
    "<NA>": re.compile(r"<NA>"),
    "NaT": re.compile(r"\bNaT\b"),
    "NaN": re.compile(r"\bNaN\b"),
    "None": re.compile(r"(?<![\w'])None(?![\w'])"),
    "a pandas timestamp": re.compile(r"\d{2}:\d{2}:\d{2}\+00:00"),
    # a list or dict printed as Python writes it (a command to type, "ids=['vm_1']", aside)
    "a Python list or dict": re.compile(r"\{'|(?<![=\w])\['"),
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_outputs_read_as_svcnb_writes_them(path: Path) -> None:
    for cell in _cells(path):
        where = f"{path.stem} {cell['id']}"
        for output in cell.get("outputs", []):
            html = "".join(output.get("data", {}).get("text/html", ""))
            assert 'class="dataframe' not in html, f"{where}: a raw DataFrame shown"
        for text in _texts(cell):
            for what, pattern in _RAW.items():
                found = pattern.search(text)
                assert not found, f"{where}: {what} in the output: {text[:400]}"
            money = bool(_MONEY_WORDS.search(text))
            for line in text.splitlines():
                bare = _BARE_MONEY.search(line) if money else None
                assert not bare, f"{where}: an amount without its currency: {line!r}"
                # a row of a table fits a 100-column page (wider, it wraps in the notebook)
                if _ROW.search(line):
                    assert len(line) <= 100, f"{where}: a table row {len(line)} wide: {line!r}"
