"""Bandwidth report on a hand-built fleet and its four daily snapshots."""

from __future__ import annotations

import matplotlib.dates as mdates
import pandas as pd
import pytest

from svcnb.reports import bandwidth, display_frame

NOW = pd.Timestamp("2026-11-11T00:00Z")
DAYS = ["2026-11-08", "2026-11-09", "2026-11-10", "2026-11-11"]
GIB = bandwidth.GIB


@pytest.fixture
def fleet(frame):
    """Pack 1000 bytes each. a grows 100/day; b 10/day and renewed on 11-10 (usage restarted);
    c stopped and already over; d has no pack."""
    vms = frame(
        "vms",
        [
            vmrow("a", "running", 400, 1000, "2026-11-21"),
            vmrow("b", "running", 15, 1000, "2026-12-10"),
            vmrow("c", "stopped", 1200, 1000, "2026-11-30"),
            vmrow("d", "running", 70, None, "2026-11-30"),
            vmrow("e", "terminated", 999, 1000, None),
        ],
    )
    used = {"a": [100, 200, 300, 400], "b": [50, 60, 5, 15], "c": [1200] * 4, "d": [40, 50, 60, 70]}
    hist = pd.DataFrame(
        [
            {
                "snapshot_id": f"s{i}",
                "server_time": pd.Timestamp(day, tz="UTC"),
                "id": vm_id,
                "bandwidth_used_bytes": series[i],
                "bandwidth_pack_bytes": None if vm_id == "d" else 1000,
            }
            for vm_id, series in used.items()
            for i, day in enumerate(DAYS)
        ]
    ).astype({"bandwidth_used_bytes": "Int64", "bandwidth_pack_bytes": "Int64"})
    return vms, hist


def vmrow(vm_id, status, used, pack, renews):
    return {
        "id": vm_id,
        "name": f"vm-{vm_id}",
        "status": status,
        "plan_slug": "small",
        "next_renewal_at": pd.Timestamp(renews, tz="UTC") if renews else None,
        "bandwidth_used_bytes": used,
        "bandwidth_pack_bytes": pack,
    }


def test_usage_share_per_vm(fleet):
    vms, _ = fleet
    got = bandwidth.usage(vms)
    assert got["vm_id"].tolist() == ["c", "a", "b", "d"]  # terminated e left out
    assert got["share"].tolist()[:3] == [1.2, 0.4, 0.015]
    assert pd.isna(got["share"].iloc[3])


def test_growth_skips_the_pair_across_a_renewal(fleet):
    _, hist = fleet
    rates = bandwidth.growth(hist, now=NOW).set_index("vm_id")["rate_bytes_per_day"]
    assert rates["a"] == 100
    assert rates["b"] == 10  # +10, (renewal: unknown), +10 over two days
    assert rates["c"] == 0


def test_projected_overage_date(fleet):
    vms, hist = fleet
    got = bandwidth.projection(vms, hist, now=NOW).set_index("vm_id")
    # a: 400 + 100/day * 10 days to 11-21 = 1400 > 1000; 600 bytes left at 100/day: 6 days
    assert got.loc["a", "projected_bytes"] == 1400
    assert got.loc["a", "exceeds_at"] == pd.Timestamp("2026-11-17T00:00Z")
    assert got.loc["a", "outlook"] == "will exceed"
    # b: 15 + 10 * 29 days = 305
    assert got.loc["b", "projected_bytes"] == 305
    assert got.loc["b", "outlook"] == "within pack"
    assert not got.loc["b", "exceeds"]
    # c is stopped: it stays where it is, already over
    assert got.loc["c", "projected_bytes"] == 1200
    assert got.loc["c", "outlook"] == "over"
    assert got.loc["d", "outlook"] == "unknown"
    names = bandwidth.exceeding(vms, hist, now=NOW)["vm_id"].tolist()
    assert names == ["a", "c"]


