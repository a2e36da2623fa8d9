"""Billing report on a small hand-built account; every number below is worked out by hand."""

from __future__ import annotations

import io
import warnings
from decimal import Decimal

import matplotlib.dates as mdates
import pandas as pd
import pytest

from svcnb import vocab
from svcnb.money import to_decimal
from svcnb.reports import billing, display_frame


@pytest.fixture(autouse=True)
def _suspended_pinned():
    """This fleet's "suspended" is a hold for non-payment (the sandbox's word), pinned as its
    user would: providers differ on the word, so it is no built-in one."""
    vocab.extend(vm_status={"suspended": "suspended"})


NOW = pd.Timestamp("2026-11-01T00:00:00Z")


@pytest.fixture
def account(frame):
    """Wallet 100 EUR. a 30 EUR on 11-05, b 50 (no currency) on 11-10, c 40 EUR on 11-20,
    d 20 USD on 11-03, e terminated (never renews)."""
    vms = frame(
        "vms",
        [
            vm("a", 30, "EUR", "2026-11-05", plan="small", region="fra"),
            vm("b", 50, None, "2026-11-10", plan="large", region="fra"),
            vm("c", 40, "EUR", "2026-11-20", plan="small", region="ams"),
            vm("d", 20, "USD", "2026-11-03", plan="small", region="nyc"),
            vm("e", 10, "EUR", "2026-11-02", plan="small", region="fra", status="terminated"),
        ],
    )
    wallet = frame("wallet", [{"id": "w", "balance_amount": 100.0, "balance_currency": "EUR"}])
    return vms, wallet


def vm(vm_id, price, currency, renews, plan="small", region="fra", status="running", bill="active"):
    return {
        "id": vm_id,
        "name": f"vm-{vm_id}",
        "status": status,
        "plan_slug": plan,
        "region_slug": region,
        "billing_status": bill,
        "next_renewal_at": pd.Timestamp(renews, tz="UTC") if renews else None,
        "price_monthly_amount": price,
        "price_monthly_currency": currency,
    }


def test_runway_is_the_first_renewal_the_wallet_cannot_pay(account):
    vms, wallet = account
    # 11-03 d is USD (not debitable from EUR); 11-05 a: 100-30=70; 11-10 b: 70-50=20;
    # 11-20 c needs 40 with 20 left: the runway.
    got = billing.runway(vms, wallet, now=NOW).iloc[0]
    assert got["runway_at"] == pd.Timestamp("2026-11-20T00:00Z")
    assert got["vm_id"] == "c"
    assert got["runway_days"] == 19
    assert got["amount"] == 40
    assert got["shortfall"] == 20
    assert got["balance"] == 100
    assert got["currency"] == "EUR"


def test_schedule_walks_monthly_and_never_debits_another_currency(account):
    vms, wallet = account
    sched = billing.renewal_schedule(vms, wallet, now=NOW, horizon="36D")
    assert list(sched["vm_id"]) == ["d", "a", "b", "c", "d", "a"]
    assert list(sched["renewal_at"].dt.strftime("%m-%d")) == [
        "11-03",
        "11-05",
        "11-10",
        "11-20",
        "12-03",
        "12-05",
    ]
    assert list(sched["debitable"]) == [False, True, True, True, False, True]
    assert list(sched["paid"]) == [False, True, True, False, False, False]
    assert list(sched["balance_after"]) == [100, 70, 20, 20, 20, 20]


def test_no_runway_when_every_renewal_is_paid(account):
    vms, wallet = account
    wallet = wallet.assign(balance_amount=pd.array([10_000.0], dtype="Float64"))
    got = billing.runway(vms, wallet, now=NOW, horizon="90D").iloc[0]
    assert pd.isna(got["runway_at"])
    assert pd.isna(got["vm_id"])


def test_a_wallet_holding_exactly_its_renewals_pays_every_one_to_the_cent(frame):
    # 0.30 EUR pays three renewals of 0.10 exactly; subtracted as floats, 0.30 - 0.10 - 0.10
    # leaves 0.09999999999999998, and the third was called unpaid: a runway that is not there
    vms = frame("vms", [vm(v, 0.1, "EUR", f"2026-11-0{i}") for i, v in enumerate("abc", 2)])
    wallet = frame("wallet", [{"id": "w", "balance_amount": 0.3, "balance_currency": "EUR"}])
    got = billing.runway(vms, wallet, now=NOW, horizon="5D").iloc[0]
    assert pd.isna(got["runway_at"]), got["vm_id"]
    sched = billing.renewal_schedule(vms, wallet, now=NOW, horizon="5D")
    assert list(sched["paid"]) == [True, True, True]
    assert [to_decimal(v, "EUR") for v in sched["balance_after"]] == [
        Decimal("0.20"),
        Decimal("0.10"),
        Decimal("0.00"),
    ]


