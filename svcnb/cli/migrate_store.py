"""``svcnb migrate-store OLD_PATH NEW_URL``: convert a store of the first format (manifest.json
and segment folders) into Delta tables, every snapshot, then check every resource at every
snapshot row for row. Exits 0 when all match, 1 otherwise (the old store is never changed)."""

from __future__ import annotations

import argparse
import sys

from svcnb.store import StoreError, migrate

from ._common import fail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD_PATH", help="store folder in the first format")
    parser.add_argument(
        "new", metavar="NEW_URL", help="empty folder or URL such as s3://bucket/prefix"
    )
    parser.add_argument(
        "--server",
        default=None,
        metavar="URL",
        help="the API base URL the history was taken from (the first format did not keep it)",
    )
    parser.add_argument("--quiet", action="store_true", help="only the result")


def run(args: argparse.Namespace) -> int:
    progress = None if args.quiet else (lambda text: print(text, file=sys.stderr))
    try:
        done = migrate(args.old, args.new, server=args.server, progress=progress)
    except StoreError as exc:
        return fail("migrate-store", str(exc), 1)
    print(
        f"migrated {done.snapshots} snapshot(s) from {args.old} to {args.new}; checked row for "
        f"row: {done.frames_checked} resource frames ({done.rows_checked} rows) equal, "
        f"{done.missing_checked} missing resources missing in both with the same reason, "
        f"{done.audit_records} audit record(s) copied in order and equal"
    )
    return 0
