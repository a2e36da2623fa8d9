"""``svcnb report {bandwidth,billing,firewall,webhooks,whatif}``: a report as of a snapshot.

Each report prints its view (``svcnb.reports._view``: the same headline figures, tables,
labels and plots the panels and notebooks show). ``--format text`` prints the figures and every
table (or the one ``--table`` names) for a reader, fitted to ``--width`` columns (the
terminal's by default); ``csv`` and ``json`` export one table (the main one unless ``--table``
names another; ``--table figures`` the headline figures, each with what it counts) with exact
money and ISO 8601 UTC times; ``png`` draws the report's plots into one image; ``html`` writes
the whole view as one self-contained page (``svcnb.reports.static.page``, which ``svcnb pages``
writes for every report).

The command reads the store only. With ``--snapshot`` it first takes a snapshot through the
server the environment names (``SVC_BASE_URL`` and ``SVC_API_KEY``, or ``SVCNB_SANDBOX``);
it never starts a sandbox of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from svcnb import files as _files
from svcnb import vocab
from svcnb.cli import _common
from svcnb.cli._common import fail
from svcnb.reports import duration

KINDS = ("bandwidth", "billing", "firewall", "webhooks", "whatif")
FORMATS = ("text", "csv", "json", "png", "html")
DEFAULT_WIDTH = 100
EXAMPLE = """examples:
  svcnb report billing
  svcnb report billing --table runway
  svcnb report billing --format csv --table renewals --within 90d --out renewals.csv
  svcnb report bandwidth --at 2026-11-15 --format json --table projection
  svcnb report firewall --format png --out firewall.png
  svcnb report billing --snapshot    # take a snapshot of the configured server first
  svcnb report whatif --format csv --table topup
  svcnb report billing --format json --table figures
  svcnb report billing --format html --out billing.html
  svcnb report whatif --terminate vm_358c956bf1e3c6a7,vm_e20a98e85d204265 --table what_if"""

# exit codes: _common.USAGE (2) for a mistake in what was asked (arguments, configuration, store
# location), 1 for a failure while doing it (the server refused, a file could not be written)
FAILED = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXAMPLE
    parser.add_argument("kind", choices=KINDS, help="which report")
    parser.add_argument(
        "--at",
        metavar="WHEN",
        help="as of the latest snapshot at or before this ISO date/time (default: the latest)",
    )
    _common.add_store_option(parser, ", to report from")
    parser.add_argument(
        "--account",
        metavar="NAME",
        help=_common.ACCOUNT_HELP.format(what="report on") + " (text only)",
    )
    parser.add_argument(
        "--format",
        # "table" was this format's name before csv and json covered every table
        type=lambda s: "text" if s == "table" else s,
        choices=FORMATS,
        default="text",
        help="text for reading, csv or json to export one table, png for the plots, html for "
        "the whole view as one self-contained page (figures, plots, every table)",
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
        default=None,
        metavar="COLUMNS",
        help="text: fit tables in this many columns (long text wraps, nothing is cut; dates and "
        f"amounts never break) (default: the terminal's width; {DEFAULT_WIDTH} when not a "
        "terminal)",
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


def terminal_width() -> int:
    """The terminal's width in columns ($COLUMNS first), :data:`DEFAULT_WIDTH` when the output
    is not a terminal; never under the 40 a table needs."""
    import shutil

    return max(40, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


class UserError(Exception):
    """A mistake in what was asked: printed as one line, exit code 2."""


# one line on stderr naming the command, and the exit code to end with
_fail = partial(fail, "report")


def run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as words:
        return _run(args, words)


def _run(args: argparse.Namespace, words: contextlib.ExitStack) -> int:
    # `svcnb pages` runs this for each page: its errors are labelled by the command the user ran
    command = getattr(args, "command", None) or "report"
    _fail = partial(fail, command)
    if args.account == _common.EVERY_ACCOUNT:
        if args.format != "text" or args.out or args.snapshot:
            return _fail(
                "--account '*' prints each account's text report in turn; for csv, json, png, "
                "--out or --snapshot name one account (--account NAME), one file each"
            )
        return _common.each_account("report", args, run)
    from svcnb.store import Store, StoreError, check_readable
    from svcnb.times import to_utc

    try:
        # read once, here, in the user's terms; the store chooses the snapshot with it
        when = None if args.at is None else to_utc(args.at, "--at")
        duration(args.within, name="--within")
        _horizons(getattr(args, "horizons", "30,60,90"))
        if args.width is None:
            args.width = terminal_width()
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
        return _fail(
            str(exc)
            + _common.lab_store_hint(
                args.store, f"report {args.kind}" if command == "report" else command
            )
        )
    try:
        snap = store.at(when)
        # the status words as the snapshot's reader had them (a sandbox's dialect pins its
        # own), for the whole command: a view's tables are drawn when rendered
        words.enter_context(vocab.using(snap.vocabulary()))
        view = _view(args.kind, snap, args)
    except (ValueError, StoreError) as exc:
        text = str(exc)
        if "holds no snapshot" in text:
            text = f"the store at {store.path} holds no snapshot; take one with " + (
                "`svcnb snapshot` (or add --snapshot)"
            )
        return _fail(text)
    header = f"{view.heading()} (snapshot {snap.id})"
    try:
        chosen = _pick(view, args.table, whole=args.format in ("text", "html"))
    except UserError as exc:
        return _fail(str(exc))
    try:
        if args.format == "png":
            out = Path(args.out or f"{args.kind}.png")
            image = io.BytesIO()
            _draw(list(view.plots.values()), header).savefig(
                image, format="png", dpi=100, bbox_inches="tight"
            )
            _files.write(out, image.getvalue(), secret=False)
            print(f"wrote {out}")
            return 0
        text = _render(args.format, view, chosen, header, args.width)
        if args.out:
            _files.write(args.out, text, secret=False)
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
    from svcnb.config import ConfigError
    from svcnb.errors import SvcnbError

    try:
        client = _common.client(store.account, progress=False)
    except (ConfigError, ValueError) as exc:
        return _fail(str(exc))
    try:
        with client:
            snapshot_id = store.take(client)
    except (SvcnbError, OSError) as exc:
        return _fail(f"could not take a snapshot: {exc}", FAILED)
    print(f"snapshot {snapshot_id} taken into {store.path}", file=sys.stderr)
    return 0


def _pick(view: Any, name: str | None, *, whole: bool) -> list[str] | None:
    """The tables asked for: all (None) for text, else the one named (the main one when none
    is); ``figures`` is the view's headline figures as a table."""
    held = ["figures", *(t.name for t, _ in view.shown_tables())]
    if name is None:
        return None if whole else [held[1]]
    if name in held:
        return [name]
    declared = [t.name for t in view.spec.tables]
    if name in declared:  # declared, but this snapshot has none (e.g. nothing left out)
        return [name]
    raise UserError(
        f"no table {name!r} in the {view.spec.report} report; choose one of: "
        + ", ".join(["figures", *declared])
    )


