"""'As of' is decided once: ``store.at(when)`` chooses the snapshot (one reading of the time,
one catalog read), and every report, view and read as of it goes through that handle."""

from __future__ import annotations

import pandas as pd
import pytest

from svcnb.reports import bandwidth, billing, webhooks, whatif


@pytest.fixture
def counted(played, monkeypatch):
    """The played store, and a list that grows by one at each read of its catalog."""
    store, _ = played
    reads = []
    catalog = store._catalog
    original = catalog.read

    def read():
        reads.append(1)
        return original()

    monkeypatch.setattr(catalog, "read", read)
    return store, reads


def test_the_handle_reads_what_the_store_reads_as_of_that_time(played):
    store, _ = played
    times = list(store.snapshots()["server_time"])
    snap = store.at(times[2] + pd.Timedelta(hours=1))
    assert snap.id == store.snapshots()["snapshot_id"].iloc[2]
    assert snap.server_time == times[2] and snap.complete and snap.missing == {}
    pd.testing.assert_frame_equal(snap.load("vms"), store.load("vms", at=times[2]))
    pd.testing.assert_frame_equal(
        snap.history("wallet", ["balance_amount"]),
        store.history("wallet", ["balance_amount"], until=times[2]),
    )
    with pytest.raises(ValueError, match="no snapshot at or before"):
        store.at(times[0] - pd.Timedelta(days=1))


@pytest.mark.parametrize("report", [billing, bandwidth, webhooks, whatif])
def test_one_view_reads_the_catalog_once(counted, report):
    store, reads = counted
    at = store.snapshots()["server_time"].iloc[3]
    reads.clear()
    view = report.view(store, at=at)
    # billing read it 4 times before the handle (once to choose, once per load and history)
    assert len(reads) == 1
    again = report.view(store.at(at))
    assert again.figures_frame().equals(view.figures_frame())


def test_a_handle_is_as_of_one_time_already(played):
    store, _ = played
    snap = store.at()
    assert billing.runway.from_store(snap).equals(billing.runway.from_store(store))
    with pytest.raises(ValueError, match="as of one time already"):
        billing.view(snap, at="2026-01-01")
