"""``svcnb demo`` pages can be mailed: offline, titled per report, tables and PNG plots inline."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
from pathlib import Path

import pytest
from _leaks import files_under, leaks

from svcnb.cli import demo as demo_command
from svcnb.client import redact
from svcnb.jupyter import demo as _demo

# the whole demo (every notebook run on acme, every page rendered): make test-all. make test
# holds the pages from a store (tests/test_pages.py) and each notebook under nbval.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
REMOTE = re.compile(
    r"<(script|link)\b[^>]*\b(src|href)=[\"']?(https?:)?//|import\(\s*[\"']https?://",
    re.IGNORECASE,
)
PLACEHOLDERS = re.compile(
    r"Error displaying widget|Loading widget|widget-view\+json|svcnb widget panel"
    r"|the editor above|drag the slider",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What one small ``svcnb demo`` run wrote: its pages and its store.

    On ``acme`` (other words and money forms): every notebook then also runs, in a row on one
    store with a history, on a service that is not the default dialect, and a cell that fails
    fails the demo (nbval runs each alone on the default)."""
    out = tmp_path_factory.mktemp("demo")
    parser = argparse.ArgumentParser()
    demo_command.add_arguments(parser)
    # the shipped notebooks are copied into a working folder and rendered from there
    work = out / "work"
    args = parser.parse_args(
        [
            "--days",
            "3",
            "--vms",
            "20",
            "--dialect",
            "acme",
            "--out",
            str(out),
            "--notebooks",
            str(work),
        ]
    )
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert demo_command.run(args) == 0
    assert re.search(r"sandbox at http://\S+ \(20 VMs, seed 7, dialect acme\)", said.getvalue())
    assert sorted(p.name for p in work.glob("*.ipynb")) == sorted(
        p.name for p in (REPO / "notebooks").glob("*.ipynb")
    )
    return out


@pytest.fixture(scope="module")
def pages(out: Path) -> dict[str, str]:
    found = {p.stem: p.read_text(encoding="utf-8") for p in out.glob("*.html")}
    assert set(found) == set(_demo.REPORT_NOTEBOOKS)
    return found


def test_pages_load_nothing_from_the_network(pages: dict[str, str]) -> None:
    for name, page in pages.items():
        assert not REMOTE.search(page), f"{name}: {REMOTE.search(page).group(0)}"


def test_each_page_is_titled_after_its_report(pages: dict[str, str]) -> None:
    for name, page in pages.items():
        title = re.search(r"<title>([^<]*)</title>", page)
        assert title, f"{name} has no title"
        assert title.group(1).strip() not in ("", "Notebook")
        assert title.group(1) == _demo.report_title(REPO / "notebooks" / f"{name}.ipynb")


def test_each_page_embeds_its_plots_and_tables(pages: dict[str, str]) -> None:
    for name, page in pages.items():
        assert "data:image/png;base64," in page, f"{name} holds no PNG plot"
        assert "<table" in page, f"{name} holds no table"


def test_panels_are_shown_as_tables_not_widget_placeholders(pages: dict[str, str]) -> None:
    for name, page in pages.items():
        assert not PLACEHOLDERS.search(page), f"{name}: {PLACEHOLDERS.search(page).group(0)}"
    # the billing panel's summary and grids are on the page as of the latest snapshot
    assert "Wallet balance" in pages["04_billing_review"]
    assert "Renewals due" in pages["04_billing_review"]
    assert "billing_panel = BillingPanel" not in pages["04_billing_review"], "input cells shown"


def test_no_token_on_any_page(pages: dict[str, str]) -> None:
    for name, page in pages.items():
        # redact masks anything shaped like a token: a page it leaves alone shows none
        assert redact(page) == page, f"{name} shows a token"


def test_nothing_the_demo_wrote_holds_a_token(out: Path) -> None:
    # `svcnb demo` writes what users open and mail from out/: its pages and the store behind them
    files = files_under(out)
    assert any(p.suffix == ".parquet" for p in files), "the demo store wrote no Parquet file"
    assert leaks(files) == []


def _after(page: str, marker: str) -> str:
    """The page's text from ``marker`` on, tags dropped."""
    assert marker in page, f"no {marker!r} on the page"
    return re.sub(r"<[^>]+>", " ", page[page.index(marker) :])


def test_a_panel_block_agrees_with_the_cell_beside_it(pages: dict[str, str]) -> None:
    page = pages["04_billing_review"]
    # the cell moves the billing panel to the first snapshot and prints its figures; the page
    # shows the panel again under it, as of that same snapshot
    printed = re.search(r"earliest as of (\d{4}-\d{2}-\d{2}): balance ([\d,.]+ EUR)", page)
    assert printed, "the cell's printout is missing"
    block = _after(page, "The billing panel, as it stands after this cell")
    assert re.search(rf"Billing as of {printed.group(1)}", block)
    assert printed.group(2) in block.split("Renewals due")[0]
    # the what-if choices made from code: the block under them shows the top-up they print
    chosen = re.search(r"(\d+) days: top up ([\d,.]+ EUR), \d+ VMs suspended", page)
    assert chosen, "the what-if cell's printout is missing"
    block = _after(page, "The what-if panel, as it stands after this cell")
    assert f"due in {chosen.group(1)} days" in block
    assert chosen.group(2) in block


def test_figures_on_the_pages_are_right_aligned(pages: dict[str, str]) -> None:
    page = pages["04_billing_review"]
    amounts = re.findall(r'<td class="svcnb-num">[\d,.]+ EUR</td>', page)
    assert len(amounts) > 10
    # in every table of rows (a panel's headline figures are label: value pairs, not columns)
    tables = re.sub(r'<table class="svcnb-table svcnb-figures">.*?</table>', "", page, flags=re.S)
    left = re.search(r'<td(?: class="svcnb-(?:line|wrap)")?>[\d,.]+ EUR</td>', tables)
    assert not left, f"an amount left-aligned in a table: {left.group(0)}"