def test_short_lookback_uses_recent_pairs_only():
    hist = pd.DataFrame(
        {
            "server_time": pd.to_datetime(DAYS, utc=True),
            "id": "a",
            "bandwidth_used_bytes": pd.array([0, 10, 100, 400], dtype="Int64"),
            "bandwidth_pack_bytes": pd.array([1000] * 4, dtype="Int64"),
        }
    )
    assert bandwidth.growth(hist, now=NOW, lookback="1D")["rate_bytes_per_day"].iloc[0] == 300
    assert bandwidth.growth(hist, now=NOW, lookback="7D")["rate_bytes_per_day"].iloc[0] == 400 / 3


def test_top_consumers_and_fleet_total(fleet):
    vms, hist = fleet
    assert bandwidth.top_consumers(vms, n=2)["vm_id"].tolist() == ["c", "a"]
    total = bandwidth.fleet_total(hist)
    assert total["used_bytes"].tolist() == [1390, 1510, 1565, 1685]
    assert total["pack_bytes"].tolist() == [3000] * 4
    assert total["vms"].tolist() == [4] * 4


def test_plot_usage_draws_pack_and_used_bars(fleet):
    vms, hist = fleet
    proj = bandwidth.projection(vms, hist, now=NOW)
    ax = bandwidth.plot_usage(proj)
    widths = [p.get_width() * GIB for p in ax.patches]
    n = len(proj)
    assert widths[:n] == [1000, 1000, 1000, 0]  # packs: a, c, b, d (order of the frame)
    assert widths[n:] == [400, 1200, 15, 70]  # used
    assert [t.get_text() for t in ax.get_yticklabels()] == ["vm-a", "vm-c", "vm-b", "vm-d"]
    marker = ax.get_lines()[0]
    assert marker.get_xdata()[0] * GIB == 1400


def test_plot_top_draws_one_line_per_vm(fleet):
    vms, hist = fleet
    over_time = bandwidth.usage_over_time(vms, hist, n=2)
    ax = bandwidth.plot_top(over_time)
    lines = {line.get_label(): [y * GIB for y in line.get_ydata()] for line in ax.get_lines()}
    assert lines == {"vm-a": [100, 200, 300, 400], "vm-c": [1200] * 4}


def test_plot_fleet_total(fleet):
    _, hist = fleet
    ax = bandwidth.plot_fleet_total(bandwidth.fleet_total(hist))
    used, pack = ax.get_lines()
    assert [round(y * GIB) for y in used.get_ydata()] == [1390, 1510, 1565, 1685]
    # d states no pack, so the fleet's pack is a bound and the legend says so
    assert (used.get_label(), pack.get_label()) == ("used", "total pack (at least)")


def _retaken(hist, day, vm_used, snapshot_id):
    """A second snapshot at the server time ``day``: VMs ``vm_used`` (id -> bytes) only."""
    return pd.concat(
        [
            hist,
            pd.DataFrame(
                {
                    "snapshot_id": snapshot_id,
                    "server_time": pd.Timestamp(day, tz="UTC"),
                    "id": list(vm_used),
                    "bandwidth_used_bytes": pd.array(list(vm_used.values()), dtype="Int64"),
                    "bandwidth_pack_bytes": pd.array([1000] * len(vm_used), dtype="Int64"),
                }
            ),
        ],
        ignore_index=True,
    )


def test_fleet_total_counts_each_vm_once_when_two_snapshots_share_a_server_time(fleet):
    _, hist = fleet
    # Taken again at the same (frozen) server time as s1: d was deleted meanwhile, a grew.
    twice = _retaken(hist, DAYS[1], {"a": 250, "b": 60, "c": 1200}, "s1b")
    total = bandwidth.fleet_total(twice.sample(frac=1, random_state=3))  # row order is no clue
    assert total["server_time"].tolist() == [pd.Timestamp(d, tz="UTC") for d in DAYS]
    assert total["used_bytes"].tolist() == [1390, 1510, 1565, 1685]
    assert total["pack_bytes"].tolist() == [3000] * 4
    assert total["vms"].tolist() == [4, 3, 4, 4]
    ax = bandwidth.plot_fleet_total(total)
    assert [round(y * GIB) for y in ax.get_lines()[0].get_ydata()] == [1390, 1510, 1565, 1685]


