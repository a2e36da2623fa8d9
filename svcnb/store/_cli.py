"""``svcnb snapshot [--store PATH]``: take one snapshot of the account into the store.

The server is the one configured (``SVC_BASE_URL``/``SVC_API_KEY``, or ``SVCNB_SANDBOX``),
never a sandbox started for the occasion: a throwaway account must not enter a real history.
Exits 0 when every resource was read, 3 when the snapshot was stored without some (each named
on stderr with why), 2 when no server is configured, 1 when nothing could be stored (the store
also refuses a snapshot of another server or account than its own).
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from svcnb._connect import configured_client
from svcnb.config import ConfigError
from svcnb.errors import SvcnbError

from ._store import Store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default=None,
        metavar="PATH",
        help="store folder or URL such as s3://bucket/prefix (default: $SVCNB_STORE, else "
        "data/store)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--allow-older",
        action="store_true",
        help="store the snapshot even if the server's time is earlier than the latest one's",
    )


# the exit code when the snapshot was stored but some resource could not be read
INCOMPLETE = 3


# the exit code when no server is configured
NOT_CONFIGURED = 2


def run(args: argparse.Namespace) -> int:
    try:
        client = configured_client(progress=not args.quiet)
    except ConfigError as exc:
        print(f"svcnb snapshot: {exc}", file=sys.stderr)
        return NOT_CONFIGURED
    store = Store(args.store)
    try:
        with client:
            snapshot_id = store.take(client, allow_older=getattr(args, "allow_older", False))
    except (SvcnbError, OSError) as exc:
        print(f"svcnb snapshot: {exc}", file=sys.stderr)
        return 1
    row = store.snapshots().set_index("snapshot_id").loc[snapshot_id]
    counts = ", ".join(
        f"{int(row[f'{r}_rows'])} {r.replace('_', ' ')}"
        for r in ("vms", "firewall_rules", "networks", "webhooks", "deliveries")
        if not pd.isna(row[f"{r}_rows"])
    )
    print(f"snapshot {snapshot_id} in {store.path} (server time {row['server_time']}): {counts}")
    if row["unreadable"]:
        print(f"values svcnb could not read (kept as NA): {row['unreadable']}")
    missing = store.resources(snapshot_id).query("status == 'missing'")
    if missing.empty:
        return 0
    print(
        f"svcnb snapshot: incomplete, {len(missing)} resource(s) could not be read and are "
        "recorded as missing (not as empty):",
        file=sys.stderr,
    )
    for resource, why in zip(missing["resource"], missing["reason"], strict=True):
        print(f"  {resource}: {why}", file=sys.stderr)
    return INCOMPLETE
