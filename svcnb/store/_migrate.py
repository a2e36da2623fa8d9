"""Migrating a store in the first format to Delta tables (``svcnb migrate-store``, docs/contracts.md
§5): the new store is reported good only when every resource at every snapshot matches, dtypes
included.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ._layout import MissingResourceError, StoreError
from ._legacy import frame_at, is_legacy, read_entries
from ._old_audit import audit_frame, legacy_lines
from ._snapshots import RESOURCES, has, reason, unreadable
from ._store import Store


@dataclass
class Migrated:
    """What a migration wrote and checked."""

    snapshots: int
    frames_checked: int  # resource x snapshot pairs loaded from both stores and found equal
    rows_checked: int
    missing_checked: int  # resource x snapshot pairs missing in both, with the same reason
    audit_records: int = 0  # records of the old audit log copied, in order, and found equal


def migrate(
    old: str | os.PathLike[str],
    new: str | os.PathLike[str],
    *,
    server: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    progress: Callable[[str], object] | None = None,
) -> Migrated:
    """Copy every snapshot of the first-format store ``old`` into the empty store ``new``
    (a folder or URL) and check them row for row. ``server`` (the API's base URL) is recorded
    as the store's server, which the first format did not keep; the account is the wallet's.

    Raises StoreError when ``old`` is not a first-format store, ``new`` already holds
    snapshots, or any snapshot loads differently from the two.
    """
    say = progress or (lambda text: None)
    source = Path(old)
    if not is_legacy(source):
        raise StoreError(f"{source} holds no manifest.json: it is not a store in the old format")
    entries = read_entries(source)
    target = Store(new, storage_options=storage_options)
    if not target.snapshots().empty:
        raise StoreError(f"{target.url} already holds snapshots: migrate into an empty store")
    for entry in entries:
        frames: dict[str, pd.DataFrame] = {}
        for resource in RESOURCES:
            if has(entry, resource):
                frame = frame_at(source, resource, entry)
                frame.attrs["unreadable"] = unreadable(entry, resource)
                frames[resource] = frame
        missing: dict[str, str] = {
            r: reason(entry, r) or "" for r in RESOURCES if not has(entry, r)
        }
        written = target.write(
            frames,
            missing=missing,
            server_time=entry["server_time"],
            local_time=entry["local_time"],
            server=server,
            allow_older=True,  # the old store's order stands, whatever its clocks said
        )
        if written != entry["snapshot_id"]:
            raise StoreError(f"snapshot {entry['snapshot_id']} was written as {written}")
        say(f"wrote {written}")
    # the audit log (rule edits, accepted findings, stop plans, alerts) goes with the history,
    # into the journal, in the order it was written (the journal checks each record field for
    # field as it copies it)
    target.journal.migrate(legacy_lines(source))
    return check(source, Store(new, storage_options=storage_options), say)


def check(source: Path, target: Store, say: Callable[[str], object]) -> Migrated:
    """Every resource at every snapshot of ``source`` loads equal from ``target``."""
    entries = read_entries(source)
    listed = target.snapshots()
    if listed["snapshot_id"].tolist() != [e["snapshot_id"] for e in entries]:
        raise StoreError("the new store does not list the old store's snapshots in order")
    frames = rows = gaps = 0
    for entry in entries:
        snapshot_id = entry["snapshot_id"]
        status = target.resources(snapshot_id).set_index("resource")
        for resource in RESOURCES:
            if not has(entry, resource):
                try:
                    target._frame_of(resource, snapshot_id)
                except MissingResourceError as exc:
                    if exc.reason != (reason(entry, resource) or exc.reason):
                        raise StoreError(
                            f"{resource} at {snapshot_id}: reason {exc.reason!r} differs"
                        ) from None
                    gaps += 1
                    continue
                raise StoreError(f"{resource} at {snapshot_id} is missing in the old store only")
            want = frame_at(source, resource, entry)
            got = target._frame_of(resource, snapshot_id)
            got.attrs = {}
            try:
                pd.testing.assert_frame_equal(got, want)
            except AssertionError as exc:
                raise StoreError(f"{resource} at {snapshot_id} differs: {exc}") from None
            if status.loc[resource, "unreadable"] != unreadable(entry, resource):
                raise StoreError(f"{resource} at {snapshot_id}: unreadable counts differ")
            frames += 1
            rows += len(want)
        say(f"checked {snapshot_id}")
    return Migrated(len(entries), frames, rows, gaps, _check_audit(source, target))


def _check_audit(source: Path, target: Store) -> int:
    """The old audit log's records, in order, are the new store's (by time, firewall, rule,
    outcome and every other field they hold)."""
    want = audit_frame([record for _, record in legacy_lines(source)])
    got = target.journal.log()
    if len(got) != len(want):
        raise StoreError(f"the audit log has {len(got)} records, the old store {len(want)}")
    got = got.reindex(columns=want.columns).reset_index(drop=True)
    try:
        pd.testing.assert_frame_equal(got, want.reset_index(drop=True), check_dtype=False)
    except AssertionError as exc:
        raise StoreError(f"the audit log differs from the old store's: {exc}") from None
    return len(want)