def test_a_balance_that_exactly_covers_the_window_is_not_low(frame):
    # 0.30 EUR against three renewals of 0.10 within the window: covered; summed as floats the
    # need was 0.30000000000000004, and the balance was called low at once
    vms = frame("vms", [vm(v, 0.1, "EUR", f"2026-11-0{i}") for i, v in enumerate("abc", 2)])
    wallet = frame("wallet", [{"id": "w", "balance_amount": 0.3, "balance_currency": "EUR"}])
    got = billing.low_balance_forecast(vms, wallet, now=NOW, window="5D", horizon="5D").iloc[0]
    assert pd.isna(got["low_at"]), (got["low_at"], got["needed"])


def test_a_long_walk_leaves_the_balance_to_the_cent(frame):
    # 3,000 renewals of 19.99 from 60,000.00: 30.00 left, written as 30.00 EUR; the float
    # walk of a 10,000-VM fleet left 20.440000003706842 of 20.44 and showed every digit
    vms = frame("vms", [vm(f"v{i:04d}", 19.99, "EUR", "2026-11-02") for i in range(3000)])
    wallet = frame("wallet", [{"id": "w", "balance_amount": 60_000.0, "balance_currency": "EUR"}])
    sched = billing.renewal_schedule(vms, wallet, now=NOW, horizon="5D")
    assert sched["paid"].all()
    last = to_decimal(sched["balance_after"].iloc[-1], "EUR")
    assert last == Decimal("30.00")
    shown = display_frame(sched.tail(1), ["balance_after"])
    assert shown.iloc[0, 0] == "30.00 EUR"


def test_renewals_due_keeps_currencies_apart(account):
    vms, wallet = account
    due = billing.renewals_due(vms, wallet, now=NOW)
    table = {(r.within_days, r.currency): (r.renewals, r.amount) for r in due.itertuples()}
    # b states no currency: the wallet's EUR is the account currency.
    assert table == {
        (7, "EUR"): (1, 30.0),  # a on 11-05
        (7, "USD"): (1, 20.0),  # d on 11-03
        (30, "EUR"): (3, 120.0),  # a + b + c
        (30, "USD"): (1, 20.0),
        # 90 days to 01-30: a, b, c renew in Nov, Dec and Jan: 3 * (30 + 50 + 40)
        (90, "EUR"): (9, 360.0),
        (90, "USD"): (3, 60.0),
    }


def test_unknown_currency_is_its_own_group_when_nothing_names_the_account_currency(frame):
    vms = frame(
        "vms",
        [
            vm("a", 30, "EUR", "2026-11-05"),
            vm("b", 50, None, "2026-11-06"),
            vm("d", 20, "USD", "2026-11-07"),
        ],
    )
    wallet = frame("wallet", [{"id": "w", "balance_amount": 100.0}])
    due = billing.renewals_due(vms, wallet, now=NOW, windows=[30])
    got = {(None if pd.isna(r.currency) else r.currency): r.amount for r in due.itertuples()}
    assert got == {"EUR": 30.0, "USD": 20.0, None: 50.0}


def test_single_stated_currency_is_the_account_currency(frame):
    vms = frame("vms", [vm("a", 30, "EUR", "2026-11-05"), vm("b", 50, None, "2026-11-06")])
    wallet = frame("wallet", [{"id": "w", "balance_amount": 60.0}])
    assert billing.account_currency(vms, wallet) == "EUR"
    # The wallet (currency unstated, so EUR) pays a (60-30=30) and cannot pay b (50).
    got = billing.runway(vms, wallet, now=NOW).iloc[0]
    assert got["vm_id"] == "b"
    assert got["runway_at"] == pd.Timestamp("2026-11-06T00:00Z")


