"""``svcnb report {bandwidth,billing,firewall,webhooks,whatif}``: a report as of a snapshot.

Every report has named tables. ``--format text`` prints them (or the one ``--table`` names)
for a reader, fitted to ``--width`` columns; ``csv`` and ``json`` export one table (the main
one unless ``--table`` names another) with exact money and ISO 8601 UTC times; ``png`` draws the
report's plots into one image.

The command reads the store only. With ``--snapshot`` it first takes a snapshot through the
server the environment names (``SVC_BASE_URL`` and ``SVC_API_KEY``, or ``SVCNB_SANDBOX``);
it never starts a sandbox of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from svcnb.reports._duration import duration, duration_text
from svcnb.store._layout import add_store_option

KINDS = ("bandwidth", "billing", "firewall", "webhooks", "whatif")
FORMATS = ("text", "csv", "json", "png")
DEFAULT_WIDTH = 100
EXAMPLE = """examples:
  svcnb report billing
  svcnb report billing --table runway
  svcnb report billing --format csv --table renewals --within 90d --out renewals.csv
  svcnb report bandwidth --at 2026-11-15 --format json --table projection
  svcnb report firewall --format png --out firewall.png
  svcnb report billing --snapshot    # take a snapshot of the configured server first
  svcnb report whatif --format csv --table topup
  svcnb report whatif --terminate vm_358c956bf1e3c6a7,vm_e20a98e85d204265 --table what_if"""

# exit codes: 2 for a mistake in what was asked (arguments, configuration, store location),
# 1 for a failure while doing it (the server refused, a file could not be written)
USAGE, FAILED = 2, 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXAMPLE
    parser.add_argument("kind", choices=KINDS, help="which report")
    parser.add_argument(
        "--at",
        metavar="WHEN",
        help="as of the latest snapshot at or before this ISO date/time (default: the latest)",
    )
    add_store_option(parser, ", to report from")
    parser.add_argument(
        "--account",
        metavar="NAME",
        help="the account to report on, in a store of several (default: the store's only one)",
    )
    parser.add_argument(
        "--format",
        # "table" was this format's name before csv and json covered every table
        type=lambda s: "text" if s == "table" else s,
        choices=FORMATS,
        default="text",
        help="text for reading, csv or json to export one table, png for the plots",
    )
    parser.add_argument(
        "--table",
        metavar="NAME",
        help="the table to print or export (default: all for text, the main one for csv/json); "
        "an unknown name lists the report's tables",
    )
    parser.add_argument(
        "--out", metavar="PATH", help="write here instead of stdout (png: default <kind>.png)"
    )
    parser.add_argument(
        "--width",
        type=int,
        default=DEFAULT_WIDTH,
        metavar="COLUMNS",
        help="text: fit tables in this many columns (long text wraps, nothing is cut)",
    )
    parser.add_argument(
        "--within",
        default="30d",
        metavar="DURATION",
        help="billing: renewals due within this long; a bare number is days (30), or a number "
        "and a unit: 30d, 2w, 12h, '90 days' (months are refused: they differ in length)",
    )
    parser.add_argument(
        "--horizons",
        default="30,60,90",
        metavar="DAYS",
        help="whatif: top-up horizons, comma-separated whole days (bare numbers are days; "
        "4w and 90d read too)",
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--stop",
        default="",
        metavar="IDS",
        help="whatif: VM ids (comma-separated) to see stopped (stopped VMs still renew)",
    )
    what.add_argument(
        "--terminate",
        default="",
        metavar="IDS",
        help="whatif: VM ids (comma-separated) to see terminated (no longer renewed)",
    )
    parser.add_argument(
        "--snapshot",
        action="store_true",
        help="take a snapshot of the configured server into the store first",
    )


class UserError(Exception):
    """A mistake in what was asked: printed as one line, exit code 2."""


def _fail(text: str, code: int = USAGE) -> int:
    print(f"svcnb report: {text}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    from svcnb.reports._replay import snapshot_at, to_utc
    from svcnb.store import Store, StoreError
    from svcnb.store._reading import check_readable

    try:
        if args.at is not None:
            to_utc(args.at)
        duration(args.within, name="--within")
        _horizons(getattr(args, "horizons", "30,60,90"))
        if args.width < 40:
            raise ValueError(f"--width {args.width} is too narrow; give 40 or more")
    except ValueError as exc:
        return _fail(str(exc))
    store = Store(args.store, account=args.account)
    if args.snapshot:
        code = _take(store)
        if code:
            return code
    try:
        check_readable(store, args.store, args.account)
    except StoreError as exc:
        return _fail(str(exc))
    try:
        snap = snapshot_at(store, args.at)
        built = _BUILDERS[args.kind](store, snap["server_time"], args)
    except (ValueError, StoreError) as exc:
        text = str(exc)
        if "holds no snapshot" in text:
            text = f"the store at {store.path} holds no snapshot; take one with " + (
                "`svcnb snapshot` (or add --snapshot)"
            )
        return _fail(text)
    header = f"{args.kind} report as of snapshot {snap['snapshot_id']} ({snap['server_time']})"
    try:
        chosen = built.pick(args.table, whole=args.format == "text")
    except UserError as exc:
        return _fail(str(exc))
    try:
        if args.format == "png":
            out = Path(args.out or f"{args.kind}.png")
            _draw(built.draw, header).savefig(out, dpi=100, bbox_inches="tight")
            print(f"wrote {out}")
            return 0
        text = _render(args.format, chosen, header, args.width)
        if args.out:
            Path(args.out).write_text(text, encoding="utf-8")
            print(f"wrote {args.out}")
        else:
            sys.stdout.write(text)
    except BrokenPipeError:
        raise  # the reader left; `svcnb` itself ends quietly
    except OSError as exc:
        where = exc.filename or args.out
        return _fail(f"cannot write {where}: {exc.strerror or exc}", FAILED)
    return 0


def _take(store: Any) -> int:
    from svcnb._connect import account_client, configured_client
    from svcnb.config import ConfigError
    from svcnb.errors import SvcnbError

    try:
        if store.account is None:
            client = configured_client(progress=False)
        else:
            client = account_client(store.account, progress=False)
    except (ConfigError, ValueError) as exc:
        return _fail(str(exc))
    try:
        with client:
            snapshot_id = store.take(client)
    except (SvcnbError, OSError) as exc:
        return _fail(f"could not take a snapshot: {exc}", FAILED)
    print(f"snapshot {snapshot_id} taken into {store.path}", file=sys.stderr)
    return 0


def _render(fmt: str, chosen: list[Table], header: str, width: int) -> str:
    from svcnb.reports._display import text_table
    from svcnb.reports.billing import export_csv

    if fmt == "csv":
        return str(export_csv(chosen[0].frame))
    if fmt == "json":
        return json.dumps(records(chosen[0].frame), indent=1) + "\n"
    parts = [header]
    for t in chosen:
        parts.append(f"{t.title}  [--table {t.name}]\n{text_table(t.frame, width, t.text)}")
    return "\n\n".join(parts) + "\n"


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of ``frame`` as JSON-ready dicts: ISO times, exact money, null for missing."""
    from svcnb.reports._money import MONEY_COLUMNS, currency_of, to_decimal

    def plain(column: str, value: Any, currency: Any) -> Any:
        if isinstance(value, list | tuple):
            return [str(v) for v in value]
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            return None
        if column in MONEY_COLUMNS:
            # the float nearest the exact decimal prints as that decimal's text
            exact = to_decimal(value, currency)
            return None if exact is None else float(exact)
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
        if isinstance(value, pd.Timedelta):
            return value.total_seconds()
        if hasattr(value, "item"):  # numpy scalars
            return value.item()
        return value

    columns = [str(c) for c in frame.columns]
    currencies = {c: currency_of(frame, c).tolist() for c in columns if c in MONEY_COLUMNS}
    out = []
    for i, row in enumerate(frame.itertuples(index=False, name=None)):
        out.append(
            {
                c: plain(c, v, currencies[c][i] if c in currencies else None)
                for c, v in zip(columns, row, strict=True)
            }
        )
    return out


