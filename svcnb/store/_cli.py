"""``svcnb snapshot [--store PATH]``: take one snapshot of the account into the store."""

from __future__ import annotations

import argparse
import sys

from svcnb._connect import connect
from svcnb.errors import SvcnbError

from ._layout import StoreError
from ._store import Store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default=None,
        metavar="PATH",
        help="store folder (default: $SVCNB_STORE, else data/store)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    store = Store(args.store)
    try:
        client = connect(progress=not args.quiet)
        snapshot_id = store.take(client)
    except (SvcnbError, StoreError, OSError) as exc:
        print(f"svcnb snapshot: {exc}", file=sys.stderr)
        return 1
    row = store.snapshots().set_index("snapshot_id").loc[snapshot_id]
    counts = ", ".join(
        f"{int(row[f'{r}_rows'])} {r.replace('_', ' ')}"
        for r in ("vms", "firewall_rules", "networks", "webhooks", "deliveries")
    )
    print(f"snapshot {snapshot_id} in {store.path} (server time {row['server_time']}): {counts}")
    return 0
