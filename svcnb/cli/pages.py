"""``svcnb pages``: every report's view as a self-contained HTML page, from any store (README,
"Pages for finance"). Each page is what ``svcnb report KIND --format html`` writes, through the one
renderer of a view without a kernel (``svcnb.reports.static.page``); one page that cannot be
written does not stop the others.
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path

from svcnb import files as _files
from svcnb.cli import _common, report

EXAMPLE = """example:
  svcnb pages --out pages"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXAMPLE
    _common.add_store_option(parser, ", to render the pages from")
    parser.add_argument(
        "--out", default="pages", metavar="DIR", help="folder the pages go into (default: pages)"
    )
    parser.add_argument(
        "--at",
        metavar="WHEN",
        help="as of the latest snapshot at or before this ISO date/time (default: the latest)",
    )
    parser.add_argument(
        "--account",
        metavar="NAME",
        help="the account, in a store of several (default: the store's only one)",
    )


def _report_args(kind: str, args: argparse.Namespace, target: Path) -> argparse.Namespace:
    """``svcnb report KIND --format html --out TARGET`` with this command's store, account
    and date, and every other option at the report's own default."""
    parser = argparse.ArgumentParser()
    report.add_arguments(parser)
    argv = [kind, "--format", "html", "--out", str(target)]
    for option, value in (("--store", args.store), ("--at", args.at), ("--account", args.account)):
        if value is not None:
            argv += [option, value]
    parsed = parser.parse_args(argv)
    parsed.command = "pages"  # what its errors are labelled with
    return parsed


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _common.fail("pages", f"cannot write to folder {out}: {exc.strerror or exc}")
    written: list[tuple[str, Path]] = []
    failed: list[str] = []
    for kind in report.KINDS:
        target = out / f"{kind}.html"
        code = report.run(_report_args(kind, args, target))
        if code == _common.USAGE and not written and not failed:
            return code  # the store or the date is wrong: every page would say so again
        if code:
            failed.append(kind)
        else:
            written.append((kind, target))
    links = "".join(
        f'<li><a href="{html.escape(t.name, quote=True)}">{html.escape(kind)}</a></li>'
        for kind, t in written
    )
    missing = (
        f"<p>Not written (see the command's output): {html.escape(', '.join(failed))}</p>"
        if failed
        else ""
    )
    index = out / "index.html"
    _files.write(
        index,
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>svcnb reports</title></head><body><h1>svcnb reports</h1><ul>{links}</ul>"
        f"{missing}</body></html>\n",
        secret=False,
    )
    print(f"wrote {index}")
    if failed:
        print(f"svcnb pages: no page for {', '.join(failed)} (said above)", file=sys.stderr)
        return report.FAILED
    return 0