def _draw(draw: list[Callable[[Any], Any]], title: str):
    import matplotlib

    matplotlib.use("Agg")  # the CLI never opens a window
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 5 * len(draw)))
    axes = fig.subplots(len(draw), 1, squeeze=False)
    for fn, ax in zip(draw, axes[:, 0], strict=True):
        fn(ax)
    fig.suptitle(title)
    return fig


@dataclass
class Table:
    """One named table; ``text`` lists the columns the text format shows (all when None)."""

    name: str
    title: str
    frame: pd.DataFrame
    text: list[str] | None = None


@dataclass
class Built:
    """A report's tables (the first is the main one) and its plots."""

    tables: list[Table]
    draw: list[Callable[[Any], Any]] = field(default_factory=list)

    def pick(self, name: str | None, *, whole: bool) -> list[Table]:
        if name is None:
            return self.tables if whole else self.tables[:1]
        for t in self.tables:
            if t.name == name:
                return [t]
        names = ", ".join(t.name for t in self.tables)
        raise UserError(f"no table {name!r} in this report; choose one of: {names}")


def _bandwidth(store: Any, at: pd.Timestamp, args: argparse.Namespace) -> Built:
    from svcnb.reports import bandwidth as bw
    from svcnb.reports._classes import left_out_note

    # vms and history loaded once for the reports
    frames = bw.projection.inputs(store, at=at)
    proj = bw.projection(**frames)
    total = bw.fleet_total(history=frames["history"], now=frames["now"])
    over_time = bw.usage_over_time(**frames)
    months = bw.monthly_usage(history=frames["history"], now=frames["now"])
    shown = proj.drop(columns=["status_class"])
    cols = [
        "name",
        "status",
        "used_bytes",
        "pack_bytes",
        "share",
        "rate_bytes_per_day",
        "projected_share",
        "exceeds_at",
        "outlook",
    ]
    tables = [
        Table("projection", "All VMs, soonest over their pack first", shown, cols),
        Table(
            "exceeding",
            "VMs over or projected over their pack",
            shown[proj["exceeds"].fillna(False).to_numpy(dtype=bool)],
            cols,
        ),
        Table("fleet_now", "Fleet bandwidth now", bw.fleet_now(frames["vms"], now=frames["now"])),
        Table("fleet_total", "Fleet bandwidth per snapshot", total),
        Table("monthly_usage", "Fleet bandwidth used per month", months),
    ]
    unknown = int(proj.attrs.get("unknown_status", 0))
    if unknown:
        left = shown[(proj["status_class"] == "unknown").to_numpy(dtype=bool)]
        tables.append(
            Table("unknown_status", f"{left_out_note(unknown)}: projection unknown", left)
        )
    draw = [
        lambda ax: bw.plot_usage(proj.head(20), ax=ax),
        lambda ax: bw.plot_top(over_time, ax=ax),
        lambda ax: bw.plot_monthly_usage(months, ax=ax),
    ]
    return Built(tables, draw)