def test_low_balance_forecast(account):
    vms, wallet = account
    # After b on 11-10 the balance is 20; c (40) enters the 7-day window on 11-13.
    got = billing.low_balance_forecast(vms, wallet, now=NOW, window="7D").iloc[0]
    assert got["low_at"] == pd.Timestamp("2026-11-13T00:00Z")
    assert got["balance_then"] == 20
    assert got["needed"] == 40
    assert got["currency"] == "EUR"


def test_low_balance_now_when_the_window_needs_more_than_the_balance(account):
    vms, wallet = account
    # 30-day window at 11-01 needs a + b + c = 120 > 100.
    got = billing.low_balance_forecast(vms, wallet, now=NOW, window="30D").iloc[0]
    assert got["low_at"] == NOW
    assert got["needed"] == 120


def test_run_rate_by_plan_and_region_per_currency(account):
    vms, wallet = account
    by_plan = billing.run_rate(vms, wallet, by="plan_slug")
    got = {(r.plan_slug, r.currency): (r.vms, r.monthly_amount) for r in by_plan.itertuples()}
    assert got == {
        ("large", "EUR"): (1, 50.0),
        ("small", "EUR"): (2, 70.0),
        ("small", "USD"): (1, 20.0),
    }
    by_region = billing.run_rate(vms, wallet, by="region_slug")
    got = {(r.region_slug, r.currency): r.monthly_amount for r in by_region.itertuples()}
    assert got == {("ams", "EUR"): 40.0, ("fra", "EUR"): 80.0, ("nyc", "USD"): 20.0}
    with pytest.raises(ValueError, match="plan_slug"):
        billing.run_rate(vms, wallet, by="os_slug")


def test_overdue_lists_overdue_and_suspended(frame):
    vms = frame(
        "vms",
        [
            vm("ok", 10, "EUR", "2026-11-20"),
            vm("late", 10, "EUR", "2026-10-29", bill="overdue"),
            vm("susp", 10, "EUR", "2026-10-20", status="suspended", bill="suspended"),
        ],
    )
    got = billing.overdue(vms, now=NOW)
    assert list(got["vm_id"]) == ["susp", "late"]
    assert list(got["days_overdue"]) == [12, 3]


def test_owing_vms_do_not_renew_and_count_as_owed(frame):
    vms = frame(
        "vms",
        [
            vm("late", 10, "EUR", "2026-10-29", bill="overdue"),
            vm("susp", 7, "EUR", "2026-10-20", status="suspended", bill="suspended"),
            vm("ok", 20, "EUR", "2026-11-04"),
        ],
    )
    wallet = frame("wallet", [{"id": "w", "balance_amount": 25.0, "balance_currency": "EUR"}])
    got = billing.runway(vms, wallet, now=NOW, horizon="40D").iloc[0]
    # only "ok" renews: 25-20=5 on 11-04, then 5 < 20 on 12-04
    assert got["owed"] == 17
    assert got["runway_at"] == pd.Timestamp("2026-12-04T00:00Z")
    assert got["vm_id"] == "ok"
    assert list(billing.renewals(vms, wallet, now=NOW)["vm_id"]) == ["ok"]
    # owed 17 + ok 20 in the 7-day window = 37 > 25 already now
    low = billing.low_balance_forecast(vms, wallet, now=NOW).iloc[0]
    assert low["low_at"] == NOW
    assert low["needed"] == 37


def test_a_vm_that_fails_to_renew_stops_renewing(frame):
    vms = frame("vms", [vm("big", 80, "EUR", "2026-11-02"), vm("small", 10, "EUR", "2026-11-03")])
    wallet = frame("wallet", [{"id": "w", "balance_amount": 50.0, "balance_currency": "EUR"}])
    sched = billing.renewal_schedule(vms, wallet, now=NOW, horizon="40D")
    # big fails on 11-02 and owes 80 from then on; small pays on 11-03 and 12-03.
    assert sched[["vm_id", "paid", "balance_after", "owed_after"]].values.tolist() == [
        ["big", False, 50.0, 80.0],
        ["small", True, 40.0, 80.0],
        ["small", True, 30.0, 80.0],
    ]


def test_monthly_cycle_keeps_its_day_of_month(frame):
    vms = frame("vms", [vm("m", 1, "EUR", "2027-01-31")])
    wallet = frame("wallet", [{"id": "w", "balance_amount": 100.0, "balance_currency": "EUR"}])
    due = billing.renewals(vms, wallet, now="2027-01-01", within="100D")
    assert list(due["renewal_at"].dt.strftime("%Y-%m-%d")) == [
        "2027-01-31",
        "2027-02-28",
        "2027-03-31",
    ]


