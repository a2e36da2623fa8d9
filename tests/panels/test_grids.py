"""Report panels show every table in an interactive grid, labelled; their frames stay exact."""

from __future__ import annotations

from itables.widget import ITable

from svcnb.client import Client
from svcnb.panels import BandwidthPanel, BillingPanel
from svcnb.store import Store


def test_grids_with_labels_and_exact_frames(sandbox, tmp_path):
    with Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client:
        store = Store(tmp_path / "store")
        store.build_history(client, 2, sandbox.control.advance)
    for panel in (
        BillingPanel(store, export_dir=tmp_path),
        BandwidthPanel(store, export_dir=tmp_path),
    ):
        assert all(isinstance(g, ITable) for g in panel.tables.values())
        assert panel.busy.value == "" and not panel.date_slider.disabled
        for name, g in panel.tables.items():
            columns = list(g.df.columns)
            assert not any("_" in c for c in columns), (name, columns)
            assert all(c.islower() and " " not in c for c in panel.results[name].columns)
        # selection is readable from Python
        first = next(iter(panel.tables.values()))
        first.selected_rows = [0]
        assert first.selected_rows == [0]
    money = BillingPanel(store, export_dir=tmp_path).tables["renewals"].df["Amount"]
    assert money.str.endswith(" EUR").all()
    assert "var(--jp-" in panel.summary.value
