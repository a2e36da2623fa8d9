"""What-if money on small hand-built accounts (every number below is worked out by hand), and
against the sandbox: the top-up it computes really covers the horizon (a cent less does not),
the suspensions it forecasts are the ones the sandbox makes, on every named dialect."""

from __future__ import annotations

import io
import warnings
from decimal import Decimal

import httpx
import pandas as pd
import pytest
from _tiers import dialects

from svcnb import frames, vocab
from svcnb.client import Client
from svcnb.reports import billing, whatif
from svcnb.sandbox import serve


@pytest.fixture(autouse=True)
def _suspended_pinned():
    """This fleet's "suspended" is a hold for non-payment (the sandbox's word), pinned as its
    user would: providers differ on the word, so it is no built-in one."""
    vocab.extend(vm_status={"suspended": "suspended"})


NOW = pd.Timestamp("2026-11-01T00:00:00Z")
D = Decimal


def vm(vm_id, price, renews, currency="EUR", status="running", bill="active", plan=None):
    return {
        "id": vm_id,
        "name": f"vm-{vm_id}",
        "status": status,
        "plan_slug": plan or f"plan-{vm_id}",
        "region_slug": "fra",
        "billing_status": bill,
        "next_renewal_at": pd.Timestamp(renews, tz="UTC") if renews else None,
        "price_monthly_amount": price,
        "price_monthly_currency": currency,
    }


@pytest.fixture
def wallet(frame):
    def make(balance=100.0, currency="EUR"):
        return frame(
            "wallet", [{"id": "w", "balance_amount": balance, "balance_currency": currency}]
        )

    return make


@pytest.fixture
def three(frame):
    """a 30 EUR on 11-05, b 50 EUR on 11-10, c 40 EUR on 11-20, all paid and running."""
    return frame(
        "vms",
        [vm("a", 30, "2026-11-05"), vm("b", 50, "2026-11-10"), vm("c", 40, "2026-11-20")],
    )


@pytest.fixture
def owing(frame):
    """The three, plus o (12.50, overdue since its renewal on 10-30), s (20, suspended for
    non-payment) and p (7.25, overdue, renewal date still ahead on 11-15: since when not shown)."""
    return frame(
        "vms",
        [
            vm("a", 30, "2026-11-05"),
            vm("b", 50, "2026-11-10"),
            vm("c", 40, "2026-11-20"),
            vm("o", 12.5, "2026-10-30", bill="overdue"),
            vm("s", 20, "2026-10-01", status="suspended", bill="suspended"),
            vm("p", 7.25, "2026-11-15", bill="overdue"),
        ],
    )


def test_topup_is_owed_plus_renewals_due_minus_balance(three, wallet):
    # 30 days (to 12-01): a 30 + b 50 + c 40 = 120 due; 120 - 100 = 20 to top up.
    # 60 days (to 12-31): twice each = 240; 240 - 100 = 140.
    # 90 days (to 01-30): a, b, c on 01-05, 01-10, 01-20 too = 360; 260.
    got = whatif.topup_needed(three, wallet(), now=NOW)
    assert list(got["horizon_days"]) == [30, 60, 90]
    assert list(got["renewals"]) == [3, 6, 9]
    assert list(got["due"]) == [D("120.00"), D("240.00"), D("360.00")]
    assert list(got["topup"]) == [D("20.00"), D("140.00"), D("260.00")]
    assert all(isinstance(v, Decimal) for v in got["topup"])
    assert list(got["covered"]) == [False, False, False]
    assert got["complete"].all()
    assert (got["currency"] == "EUR").all()


def test_topup_is_zero_when_the_balance_covers_the_horizon(three, wallet):
    got = whatif.topup_needed(three, wallet(250.0), now=NOW)
    # 30 days need 120 (covered), 60 days 240 (covered with 10 to spare), 90 days 360: 110.
    assert list(got["topup"]) == [D("0"), D("0"), D("110.00")]
    assert list(got["covered"]) == [True, True, False]


