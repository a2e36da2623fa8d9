"""``svcnb report {bandwidth,billing,firewall,webhooks}``: a report as of a snapshot.

``--format table`` prints the report's frames for a reader; ``csv`` writes its main frame
(bandwidth projection, billing renewals, firewall findings, webhook health); ``png`` draws its
plots into one image.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

KINDS = ("bandwidth", "billing", "firewall", "webhooks")
FORMATS = ("table", "csv", "png")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=KINDS, help="which report")
    parser.add_argument(
        "--at",
        metavar="WHEN",
        help="answer as of the latest snapshot at or before this ISO date/time (default: latest)",
    )
    parser.add_argument(
        "--store",
        metavar="PATH",
        help="snapshot store folder (default: $SVCNB_STORE, then data/store)",
    )
    parser.add_argument("--format", choices=FORMATS, default="table", help="default: table")
    parser.add_argument(
        "--out", metavar="PATH", help="write here instead of stdout (png: default <kind>.png)"
    )
    parser.add_argument(
        "--within",
        default="30D",
        metavar="DURATION",
        help="billing: renewals due within this long (default 30D)",
    )


def run(args: argparse.Namespace) -> int:
    from svcnb.reports._replay import snapshot_at, to_utc
    from svcnb.store import Store, StoreError

    try:
        if args.at is not None:
            to_utc(args.at)
        pd.Timedelta(args.within)
    except ValueError as exc:
        print(f"svcnb report: {exc}", file=sys.stderr)
        return 2
    store = Store(args.store)
    try:
        snap = snapshot_at(store, args.at)
        sections, main, draw = _BUILDERS[args.kind](store, snap["server_time"], args)
    except (ValueError, StoreError) as exc:
        print(f"svcnb report: {exc}", file=sys.stderr)
        return 2
    header = f"{args.kind} report as of snapshot {snap['snapshot_id']} ({snap['server_time']})"
    if args.format == "png":
        out = Path(args.out or f"{args.kind}.png")
        _draw(draw, header).savefig(out, dpi=100, bbox_inches="tight")
        print(f"wrote {out}")
        return 0
    if args.format == "csv":
        from svcnb.reports.billing import export_csv

        text = export_csv(main)
    else:
        text = (
            header + "\n\n" + "\n\n".join(f"{title}\n{_table(frame)}" for title, frame in sections)
        )
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "(none)"
    return frame.to_string(index=False, max_colwidth=60)


def _draw(draw: list[Callable[[Any], Any]], title: str):
    import matplotlib

    matplotlib.use("Agg")  # the CLI never opens a window
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(draw), 1, figsize=(10, 5 * len(draw)), squeeze=False)
    for fn, ax in zip(draw, axes[:, 0], strict=True):
        fn(ax)
    fig.suptitle(title)
    return fig


Built = tuple[list[tuple[str, pd.DataFrame]], pd.DataFrame, list[Callable[[Any], Any]]]


def _bandwidth(store: Any, at: pd.Timestamp, args: argparse.Namespace) -> Built:
    from svcnb.reports import bandwidth as bw
    from svcnb.reports._classes import left_out_note

    # vms and history loaded once for the three reports
    frames = bw.projection.inputs(store, at=at)
    proj = bw.projection(**frames)
    total = bw.fleet_total(history=frames["history"], now=frames["now"])
    over_time = bw.usage_over_time(**frames)
    gib = bw.GIB
    readable = pd.DataFrame(
        {
            "name": proj["name"],
            "status": proj["status"],
            "used_gib": (proj["used_bytes"] / gib).round(1),
            "pack_gib": (proj["pack_bytes"] / gib).round(1),
            "share_pct": (proj["share"] * 100).round(1),
            "gib_per_day": (proj["rate_bytes_per_day"] / gib).round(2),
            "projected_gib": (proj["projected_bytes"] / gib).round(1),
            "outlook": proj["outlook"],
            "exceeds_at": proj["exceeds_at"],
            "cycle_end": proj["cycle_end"],
        }
    )
    sections = [
        ("VMs over or projected over their pack", readable[proj["exceeds"].fillna(False)]),
        ("All VMs", readable),
    ]
    unknown = int(proj.attrs.get("unknown_status", 0))
    if unknown:
        left = readable[(proj["status_class"] == "unknown").to_numpy(dtype=bool)]
        sections.insert(0, (f"{left_out_note(unknown)}: projection unknown", left))
    draw = [
        lambda ax: bw.plot_usage(proj.head(20), ax=ax),
        lambda ax: bw.plot_top(over_time, ax=ax),
        lambda ax: bw.plot_fleet_total(total, ax=ax),
    ]
    return sections, proj, draw


def _billing(store: Any, at: pd.Timestamp, args: argparse.Namespace) -> Built:
    from svcnb.reports import billing as bl
    from svcnb.reports._classes import left_out_note

    # vms and wallet loaded once for the seven reports that read them
    frames = bl.renewal_schedule.inputs(store, at=at)
    due = bl.renewals(**frames, within=args.within)
    schedule = bl.renewal_schedule(**frames)
    runway = bl.runway(**frames)
    sections = [
        ("Runway", runway),
        ("Low-balance forecast", bl.low_balance_forecast(**frames)),
        ("Renewals due (7, 30, 90 days)", bl.renewals_due(**frames)),
        (f"Renewals within {args.within}", due),
        ("Overdue or suspended", bl.overdue(vms=frames["vms"], now=frames["now"])),
        ("Monthly run rate by plan", bl.run_rate(**frames, by="plan_slug")),
        ("Monthly run rate by region", bl.run_rate(**frames, by="region_slug")),
    ]
    unknown = int(runway["unknown_status"].iloc[0])
    if unknown:
        title = f"{left_out_note(unknown)}; the runway and low-balance dates may come sooner"
        sections.insert(0, (title, bl.unknown_status(vms=frames["vms"], now=frames["now"])))
    history = bl.balance_history.from_store(store, at=at)
    draw = [
        lambda ax: bl.plot_renewals(due, ax=ax),
        lambda ax: bl.plot_balance(history, schedule, runway, ax=ax),
    ]
    return sections, due, draw


def _firewall(store: Any, at: pd.Timestamp, args: argparse.Namespace) -> Built:
    from svcnb.reports import firewall as fw

    findings = fw.audit.from_store(store, at=at)
    sections = [("Findings, worst first", findings.drop(columns=["affected_vms"]))]
    # with a single snapshot there is nothing to compare with
    with contextlib.suppress(ValueError):
        sections.append(("Rules changed since the previous snapshot", fw.changes(store, at=at)))
    return sections, findings, [lambda ax: fw.plot_findings(findings, ax=ax)]


def _webhooks(store: Any, at: pd.Timestamp, args: argparse.Namespace) -> Built:
    from svcnb.reports import webhooks as wh

    # webhooks and deliveries loaded once for the four reports
    frames = wh.health.inputs(store, at=at)
    health = wh.health(**frames)
    sections = [
        ("Subscriptions, worst first", health),
        ("Disabled", wh.disabled(webhooks=frames["webhooks"], now=frames["now"])),
        ("Event mix", wh.event_mix(**frames)),
        ("Attempts needed", wh.attempts(deliveries=frames["deliveries"], now=frames["now"])),
    ]
    return sections, health, [lambda ax: wh.plot_health(health, ax=ax)]


_BUILDERS: dict[str, Callable[[Any, pd.Timestamp, argparse.Namespace], Built]] = {
    "bandwidth": _bandwidth,
    "billing": _billing,
    "firewall": _firewall,
    "webhooks": _webhooks,
}
