"""Answers reused inside a ``Reuse`` block are the answers computed alone; histories sliced per
as-of time are the histories read up to it."""

from __future__ import annotations

import functools
import random

import pandas as pd
import pytest

from svcnb import frames, reports
from svcnb.reports import Histories, Reuse, billing, reusable, whatif
from svcnb.store import Store

NOW = pd.Timestamp("2026-11-01T00:00:00Z")


def vm(vm_id, price, renews, currency="EUR", status="running", bill="active", plan="small"):
    return {
        "id": vm_id,
        "name": f"vm-{vm_id}",
        "status": status,
        "plan_slug": plan,
        "region_slug": "fra",
        "billing_status": bill,
        "next_renewal_at": pd.Timestamp(renews, tz="UTC") if renews else None,
        "price_monthly_amount": price,
        "price_monthly_currency": currency,
    }


@pytest.fixture
def fleet(frame):
    """Renewals on month ends and in the past, a debt, an unstated price (its plan's), another
    currency and a word nobody mapped; a wallet that runs out within the year."""
    vms = frame(
        "vms",
        [
            vm("a", 30, "2026-11-30"),
            vm("b", 50, "2026-10-31T06:00"),  # missed: due now
            vm("c", None, "2026-11-20"),  # priced as its plan's (30)
            vm("d", 20, "2026-11-03", currency="USD"),
            vm("e", 40, "2026-11-15", bill="overdue"),
            vm("f", 10, "2026-11-12", status="hibernating"),
            vm("g", 25, "2027-01-31", plan="large"),
            vm("h", 25, None),
        ],
    )
    wallet = frame("wallet", [{"id": "w", "balance_amount": 400.0, "balance_currency": "EUR"}])
    return vms, wallet


CALLS = {
    "runway": lambda v, w: billing.runway(v, w, now=NOW),
    "runway 90": lambda v, w: billing.runway(v, w, now=NOW, horizon="90D"),
    "schedule 30": lambda v, w: billing.renewal_schedule(v, w, now=NOW, horizon="30D"),
    "schedule 400": lambda v, w: billing.renewal_schedule(v, w, now=NOW, horizon="400D"),
    "schedule 30D cycle": lambda v, w: billing.renewal_schedule(
        v, w, now=NOW, horizon="200D", cycle="30D"
    ),
    "low balance": lambda v, w: billing.low_balance_forecast(v, w, now=NOW),
    "renewals": lambda v, w: billing.renewals(v, w, now=NOW, within="90D"),
    "run rate": lambda v, w: billing.run_rate(v, w, now=NOW),
    "top-up": lambda v, w: whatif.topup_needed(v, w, now=NOW),
    "suspensions": lambda v, w: whatif.suspensions(v, w, now=NOW, horizon="60D"),
    "what if": lambda v, w: whatif.what_if_stop(v, w, ["a", "g"], now=NOW, how="terminate"),
}


def _same(a, b):
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a.attrs.keys() == b.attrs.keys()
    for key in a.attrs:
        if isinstance(a.attrs[key], pd.DataFrame):
            pd.testing.assert_frame_equal(a.attrs[key], b.attrs[key])
        else:
            assert a.attrs[key] == b.attrs[key] or (pd.isna(a.attrs[key]) and pd.isna(b.attrs[key]))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_answers_inside_one_block_in_any_order_are_those_computed_alone(fleet, seed):
    vms, wallet = fleet
    alone = {name: call(vms, wallet) for name, call in CALLS.items()}
    order = list(CALLS)
    random.Random(seed).shuffle(order)
    with Reuse() as reuse:
        first = {name: CALLS[name](vms, wallet) for name in order}
        again = {name: CALLS[name](vms, wallet) for name in reversed(order)}
    assert reuse.hits >= len(CALLS)  # the second round computed nothing
    for name in CALLS:
        _same(alone[name], first[name])
        _same(alone[name], again[name])


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_an_answer_handed_out_is_a_copy(fleet):
    vms, wallet = fleet
    with Reuse():
        got = billing.runway(vms, wallet, now=NOW)
        got.loc[0, "balance"] = -1.0
        got.attrs["unknown_status"] = -1
        again = billing.runway(vms, wallet, now=NOW)
    assert again.loc[0, "balance"] == 400.0 and again.attrs == {}