def _billing(store: Any, at: pd.Timestamp, args: argparse.Namespace) -> Built:
    from svcnb.reports import billing as bl
    from svcnb.reports._classes import left_out_note

    # vms and wallet loaded once for the reports that read them
    within = duration(args.within, name="--within")
    frames = bl.renewal_schedule.inputs(store, at=at)
    due = bl.renewals(**frames, within=within)
    schedule = bl.renewal_schedule(**frames)
    runway = bl.runway(**frames)
    tables = [
        Table(
            "renewals",
            f"Renewals within {duration_text(within)}",
            due,
            ["renewal_at", "days_until", "name", "vm_id", "plan_slug", "amount", "currency"],
        ),
        Table("runway", "Runway", runway),
        Table("monthly_total", "Monthly run rate", bl.monthly_total(**frames)),
        Table("low_balance", "Low-balance forecast", bl.low_balance_forecast(**frames)),
        Table("renewals_due", "Renewals due (7, 30, 90 days)", bl.renewals_due(**frames)),
        Table("overdue", "Overdue or suspended", bl.overdue(vms=frames["vms"], now=frames["now"])),
        Table("run_rate_plan", "Monthly run rate by plan", bl.run_rate(**frames, by="plan_slug")),
        Table(
            "run_rate_region",
            "Monthly run rate by region",
            bl.run_rate(**frames, by="region_slug"),
        ),
        Table(
            "prices",
            "Monthly price per VM",
            bl.prices(**frames),
            ["name", "vm_id", "status", "plan_slug", "amount", "currency", "price_source"],
        ),
    ]
    unknown = int(runway["unknown_status"].iloc[0])
    if unknown:
        title = f"{left_out_note(unknown)}; the runway and low-balance dates may come sooner"
        tables.append(
            Table("unknown_status", title, bl.unknown_status(vms=frames["vms"], now=frames["now"]))
        )
    history = bl.balance_history.from_store(store, at=at)
    draw = [
        lambda ax: bl.plot_renewals(due, ax=ax),
        lambda ax: bl.plot_balance(history, schedule, runway, ax=ax),
    ]
    return Built(tables, draw)


def _firewall(store: Any, at: pd.Timestamp, args: argparse.Namespace) -> Built:
    from svcnb.reports import firewall as fw

    findings = fw.audit.from_store(store, at=at)
    cols = ["severity", "check", "firewall_name", "port", "affected_vm_count", "reason"]
    tables = [Table("findings", "Findings, worst first", findings, cols)]
    # with a single snapshot there is nothing to compare with
    with contextlib.suppress(ValueError):
        tables.append(
            Table("changes", "Rules changed since the previous snapshot", fw.changes(store, at=at))
        )
    return Built(tables, [lambda ax: fw.plot_findings(findings, ax=ax)])


