"""Panels under another service's words: synonyms work as the canonical words, and what svcnb
cannot classify is said in the summary, with how to map it."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from svcnb import frames, vocab
from svcnb.panels import BandwidthPanel, BillingPanel, VmPanel, WebhooksPanel
from svcnb.store import Store

DAY = pd.Timedelta(days=1)
T0 = pd.Timestamp("2026-11-01T00:00:00Z")


@pytest.fixture(autouse=True)
def fresh_vocabulary():
    with vocab.using(vocab.Vocabulary()) as v:
        yield v


def _vm(i: int, status: str, bill: str | None, used: int = 100) -> dict:
    return {
        "id": f"vm-{i}",
        "name": f"web-{i}",
        "status": status,
        "region": {"slug": "fra1", "name": "Frankfurt"},
        "plan": {"slug": "s-1", "name": "Small"},
        "billing": None
        if bill is None
        else {
            "status": bill,
            "nextRenewalAt": "2026-11-10T00:00:00.000Z",
            "priceMonthly": {"value": 1000, "currency": "EUR", "precision": 2},
        },
        "bandwidthUsedBytes": used,
        "bandwidthPackBytes": "1000",
        "isProtected": False,
    }


FLEET = [
    _vm(1, "online", "paid"),
    _vm(2, "halted", "past_due"),
    _vm(3, "live", "paid"),  # a status word nobody knows
    _vm(4, "online", "cleared"),  # a billing word nobody knows
    _vm(5, "deleted", None),
]


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "store")
    wallet = frames.wallet(
        {"id": "w", "balance": {"value": 5000, "currency": "EUR", "precision": 2}}
    )
    for day in range(2):
        records = [{**r, "bandwidthUsedBytes": r["bandwidthUsedBytes"] * (day + 1)} for r in FLEET]
        store.write(
            {"vms": frames.vms(records), "wallet": wallet},
            server_time=T0 + day * DAY,
            partial=True,
        )
    return store


def test_billing_panel_says_how_many_vms_were_left_out_and_how_to_map_them(store, tmp_path):
    with pytest.warns(vocab.UnknownWordWarning):
        panel = BillingPanel(store, export_dir=tmp_path)
    assert panel.figures["unknown_status"] == 2 and panel.figures["complete"] is False
    summary = panel.summary.value
    assert "2 VM(s) with unknown status left out" in summary
    assert "svcnb.vocab.extend" in summary
    assert set(panel.results["unknown_status"]["vm_id"]) == {"vm-3", "vm-4"}
    # past_due is owing: listed as overdue
    assert panel.results["overdue"]["vm_id"].tolist() == ["vm-2"]


def test_billing_panel_says_nothing_when_every_word_is_known(store, tmp_path, fresh_vocabulary):
    fresh_vocabulary.add("vm_status", {"live": "running"})
    fresh_vocabulary.add("billing_status", {"cleared": "paid"})
    panel = BillingPanel(store, export_dir=tmp_path)
    assert panel.figures["unknown_status"] == 0 and panel.figures["complete"] is True
    assert "unknown status" not in panel.summary.value
    assert panel.results["unknown_status"].empty


def test_bandwidth_panel_counts_the_vms_whose_projection_is_unknown(store, tmp_path):
    with pytest.warns(vocab.UnknownWordWarning):
        panel = BandwidthPanel(store, export_dir=tmp_path)
    assert panel.figures["unknown_status"] == 1  # vm-3: its billing word does not matter here
    assert "1 VM(s) with unknown status left out" in panel.summary.value


def _vm_client(records: list[dict]) -> SimpleNamespace:
    stops: list[str] = []
    # what the service holds now: a stop plan re-reads each VM before stopping it
    now = {r["id"]: dict(r) for r in records}

    def stop(vm_id: str, **_kw) -> str:
        stops.append(vm_id)
        now[vm_id]["status"] = "off"
        return f"act-{vm_id}"

    vms = SimpleNamespace(
        list=lambda: records, get=lambda vm_id: now[vm_id], stop=stop, stops=stops
    )
    return SimpleNamespace(vms=vms, stats={}, base_url="http://fake", server_time=None)


def test_stop_follows_the_running_class_whatever_the_word(tmp_path):
    client = _vm_client(FLEET)
    with pytest.warns(vocab.UnknownWordWarning):
        panel = VmPanel(
            client, watch_interval=None, store=Store(tmp_path / "store"), approver="omar"
        )
        panel.select(("vm-1", "vm-2", "vm-3"))
    assert panel.stoppable() == ["vm-1"]  # "online" is running; "halted" and "live" are not
    panel.stop_button.click()
    assert "will be stopped" in panel.confirmation.value
    panel.confirm_stop()
    assert client.vms.stops == ["vm-1"]
    panel.poll()
    assert not panel.watching  # "off" is a stopped word: the watch is over


def test_status_filter_offers_classes_labelled_with_the_service_words():
    with pytest.warns(vocab.UnknownWordWarning):
        panel = VmPanel(_vm_client(FLEET), watch_interval=None)
    options = dict((value, label) for label, value in panel.status_filter.options)
    assert options["running"] == "running (online)"
    assert options["stopped"] == "stopped (halted)"
    assert options["unknown"] == "unknown (live)"
    panel.status_filter.value = "running"  # the class, though this service says "online"
    assert list(panel.filtered()["id"]) == ["vm-1", "vm-4"]
    panel.status_filter.value = "terminated"
    assert list(panel.filtered()["id"]) == ["vm-5"]


def _hooks_client(deliveries: list[dict]) -> SimpleNamespace:
    hooks = [{"id": "h1", "url": "https://a.example/h", "events": ["vm.stopped"], "isActive": True}]
    webhooks = SimpleNamespace(list=lambda: hooks, deliveries=lambda _id: deliveries)
    return SimpleNamespace(webhooks=webhooks, stats={})


def test_webhooks_panel_counts_events_of_unknown_outcome():
    records = [
        {"id": "d1", "event_id": "e1", "event": "vm.stopped", "responseCode": 200, "ok": True},
        {"id": "d2", "event_id": "e2", "event": "vm.stopped", "responseCode": 500, "passed": 0},
    ]
    panel = WebhooksPanel(_hooks_client(records))
    row = panel.health.iloc[0]
    assert (row["delivered"], row["failed"], row["unknown"]) == (1, 0, 1)
    assert row["success_rate"] == 1.0
    assert "1 event(s) of unknown outcome" in panel.status.value
    assert "Unknown" in panel.table.df.columns


def test_webhooks_panel_shows_a_bounded_run_as_a_bound_and_an_unknown_one_as_unknown():
    # a service keeping its latest 10 attempts, all failed: the run is at least 10, not 10
    records = [
        {
            "id": f"d{n}",
            "eventId": f"e{n // 3}",
            "event": "vm.stopped",
            "statusCode": 500,
            "success": False,
            "attempts": n % 3 + 1,
            "lastAttemptAt": f"2026-11-01T00:{n:02d}:00Z",
        }
        for n in range(10)
    ]
    panel = WebhooksPanel(_hooks_client(records))
    row = panel.table.df.iloc[0]
    assert row["Consecutive failures"] == "≥ 10"
    # how deep the service's history goes is not pinned: what is left is unknown, never "≤ 40"
    assert row["Failures to disable"] == "unknown"
    assert "no success among the 10 delivery record(s)" in row["Reason"]
    assert "1 subscription(s) whose run of failures is only a bound or unknown" in (
        panel.status.value
    )
    # the same records without a time to order them by: unknown, never a count
    untimed = [{k: v for k, v in r.items() if k != "lastAttemptAt"} for r in records]
    panel = WebhooksPanel(_hooks_client(untimed))
    row = panel.table.df.iloc[0]
    assert row["Consecutive failures"] == "unknown" and row["Failures to disable"] == "unknown"
