"""Writing a snapshot (under the writer lock) and reading the state at one.

A manifest entry is the published record of one snapshot::

    {"snapshot_id", "seq", "server_time", "local_time",
     "rows": {resource: rows present},
     "parts": {resource: [segment, versions in changes.parquet with _seq <= seq]},
     "resources": {resource: {"status": "ok" | "missing", "reason": str | None,
                              "rows": int | None, "unreadable": {column: values not read}}}}

Under ``resources`` a key whose value would be None or ``{}`` is left out: the manifest is
rewritten whole at every snapshot, and most say only ``{"status": "ok", "rows": n}``
(``resource_status`` gives all four). The counts let a reader tell a damaged or truncated file
from a good one. A resource that could
not be read has no ``rows`` or ``parts`` entry: nothing was written for it, its last known rows
stay where they were, and readers say it is missing rather than empty. Entries written before
``resources`` existed have every resource, all ``ok``.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from svcnb.frames import KEYS, SCHEMAS

from ._audit import scrub
from ._layout import WRITING, read_manifest, warn, write_manifest, writer_lock
from ._segments import (
    CHANGES,
    REMOVED,
    SEQ,
    arrow_schema,
    files,
    frame_keys,
    read_table,
    row_hashes,
    sort_by_key,
    state,
    to_frame,
    to_table,
    write_table,
)

RESOURCES: tuple[str, ...] = tuple(SCHEMAS)
_log = logging.getLogger("svcnb.store")

# a new segment starts when its changes would exceed this share of its base rows, and at least
# this many rows: a load then reads at most (1 + share) x the rows of one full copy
SEGMENT_SHARE = 0.3
SEGMENT_MIN_CHANGES = 500


class Unreadable(Exception):
    """A segment file is missing, damaged or does not hold what the manifest recorded."""


def check_frame(resource: str, frame: pd.DataFrame) -> None:
    missing = [c for c in SCHEMAS[resource] if c not in frame.columns]
    if missing:
        raise ValueError(
            f"frames[{resource!r}] lacks columns {missing}: build it with svcnb.frames.{resource}()"
        )
    keys = frame_keys(resource, frame)
    if keys.has_duplicates:
        dup = keys[keys.duplicated()][0]
        raise ValueError(f"frames[{resource!r}] holds key {dup!r} twice; keys {KEYS[resource]}")


def _tombstones(resource: str, keys: pd.DataFrame, seq: int) -> pa.Table:
    schema = arrow_schema(resource)
    n = len(keys)
    arrays = []
    for field in schema:
        if field.name in KEYS[resource]:
            arrays.append(pa.array(keys[field.name].astype(object).tolist(), type=field.type))
        elif field.name == SEQ:
            arrays.append(pa.array([seq] * n, type=field.type))
        elif field.name == REMOVED:
            arrays.append(pa.array([True] * n, type=field.type))
        else:
            arrays.append(pa.nulls(n, type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


# The changes file is read on a helper thread while the calling thread reads the base: the two
# reads side by side take about the time of the base alone (bench/store.py). One helper per
# process: a forked child gets its own, its parent's thread does not exist there.
_READERS: dict[int, ThreadPoolExecutor] = {}
_READERS_LOCK = threading.Lock()


def _reader() -> ThreadPoolExecutor:
    with _READERS_LOCK:
        pool = _READERS.get(os.getpid())
        if pool is None:
            _READERS.clear()
            pool = _READERS[os.getpid()] = ThreadPoolExecutor(1, "svcnb-store-read")
        return pool


def read_part(root: Path, resource: str, entry: Mapping[str, Any]) -> list[pa.Table]:
    """The base and changes tables holding ``resource`` at ``entry``; raises Unreadable."""
    segment, expected = entry["parts"][resource]
    base_path, changes_path = files(root, resource, segment)
    try:
        if not expected:
            return [read_table(base_path)]
        later = _reader().submit(read_table, changes_path, entry["seq"])
        base = read_table(base_path)
        changes = later.result()
    except (OSError, pa.ArrowException) as exc:
        raise Unreadable(f"{exc}") from None
    if changes.num_rows != expected:
        raise Unreadable(
            f"{changes_path} holds {changes.num_rows} versions up to snapshot "
            f"{entry['seq']}, the manifest recorded {expected}"
        )
    return [base, changes]


def has(entry: Mapping[str, Any], resource: str) -> bool:
    """Whether ``resource`` was read when ``entry`` was taken (its rows are stored)."""
    return resource in entry["parts"]


def reason(entry: Mapping[str, Any], resource: str) -> str | None:
    """Why ``resource`` is missing from ``entry`` (None when it is not)."""
    if has(entry, resource):
        return None
    recorded = entry.get("resources", {}).get(resource, {}).get("reason")
    return recorded or "the snapshot holds no rows for it"


def resource_status(entry: Mapping[str, Any], resource: str) -> dict[str, Any]:
    """status, reason, rows and unreadable of ``resource`` at ``entry``, every key present."""
    ok = has(entry, resource)
    return {
        "status": "ok" if ok else "missing",
        "reason": reason(entry, resource),
        "rows": entry["rows"][resource] if ok else None,
        "unreadable": unreadable(entry, resource),
    }


def unreadable(entry: Mapping[str, Any], resource: str) -> dict[str, int]:
    """Values per column that frames could not read in ``resource`` at ``entry``."""
    return dict(entry.get("resources", {}).get(resource, {}).get("unreadable") or {})


def latest_with(entries: list[dict[str, Any]], resource: str) -> dict[str, Any] | None:
    """The last of ``entries`` that has ``resource``."""
    for entry in reversed(entries):
        if has(entry, resource):
            return entry
    return None


def _unreadable_counts(frame: pd.DataFrame) -> dict[str, int]:
    # frames put {column: count} in attrs for values they kept as NA because they could not read
    # them; anything else there is not ours to keep
    found = frame.attrs.get("unreadable")
    if not isinstance(found, Mapping):
        return {}
    return {str(c): int(n) for c, n in found.items() if isinstance(n, int | float) and n > 0}


def state_at(root: Path, resource: str, entry: Mapping[str, Any]) -> pa.Table:
    table = state(resource, read_part(root, resource, entry), entry["seq"])
    if table.num_rows != entry["rows"][resource]:
        raise Unreadable(
            f"{resource} at snapshot {entry['snapshot_id']} has {table.num_rows} rows, "
            f"the manifest recorded {entry['rows'][resource]}"
        )
    return table


@dataclass
class Known:
    """What a writer needs of the previous state of one resource, kept between writes."""

    snapshot_id: str
    part: list[int]  # [segment, versions in changes]
    hashes: pd.Series  # one per row, by key
    keys: pd.DataFrame  # the key columns, rows as in ``hashes``
    base_rows: int
    changes: pa.Table | None


def _known(root: Path, resource: str, prev: dict | None, cache: dict[str, Known]) -> Known | None:
    """What the latest snapshot with ``resource`` (``prev``) held: new rows are compared to it,
    also across snapshots that missed the resource."""
    if prev is None:
        return None
    hit = cache.get(resource)
    current = hit is not None and hit.snapshot_id == prev["snapshot_id"]
    if current and hit.part == prev["parts"][resource]:
        return hit
    try:
        tables = read_part(root, resource, prev)
        before = to_frame(resource, state(resource, tables, prev["seq"]))
    except Unreadable as exc:
        warn(f"{resource}: the previous snapshot is unreadable ({exc}); starting a new segment")
        return None
    return Known(
        prev["snapshot_id"],
        prev["parts"][resource],
        row_hashes(resource, before),
        before[list(KEYS[resource])],
        tables[0].num_rows,
        tables[1] if len(tables) > 1 else None,
    )


def _write_resource(
    root: Path, resource: str, frame: pd.DataFrame, entry: dict[str, Any], old: Known | None
) -> Known:
    """Write what changed in ``resource``; returns what the next write needs to know."""
    seq = entry["seq"]
    meta = {"seq": seq, "snapshot_id": entry["snapshot_id"], "resource": resource}
    entry["rows"][resource] = len(frame)
    keys = list(KEYS[resource])
    new_h = row_hashes(resource, frame)
    if old is not None:
        segment = old.part[0]
        same = new_h.index.isin(old.hashes.index)
        same[same] = new_h[same].to_numpy() == old.hashes.reindex(new_h.index[same]).to_numpy()
        changed = frame.loc[~same]
        gone = old.keys.loc[~old.hashes.index.isin(new_h.index)]
        kept = old.changes.num_rows if old.changes is not None else 0
        total = kept + len(changed) + len(gone)
        if not len(changed) and not len(gone):
            entry["parts"][resource] = [segment, kept]
            return Known(
                entry["snapshot_id"],
                [segment, kept],
                new_h,
                frame[keys],
                old.base_rows,
                old.changes,
            )
        if total <= max(SEGMENT_SHARE * old.base_rows, SEGMENT_MIN_CHANGES):
            parts = [old.changes] if old.changes is not None else []
            parts += [to_table(resource, changed, seq), _tombstones(resource, gone, seq)]
            changes = pa.concat_tables(parts).combine_chunks()
            _, changes_path = files(root, resource, segment)
            write_table(changes_path, changes, meta)
            entry["parts"][resource] = [segment, total]
            return Known(
                entry["snapshot_id"], [segment, total], new_h, frame[keys], old.base_rows, changes
            )
    base_path, _ = files(root, resource, seq)
    write_table(base_path, sort_by_key(resource, to_table(resource, frame, seq)), meta)
    entry["parts"][resource] = [seq, 0]
    return Known(entry["snapshot_id"], [seq, 0], new_h, frame[keys], len(frame), None)


def _stamp(value: Any) -> str | None:
    if value is None or value is pd.NaT:
        return None
    ts = pd.Timestamp(value)
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return ts.isoformat()


def _recover(root: Path, manifest: list[dict[str, Any]]) -> None:
    """Remove what a writer killed before it published left behind: segments it started, temp
    files, and versions it appended to a changes file. Readers never saw them (they follow the
    manifest); this keeps them from raw DuckDB or pyarrow reads and from the next snapshot."""
    published = manifest[-1]["seq"] if manifest else 0
    _log.info("store %s: cleaning up after a snapshot that was interrupted", root)
    for resource in RESOURCES:
        for folder in sorted((root / resource).glob("segment=*")):
            if int(folder.name.partition("=")[2]) > published:
                shutil.rmtree(folder, ignore_errors=True)
                continue
            for tmp in folder.glob(".*.tmp"):
                tmp.unlink(missing_ok=True)
            changes = folder / CHANGES
            try:
                table = read_table(changes) if changes.exists() else None
            except (OSError, pa.ArrowException):
                continue  # damaged: readers skip the snapshots that need it
            if table is not None and table.num_rows and max_seq(table) > published:
                meta = {"seq": published, "resource": resource, "recovered": True}
                write_table(changes, read_table(changes, upto=published), meta)


def check_write(
    frames: Mapping[str, pd.DataFrame], missing: Mapping[str, str], partial: bool
) -> dict[str, str]:
    """Frames a snapshot can keep, and every resource given a frame or declared missing;
    returns ``missing`` completed.

    A resource nobody spoke for is an error unless ``partial``, and then it is missing: it is
    never stored as empty, which readers would take for "the account has none".
    """
    unknown = (set(frames) | set(missing)) - set(RESOURCES)
    if unknown:
        raise ValueError(f"unknown resources {sorted(unknown)}; known: {', '.join(RESOURCES)}")
    for resource, frame in frames.items():
        check_frame(resource, frame)
    both = sorted(set(frames) & set(missing))
    if both:
        raise ValueError(f"{both} are given a frame and declared missing; choose one")
    left = [r for r in RESOURCES if r not in frames and r not in missing]
    if left and not partial:
        raise ValueError(
            f"frames lacks {left}: give each its frame (svcnb.frames.empty(name) when the "
            "account truly has none), declare it missing={name: 'why'}, or pass partial=True "
            "to record every resource left out as missing"
        )
    if not frames:
        raise ValueError("no frame to store: every resource is missing")
    done = {r: str(why) for r, why in missing.items()}
    done.update(dict.fromkeys(left, "left out of Store.write (partial=True)"))
    return done


def write_snapshot(
    root: Path,
    frames: Mapping[str, pd.DataFrame],
    missing: Mapping[str, str],
    server_time: Any,
    local_time: Any,
    cache: dict[str, Known],
) -> str:
    """Write and publish one snapshot under the writer lock; returns its id.

    ``frames`` and ``missing`` together name every resource, checked by ``check_write``.
    ``cache`` carries each resource's state from this process's previous write, used only when
    that write is still the latest published snapshot with the resource.
    """
    server, local = _stamp(server_time), _stamp(local_time)
    with writer_lock(root):
        manifest = read_manifest(root)
        marker = root / WRITING
        if marker.exists():
            _recover(root, manifest)
        marker.touch()
        seq = manifest[-1]["seq"] + 1 if manifest else 1
        when = pd.Timestamp(server or local)
        entry: dict[str, Any] = {
            "snapshot_id": f"{when:%Y%m%dT%H%M%SZ}-{seq:06d}",
            "seq": seq,
            "server_time": server,
            "local_time": local,
            "rows": {},
            "parts": {},
            "resources": {},
        }
        known = {}
        for resource in RESOURCES:
            if resource in missing:
                why = scrub(missing[resource])
                entry["resources"][resource] = _status("missing", why, None, {})
                if resource in cache:  # still what the latest snapshot with it holds
                    known[resource] = cache[resource]
                continue
            frame = frames[resource]
            old = _known(root, resource, latest_with(manifest, resource), cache)
            known[resource] = _write_resource(root, resource, frame, entry, old)
            counts = _unreadable_counts(frame)
            entry["resources"][resource] = _status("ok", None, len(frame), counts)
        write_manifest(root, [*manifest, entry])  # the atomic rename that publishes it
        marker.unlink()
        cache.clear()
        cache.update(known)
    return entry["snapshot_id"]


def _status(
    status: str, why: str | None, rows: int | None, counts: dict[str, int]
) -> dict[str, Any]:
    full = {"status": status, "reason": why, "rows": rows, "unreadable": counts}
    return {k: v for k, v in full.items() if v is not None and v != {}}


def max_seq(table: pa.Table) -> int:
    return int(pc.max(table.column(SEQ)).as_py())


def group_by_segment(resource: str, entries: list[dict]) -> dict[int, list[dict]]:
    """Entries by the segment that holds ``resource`` for them, in seq order; entries that
    miss the resource are left out."""
    out: dict[int, list[dict]] = {}
    for entry in entries:
        if has(entry, resource):
            out.setdefault(entry["parts"][resource][0], []).append(entry)
    return out