def _webhooks(store: Any, at: pd.Timestamp, args: argparse.Namespace) -> Built:
    from svcnb.reports import webhooks as wh

    # webhooks and deliveries loaded once for the four reports
    frames = wh.health.inputs(store, at=at)
    health = wh.health(**frames)
    tables = [
        Table(
            "health",
            "Subscriptions, worst first",
            health,
            [
                "url",
                "is_active",
                "events",
                "success_rate",
                "consecutive_failures",
                "failures_to_disable",
                "last_success_at",
                "last_failure_at",
                "reason",
            ],
        ),
        Table("disabled", "Disabled", wh.disabled(webhooks=frames["webhooks"], now=frames["now"])),
        Table("event_mix", "Event mix", wh.event_mix(**frames)),
        Table(
            "attempts",
            "Attempts needed",
            wh.attempts(deliveries=frames["deliveries"], now=frames["now"]),
        ),
    ]
    return Built(tables, [lambda ax: wh.plot_health(health, ax=ax)])


def _horizons(text: str) -> list[int]:
    """Whole days from ``--horizons`` (each read by :func:`duration`: bare numbers are days)."""
    from svcnb.reports._duration import DurationError

    example = "give whole days above 0, e.g. --horizons 30,60,90"
    parts = [d.strip() for d in text.split(",") if d.strip()]
    if not parts:
        raise DurationError(f"--horizons {text!r}: {example}")
    days = []
    for part in parts:
        try:
            whole = duration(part) / pd.Timedelta(days=1)
        except DurationError as exc:
            raise DurationError(f"--horizons {text!r}: {exc}") from None
        if whole != int(whole) or whole <= 0:
            raise DurationError(
                f"--horizons {text!r}: {part!r} is not a whole number of days; {example}"
            )
        days.append(int(whole))
    return days


def _whatif(store: Any, at: pd.Timestamp, args: argparse.Namespace) -> Built:
    from svcnb.reports import whatif as wi

    frames = wi.topup_needed.inputs(store, at=at)
    days = _horizons(args.horizons)
    how = "terminate" if args.terminate else "stop"
    ids = [v.strip() for v in (args.terminate or args.stop).split(",") if v.strip()]
    top = wi.topup_needed(**frames, horizons=days)
    sus = wi.suspensions(**frames, horizon=f"{max(days)}D")
    a = sus.attrs
    note = f"; {a['already_suspended']} already suspended" if a["already_suspended"] else ""
    if not a["complete"]:
        note += (
            f"; INCOMPLETE: {a['unknown_status']} VM(s) of unknown status, "
            f"{a['unscheduled']} without a renewal date, {a['not_debitable']} renewal(s) of "
            "unknown price or another currency left out: suspensions may come sooner"
        )
    tables = [
        Table(
            "topup",
            "Top-up needed to pay every debt and renewal of each horizon",
            top,
            ["horizon_days", "balance", "owed", "renewals", "due", "topup", "complete"],
        ),
        Table(
            "suspensions",
            f"Suspended within {max(days)} days if nobody tops up{note}",
            sus,
            ["suspended_by", "name", "vm_id", "basis", "failed_at", "amount", "balance_then"],
        ),
    ]
    draw = [lambda ax: wi.plot_topup(top, ax=ax), lambda ax: wi.plot_suspensions(sus, ax=ax)]
    if ids:
        wif = wi.what_if_stop(**frames, vm_ids=ids, how=how, horizons=days)
        if wif.attrs["not_found"]:
            missing = ", ".join(wif.attrs["not_found"])
            raise ValueError(
                f"--{how}: no VM {missing} in the snapshot; see `svcnb report billing`"
            )
        title = f"What if {len(ids)} VM(s) were {'stopped' if how == 'stop' else 'terminated'}"
        if how == "stop":
            title += f" ({wi.STOP_NOTE})"
        tables.insert(1, Table("what_if", title, wif))
        draw.append(lambda ax: wi.plot_what_if(wif, ax=ax))
    return Built(tables, draw)


_BUILDERS: dict[str, Callable[[Any, pd.Timestamp, argparse.Namespace], Built]] = {
    "bandwidth": _bandwidth,
    "billing": _billing,
    "firewall": _firewall,
    "webhooks": _webhooks,
    "whatif": _whatif,
}