def test_balance_history_orders_snapshots():
    hist = pd.DataFrame(
        {
            "snapshot_id": ["s2", "s1"],
            "server_time": pd.to_datetime(["2026-11-02", "2026-11-01"], utc=True),
            "id": ["w", "w"],
            "balance_amount": pd.array([70.0, 100.0], dtype="Float64"),
            "balance_currency": pd.array(["EUR", "EUR"], dtype="string"),
        }
    )
    got = billing.balance_history(hist)
    assert list(got["balance"]) == [100.0, 70.0]


def test_plot_renewals_draws_one_bar_per_day_and_currency(account):
    vms, wallet = account
    due = billing.renewals(vms, wallet, now=NOW, within="30D")
    ax = billing.plot_renewals(due)
    heights = sorted(p.get_height() for p in ax.patches if p.get_height() > 0)
    assert heights == [20.0, 30.0, 40.0, 50.0]
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == ["EUR", "USD"]


def test_plot_balance_draws_history_projection_and_runway(account):
    vms, wallet = account
    hist = pd.DataFrame(
        {
            "server_time": pd.to_datetime(["2026-10-31", "2026-11-01"], utc=True),
            "balance": pd.array([120.0, 100.0], dtype="Float64"),
            "currency": pd.array(["EUR", "EUR"], dtype="string"),
        }
    )
    sched = billing.renewal_schedule(vms, wallet, now=NOW, horizon="30D")
    run = billing.runway(vms, wallet, now=NOW)
    ax = billing.plot_balance(hist, sched, run)
    lines = ax.get_lines()
    labels = [line.get_label() for line in lines]
    assert labels == ["balance", "projected", "runway 2026-11-20"]
    assert list(lines[0].get_ydata()) == [120.0, 100.0]
    assert list(lines[1].get_ydata()) == [70.0, 20.0, 20.0]
    assert ax.get_ylabel() == "balance (EUR)"


def test_export_csv_writes_iso_times(account):
    vms, wallet = account
    text = billing.export_csv(billing.renewals(vms, wallet, now=NOW, within="7D"))
    back = pd.read_csv(io.StringIO(text))
    assert list(back["vm_id"]) == ["d", "a"]
    assert list(back["renewal_at"]) == ["2026-11-03T00:00:00+00:00", "2026-11-05T00:00:00+00:00"]
    assert list(back["currency"]) == ["USD", "EUR"]


def test_unstated_price_is_the_plans_when_its_vms_agree(frame):
    vms = frame(
        "vms",
        [
            vm("p1", 10, "EUR", "2026-11-02", plan="s"),
            vm("p2", 10, None, "2026-11-03", plan="s"),
            vm("x", None, None, "2026-11-04", plan="s"),
            vm("y", None, None, "2026-11-05", plan="big"),  # no VM of its plan states a price
            vm("m1", 5, "EUR", "2026-11-06", plan="m"),
            vm("m2", 6, "EUR", "2026-11-07", plan="m"),
            vm("z", None, None, "2026-11-08", plan="m"),  # its plan's VMs disagree
        ],
    )
    wallet = frame("wallet", [{"id": "w", "balance_amount": 100.0, "balance_currency": "EUR"}])
    due = billing.renewals(vms, wallet, now=NOW, within="7D").set_index("vm_id")
    assert due.loc["x", "amount"] == 10
    assert due.loc["x", "price_source"] == "plan"
    assert due.loc["p2", "price_source"] == "stated"
    assert pd.isna(due.loc["y", "amount"]) and pd.isna(due.loc["y", "price_source"])
    assert pd.isna(due.loc["z", "amount"])
    totals = billing.renewals_due(vms, wallet, now=NOW, windows=[7]).iloc[0]
    assert (totals["amount"], totals["renewals"], totals["unpriced"]) == (41.0, 7, 2)


