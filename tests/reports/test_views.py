"""One view per report: every figure reads the same on every surface that shows it.

Each report declares its view once (``<report>.VIEW``); the CLI, the panels and a notebook cell
render it. This test enumerates every figure of every view and compares what each surface shows
with the view's own value and text, on the default dialect and two others that say money,
statuses, times and paging differently:

- ``svcnb report KIND`` as text (the "label  text" lines), as JSON and as CSV
  (``--table figures``: the exact value and the text);
- the panel of the report, where there is one (its figures table, cell by cell);
- the view's HTML in a notebook cell (``View._repr_html_``, what a rendered page shows).

It also holds every surface to the column table: every column of every view's tables has a
declared kind and label (``svcnb.reports._columns``), so nothing shows a raw name.
"""

from __future__ import annotations

import html
import io
import json
import re
from decimal import Decimal

import pandas as pd
import pytest
from _tiers import dialects

from svcnb import reports
from svcnb.cli import main
from svcnb.client import Client
from svcnb.panels import BandwidthPanel, BillingPanel, WhatIfPanel
from svcnb.reports import COLUMNS
from svcnb.sandbox import serve
from svcnb.store import Store

KINDS = ("billing", "bandwidth", "firewall", "webhooks", "whatif")
PANELS = {"billing": BillingPanel, "bandwidth": BandwidthPanel, "whatif": WhatIfPanel}
DIALECTS = ("default", "acme", "hal")
_CELL = re.compile(r"data-figure='([a-z0-9_]+)'>(.*?)</td>", re.S)


@pytest.fixture(scope="module", params=dialects(DIALECTS, quick=("default", "hal")))
def dialect_store(request, tmp_path_factory):
    """A store of 4 daily snapshots of a 30-VM account served in ``request.param``."""
    with serve(vms=30, seed=7, dialect=request.param, rate_limit=100_000) as sb:
        path = tmp_path_factory.mktemp(f"views-{request.param}") / "store"
        with Client(sb.tokens["admin"], sb.base_url, progress=False) as client:
            store = Store(path)
            sb.control.advance(600)
            store.build_history(client, 3, sb.control.advance)
        yield request.param, store


def _cli(capsys, kind: str, store: Store, fmt: str) -> str:
    argv = ["report", kind, "--store", str(store.path), "--table", "figures", "--format", fmt]
    assert main(argv) == 0
    return capsys.readouterr().out


def _html_cells(text: str) -> dict[str, str]:
    return {name: html.unescape(cell) for name, cell in _CELL.findall(text)}


def _same_value(shown: object, view_value: object) -> bool:
    if view_value is None:
        return shown is None or (isinstance(shown, float) and shown != shown)
    if isinstance(view_value, Decimal):
        return Decimal(str(shown)) == view_value
    return str(shown) == str(view_value)


@pytest.mark.parametrize("kind", KINDS)
def test_every_figure_agrees_on_every_surface(dialect_store, kind, capsys, tmp_path):
    dialect, store = dialect_store
    view = getattr(reports, kind).view(store)
    truth = {name: (f.text(), f.plain()) for name, f in view.figures.items()}
    assert truth, f"{kind} declares no figure"

    # CLI text: one "label  text" line per figure, in the declared order
    lines = _cli(capsys, kind, store, "text").splitlines()
    for f in view.figures.values():
        line = next((x for x in lines if x.startswith(f.label + "  ")), None)
        assert line is not None, f"{dialect} {kind}: CLI text has no line for {f.label!r}"
        assert line[len(f.label) :].strip() == truth[f.name][0], (dialect, kind, f.name)

    # CLI JSON and CSV: the exact value and the same text
    rows = {r["figure"]: r for r in json.loads(_cli(capsys, kind, store, "json"))}
    csv = pd.read_csv(io.StringIO(_cli(capsys, kind, store, "csv")), dtype=str)
    by_csv = {r["figure"]: r for r in csv.to_dict("records")}
    for name, (text, value) in truth.items():
        assert rows[name]["text"] == text, (dialect, kind, name)
        assert _same_value(rows[name]["value"], value), (dialect, kind, name, rows[name])
        assert by_csv[name]["text"] == text, (dialect, kind, name)
        shown = by_csv[name]["value"]
        assert _same_value(None if pd.isna(shown) else shown, value), (dialect, kind, name)

    # the notebook cell's HTML (what a rendered page shows)
    cells = _html_cells(view._repr_html_())
    assert cells == {name: text for name, (text, _) in truth.items()}, (dialect, kind)

    # the panel, as of the same snapshot
    if kind in PANELS:
        panel = PANELS[kind](store, export_dir=tmp_path)
        assert _html_cells(panel.summary.value) == {n: t for n, (t, _) in truth.items()}
        for name, f in view.figures.items():
            assert _same_value(panel.figures[name], f.value) or (
                pd.isna(f.value) and pd.isna(panel.figures[name])
            ), (dialect, kind, name)


@pytest.mark.parametrize("kind", KINDS)
def test_every_column_a_view_shows_has_a_kind_and_a_label(dialect_store, kind):
    _dialect, store = dialect_store
    view = getattr(reports, kind).view(store)
    for name, frame in [("figures", view.figures_frame()), *view.tables.items()]:
        missing = [str(c) for c in frame.columns if str(c) not in COLUMNS]
        assert not missing, f"{kind}.{name}: columns without a kind and label: {missing}"
        spec = None if name == "figures" else view.spec.table(name)
        for column in (spec.columns or ()) if spec else ():
            assert column in frame.columns, f"{kind}.{name} declares {column!r} but lacks it"


def test_a_figure_meaning_something_else_has_another_name():
    """Billing's renewals count VMs in good standing; the what-if's count the VMs a top-up
    brings back too: the two are named (and labelled) apart, each with its sentence."""
    names: dict[str, tuple[str, str]] = {}
    for kind in KINDS:
        for f in getattr(reports, kind).VIEW.figures:
            assert f.means.endswith("."), f"{kind}.{f.name}: say what it counts in a sentence"
            if f.name in names:
                # the same name in two views must mean the same thing
                assert names[f.name] == (f.label, f.means), f"{kind}.{f.name} means two things"
            names[f.name] = (f.label, f.means)
    assert "renewals_30d" in names and "renewals_if_paid" in names
