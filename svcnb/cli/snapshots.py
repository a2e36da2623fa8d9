"""``svcnb snapshots [--store PATH]``: list the snapshots in the store (works offline)."""

from __future__ import annotations

import argparse

from svcnb.cli._common import add_store_option
from svcnb.store import Store, StoreError

from ._common import fail

_SHOWN = ("snapshot_id", "server_time", "local_time", "vms_rows", "firewall_rules_rows", "missing")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser)


def run(args: argparse.Namespace) -> int:
    store = Store(args.store)
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