def test_topup_pays_debts_first_and_the_vms_it_pays_renew_again(owing, wallet):
    # owed: o 12.50 + s 20 + p 7.25 = 39.75 (a top-up pays them first).
    # Then, within 30 days (to 12-01): a 30, b 50, c 40; o renews a cycle after its missed
    # renewal (11-30) 12.50; s gets a fresh cycle at the payment (12-01) 20; p at its date
    # (11-15) 7.25. due = 159.75; needed = 199.50; top-up = 99.50.
    # 60 days (to 12-31) add a 12-05, b 12-10, p 12-15, c 12-20, o 12-30 (s 01-01 is out):
    # 30 + 50 + 7.25 + 40 + 12.50 = 139.75; due = 299.50; needed = 339.25; top-up 239.25.
    got = whatif.topup_needed(owing, wallet(), now=NOW, horizons=(30, 60))
    assert list(got["owed"]) == [D("39.75"), D("39.75")]
    assert list(got["renewals"]) == [6, 11]
    assert list(got["due"]) == [D("159.75"), D("299.50")]
    assert list(got["topup"]) == [D("99.50"), D("239.25")]
    assert got["complete"].all()


def test_money_stays_exact(frame, wallet):
    # 0.10 + 0.20 as floats is 0.30000000000000004; the top-up must be exactly 0.30 - 0.05.
    vms = frame("vms", [vm("x", 0.1, "2026-11-02"), vm("y", 0.2, "2026-11-03")])
    got = whatif.topup_needed(vms, wallet(0.05), now=NOW, horizons=(7,))
    assert got["topup"].iloc[0] == D("0.25")
    assert str(got["topup"].iloc[0]) == "0.25"


def test_suspensions_if_nobody_tops_up(owing, wallet):
    # Walk from 100: a 11-05 paid (70), b 11-10 paid (20), c 11-20 unpaid -> suspended 11-23;
    # a 12-05 unpaid (20 < 30) -> 12-08; b 12-10 unpaid -> 12-13. o owes since 10-30 -> 11-02;
    # p owes since a date not shown -> by 11-04 (now + 3 days) at the latest; s is already.
    got = whatif.suspensions(owing, wallet(), now=NOW, horizon="60D", grace="3D")
    assert list(got["vm_id"]) == ["o", "p", "c", "a", "b"]
    assert list(got["suspended_by"].dt.strftime("%m-%d")) == [
        "11-02",
        "11-04",
        "11-23",
        "12-08",
        "12-13",
    ]
    p = got.set_index("vm_id").loc["p"]
    assert pd.isna(p["suspended_at"]) and pd.isna(p["failed_at"])
    assert p["basis"] == "owes now, since when not shown"
    c = got.set_index("vm_id").loc["c"]
    assert c["failed_at"] == pd.Timestamp("2026-11-20T00:00Z")
    assert c["amount"] == D("40.00") and c["balance_then"] == D("20.00")
    assert list(got["days_until"]) == [1, 3, 22, 37, 42]
    assert got.attrs["already_suspended"] == 1
    assert got.attrs["complete"] is True


def test_what_if_terminate_by_hand(three, wallet):
    # Without b: 30 days need a 30 + c 40 = 70 <= 100: no top-up (was 20, saved 20).
    # 60 days: 140 -> top-up 40 (was 140, saved 100). Suspensions within 60 days: before c
    # (11-23), a (12-08), b (12-13) = 3; after: a 11-05 (70), c 11-20 (30), a 12-05 (0),
    # c 12-20 unpaid -> 12-23 = 1. Runway 11-20 before, 12-20 after.
    got = whatif.what_if_stop(
        three, wallet(), ["b"], now=NOW, how="terminate", horizons=(30, 60), grace="3D"
    )
    assert list(got["topup_before"]) == [D("20.00"), D("140.00")]
    assert list(got["topup_after"]) == [D("0"), D("40.00")]
    assert list(got["topup_saved"]) == [D("20.00"), D("100.00")]
    assert list(got["due_saved"]) == [D("50.00"), D("100.00")]
    assert list(got["suspended_before"]) == [1, 3]
    assert list(got["suspended_after"]) == [0, 1]
    assert got["runway_before"].iloc[0] == pd.Timestamp("2026-11-20T00:00Z")
    assert got["runway_after"].iloc[0] == pd.Timestamp("2026-12-20T00:00Z")
    assert list(got["vms_changed"]) == [1, 1] and got["complete"].all()


