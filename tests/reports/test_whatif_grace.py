"""The what-if report's suspension dates rest on the grace period, which the spec does not state
(``billing.grace``): pinned (the config file, a sandbox's dialect, the pins a snapshot was taken
with) they are dates; unpinned they are unknown, with one warning naming it and how to pin it."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

from svcnb import vocab
from svcnb.client import Client
from svcnb.config import write_section
from svcnb.frames import AssumptionWarning
from svcnb.reports import whatif
from svcnb.sandbox import GRACE, Dialect, serve
from svcnb.store import Store

NOW = pd.Timestamp("2026-11-01T00:00:00Z")


@pytest.fixture(autouse=True)
def _suspended_pinned():
    vocab.extend(vm_status={"suspended": "suspended"})


def _vm(vm_id, price, renews, bill="active", status="running"):
    return {
        "id": vm_id,
        "name": f"vm-{vm_id}",
        "status": status,
        "plan_slug": f"plan-{vm_id}",
        "region_slug": "fra",
        "billing_status": bill,
        "next_renewal_at": pd.Timestamp(renews, tz="UTC"),
        "price_monthly_amount": price,
        "price_monthly_currency": "EUR",
    }


@pytest.fixture
def fleet(frame):
    # o owes since its renewal of 10-28 and is still running; a's renewal of 11-05 the wallet
    # (10 EUR) cannot pay
    vms = frame("vms", [_vm("o", 12.5, "2026-10-28", bill="overdue"), _vm("a", 30, "2026-11-05")])
    wallet = frame("wallet", [{"id": "w", "balance_amount": 10.0, "balance_currency": "EUR"}])
    return vms, wallet


def _grace_warnings(said):
    return [w for w in said if issubclass(w.category, AssumptionWarning)]


def test_no_suspension_date_without_a_grace_the_service_stated(fleet):
    vms, wallet = fleet
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        got = whatif.suspensions(vms, wallet, now=NOW, horizon="30D")
        wif = whatif.what_if_stop(vms, wallet, ["a"], now=NOW, how="terminate")
    # the renewals that fail are listed, in the order they fail; when each VM is suspended is
    # not known: no date four days before now for a VM that still runs
    assert list(got["vm_id"]) == ["o", "a"]
    assert list(got["failed_at"].dt.strftime("%m-%d")) == ["10-28", "11-05"]
    assert got["suspended_at"].isna().all() and got["suspended_by"].isna().all()
    assert got["days_until"].isna().all()
    assert got.attrs["grace"] is None
    assert got.attrs["assumptions"]["billing.grace"].state == "unknown"
    assert wif["suspended_before"].isna().all() and wif["suspended_after"].isna().all()
    grace = _grace_warnings(said)
    assert len(grace) == 2  # one per report called
    text = str(grace[0].message)
    assert "billing.grace" in text and '[billing] grace = "3D"' in text


def test_a_pinned_grace_dates_the_suspensions_with_no_warning(fleet):
    vms, wallet = fleet
    write_section("billing", {"grace": "3D"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", AssumptionWarning)
        got = whatif.suspensions(vms, wallet, now=NOW, horizon="30D")
    assert list(got["suspended_at"].dt.strftime("%m-%d")) == ["10-31", "11-08"]
    assert got.attrs["assumptions"]["billing.grace"].state == "pinned"
    # the argument is the caller's word over any pin
    two = whatif.suspensions(vms, wallet, now=NOW, horizon="30D", grace="2D")
    assert list(two["suspended_at"].dt.strftime("%m-%d")) == ["10-30", "11-07"]


def test_the_sandbox_states_its_own_grace_as_a_pin():
    assert Dialect().pins["billing.grace"] == f"{GRACE.days}D"
    assert Dialect().pins["billing.grace"] == "3D"


def _store_of(sb, path, pins):
    with Client(
        api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False, pins=pins
    ) as client:
        store = Store(path)
        store.take(client)
    return store


def test_a_store_keeps_the_grace_its_snapshot_was_taken_with(tmp_path, capsys):
    from svcnb.cli import main

    with serve(vms=12, seed=7, rate_limit=100_000) as sb:
        sb.control.advance(600)
        pinned = _store_of(sb, tmp_path / "pinned", sb.pins)
        other = {n: v for n, v in sb.pins.items() if n != "billing.grace"}
        unpinned = _store_of(sb, tmp_path / "unpinned", other)
    entry = json.dumps(pinned._entries()[-1])
    assert '"billing.grace"' in entry and "the pins given to Client" in entry
    assert pinned.at().pins["billing.grace"].value == "3D"
    assert "billing.grace" not in unpinned.at().pins

    with warnings.catch_warnings():
        warnings.simplefilter("error", AssumptionWarning)
        dated = whatif.view(pinned)
    assert not pd.isna(dated.figures["first_suspended_at"].value)
    assert dated.figures["suspended"].value > 0

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        undated = whatif.view(unpinned)
    assert len(_grace_warnings(said)) == 1
    first = undated.figures["first_suspended_at"]
    assert pd.isna(first.value) and first.text() == "unknown" and not first.is_complete
    assert undated.figures["suspended"].text() == "unknown"
    assert any("billing.grace" in n for n in undated.notes)
    assert undated.tables["suspensions"]["suspended_by"].isna().all()
    assert len(undated.tables["suspensions"])  # the unpaid renewals are still listed

    assert main(["report", "whatif", "--store", str(unpinned.path), "--table", "figures",
                 "--format", "json"]) == 0  # fmt: skip
    rows = {r["figure"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["first_suspended_at"]["value"] is None
    assert rows["first_suspended_at"]["text"] == "unknown"
    assert "billing.grace" in rows["first_suspended_at"]["reason"]
    assert main(["report", "whatif", "--store", str(pinned.path), "--table", "figures",
                 "--format", "json"]) == 0  # fmt: skip
    rows = {r["figure"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["first_suspended_at"]["value"] is not None