def _render(fmt: str, view: Any, chosen: list[str] | None, header: str, width: int) -> str:
    """The view in ``fmt``: text is every table asked (the figures first); csv and json one."""
    from svcnb.reports.billing import export_csv

    if fmt == "html":
        # the page svcnb pages writes too: the one renderer of a view without a kernel
        from svcnb.reports.static import page

        return page(view, tables=chosen, source=f"svcnb report: {header}")
    if fmt in ("csv", "json"):
        name = chosen[0] if chosen else "figures"
        frame = view.figures_frame() if name == "figures" else view.tables.get(name)
        if frame is None:
            frame = pd.DataFrame()
        if fmt == "csv":
            return str(export_csv(frame))
        return json.dumps(records(frame), indent=1, default=str) + "\n"
    if chosen == ["figures"]:
        return f"{header}\n\n{view.figures_text()}\n"
    text = view.text(width, tables=chosen)
    return header + "\n" + text.partition("\n")[2]


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of ``frame`` as JSON-ready dicts: ISO times, exact money, null for missing."""
    from decimal import Decimal

    from svcnb.money import to_decimal
    from svcnb.reports import MONEY_COLUMNS, currency_of, kind, kind_text

    def plain(column: str, value: Any, currency: Any) -> Any:
        if isinstance(value, list | tuple):
            return [str(v) for v in value]
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            return None
        if isinstance(value, Decimal):
            return float(value)
        if column in MONEY_COLUMNS:
            # the float nearest the exact decimal prints as that decimal's text
            exact = to_decimal(value, currency)
            return None if exact is None else float(exact)
        if isinstance(value, pd.Timestamp):
            # a day is its date, as the text and the page write it
            return kind_text("date", value) if kind(column) == "date" else value.isoformat()
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


def _horizons(text: str) -> list[int]:
    """Whole days from ``--horizons`` (each read by :func:`duration`: bare numbers are days)."""
    from svcnb.reports import DurationError

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


def _view(kind: str, snap: Any, args: argparse.Namespace) -> Any:
    """The view of report ``kind`` as of snapshot ``snap`` (``Store.at``), with the options
    the command was given."""
    from svcnb.reports import bandwidth, billing, firewall, webhooks, whatif

    if kind == "billing":
        return billing.view(snap, within=duration(args.within, name="--within"))
    if kind == "whatif":
        days = _horizons(args.horizons)
        how = "terminate" if args.terminate else "stop"
        ids = [v.strip() for v in (args.terminate or args.stop).split(",") if v.strip()]
        try:
            return whatif.view(snap, horizons=days, how=how, vm_ids=ids)
        except ValueError as exc:
            raise ValueError(f"--{how}: {exc}") from None
    return {"bandwidth": bandwidth, "firewall": firewall, "webhooks": webhooks}[kind].view(snap)
