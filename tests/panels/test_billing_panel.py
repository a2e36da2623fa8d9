"""BillingPanel: the date slider replays the billing report as of each snapshot."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from svcnb.client import Client
from svcnb.panels import BillingPanel
from svcnb.reports import billing
from svcnb.sandbox import serve
from svcnb.store import Store

DAYS = 4
TOPUP = 250.0


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A few daily snapshots; the wallet is topped up each day so the balance moves. Taken once
    for the module: its tests only read the store."""
    store = Store(tmp_path_factory.mktemp("billing-panel") / "store")
    with (
        serve(vms=40, seed=7, time_scale=0.0) as sandbox,
        Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as admin,
    ):

        def advance(seconds: float) -> None:
            sandbox.control.topup(TOPUP)
            sandbox.control.advance(seconds)

        store.build_history(admin, DAYS, advance)
    return store


def _balance_at(store, at) -> float:
    return float(store.load("wallet", at=at)["balance_amount"].iloc[0])


def test_moving_the_slider_changes_the_billing_figures_to_the_as_of_values(history, tmp_path):
    panel = BillingPanel(history, export_dir=tmp_path)
    times = [value for _, value in panel.date_slider.options]
    assert len(times) >= DAYS
    assert panel.date_slider.value == times[-1]
    latest = float(panel.figures["balance"])
    assert latest == pytest.approx(_balance_at(history, times[-1]))

    panel.date_slider.value = times[0]
    first = float(panel.figures["balance"])
    assert first == pytest.approx(_balance_at(history, times[0]))
    assert first != pytest.approx(latest)
    assert f"{first:,.2f}" in panel.summary.value
    assert f"{latest:,.2f}" not in panel.summary.value
    assert f"{times[0]:%Y-%m-%d}" in panel.summary.value

    expected = billing.runway.from_store(history, at=times[0]).iloc[0]
    if pd.isna(expected["runway_at"]):
        assert pd.isna(panel.figures["runway_at"])
    else:
        assert panel.figures["runway_at"] == expected["runway_at"]
    due = billing.renewals_due.from_store(history, at=times[0])
    thirty = due[due["within_days"] == 30]["amount"].sum()
    assert float(panel.figures["renewals_30d"]) == pytest.approx(float(thirty))
    assert panel.results["renewals"].equals(
        billing.renewals.from_store(history, at=times[0], within="30D")
    )
    for name in ("renewals", "balance"):
        assert panel.plots[name].svg.startswith("<svg") and "currentColor" in panel.plots[name].svg


def test_export_writes_the_shown_table_as_csv(history, tmp_path):
    panel = BillingPanel(history, export_dir=tmp_path / "exports")
    times = [value for _, value in panel.date_slider.options]
    panel.date_slider.value = times[1]
    panel.export_choice.value = "renewals"
    panel.export_button.click()
    written = list((tmp_path / "exports").glob("*.csv"))
    assert len(written) == 1
    assert f"{times[1]:%Y%m%d}" in written[0].name
    assert written[0].name in panel.export_message.value
    with written[0].open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(panel.results["renewals"])
    if rows:
        assert rows[0]["renewal_at"].endswith("+00:00")


def test_an_empty_store_says_what_to_do(panel_store, tmp_path):
    panel = BillingPanel(panel_store, export_dir=tmp_path)
    assert panel.date_slider.disabled
    assert "no snapshot" in panel.status.value
    assert panel.export() is None