def test_growth_and_usage_over_time_read_one_snapshot_per_server_time(fleet):
    vms, hist = fleet
    # s1 taken again at its server time, a at 150 (between 100 and 300): two points for one time.
    twice = _retaken(hist, DAYS[1], {"a": 150, "b": 60, "c": 1200, "d": 50}, "s1b")
    rates = bandwidth.growth(twice, now=NOW).set_index("vm_id")["rate_bytes_per_day"]
    assert rates["a"] == 100  # 100 -> 150 -> 300 -> 400 over 3 days; no growth lost
    over_time = bandwidth.usage_over_time(vms, twice, n=2)
    a = over_time[over_time["vm_id"] == "a"]
    assert a["used_bytes"].tolist() == [100, 150, 300, 400]
    assert a["server_time"].is_unique


def test_time_axes_use_concise_dates(fleet):
    vms, hist = fleet
    for ax in (
        bandwidth.plot_fleet_total(bandwidth.fleet_total(hist)),
        bandwidth.plot_top(bandwidth.usage_over_time(vms, hist, n=2)),
    ):
        formatter = ax.xaxis.get_major_formatter()
        assert isinstance(formatter, mdates.ConciseDateFormatter)
        assert isinstance(ax.xaxis.get_major_locator(), mdates.AutoDateLocator)
        ax.figure.canvas.draw()
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        # Concise: short tick labels, the year and month written once beside the axis.
        assert labels and all(len(label) <= 6 for label in labels), labels
        assert "2026-Nov" in formatter.get_offset()


def test_the_day_a_pack_runs_out_holds_while_the_hours_move(fleet):
    """The projection is a daily growth rate run forward: it places the day a pack runs out,
    not its hour. Read a few hours apart (a slider moved between snapshots of one day) the day
    holds, and every surface (text, CSV, JSON, the view's figure) states that day alone."""
    from svcnb.cli.report import records
    from svcnb.reports import display_frame, text_table
    from svcnb.reports.billing import export_csv

    vms, hist = fleet
    early = bandwidth.projection(vms, hist, now=NOW).set_index("vm_id")
    later = bandwidth.projection(vms, hist, now=NOW + pd.Timedelta(hours=7)).set_index("vm_id")
    assert early.loc["a", "exceeds_at"] != later.loc["a", "exceeds_at"]  # the estimate moves
    assert early.loc["a", "exceeds_on"] == later.loc["a", "exceeds_on"]
    assert later.loc["a", "exceeds_on"] == pd.Timestamp("2026-11-17", tz="UTC")

    shown = [c for c in bandwidth.VIEW.table("exceeding").columns]
    assert "exceeds_on" in shown and "exceeds_at" not in shown
    table = bandwidth.exceeding(vms, hist, now=NOW + pd.Timedelta(hours=7))
    table = table[[c for c in shown if c in table.columns]]
    cells = display_frame(table)["Runs out (UTC day)"].tolist()
    assert cells[0] == "2026-11-17", cells
    assert "2026-11-17 07:00" not in text_table(table, width=200)
    csv = export_csv(table)
    assert ",2026-11-17," in csv and "T07:00" not in csv, csv
    assert records(table)[0]["exceeds_on"] == "2026-11-17"

    spec = next(f for f in bandwidth.VIEW.figures if f.name == "first_exceeds_on")
    assert spec.kind == "date"
    from svcnb.reports import Figure

    day = Figure(spec, later.loc["a", "exceeds_on"], detail="vm-a")
    assert day.text() == "2026-11-17 (vm-a)"
    assert day.plain() == "2026-11-17"


