"""``svcnb stop``: build a stop plan, save it for review, or apply a saved one.

What apply checks again and refuses: docs/contracts.md section 7; exit codes: README, "Stopping
VMs through a plan". It talks to the server the environment names, never a sandbox started for
the occasion.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from svcnb.cli import _common
from svcnb.plans import (
    DEFAULT_LIMIT,
    SKIPPED,
    STOP,
    STOPPED,
    StopPlan,
    StopRun,
    build_stop_plan,
    changes,
    held_back,
    vms_text,
)

if TYPE_CHECKING:
    from svcnb.client import Client

EXAMPLE = """examples:
  svcnb stop --region eu-central-1 --name 'ci-*'                 # print the plan only
  svcnb stop --status running --region eu-central-1 --plan-out stop.json
  svcnb stop --review stop.json
  svcnb stop --apply stop.json --approver sam --store data/store
  svcnb stop --id vm_358c956bf1e3c6a7 --id vm_eca2d91cff2db54d \\
             --include-protected vm_eca2d91cff2db54d --plan-out stop.json  # the sandbox's ids
  svcnb stop --region us-east-1 --limit 25 --plan-out big.json   # raise the limit explicitly"""


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("the limit must be at least 1")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXAMPLE
    what = parser.add_argument_group("filter (all terms must match)")
    what.add_argument("--status", help="status class (running, stopped...) or the service's word")
    what.add_argument("--region", help="region slug")
    what.add_argument("--plan-slug", dest="plan_slug", metavar="SLUG", help="VM plan slug")
    what.add_argument(
        "--name", metavar="PATTERN", help="name pattern such as 'web-*' (case ignored)"
    )
    what.add_argument("--id", dest="ids", action="append", metavar="VM_ID", help="a VM id (repeat)")
    what.add_argument(
        "--include-protected",
        action="append",
        metavar="VM_ID",
        help="stop this protected VM too, if the filter matches it (repeat)",
    )
    parser.add_argument(
        "--limit",
        type=_limit,
        default=DEFAULT_LIMIT,
        help="most VMs one plan may stop; raising it is this explicit option",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--plan-out", metavar="FILE", help="save the plan as JSON to FILE")
    mode.add_argument("--review", metavar="FILE", help="print a saved plan and what changed since")
    mode.add_argument("--apply", metavar="FILE", help="apply a saved plan (needs --approver)")
    parser.add_argument(
        "--approver",
        metavar="NAME",
        help="who approved the plan: required with --apply, recorded in the audit log",
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for each VM to stop"
    )
    parser.add_argument(
        "--width",
        type=_columns,
        default=DEFAULT_WIDTH,
        metavar="COLUMNS",
        help="fit the plan and the outcome table of --apply in this many columns (long "
        "reasons wrap)",
    )
    _common.add_store_option(parser, ", whose audit log records the apply")


# the outcome table of --apply: one short row per VM of the plan, long reasons wrapped
OUTCOME_TABLE = ["vm_id", "name", "decision", "outcome", "reason"]
DEFAULT_WIDTH = 100


def _columns(text: str) -> int:
    value = _limit(text)
    if value < 40:
        raise argparse.ArgumentTypeError(f"--width {value} is too narrow; give 40 or more")
    return value


def _fit(text: str, width: int = DEFAULT_WIDTH) -> str:
    """``text`` with each long line wrapped at ``width`` (continuations indented; words whole)."""
    out = []
    for line in text.splitlines():
        lead = line[: len(line) - len(line.lstrip())]
        out.extend(
            textwrap.wrap(
                line,
                width,
                subsequent_indent=lead + "    ",
                break_long_words=False,
                break_on_hyphens=False,
            )
            or [""]
        )
    return "\n".join(out)


def _table(frame: pd.DataFrame, columns: list[str], width: int = DEFAULT_WIDTH) -> str:
    """``frame``'s ``columns`` as a text table no wider than ``width`` (reasons wrap whole)."""
    from svcnb.reports import text_table

    return text_table(frame, width, columns)


def run(args: argparse.Namespace) -> int:
    from svcnb.errors import SvcnbError
    from svcnb.plans import PlanError

    try:
        return _run(args)
    except PlanError as exc:
        return _common.fail("stop", str(exc), 2)
    except SvcnbError as exc:
        # ConfigError goes up: svcnb.cli._common prints it as a usage mistake (exit 2)
        from svcnb.config import ConfigError

        if isinstance(exc, ConfigError):
            raise
        return _common.fail("stop", str(exc), 1)


def _run(args: argparse.Namespace) -> int:
    from svcnb.plans import PlanError

    filters = any(
        (args.status, args.region, args.plan_slug, args.name, args.ids, args.include_protected)
    )
    saved = args.apply or args.review
    if saved and filters:
        raise PlanError(
            "filter options build a new plan; a saved plan is applied or reviewed as it was "
            "built: drop the filter options, or build a new plan with --plan-out"
        )
    if args.approver and not args.apply:
        raise PlanError("--approver goes with --apply FILE")
    if args.apply and not (args.approver or "").strip():
        raise PlanError("--apply needs --approver NAME: who approved this plan")
    if not saved and not filters:
        raise PlanError(
            "give filter terms to build a plan (e.g. --region eu-central-1 --status running), "
            "or --review/--apply FILE for a saved one; svcnb stop --help has examples"
        )
    plan = StopPlan.load(saved) if saved else None
    with _common.client() as client:
        if plan is None:
            plan = build_stop_plan(
                client,
                status=args.status,
                region=args.region,
                plan=args.plan_slug,
                name=args.name,
                ids=args.ids or (),
                include_protected=args.include_protected or (),
                limit=args.limit,
            )
            print(_fit(plan.describe(), args.width))
            if args.plan_out:
                plan.save(args.plan_out)
                print(
                    f"saved to {args.plan_out}; apply with: "
                    f"svcnb stop --apply {args.plan_out} --approver NAME"
                )
            return 0
        print(_fit(plan.describe(), args.width))
        if args.review:
            return _review(plan, client)
        from svcnb.store import Store

        run_ = StopRun(
            plan, client, approver=args.approver, store=Store(args.store), limit=args.limit
        )
        try:
            run_.queue()
            run_.wait(args.timeout)
        finally:
            run_.record()
        out = run_.outcomes
        print(f"\napplied by {run_.approver}; recorded in the audit log of {run_.store.path}")
        print(_table(out, OUTCOME_TABLE, args.width))
        acted = out[out["outcome"] != SKIPPED]
        return 0 if (acted["outcome"] == STOPPED).all() else 1


def _review(plan: StopPlan, client: Client) -> int:
    """Print which VMs of the plan changed since it was built (nothing is sent)."""
    from svcnb import frames
    from svcnb.errors import NotFound

    print("\nchecked against the fleet now:")
    moved = 0
    # the frames' columns are named by str; pandas-stubs key a record by any Hashable
    rows = cast(list[dict[str, Any]], plan.part(STOP).to_dict("records"))
    for row in rows:
        try:
            now = cast(
                dict[str, Any],
                frames.vms([client.vms.get(row["vm_id"])], pins=client.pins).iloc[0].to_dict(),
            )
            held = held_back(plan, now)
            said = ([held] if held else []) + changes(row, now)
        except NotFound:
            said = ["the VM no longer exists"]
        moved += bool(said)
        print(f"  {row['name']} ({row['vm_id']}): " + ("; ".join(said) if said else "unchanged"))
    if moved:
        print(
            f"{vms_text(moved)} held back by the plan's rules or changed since it was built; "
            f"applying would refuse {'it' if moved == 1 else 'them'}"
        )
    return 0
