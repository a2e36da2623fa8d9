"""``svcnb demo``: simulate an account on the sandbox and render the report notebooks to HTML
(the simulated customer and the rendering are ``svcnb.jupyter.demo``'s; this module parses the
options and says each step)."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from svcnb.extras import lab_needed
from svcnb.jupyter.demo import (
    DEFAULT_DAYS,
    DEFAULT_SEED,
    DEFAULT_VMS,
    DEMO_RATE_LIMIT,
    REPORT_NOTEBOOKS,
    Customer,
    fleet_summary,
    render_html,
    report_title,
)
from svcnb.jupyter.notebooks import DEFAULT_FOLDER, NotebooksMissing, copy_into
from svcnb.jupyter.notebooks import names as shipped_names

from ._common import add_dialect_option, fail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="out", help="output folder (default: out)")
    parser.add_argument(
        "--days", type=int, default=DEFAULT_DAYS, help="days to simulate, one snapshot each"
    )
    parser.add_argument("--vms", type=int, default=DEFAULT_VMS, help="sandbox fleet size")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="sandbox seed")
    add_dialect_option(parser, "; the reports then read a service that words its answers otherwise")
    parser.add_argument(
        "--notebooks",
        default=DEFAULT_FOLDER,
        metavar="DIR",
        help="working folder the notebooks are copied into and rendered from; a notebook you "
        "changed there is never overwritten",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="render only this notebook (repeatable), e.g. --only 04_billing_review",
    )


def _say(text: str) -> None:
    print(f"svcnb demo: {text}", flush=True)


def run(args: argparse.Namespace) -> int:
    if needed := lab_needed("svcnb demo"):
        print(needed, file=sys.stderr)
        return 2
    # imported here: `svcnb demo --help` and the line above need none of them
    from svcnb import Client, sandbox
    from svcnb._connect import sandbox_pins
    from svcnb.jupyter.lab import kernel_environment, private_folder
    from svcnb.panels import STATIC_ENV
    from svcnb.store import Store

    if args.days < 1:
        print("svcnb demo: --days must be at least 1", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    names = list(args.only or REPORT_NOTEBOOKS)
    try:
        known = shipped_names()
    except NotebooksMissing as exc:
        return fail("demo", str(exc), 2)
    unknown = [n for n in names if n not in known]
    if unknown:
        print(
            f"svcnb demo: no notebook {', '.join(unknown)}; the notebooks are {', '.join(known)}",
            file=sys.stderr,
        )
        return 2
    copies = copy_into(args.notebooks)
    for line in copies.lines():
        _say(line)
    folder = copies.folder
    out.mkdir(parents=True, exist_ok=True)
    store_path = out / "demo-store"
    # The store is the demo's own output: start it afresh so its history is exactly this run's.
    shutil.rmtree(store_path, ignore_errors=True)

    with (
        private_folder("svcnb-demo-") as private,
        sandbox.serve(
            vms=args.vms,
            seed=args.seed,
            port=0,
            time_scale=0.0,
            rate_limit=DEMO_RATE_LIMIT,
            dialect=args.dialect,
        ) as sb,
    ):
        speaks = sb.state.dialect.name
        spoken = "" if speaks == "default" else f", dialect {speaks}"
        _say(f"sandbox at {sb.base_url} ({args.vms} VMs, seed {args.seed}{spoken})")
        store = Store(store_path)
        started = time.monotonic()
        pins = sandbox_pins(sb.pins, f"the dialect of the sandbox at {sb.base_url}")
        with Client(sb.tokens["admin"], sb.base_url, progress=False, pins=pins) as client:
            for line in fleet_summary(client):
                _say(line)
            _say(f"simulating {args.days} days with a snapshot each day into {store_path}")
            customer = Customer(client, sb.control)
            ids = store.build_history(client, args.days, customer.advance)
        _say(f"{len(ids)} snapshots in {time.monotonic() - started:.1f} s")
        for line in customer.story():
            _say(line)

        connection = sb.write_connection_file(private / "sandbox.json")
        env = kernel_environment(connection, store_path)
        env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
        # panels add their tables and plots as plain HTML beside the widget view
        env[STATIC_ENV] = "1"
        written = []
        for name in names:
            # An hour passes between notebooks, so a snapshot a notebook takes never shares its
            # server time with the last simulated day's (reports group snapshots by that time).
            sb.control.advance(3600)
            _say(f"running {name}.ipynb")
            target = out / f"{name}.html"
            note = (
                f"*Rendered by `svcnb demo` from a simulated account: the svcnb sandbox with "
                f"{args.vms} VMs (seed {args.seed}) and {args.days} days of daily snapshots. "
                "No real account was used.*"
            )
            render_html(
                folder / f"{name}.ipynb",
                target,
                env=env,
                workdir=out,
                note=note,
                title=report_title(folder / f"{name}.ipynb"),
            )
            written.append(target)
        secrets = [str(t) for t in sb.tokens.values() if t]
    leaks = [p for p in written if any(s in p.read_text(encoding="utf-8") for s in secrets)]
    if leaks:
        for p in leaks:
            p.unlink()
        print(f"svcnb demo: a token appeared in {leaks}; those pages were deleted", file=sys.stderr)
        return 1
    _say("reports written:")
    for path in written:
        print(f"  {path}")
    print(f"  {store_path}  (the snapshot store; `SVCNB_STORE={store_path}` to explore it)")
    return 0