def test_fleet_sums_leave_out_vms_of_unknown_status_and_say_they_are_bounds(frame, fleet):
    vms, hist = fleet
    # "hibernating" is no word svcnb knows: the VM may be terminated, so it is not summed
    odd = frame("vms", [vmrow("f", "hibernating", 500, 1000, "2026-11-30")])
    now_row = bandwidth.fleet_now(pd.concat([vms, odd], ignore_index=True)).iloc[0]
    assert (now_row["used_bytes"], now_row["pack_bytes"], now_row["vms"]) == (1685, 3000, 4)
    # f left out, and d states no pack: both sums are at least what they say, the share unknown
    assert (now_row["used_bytes_bound"], now_row["pack_bytes_bound"]) == ("at least", "at least")
    assert now_row["unknown_status"] == 1 and not now_row["complete"]
    assert "1 VM(s) whose pack svcnb could not read" in now_row["reason"]
    assert pd.isna(now_row["share"])
    shown = display_frame(bandwidth.fleet_now(vms), ["used_bytes", "pack_bytes"])
    assert shown.iloc[0].tolist()[1].startswith("≥ ")  # the pack: d's is not read

    status = {"a": "running", "b": "running", "c": "stopped", "d": "running", "f": "hibernating"}
    extra = hist[hist["id"] == "a"].assign(id="f", bandwidth_used_bytes=500)
    both = pd.concat([hist, extra], ignore_index=True)
    total = bandwidth.fleet_total(both.assign(status=both["id"].map(status)))
    last = total.iloc[-1]
    assert (last["used_bytes"], last["pack_bytes"]) == (now_row["used_bytes"], 3000)
    assert total["unknown_status"].tolist() == [1] * 4
    assert total["used_bytes_bound"].tolist() == ["at least"] * 4
    assert total["vms"].tolist() == [4] * 4
    assert not total.attrs["complete"]
    # a snapshot whose every VM is of an unknown word keeps its row: nothing known, a bound
    only = bandwidth.fleet_total(extra.assign(status="hibernating"))
    assert only["vms"].tolist() == [0] * 4 and only["unknown_status"].tolist() == [1] * 4
    assert only["used_bytes_bound"].tolist() == ["at least"] * 4


def test_a_month_reads_exact_only_when_its_snapshots_saw_every_byte_and_pack(fleet):
    _, hist = fleet
    status = {"a": "running", "b": "running", "c": "stopped", "d": "running"}
    hist = hist.assign(status=hist["id"].map(status))
    # a and c, seen at the month's first and last instant: no restart, every usage and pack
    # read, every status word known
    whole = hist[hist["id"].isin(["a", "c"])].copy()
    first, last = pd.Timestamp("2026-11-01T00:00Z"), pd.Timestamp("2026-11-30T23:59:59.999999999Z")
    times = sorted(whole["server_time"].unique())
    whole["server_time"] = whole["server_time"].replace({times[0]: first, times[-1]: last})
    seen = bandwidth.monthly_usage(whole, now=last).iloc[0]
    assert (seen["used_bytes"], seen["pack_bytes"], seen["vms"]) == (300, 2000, 2)
    assert (seen["used_bytes_bound"], seen["pack_bytes_bound"]) == ("exact", "exact")
    assert seen["complete"] and pd.isna(seen["reason"])
    # daily snapshots see nothing before the first or after the last: at least
    daily = bandwidth.monthly_usage(hist[hist["id"].isin(["a", "c"])]).iloc[0]
    assert daily["used_bytes"] == 300 and daily["used_bytes_bound"] == "at least"
    assert (
        "the month's bytes before 2026-11-08 00:00 and after 2026-11-11 00:00 UTC are not seen"
        in (daily["reason"])
    )

    # b renewed between two snapshots: what it used before the restart was never seen; d's
    # pack is not read; f says a word svcnb does not know; g first shows up on the second day
    extra = pd.concat(
        [
            hist[hist["id"] == "a"].iloc[-1:].assign(id="f", status="hibernating"),
            hist[hist["id"] == "a"].iloc[1:].assign(id="g"),
        ],
        ignore_index=True,
    )
    month = bandwidth.monthly_usage(pd.concat([hist, extra], ignore_index=True)).iloc[0]
    # a 300 + b (10, restart to 5, 10) + c 0 + d 30 + g 200; f's one sighting grew nothing
    assert month["used_bytes"] == 300 + 25 + 0 + 30 + 200
    assert (month["used_bytes_bound"], month["pack_bytes_bound"]) == ("at least", "at least")
    # f is left out of the packs, as the fleet figures leave it out; d's pack is not read
    assert (month["pack_bytes"], month["vms"], month["unknown_status"]) == (4000, 5, 1)
    for said in (
        "1 counter restart(s)",
        "2 VM(s) first seen after the first snapshot",  # f and g
        "1 VM(s) of unknown status",
        "1 VM(s) whose pack svcnb could not read",
    ):
        assert said in month["reason"]
    shown = display_frame(bandwidth.monthly_usage(hist), ["used_bytes", "pack_bytes"])
    assert all(cell.startswith("≥ ") for cell in shown.iloc[0].tolist()[1:])
    ax = bandwidth.plot_monthly_usage(bandwidth.monthly_usage(hist))
    labels = ax.get_legend_handles_labels()[1]
    assert labels[:2] == ["monthly packs (at least)", "used (at least)"]