def test_runway_lists_every_vm_unpaid_at_that_instant_and_counts_unscheduled(frame):
    vms = frame(
        "vms",
        [
            vm("b", 40, "EUR", "2026-11-10"),
            vm("a", 30, "EUR", "2026-11-10"),
            vm("new", 99, "EUR", None, status="provisioning"),  # no renewal date yet
        ],
    )
    wallet = frame("wallet", [{"id": "w", "balance_amount": 20.0, "balance_currency": "EUR"}])
    got = billing.runway(vms, wallet, now=NOW).iloc[0]
    assert got["runway_at"] == pd.Timestamp("2026-11-10T00:00Z")
    assert got["vm_id"] == "a"  # same instant: VM id order
    assert got["unpaid_then"] == ["a", "b"]
    assert got["unscheduled"] == 1
    assert billing.low_balance_forecast(vms, wallet, now=NOW).iloc[0]["unscheduled"] == 1


def test_balance_history_keeps_the_latest_snapshot_of_a_server_time():
    # s2 and s3 share a server time (a frozen sandbox clock); s3 was taken after a top-up.
    hist = pd.DataFrame(
        {
            "snapshot_id": ["s3", "s1", "s2"],
            "server_time": pd.to_datetime(["2026-11-02", "2026-11-01", "2026-11-02"], utc=True),
            "id": ["w", "w", "w"],
            "balance_amount": pd.array([90.0, 100.0, 70.0], dtype="Float64"),
            "balance_currency": pd.array(["EUR", "EUR", "EUR"], dtype="string"),
        }
    )
    got = billing.balance_history(hist)
    assert list(got["balance"]) == [100.0, 90.0]
    assert got["server_time"].is_unique


def test_billing_time_axes_use_concise_dates(account):
    vms, wallet = account
    hist = pd.DataFrame(
        {
            "server_time": pd.to_datetime(["2026-10-31", "2026-11-01"], utc=True),
            "balance": pd.array([120.0, 100.0], dtype="Float64"),
            "currency": pd.array(["EUR", "EUR"], dtype="string"),
        }
    )
    sched = billing.renewal_schedule(vms, wallet, now=NOW, horizon="30D")
    due = billing.renewals(vms, wallet, now=NOW, within="30D")
    for ax in (billing.plot_balance(hist, sched), billing.plot_renewals(due)):
        assert isinstance(ax.xaxis.get_major_formatter(), mdates.ConciseDateFormatter)
        assert isinstance(ax.xaxis.get_major_locator(), mdates.AutoDateLocator)
        ax.figure.canvas.draw()
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert labels and all(len(label) <= 6 for label in labels), labels


def _api_vm(k: int, renews: str) -> dict:
    price = {"amount": "40.00", "currency": "EUR"}
    return {
        "id": f"vm-{k}",
        "name": f"web-{k}",
        "status": "running",
        "plan": {"slug": "small", "name": "Small", "priceMonthly": price},
        "region": {"slug": "fra", "name": "Frankfurt"},
        "billing": {"status": "active", "nextRenewalAt": renews, "priceMonthly": price},
    }


def test_unreadable_renewal_dates_make_runway_and_renewals_unknown_on_every_surface(
    tmp_path, capsys
):
    import json

    from svcnb import frames
    from svcnb.cli import main
    from svcnb.store import Store

    # three VMs of 40 EUR renewing on 11-02..11-04 against 100 EUR: the third goes unpaid. The
    # service writes the dates without a zone: unreadable, so nothing can be walked
    records = [_api_vm(k, f"2026-11-0{k + 1}T00:00:00") for k in (1, 2, 3)]
    with pytest.warns(frames.UnreadableValueWarning):
        vms = frames.vms(records)
    assert vms["next_renewal_at"].isna().all()
    wallet = frames.wallet([{"id": "w", "balance": {"amount": "100.00", "currency": "EUR"}}])
    store = Store(tmp_path / "store")
    store.write({"vms": vms, "wallet": wallet}, server_time=NOW, partial=True)

    view = billing.view(store)
    # never "none within 365 days", never "0.00 EUR (0 renewals)"
    assert view.figures["runway_at"].text() == "unknown"
    assert view.figures["low_balance_at"].text() == "unknown"
    for days in (7, 30, 90):
        assert view.figures[f"renewals_{days}d"].text() == "unknown"
    assert view.complete is False

    def cli(*extra: str) -> str:
        assert main(["report", "billing", "--store", str(store.path), *extra]) == 0
        return capsys.readouterr().out

    runway = json.loads(cli("--table", "runway", "--format", "json"))[0]
    assert runway["unscheduled"] == 3 and runway["complete"] is False
    assert "no readable renewal date" in runway["reason"]
    figures = {r["figure"]: r for r in json.loads(cli("--table", "figures", "--format", "json"))}
    assert figures["runway_at"]["value"] is None and figures["runway_at"]["complete"] is False
    assert figures["runway_at"]["text"] == "unknown"
    assert "no readable renewal date" in figures["runway_at"]["reason"]
    assert figures["renewals_30d"]["complete"] is False
    assert figures["balance"]["complete"] is True
    csv = pd.read_csv(io.StringIO(cli("--table", "figures", "--format", "csv")))
    assert csv.set_index("figure").loc["runway_at", "complete"] == False  # noqa: E712
    text = cli("--table", "figures")
    assert "Complete: no" in text and "Runway: first renewal the wallet cannot pay" in text
    assert "none within" not in text
    # the state `svcnb snapshot` printed of this snapshot: the dates it could not read
    assert "values svcnb could not read (kept as NA): next_renewal_at 3" in text
    cells = view.figures_html()
    assert "data-complete='false' data-figure='runway_at'>unknown<" in cells