def test_what_if_stop_saves_nothing_because_stopped_vms_renew(three, wallet):
    got = whatif.what_if_stop(three, wallet(), ["b", "c"], now=NOW, how="stop")
    assert list(got["vms_changed"]) == [2, 2, 2]
    assert (got["topup_saved"] == 0).all() and (got["due_saved"] == 0).all()
    assert list(got["topup_after"]) == list(got["topup_before"])
    # the changed frame really has b and c stopped
    changed = whatif.scenario(three, ["b", "c"], how="stop")
    assert list(changed["status"]) == ["running", "stopped", "stopped"]


def test_unknown_ids_are_counted_and_make_it_incomplete(three, wallet):
    got = whatif.what_if_stop(three, wallet(), ["b", "nope"], now=NOW, how="terminate")
    assert list(got["not_found"]) == [1, 1, 1]
    assert not got["complete"].any()
    assert got.attrs["not_found"] == ["nope"]
    with pytest.raises(ValueError, match="how='delete'"):
        whatif.what_if_stop(three, wallet(), ["b"], now=NOW, how="delete")


def test_incomplete_inputs_are_counted_never_zero(frame, wallet):
    vms = frame(
        "vms",
        [
            vm("a", 30, "2026-11-05"),
            vm("u", None, "2026-11-06", currency=None),  # no price, nobody on its plan states one
            vm("d", 20, "2026-11-07", currency="USD"),  # never converted
            vm("n", 10, None),  # running, no renewal date yet
            vm("w", 10, "2026-11-08", status="hibernating"),  # a word nobody mapped
        ],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = whatif.topup_needed(vms, wallet(10.0), now=NOW, horizons=(30,))
        sus = whatif.suspensions(vms, wallet(10.0), now=NOW, horizon="30D")
    row = got.iloc[0]
    assert row["due"] == D("30.00")  # only a's renewal is known and payable from EUR
    assert row["topup"] == D("20.00")  # at least: complete is False
    assert (row["unpriced"], row["other_currency"], row["unscheduled"]) == (1, 1, 1)
    assert row["unknown_status"] == 1 and not row["complete"]
    assert sus.attrs["not_debitable"] == 2 and sus.attrs["complete"] is False
    assert list(sus["vm_id"]) == ["a"]


def test_plots_label_money_and_keep_the_legend_outside(three, wallet):
    top = whatif.topup_needed(three, wallet(), now=NOW)
    ax = whatif.plot_topup(top)
    assert ax.get_ylabel() == "amount (EUR)"
    assert ax.yaxis.get_major_formatter()(1234.0, 0) == "1,234"
    ax.figure.canvas.draw()
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1
    assert [t.get_text() for t in ax.texts] == ["top up\n20.00 EUR", "top up\n140.00 EUR",
                                                "top up\n260.00 EUR"]  # fmt: skip
    sus = whatif.suspensions(three, wallet(), now=NOW)
    ax = whatif.plot_suspensions(sus)
    rows = dict(zip(ax.get_yticks(), [t.get_text() for t in ax.get_yticklabels()], strict=True))
    assert rows[max(rows)] == "vm-c"  # the first suspended is on top, by name
    ax = whatif.plot_what_if(whatif.what_if_stop(three, wallet(), ["b"], now=NOW, how="terminate"))
    assert ax.get_ylabel() == "top-up (EUR)"


def test_the_suspensions_title_stays_inside_its_plot_when_dates_are_unknown_and_vms_many():
    # the panel's plot, 7 x 4.5 in: said on one line, the title ran past both sides of the plot
    # and the count of VMs left out was cut ("the first 20, and 75")
    import matplotlib.pyplot as plt

    failed = pd.Timestamp("2026-12-01", tz="UTC") + pd.to_timedelta(range(752), unit="h")
    sus = pd.DataFrame(
        {
            "name": [f"web-{i:03d}" for i in range(752)],
            "vm_id": [f"vm-{i}" for i in range(752)],
            "failed_at": failed,
            "suspended_at": pd.Series(pd.NaT, index=range(752), dtype="datetime64[ns, UTC]"),
            "suspended_by": pd.Series(pd.NaT, index=range(752), dtype="datetime64[ns, UTC]"),
        }
    )
    figure, ax = plt.subplots(figsize=(7.0, 4.5))
    whatif.plot_suspensions(sus, ax=ax)
    figure.tight_layout()
    figure.canvas.draw()
    title = ax.title.get_window_extent()
    assert title.x0 >= 0 and title.x1 <= figure.bbox.x1
    assert "billing.grace not pinned" in ax.get_title()
    assert "the first 20, and 732 more in the table" in ax.get_title()
    # no VM has a known suspension date: the legend does not offer one
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["renewal unpaid"]
    plt.close(figure)


def test_top_up_labels_of_seven_figures_stay_apart_and_inside_the_plot():
    # the panel's plot, 7 x 3.2 in, at 10,000 VMs: on one line, "top up 1,673,715.49 EUR (at
    # least)" ran into the next bar's label and the legend
    from decimal import Decimal

    import matplotlib.pyplot as plt

    top = pd.DataFrame(
        {
            "horizon_days": [30, 60, 90],
            "balance": [Decimal("288051.92")] * 3,
            "owed": [Decimal("0")] * 3,
            "due": [Decimal("653922.47"), Decimal("1285744.10"), Decimal("1961767.41")],
            "topup": [Decimal("365870.55"), Decimal("997692.18"), Decimal("1673715.49")],
            "currency": ["EUR"] * 3,
            "complete": [False] * 3,
        }
    )
    figure, ax = plt.subplots(figsize=(7.0, 3.2))
    whatif.plot_topup(top, ax=ax)
    figure.tight_layout()
    figure.canvas.draw()
    boxes = [t.get_window_extent() for t in ax.texts]
    frame = ax.get_window_extent()
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and b.y1 <= frame.y1 for b in boxes)
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    assert ax.texts[2].get_text() == "top up\n1,673,715.49 EUR\n(at least)"
    plt.close(figure)