def test_growth_between_two_months_snapshots_is_counted_in_neither():
    days = ["2026-11-29T12:00Z", "2026-11-30T12:00Z", "2026-12-01T12:00Z", "2026-12-02T12:00Z"]
    hist = pd.DataFrame(
        {
            "snapshot_id": [f"s{i}" for i in range(4)],
            "server_time": pd.to_datetime(days, utc=True),
            "id": "a",
            "status": "running",
            "bandwidth_used_bytes": pd.array([100, 200, 300, 400], dtype="Int64"),
            "bandwidth_pack_bytes": pd.array([1000] * 4, dtype="Int64"),
        }
    )
    months = bandwidth.monthly_usage(hist)
    # 200 -> 300 grew from the 30th to the 1st: on either side of midnight, so in neither month
    assert months["used_bytes"].tolist() == [100, 100]
    assert months["used_bytes_bound"].tolist() == ["at least", "at least"]
    assert "bytes before 2026-12-01 12:00" in months["reason"].iloc[1]


def test_plot_usage_figures_under_the_bars_do_not_run_into_each_other():
    # the panel draws it 7 x 3.2 in with its legend beside the bars: up to 36,000 GiB, the
    # default ticks every 5,000 read "5,00010,00015,000..."
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = [f"batch-sgp-{i:03d}" for i in range(10)]
    frame = pd.DataFrame(
        {
            "vm_id": names,
            "name": names,
            "used_bytes": pd.array([int(36_000 * GIB * (i + 1) / 10) for i in range(10)]),
            "pack_bytes": pd.array([int(10_000 * GIB)] * 10),
            "projected_bytes": pd.array([int(38_000 * GIB)] * 10),
        }
    )
    fig = Figure(figsize=(7.0, 3.2), dpi=100)
    ax = bandwidth.plot_usage(frame, ax=fig.subplots())
    fig.tight_layout()
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    low, high = ax.get_xlim()
    shown = [
        t.get_window_extent(renderer)
        for tick, t in zip(ax.xaxis.get_majorticklocs(), ax.get_xticklabels(), strict=True)
        if low <= tick <= high and t.get_text()
    ]
    assert len(shown) >= 3
    for left, right in zip(shown, shown[1:], strict=False):
        assert left.x1 + 4 < right.x0  # a gap between one figure and the next
