"""The pages ``svcnb pages`` renders from a store with a week of daily snapshots read at a laptop's
width and at 800 px in Chromium: the page never scrolls sideways; a table fits (headers wrap
between words, the type a little smaller on a narrow screen) or scrolls inside its own box with
its key column in view. A page's width comes from its columns, which a week's history fills as a
month's does (every table has rows, every plot a history); a month's takes four times as long.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

import pytest

from svcnb import Client, cli
from svcnb.sandbox import serve
from svcnb.store import Store

KINDS = ("billing", "bandwidth", "firewall", "webhooks", "whatif")

# For each table box of the page: its width against the box's, and, scrolled to its end, where
# the first header cell lies against the box's left edge.
_MEASURE = """
() => {
  const boxes = [...document.querySelectorAll('.svcnb-scroll')];
  const out = boxes.map((box) => {
    const head = box.querySelector('th');
    const wide = box.scrollWidth > box.clientWidth + 1;
    box.scrollLeft = box.scrollWidth;
    const seen = box.getBoundingClientRect(), at = head.getBoundingClientRect();
    let h = box.previousElementSibling;
    while (h && h.tagName !== 'H2') h = h.previousElementSibling;
    const title = h ? h.textContent : '';
    const kept = at.left >= seen.left - 1 && at.right <= seen.right + 1;
    box.scrollLeft = 0;
    return {title: title.slice(0, 60), wide, kept, head: head.textContent};
  });
  return {doc: document.documentElement.scrollWidth, view: window.innerWidth, tables: out};
}
"""


@pytest.fixture(scope="module")
def measured(shared_browser: Callable[[], Any], tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Each page at 1200 and 800 px: the document's width and each table's, measured in the
    browser tests' one Chromium (a second Playwright cannot start while its loop runs)."""
    folder = tmp_path_factory.mktemp("pages-7d")
    store = Store(folder / "store")
    with (
        serve(vms=40, seed=7, time_scale=0.0) as sandbox,
        Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as admin,
    ):
        store.build_history(admin, 7, sandbox.control.advance)
    out = folder / "pages"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["pages", "--store", str(store.path), "--out", str(out)]) == 0

    found: dict[tuple[str, int], Any] = {}
    browser = shared_browser()
    for width in (1200, 800):
        page = browser.new_page(viewport={"width": width, "height": 900})
        try:
            for kind in KINDS:
                page.goto((out / f"{kind}.html").as_uri())
                found[kind, width] = page.evaluate(_MEASURE)
        finally:
            page.close()
    return found


@pytest.mark.parametrize("width", [1200, 800])
def test_a_page_is_never_wider_than_the_window(measured: dict, width: int) -> None:
    for kind in KINDS:
        got = measured[kind, width]
        assert got["doc"] <= got["view"], f"{kind} at {width} px: the page scrolls sideways"


def test_at_800_px_a_table_fits_or_keeps_its_key_column_in_view(measured: dict) -> None:
    for kind in KINDS:
        for table in measured[kind, 800]["tables"]:
            if table["wide"]:
                assert table["kept"], f"{kind}: {table['title']!r} scrolled its key column away"
    # the bandwidth tables (ten columns) fit whole: their headers wrap, no figure is cut
    wide = [t["title"] for t in measured["bandwidth", 800]["tables"] if t["wide"]]
    assert wide == [], wide