def test_a_plot_drawn_in_a_subfigure_grows_the_figure_that_holds_it(three, wallet):
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(8, 1))
    left, _ = figure.subfigures(1, 2)
    ax = left.subplots()
    sus = whatif.suspensions(three, wallet(), now=NOW)
    assert whatif.plot_suspensions(sus, ax=ax) is ax
    assert figure.get_size_inches()[1] > 1  # tall enough for its rows, as on a plain figure
    plt.close(figure)


# -- against the sandbox ---------------------------------------------------------------------
def _frames(client: Client) -> tuple[pd.DataFrame, pd.DataFrame, pd.Timestamp]:
    vms = frames.vms(client.vms.all(details=True, progress=False))
    wallet = frames.wallet(client.wallet.get())
    return vms, wallet, pd.Timestamp(client.server_time)


def _figures(vms, wallet, now, pins) -> dict:
    top = whatif.topup_needed(vms, wallet, now=now)
    sus = whatif.suspensions(vms, wallet, now=now, pins=pins)
    ids = list(vms.sort_values("id")["id"].head(4))
    wif = whatif.what_if_stop(vms, wallet, ids, now=now, how="terminate", pins=pins)
    return {
        "topup": top.drop(columns="currency"),
        "suspensions": sus.drop(columns=["status", "billing_status", "currency"]),
        "what_if": wif.drop(columns="currency"),
        "complete": (bool(top["complete"].all()), sus.attrs["complete"]),
    }


@pytest.mark.parametrize("dialect", dialects(["default", "acme", "linkhdr", "cursor"]))
def test_every_dialect_gives_the_same_figures(dialect):
    with (
        serve(vms=30, seed=7, dialect=dialect, rate_limit=100_000) as sb,
        Client(
            api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False, pins=sb.pins
        ) as client,
    ):
        sb.control.advance(600)  # every VM provisioned (60 to 600 s): each has a renewal date
        vms, wallet, now = _frames(client)
        data = httpx.get(f"{sb.control_url}/truth").json()["data"]
    truth = (frames.vms(data["vms"]), frames.wallet(data["wallet"]), now)
    got, want = _figures(vms, wallet, now, client.pins), _figures(*truth, client.pins)
    assert got["complete"] == want["complete"] == (True, True)
    for name in ("topup", "suspensions", "what_if"):
        pd.testing.assert_frame_equal(got[name], want[name], obj=f"{dialect}: {name}")
    assert got["topup"]["topup"].iloc[-1] > 0  # something to check: the wallet does not last