def test_panel_durations_are_read_as_the_cli_reads_them(history, tmp_path):
    from svcnb.panels import BandwidthPanel
    from svcnb.reports import DurationError

    # a bare number is days, as in `svcnb report billing --within 30`
    panel = BillingPanel(history, within="30", horizon="52w", export_dir=tmp_path)
    assert panel.within == pd.Timedelta(days=30) and panel.horizon == pd.Timedelta(days=364)
    at = panel.date_slider.value
    assert panel.results["renewals"].equals(
        billing.renewals.from_store(history, at=at, within="30d")
    )
    assert len(panel.results["renewals"]) > 0
    with pytest.raises(DurationError, match=r"within='91d' for about 3 months"):
        BillingPanel(history, within="3M", export_dir=tmp_path)
    with pytest.raises(DurationError, match=r"horizon 'a year'.*horizon='90d'"):
        BillingPanel(history, horizon="a year", export_dir=tmp_path)
    assert BandwidthPanel(history, lookback="7", export_dir=tmp_path).lookback == pd.Timedelta(
        days=7
    )
    with pytest.raises(DurationError, match="lookback='30d' for about 1 month"):
        BandwidthPanel(history, lookback="1M", export_dir=tmp_path)


def test_moving_back_to_the_snapshot_just_shown_shows_it_again_without_drawing_again(
    history, tmp_path, monkeypatch
):
    from svcnb.panels import PlotView

    panel = BillingPanel(history, export_dir=tmp_path)
    times = [value for _, value in panel.date_slider.options]
    panel.date_slider.value = times[0]
    first = (
        {n: p.value for n, p in panel.plots.items()},
        {n: g._dt_args["data_json"] for n, g in panel.tables.items()},
    )
    drawn: list[object] = []
    render = PlotView.render
    monkeypatch.setattr(
        PlotView, "render", lambda self, *a, **k: drawn.append(a) or render(self, *a, **k)
    )

    panel.date_slider.value = times[1]
    assert len(drawn) == len(panel.plots)  # a snapshot not kept: every plot is drawn
    panel.date_slider.value = times[0]
    assert len(drawn) == len(panel.plots)  # back: none drawn again
    again = (
        {n: p.value for n, p in panel.plots.items()},
        {n: g._dt_args["data_json"] for n, g in panel.tables.items()},
    )
    assert again == first
    # and it is what a panel opened at that snapshot shows
    fresh = BillingPanel(history, export_dir=tmp_path)
    fresh.date_slider.value = times[0]
    assert {n: p.value for n, p in fresh.plots.items()} == first[0]
    assert fresh.summary.value == panel.summary.value


def test_reload_keeps_what_it_drew_until_a_snapshot_a_pin_or_a_mapped_word_is_new(
    history, tmp_path, monkeypatch
):
    from svcnb import vocab
    from svcnb.config import write_section
    from svcnb.panels import PlotView

    panel = BillingPanel(history, export_dir=tmp_path)
    suspended = panel.figures["vms_suspended"]
    drawn: list[object] = []
    render = PlotView.render
    monkeypatch.setattr(
        PlotView, "render", lambda self, *a, **k: drawn.append(a) or render(self, *a, **k)
    )
    # three other snapshots looked at: the latest one is still kept
    times = [value for _, value in panel.date_slider.options]
    for at in times[:3]:
        panel.date_slider.value = at
    assert len(times) > 3 and len(drawn) == 3 * len(panel.plots)
    drawn.clear()
    panel.refresh_button.click()
    assert drawn == [] and "No snapshot, pin or mapped word is new" in panel.status.value
    assert panel.date_slider.value == times[-1]

    # a word mapped in this process may change every answer: all is computed again
    # ("stopped" read as held by the provider, as one service might say it)
    vocab.extend(vm_status={"stopped": "suspended"})
    panel.refresh_button.click()
    assert len(drawn) == len(panel.plots) and panel.figures["vms_suspended"] > suspended
    assert "No snapshot, pin or mapped word is new" not in panel.status.value
    # the same for a pin written to the config file
    drawn.clear()
    write_section("billing", {"grace": "1D"})
    panel.refresh_button.click()
    assert len(drawn) == len(panel.plots)
    # and what it shows is what a panel opened now shows
    fresh = BillingPanel(history, export_dir=tmp_path)
    assert fresh.summary.value == panel.summary.value
    assert {n: p.value for n, p in fresh.plots.items()} == {
        n: p.value for n, p in panel.plots.items()
    }