def test_a_whole_walk_says_complete_and_none_within_the_horizon(tmp_path):
    from svcnb import frames
    from svcnb.store import Store

    records = [_api_vm(1, "2026-11-02T00:00:00Z")]
    wallet = frames.wallet([{"id": "w", "balance": {"amount": "10000.00", "currency": "EUR"}}])
    store = Store(tmp_path / "store")
    store.write({"vms": frames.vms(records), "wallet": wallet}, server_time=NOW, partial=True)
    view = billing.view(store)
    assert view.figures["runway_at"].text() == "none within 365 days"
    assert view.figures["runway_at"].is_complete and view.complete
    assert view.figures_frame()["complete"].all()


def test_the_balance_plot_says_by_when_the_runway_left_vms_out(account):
    vms, wallet = account
    # a VM whose status word svcnb does not know is left out of the walk: it may debit sooner
    odd = vms.iloc[[0]].assign(id="vm-odd", name="odd", status="hibernating")
    both = pd.concat([vms, odd], ignore_index=True)
    run = billing.runway(both, wallet, now=NOW)
    assert not run["complete"].iloc[0]
    sched = billing.renewal_schedule(both, wallet, now=NOW, horizon="30D")
    ax = billing.plot_balance(pd.DataFrame(columns=["server_time", "balance"]), sched, run)
    assert [line.get_label() for line in ax.get_lines()] == [
        "projected, at most",
        "runway by 2026-11-20",
    ]


def test_owed_is_a_bound_while_vms_of_an_unknown_word_are_left_out(account):
    vms, wallet = account
    odd = vms.iloc[[0]].assign(id="vm-odd", name="odd", status="hibernating")
    run = billing.runway(pd.concat([vms, odd], ignore_index=True), wallet, now=NOW)
    assert run["owed_bound"].iloc[0] == ("at least" if run["owed"].iloc[0] else "unknown")
    shown = display_frame(run, ["owed"]).iloc[0, 0]
    assert shown == "unknown" or shown.startswith("≥ ") and shown.endswith(" EUR")
    assert billing.runway(vms, wallet, now=NOW)["owed_bound"].iloc[0] == "exact"


def test_counts_in_figures_and_reasons_read_with_thousands_separators(tmp_path):
    # as every other count a panel shows ("1,509 VM(s) left out", grids "of 10,000 entries"):
    # a fleet's "(2106 renewals)" beside "at least 1,509" read as two kinds of number
    from svcnb import frames
    from svcnb.store import Store

    records = [_api_vm(k, "2026-11-02T00:00:00Z") for k in range(1200)]
    records += [
        {**_api_vm(k, "2026-11-02T00:00:00Z"), "status": "hibernating"} for k in range(1200, 2400)
    ]
    wallet = frames.wallet([{"id": "w", "balance": {"amount": "100.00", "currency": "EUR"}}])
    store = Store(tmp_path / "store")
    store.write({"vms": frames.vms(records), "wallet": wallet}, server_time=NOW, partial=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the status word nobody mapped is said once, elsewhere
        view = billing.view(store)
    due = view.figures["renewals_7d"]
    assert due.text() == "at least 48,000.00 EUR (1,200 renewals)"
    assert "1,200 VM(s) of unknown status" in due.reason