def test_the_sandbox_agrees_a_cent_less_is_not_enough_and_suspends_as_forecast():
    with (
        serve(vms=30, seed=7, rate_limit=100_000) as sb,
        Client(
            api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False, pins=sb.pins
        ) as client,
    ):
        sb.control.advance(600)
        vms, wallet, now = _frames(client)
        top = whatif.topup_needed(vms, wallet, now=now, horizons=(60,)).iloc[0]
        sus = whatif.suspensions(vms, wallet, now=now, horizon="60D", pins=client.pins)
        assert top["complete"] and sus.attrs["complete"] and top["topup"] > 0
        end = top["horizon_end"]

        def unpaid_within(topup: Decimal) -> list[str]:
            sb.control.reset(seed=7, vms=30)
            sb.control.advance(600)
            if topup:
                sb.control.topup(str(topup))
            sb.control.advance((end - now).total_seconds())
            after = frames.vms(client.vms.all(details=True, progress=False))
            owing = billing.overdue(after, now=end)
            return sorted(owing["vm_id"])

        assert unpaid_within(top["topup"]) == []
        assert unpaid_within(top["topup"] - D("0.01")) != []

        # nobody tops up: every vm.suspended of the 60 days is forecast, at the forecast time
        # (or before the latest time, where the data does not show since when a VM owes)
        sb.control.reset(seed=7, vms=30)
        sb.control.advance(600)
        sb.control.advance((end - now).total_seconds())
        events = [e for e in sb.control.events() if e["type"] == "vm.suspended"]
    # (the seeded history holds older vm.suspended events: only those after now count)
    seen = {
        e["data"]["vm"]["id"]: pd.Timestamp(e["createdAt"])
        for e in events
        if pd.Timestamp(e["createdAt"]) > now
    }
    assert len(seen) >= 5  # the forecast has something to be right about
    due = sus[sus["suspended_by"] <= end].set_index("vm_id")
    assert sorted(seen) == sorted(due.index)
    for vm_id, when in seen.items():
        row = due.loc[vm_id]
        if pd.isna(row["suspended_at"]):
            assert when <= row["suspended_by"]
        else:
            assert when == row["suspended_at"], vm_id


# -- svcnb report whatif ---------------------------------------------------------------------
def test_cli_text_csv_and_json_give_the_reports_figures(played, capsys):
    import json

    from svcnb.cli import main

    store, seen = played
    last = seen[-1]
    want = whatif.topup_needed(last["vms"], last["wallet"], now=last["now"])
    path = str(store.path)
    assert main(["report", "whatif", "--store", path]) == 0
    text = capsys.readouterr().out
    assert "Top-up needed" in text and "Suspended within 90 days if nobody tops up" in text
    assert main(["report", "whatif", "--store", path, "--format", "csv"]) == 0
    back = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype={"topup": str})
    assert back["topup"].map(Decimal).tolist() == want["topup"].tolist()
    assert main(["report", "whatif", "--store", path, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["horizon_days"] for r in rows] == [30, 60, 90]
    assert [Decimal(str(r["due"])) for r in rows] == want["due"].tolist()

    ids = sorted(last["vms"]["id"])[:2]
    args = ["report", "whatif", "--store", path, "--terminate", ",".join(ids)]
    assert main([*args, "--table", "what_if", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    wif = whatif.what_if_stop(last["vms"], last["wallet"], ids, now=last["now"], how="terminate")
    assert [Decimal(str(r["topup_saved"])) for r in rows] == wif["topup_saved"].tolist()


def test_cli_refuses_an_unknown_vm_and_bad_horizons(played, capsys):
    from svcnb.cli import main

    store, _seen = played
    path = str(store.path)
    assert main(["report", "whatif", "--store", path, "--stop", "vm_nope"]) == 2
    assert "no VM vm_nope in the snapshot" in capsys.readouterr().err
    assert main(["report", "whatif", "--store", path, "--horizons", "30,x"]) == 2
    assert "--horizons '30,x'" in capsys.readouterr().err