def _vm_record(i: int, used: int) -> dict:
    return {
        "id": f"vm-{i}",
        "name": f"web-{i}",
        "status": "running",
        "region": {"slug": "fra1", "name": "Frankfurt"},
        "plan": {"slug": "s-1", "name": "Small"},
        "bandwidthUsedBytes": used,
        "bandwidthPackBytes": "1000",
    }


def test_a_history_sliced_per_time_is_the_history_read_up_to_it(tmp_path):
    store = Store(tmp_path / "store")
    balance = {"value": 5000, "currency": "EUR", "precision": 2}
    wallet = frames.wallet({"id": "w", "balance": balance})
    times = [NOW + pd.Timedelta(days=d) for d in range(6)]
    for day, when in enumerate(times):
        vms = frames.vms([_vm_record(i, 100 * (day + 1) + i) for i in range(day % 3 + 2)])
        if day in (2, 4):  # the VM list could not be read that day: a gap, never zeros
            store.write(
                {"wallet": wallet}, server_time=when, missing={"vms": "no scope"}, partial=True
            )
        else:
            store.write({"vms": vms, "wallet": wallet}, server_time=when, partial=True)
    histories = Histories()
    columns = ("bandwidth_used_bytes", "status")
    for until in [times[0] - pd.Timedelta(hours=1), *times, times[3] + pd.Timedelta(hours=5)]:
        want = store.history("vms", list(columns), until=until)
        got = histories.until(store, "vms", columns, until)
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert got.attrs == want.attrs
    assert histories.until(store, "vms", columns, times[-1] + pd.Timedelta(days=1)) is None


def _computing_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``Reuse`` block keeps nothing: each report, helper and read computes again."""
    monkeypatch.setattr(Reuse, "call", lambda self, fn, args, kwargs: fn(*args, **kwargs))
    monkeypatch.setattr(Reuse, "shared", lambda self, key, objects, make: make())


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kind", ["billing", "bandwidth", "firewall", "webhooks", "whatif"])
def test_a_view_shares_its_reports_answers_and_shows_what_they_show_alone(
    played, kind, monkeypatch
):
    """A view asks many reports about one snapshot's frames: it reads each frame once and
    prices a fleet once (the billing view priced the same VMs ten times, once per report), and
    shows exactly what every report computed on its own would."""
    store, _ = played
    module = getattr(reports, kind)
    reads: list[tuple] = []
    # every load, of the store or of a snapshot handle (Store.at), goes through Store._load
    load, priced = Store._load, billing._priced.__wrapped__
    priced_calls = []

    def counted_load(self, resource, entries, at, *args, **kwargs):
        reads.append((resource, repr(at)))
        return load(self, resource, entries, at, *args, **kwargs)

    @functools.wraps(priced)
    def counted_priced(*args, **kwargs):
        priced_calls.append(id(args[0] if args else kwargs["vms"]))
        return priced(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(Store, "_load", counted_load)
        m.setattr(billing, "_priced", reusable(counted_priced))
        shared = module.view(store)
    assert reads and len(reads) == len(set(reads)), f"{kind}: a frame read twice: {sorted(reads)}"
    # the what-if prices a second fleet: the same VMs as if their debts were paid
    assert len(priced_calls) == len(set(priced_calls)), f"{kind} priced one fleet again"
    assert len(priced_calls) == {"billing": 1, "whatif": 2}.get(kind, 0)

    _computing_everything(monkeypatch)
    alone = module.view(store)
    assert shared.text() == alone.text()
    assert shared.values() == alone.values() or str(shared.values()) == str(alone.values())
    assert list(shared.tables) == list(alone.tables)
    for name, table in alone.tables.items():
        pd.testing.assert_frame_equal(shared.tables[name], table, check_exact=True, obj=name)
