"""``svcnb snapshots [--store PATH]``: list the snapshots in the store (works offline)."""

from __future__ import annotations

import argparse
from pathlib import Path

from svcnb.cli._common import add_store_option
from svcnb.store import Store, StoreError

from ._common import fail

_SHOWN = ("snapshot_id", "server_time", "local_time", "vms_rows", "firewall_rules_rows", "missing")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser)
    parser.add_argument(
        "--adopt",
        metavar="NAME",
        help="name the one account of a store started without an account name NAME: its whole "
        "history becomes NAME's and the store takes more accounts (--account, --all)",
    )


def run(args: argparse.Namespace) -> int:
    store = Store(args.store)
    if args.adopt:
        try:
            done = store.adopt(args.adopt)
        except StoreError as exc:
            return fail("snapshots", str(exc), 1)
        print(f"{done} snapshot(s) of {store.path} are now account {args.adopt!r}")
        print(_left_behind(store))
    try:
        frame = store.snapshots()
    except StoreError as exc:
        return fail("snapshots", str(exc), 1)
    if frame.empty:
        print(f"no snapshots in {store.path}; take one with `svcnb snapshot --store {store.path}`")
        return 0
    # a store of several accounts says whose each snapshot is
    shown = [*_SHOWN, "account"] if frame["account"].nunique() > 1 else list(_SHOWN)
    print(frame[shown].to_string(index=False))
    print(f"{len(frame)} snapshot(s) in {store.path}")
    return 0


def _left_behind(store: Store) -> str:
    """The line on the data files adopt copied and left at the tables' roots: no reader of
    the store reads them again, a reader that started before may still."""
    from svcnb.store import RESOURCES

    root = str(store.path).rstrip("/")
    if not isinstance(store.path, Path):
        return (
            f"the earlier data files stay at each table's root under {root} (no reader reads "
            "them again); delete them once no reader of the store from before can be running"
        )
    files = [f for r in RESOURCES for f in (store.path / r).glob("*.parquet")]
    return (
        f"{len(files)} earlier data file(s) stay at the tables' roots ({root}/TABLE/*.parquet) "
        "for a reader that started before; no reader reads them again: delete them once none "
        "of those can be running"
    )
