"""BandwidthPanel: the date slider replays the bandwidth report as of each snapshot."""

from __future__ import annotations

import pytest

from svcnb.panels import BandwidthPanel
from svcnb.reports import bandwidth

DAYS = 4


@pytest.fixture
def history(sandbox, admin, panel_store):
    panel_store.build_history(admin, DAYS, sandbox.control.advance)
    return panel_store


def test_moving_the_slider_changes_the_bandwidth_figures_to_the_as_of_values(history, tmp_path):
    panel = BandwidthPanel(history, export_dir=tmp_path)
    times = [value for _, value in panel.date_slider.options]
    assert len(times) >= DAYS
    latest = panel.figures["fleet_used_bytes"]

    panel.date_slider.value = times[0]
    vms = history.load("vms", at=times[0])
    live = vms[vms["status"] != "terminated"]
    first = panel.figures["fleet_used_bytes"]
    assert first == int(live["bandwidth_used_bytes"].sum())
    assert first != latest  # running VMs used bandwidth in between
    assert f"{first / bandwidth.GIB:,.1f}" in panel.summary.value

    expected = bandwidth.exceeding.from_store(history, at=times[0])
    assert list(panel.results["exceeding"]["vm_id"]) == list(expected["vm_id"])
    assert len(panel.results["fleet_total"]) == 1  # history up to the first snapshot only
    for name in ("usage", "top", "monthly"):
        assert panel.plots[name].svg.startswith("<svg") and "currentColor" in panel.plots[name].svg

    path = panel.export("top_consumers")
    assert path is not None and path.exists()
    assert path.read_text().splitlines()[0].startswith("vm_id,name,status")
