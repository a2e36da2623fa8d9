"""Writing a snapshot (published through the catalog) and reading the state at one.

A catalog entry is the published record of one snapshot::

    {"snapshot_id", "seq", "server_time", "local_time", "server", "account", "partition",
     "rows": {resource: rows present},
     "parts": {resource: [segment, versions in the segment's changes with _snapshot <= seq,
                          base file, changes file or None]},
     "resources": {resource: {"status": "ok" | "incomplete" | "missing", "reason": str | None,
                              "rows": int | None, "unreadable": {column: values not read}}},
     "pins": {assumption: {"value", "where"}}}

``pins`` (left out when none) are the kept pins (``Assumption.kept``, docs/contracts.md §0).
The changes of a segment are read from the file of the latest snapshot in that segment: it holds
every version since the base, and ``versions`` says how many a snapshot sees. Under ``resources``
a key whose value would be None or ``{}`` is left out (``resource_status`` gives all four); the
counts tell a damaged or truncated file from a good one. ``account`` is the wallet id,
``partition`` the account's name (accounts and ``adopt``: docs/contracts.md §5); an entry without
``partition`` is ``DEFAULT_ACCOUNT``'s, its files at the table's root. Seqs are numbered across
the whole store; each account's snapshots, segments and files are its own.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs

from svcnb.assumptions import Pins, kept_pins
from svcnb.config import DEFAULT_ACCOUNT, service_url
from svcnb.frames import KEYS, SCHEMAS, ResourceName
from svcnb.times import to_utc

from ._catalog import Catalog, data_file, sync
from ._fs import Facts, Location
from ._layout import OriginError, StoreError, warn
from ._scrub import scrub
from ._segments import (
    REMOVED,
    SEQ,
    VALID_FROM,
    arrow_schema,
    frame_keys,
    normalized,
    parquet_options,
    row_hashes,
    sort_by_key,
    state,
    to_frame,
    to_table,
)

RESOURCES: tuple[ResourceName, ...] = tuple(SCHEMAS)
EVERY_NAME = "*"
_log = logging.getLogger("svcnb.store")

# a new segment starts when its changes would exceed this share of its base rows, and at least
# this many rows: a load then reads at most (1 + share) x the rows of one full copy
SEGMENT_SHARE = 0.3
SEGMENT_MIN_CHANGES = 500
# a writer that keeps losing the race to publish gives up after this many tries
ATTEMPTS = 20


class Unreadable(Exception):
    """A segment file is missing, damaged or does not hold what the manifest recorded."""


def check_frame(resource: ResourceName, frame: pd.DataFrame) -> None:
    missing = [c for c in SCHEMAS[resource] if c not in frame.columns]
    if missing:
        raise ValueError(
            f"frames[{resource!r}] lacks columns {missing}: build it with svcnb.frames.{resource}()"
        )
    keys = frame_keys(resource, frame)
    if keys.has_duplicates:
        dup = keys[keys.duplicated()][0]
        raise ValueError(f"frames[{resource!r}] holds key {dup!r} twice; keys {KEYS[resource]}")


def _tombstones(resource: ResourceName, keys: pd.DataFrame, seq: int, valid_from: Any) -> pa.Table:
    schema = arrow_schema(resource)
    n = len(keys)
    arrays = []
    for field in schema:
        if field.name in KEYS[resource]:
            arrays.append(pa.array(keys[field.name].astype(object).tolist(), type=field.type))
        elif field.name == SEQ:
            arrays.append(pa.array([seq] * n, type=field.type))
        elif field.name == VALID_FROM:
            arrays.append(pa.array([pd.Timestamp(valid_from)] * n, type=field.type))
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


def account_of(entry: Mapping[str, Any]) -> str:
    """The account name of a catalog entry (``DEFAULT_ACCOUNT`` in a single-account store)."""
    return entry.get("partition") or DEFAULT_ACCOUNT


def accounts_in(entries: list[dict[str, Any]]) -> list[str]:
    """The account names of a store, in the order of their first snapshot."""
    return list(dict.fromkeys(account_of(e) for e in entries))


def adopted(entries: list[dict[str, Any]]) -> str | None:
    """The name the one account of a single-account store adopted (``adopt``), else None:
    records written before it name that account ``DEFAULT_ACCOUNT``."""
    return account_of(entries[0]) if entries and entries[0].get("adopted") else None


def partitioned(entries: list[dict[str, Any]]) -> bool | None:
    """Whether the store keeps accounts apart (None: no snapshot yet, the first decides)."""
    return bool(entries[0].get("partition")) if entries else None


def segment_files(
    entries: list[dict[str, Any]], resource: ResourceName, segment: int
) -> tuple[str, str | None]:
    """Base and changes file of ``segment``: those of its latest snapshot (which holds every
    version written in the segment so far)."""
    for entry in reversed(entries):
        part = entry["parts"].get(resource)
        if part is not None and part[0] == segment:
            return part[2], part[3]
    raise Unreadable(f"no snapshot in the catalog holds segment {segment} of {resource}")


def _read(
    loc: Location,
    resource: str,
    name: str,
    upto: int | None = None,
    columns: Collection[str] | None = None,
) -> pa.Table:
    # a remote read waits on the network, where Arrow's threads overlap the column chunks
    table = loc.read_parquet(loc.file(resource, name), threads=not loc.local, columns=columns)
    return normalized(table, upto)


def read_part(
    loc: Location,
    resource: ResourceName,
    entry: Mapping[str, Any],
    entries: list[dict[str, Any]],
    columns: Collection[str] | None = None,
) -> list[pa.Table]:
    """The base and changes tables holding ``resource`` at ``entry``; raises Unreadable.
    ``columns``: the resource's columns wanted (its keys among them); the versions' own
    columns are always read."""
    segment, expected = entry["parts"][resource][:2]
    base_name, changes_name = segment_files(entries, resource, segment)
    if columns is not None:
        columns = {*columns, *KEYS[resource], SEQ, VALID_FROM, REMOVED}
    try:
        if not expected or changes_name is None:
            return [_read(loc, resource, base_name, columns=columns)]
        later = _reader().submit(_read, loc, resource, changes_name, entry["seq"], columns)
        base = _read(loc, resource, base_name, columns=columns)
        changes = later.result()
    except (OSError, pa.ArrowException) as exc:
        raise Unreadable(f"{exc}") from None
    if changes.num_rows != expected:
        raise Unreadable(
            f"{loc.file(resource, changes_name)} holds {changes.num_rows} versions up to "
            f"snapshot {entry['seq']}, the catalog recorded {expected}"
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
    doubt = incomplete(entry, resource)
    return {
        "status": ("incomplete" if doubt else "ok") if ok else "missing",
        "reason": doubt if ok else reason(entry, resource),
        "rows": entry["rows"][resource] if ok else None,
        "unreadable": unreadable(entry, resource),
    }


def incomplete(entry: Mapping[str, Any], resource: str) -> str | None:
    """Why ``resource`` at ``entry`` may be incomplete: its rows are stored, but nothing the
    service said proved the list whole (None when it was proven, or it is missing)."""
    said = entry.get("resources", {}).get(resource, {})
    return said.get("reason") if said.get("status") == "incomplete" else None


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


def state_at(
    loc: Location, resource: ResourceName, entry: Mapping[str, Any], entries: list[dict[str, Any]]
) -> pa.Table:
    table = state(resource, read_part(loc, resource, entry, entries), entry["seq"])
    if table.num_rows != entry["rows"][resource]:
        raise Unreadable(
            f"{resource} at snapshot {entry['snapshot_id']} has {table.num_rows} rows, "
            f"the catalog recorded {entry['rows'][resource]}"
        )
    return table


@dataclass
class Known:
    """What a writer needs of the previous state of one resource, kept between writes."""

    snapshot_id: str
    part: list[Any]  # [segment, versions in changes, base file, changes file]
    hashes: pd.Series  # one per row, by key
    keys: pd.DataFrame  # the key columns, rows as in ``hashes``
    base_rows: int
    changes: pa.Table | None


def _known(
    loc: Location,
    resource: ResourceName,
    prev: dict | None,
    entries: list[dict[str, Any]],
    cache: dict[str, Known],
) -> Known | None:
    """What the latest snapshot with ``resource`` (``prev``) held: new rows are compared to it,
    also across snapshots that missed the resource."""
    if prev is None:
        return None
    hit = cache.get(resource)
    if (
        hit is not None
        and hit.snapshot_id == prev["snapshot_id"]
        and hit.part == prev["parts"][resource]
    ):
        return hit
    try:
        tables = read_part(loc, resource, prev, entries)
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
    loc: Location,
    resource: ResourceName,
    frame: pd.DataFrame,
    entry: dict[str, Any],
    old: Known | None,
    nonce: str,
    written: dict[str, Facts],
) -> Known:
    """Write what changed in ``resource``; returns what the next write needs to know."""
    seq, when = entry["seq"], entry["server_time"] or entry["local_time"]
    entry["rows"][resource] = len(frame)
    keys = list(KEYS[resource])
    new_h = row_hashes(resource, frame)

    def put(kind: str, table: pa.Table) -> str:
        name = data_file(seq, nonce, kind)
        if entry.get("partition"):
            name = f"account={entry['partition']}/{name}"
        path = loc.file(resource, name)
        written[path] = loc.write_parquet(path, table, **parquet_options(table))
        return name

    if old is not None:
        segment, _, base_name, changes_name = old.part
        same = new_h.index.isin(old.hashes.index)
        same[same] = new_h[same].to_numpy() == old.hashes.reindex(new_h.index[same]).to_numpy()
        changed = frame.loc[~same]
        gone = old.keys.loc[~old.hashes.index.isin(new_h.index)]
        kept = old.changes.num_rows if old.changes is not None else 0
        total = kept + len(changed) + len(gone)
        if not len(changed) and not len(gone):
            part = [segment, kept, base_name, changes_name]
            entry["parts"][resource] = part
            return Known(entry["snapshot_id"], part, new_h, frame[keys], old.base_rows, old.changes)
        if total <= max(SEGMENT_SHARE * old.base_rows, SEGMENT_MIN_CHANGES):
            parts = [old.changes] if old.changes is not None else []
            parts += [
                to_table(resource, changed, seq, when),
                _tombstones(resource, gone, seq, when),
            ]
            changes = pa.concat_tables(parts).combine_chunks()
            part = [segment, total, base_name, put("changes", changes)]
            entry["parts"][resource] = part
            return Known(entry["snapshot_id"], part, new_h, frame[keys], old.base_rows, changes)
    base = sort_by_key(resource, to_table(resource, frame, seq, when))
    part = [seq, 0, put("base", base), None]
    entry["parts"][resource] = part
    return Known(entry["snapshot_id"], part, new_h, frame[keys], len(frame), None)


def _stamp(value: Any) -> str | None:
    if value is None or value is pd.NaT:
        return None
    return to_utc(value, "server_time").isoformat()


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
    for resource in RESOURCES:
        if resource in frames:
            check_frame(resource, frames[resource])
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


def _identity(entries: list[dict[str, Any]], key: str) -> str | None:
    """The store's server or account: that of its first snapshot that recorded one."""
    for entry in entries:
        if entry.get(key):
            return entry[key]
    return None


def check_origin(
    loc: Location,
    entries: list[dict[str, Any]],
    server: str | None,
    account: str | None,
    when: str | None,
    allow_older: bool,
) -> None:
    """Refuse a snapshot from another server or account than the one the store holds under
    this account name (``entries`` are that name's), or one older than that account's latest
    (unless ``allow_older``)."""
    for key, value, what in (("server", server, "server"), ("account", account, "account")):
        held = _identity(entries, key)
        if value and held and _same(key, value) != _same(key, held):
            name = account_of(entries[0])
            advice = (
                "Check the account's base_url and token (config file, or SVC_BASE_URL and "
                "SVC_API_KEY), or use another store or account name for it"
            )
            if what == "server" and _on_this_machine(held) and _on_this_machine(value):
                # two servers on this machine: most likely a sandbox started again afresh
                advice = (
                    "Both are on this machine: a sandbox started again without its saved state "
                    "is a new one, with another account; restart the one whose history this is "
                    "(`svcnb sandbox --state-file FILE` serves its saved account on its port), "
                    "or use another store or account name for this one"
                )
            raise OriginError(
                f"the store {loc.url} holds the history of {what} {held!r} under account "
                f"{name!r}; this snapshot is from {what} {value!r}. {advice}",
                what=what,
                held=str(held),
                given=str(value),
            )
    if entries and when and not allow_older:
        latest = entries[-1]["server_time"] or entries[-1]["local_time"]
        if pd.Timestamp(when) < pd.Timestamp(latest):
            raise OriginError(
                f"this snapshot's server time {when} is earlier than the latest in {loc.url} "
                f"({entries[-1]['snapshot_id']} at {latest}): the server's clock went back or "
                "this is another server. Pass allow_older=True to store it anyway",
                what="time",
                held=str(latest),
                given=str(when),
            )


def _on_this_machine(url: str) -> bool:
    host = urlsplit(str(url)).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1")


def _same(key: str, value: str) -> str:
    # entries written before servers were recorded as service_url keep the URL as it was given
    return service_url(value) if key == "server" else value


def choose_partition(loc: Location, entries: list[dict[str, Any]], name: str | None) -> str | None:
    """The partition a snapshot of account ``name`` goes to (None: the single-account layout)."""
    layout = partitioned(entries)
    if layout is None:
        return name
    if not layout:
        if name in (None, DEFAULT_ACCOUNT):
            return None
        raise StoreError(
            f"the store {loc.url} keeps one account, unnamed (it was started by a snapshot that "
            f"named none); before it takes account {name!r}, name the one it holds (its whole "
            f"history moves under that name): `svcnb snapshots --store {loc.url} --adopt NAME`"
        )
    if name is not None:
        return name
    names = accounts_in(entries)
    if len(names) == 1:
        return names[0]
    raise StoreError(
        f"the store {loc.url} holds accounts {', '.join(names)}; name the one this snapshot "
        "is of (--account NAME, Store.take(client, account=NAME))"
    )


def adopt(loc: Location, catalog: Catalog, name: str) -> int:
    """Give the one account of a single-account store the name ``name``: every snapshot is
    then that account's, read as before, and the store takes more accounts. Returns the
    number of snapshots adopted.

    Each data file is copied into ``account=NAME/``, then the catalog is published with every
    entry under that name (one commit: a reader sees the old catalog or the new one, and the
    old files stay until no reader needs them), then each resource table is made again,
    partitioned by account (Delta cannot partition a table that was not). StoreError, with
    nothing published, when the store is empty, already keeps accounts apart, or another
    writer published meanwhile."""
    from svcnb.config import _ACCOUNT_NAME

    if not _ACCOUNT_NAME.fullmatch(name) or name in (EVERY_NAME, "all"):
        raise StoreError(
            f"{name!r} cannot name an account: letters, digits, '_', '-', '.' (up to 63, not 'all')"
        )
    entries, version = catalog.read()
    if not entries:
        raise StoreError(
            f"the store {loc.url} holds no snapshot: take its first with --account {name}"
        )
    if partitioned(entries):
        raise StoreError(
            f"the store {loc.url} already names its accounts ({', '.join(accounts_in(entries))})"
        )
    for resource, file in sorted(
        {(r, f) for e in entries for r, p in e["parts"].items() for f in p[2:] if f}
    ):
        target = loc.file(resource, f"account={name}/{file}")
        if not loc.exists(target):
            loc.write_parquet(target, loc.read_parquet(loc.file(resource, file)))
    moved = [
        {
            **entry,
            "partition": name,
            "adopted": True,
            "parts": {
                r: [*p[:2], *(f"account={name}/{f}" if f else f for f in p[2:])]
                for r, p in entry["parts"].items()
            },
        }
        for entry in entries
    ]
    refused = catalog.publish(moved, version)
    if refused:
        raise StoreError(
            f"another writer published to {loc.url} meanwhile ({refused}); nothing was "
            "adopted: run it again"
        )
    for resource in RESOURCES:
        if not expected_files(moved, resource):
            continue
        # the table as it was is not partitioned: made again from the catalog by tidy()
        log = f"{loc.root}/{resource}/_delta_log"
        for info in loc.fs.get_file_info(pafs.FileSelector(log, allow_not_found=True)):
            loc.delete(info.path)
        catalog.in_line.pop(resource, None)
    tidy(loc, catalog, list(RESOURCES))
    return len(moved)


def check_not_elsewhere(
    loc: Location,
    entries: list[dict[str, Any]],
    partition: str | None,
    server: str | None,
    account: str | None,
) -> None:
    """Refuse a snapshot whose server and wallet the store already holds under another account
    name: one account stored twice would be counted twice in every total over accounts."""
    if not (server and account):
        return
    mine = partition or DEFAULT_ACCOUNT
    for entry in entries:
        other = account_of(entry)
        if (
            other != mine
            and entry.get("server")
            and service_url(entry["server"]) == service_url(server)
            and entry.get("account") == account
        ):
            raise StoreError(
                f"the store {loc.url} already holds this account as {other!r}: account names "
                f"{other!r} and {mine!r} are one account, the same service "
                f"({service_url(server)}; base URLs are compared without case, default port, "
                f"trailing slash or API prefix) and the same wallet {account!r}. Snapshot it "
                f"as {other!r} and remove [accounts.{mine}] from the config"
            )


def write_snapshot(
    loc: Location,
    catalog: Catalog,
    frames: Mapping[str, pd.DataFrame],
    missing: Mapping[str, str],
    server_time: Any,
    local_time: Any,
    cache: dict[str, Known],
    *,
    server: str | None = None,
    account: str | None = None,
    allow_older: bool = False,
    name: str | None = None,
    pins: Pins | None = None,
) -> str:
    """Write and publish one snapshot of account ``name``; returns its id.

    ``frames`` and ``missing`` together name every resource, checked by ``check_write``.
    ``cache`` carries each resource's state from this process's previous write (of this account),
    used only when that write is still the latest published snapshot with the resource. When
    another writer publishes first, the snapshot is computed again on top of that one.

    ``name``: the account's name; None in a single-account store, or in a store of several for
    its only account. A store's first snapshot decides its layout: single-account when it names
    no account, by account (Delta partitions) when it does.
    """
    server_stamp, local = _stamp(server_time), _stamp(local_time)
    stamp = server_stamp or local
    if stamp is None:  # NaT for both (None is never passed: Store.write reads the clock)
        raise ValueError("a snapshot needs a time: server_time or local_time")
    for attempt in range(ATTEMPTS):
        entries, version = catalog.read()
        if version < 0:
            catalog.create()
            entries, version = catalog.read()
        partition = choose_partition(loc, entries, name)
        mine = [e for e in entries if account_of(e) == (partition or DEFAULT_ACCOUNT)]
        check_origin(loc, mine, server, account, server_stamp, allow_older)
        check_not_elsewhere(loc, entries, partition, server, account)
        seq = entries[-1]["seq"] + 1 if entries else 1
        when = pd.Timestamp(stamp)
        entry: dict[str, Any] = {
            "snapshot_id": f"{when:%Y%m%dT%H%M%SZ}-{seq:06d}",
            "seq": seq,
            "server_time": server_stamp,
            "local_time": local,
            "server": server,
            "account": account,
            **({"partition": partition} if partition else {}),
            "rows": {},
            "parts": {},
            "resources": {},
            **({"pins": kept} if (kept := kept_pins(pins or {})) else {}),
        }
        nonce = secrets.token_hex(4)
        # each data file this attempt wrote, with its rows and size: the tables' adds need both,
        # and reading them back costs a HEAD and a GET a file on object storage
        written: dict[str, Facts] = {}
        known: dict[str, Known] = {}
        for resource in RESOURCES:
            if resource in missing:
                why = scrub(missing[resource])
                entry["resources"][resource] = _status("missing", why, None, {})
                if resource in cache:  # still what the latest snapshot with it holds
                    known[resource] = cache[resource]
                continue
            frame = frames[resource]
            old = _known(loc, resource, latest_with(mine, resource), entries, cache)
            known[resource] = _write_resource(loc, resource, frame, entry, old, nonce, written)
            counts = _unreadable_counts(frame)
            doubt = frame.attrs.get("incomplete")
            status = "incomplete" if isinstance(doubt, str) and doubt else "ok"
            why = scrub(doubt) if status == "incomplete" else None
            entry["resources"][resource] = _status(status, why, len(frame), counts)
        refused = catalog.publish([*entries, entry], version)
        if refused:
            _log.info("store %s: another writer published first (%s); again", loc.url, refused)
            # publish() saw that the catalog does not hold this snapshot, so no published one
            # should name these files; should one, keeping a file costs space, deleting it a
            # snapshot
            named = published_files(loc, catalog.last)
            for path in written:
                if path not in named:
                    loc.delete(path)
            time.sleep(min(0.02 * 2**attempt, 1.0) * (0.5 + secrets.randbelow(100) / 100))
            continue
        cache.clear()
        cache.update(known)
        tidy(loc, catalog, [r for r in RESOURCES if r in frames], written)
        return entry["snapshot_id"]
    raise StoreError(
        f"gave up after {ATTEMPTS} tries: other writers to {loc.url} kept publishing first"
    )


def expected_files(entries: list[dict[str, Any]], resource: str) -> set[str]:
    """The files a resource's Delta table holds after ``entries``: the base and latest changes
    of every segment."""
    out: set[str] = set()
    seen: set[int] = set()
    for entry in reversed(entries):
        part = entry["parts"].get(resource)
        if part is None or part[0] in seen:
            continue
        seen.add(part[0])
        out.update(name for name in part[2:] if name)
    return out


def published_files(loc: Location, entries: list[dict[str, Any]]) -> set[str]:
    """The paths (as ``Location.file`` gives them) of every data file ``entries`` name."""
    return {
        loc.file(resource, name)
        for entry in entries
        for resource, part in entry["parts"].items()
        for name in part[2:]
        if name
    }


def tidy(
    loc: Location,
    catalog: Catalog,
    resources: list[ResourceName],
    written: Mapping[str, Facts] | None = None,
) -> None:
    """Bring the resource tables in line with the catalog and delete files no reader needs.

    Only a file that a published snapshot named and a later one replaced is deleted (a
    segment's changes file, rewritten whole by each snapshot that changes something), and only
    once no list of snapshots still needs it: the catalog, the catalog as it was one snapshot
    earlier (a reader that opened it), and any catalog file left whose commit is not in the
    log (a snapshot's only record once its commit is lost). A file no published entry names is
    left, whoever wrote it: it may be another writer's at work, or a lost snapshot's.
    Failures only warn: the next snapshot tidies again. ``written``: the files the snapshot
    just published wrote, by path, with their rows and sizes (any other file added is read).
    """
    try:
        entries, _ = catalog.read()
    except (StoreError, OSError, pa.ArrowException) as exc:
        warn(f"the snapshot is published; tidying {loc.url} failed and is left to the next: {exc}")
        return
    synced = []
    for resource in RESOURCES:
        want = expected_files(entries, resource)
        if not want:
            continue
        try:
            sync(loc, resource, arrow_schema(resource), want, catalog.in_line, written)
            synced.append(resource)
        except (StoreError, OSError, pa.ArrowException) as exc:
            warn(f"the snapshot is published; tidying {resource} is left to the next: {exc}")
    try:
        catalog.sweep()
        # after the sweep: the catalog files left are the ones whose lists count
        held = catalog.held()
    except (StoreError, OSError, pa.ArrowException) as exc:
        warn(f"the snapshot is published; no file is deleted: {exc}")
        return
    for resource in synced:
        if resource not in resources:
            continue
        needed = expected_files(entries, resource) | expected_files(entries[:-1], resource)
        for snapshots in held:
            needed |= expected_files(snapshots, resource)
        try:
            _delete_replaced(loc, resource, entries, needed)
        except (OSError, pa.ArrowException) as exc:
            warn(f"the snapshot is published; tidying {resource} is left to the next: {exc}")


def _delete_replaced(
    loc: Location, resource: ResourceName, entries: list[dict[str, Any]], needed: set[str]
) -> None:
    named = {name for e in entries for name in (e["parts"].get(resource) or [])[2:] if name}
    for file in loc.list_data_files(resource):
        if file in named and file not in needed:
            loc.delete(loc.file(resource, file))


def _status(
    status: str, why: str | None, rows: int | None, counts: dict[str, int]
) -> dict[str, Any]:
    full = {"status": status, "reason": why, "rows": rows, "unreadable": counts}
    return {k: v for k, v in full.items() if v is not None and v != {}}


def group_by_segment(resource: ResourceName, entries: list[dict]) -> dict[int, list[dict]]:
    """Entries by the segment that holds ``resource`` for them, in seq order; entries that
    miss the resource are left out."""
    out: dict[int, list[dict]] = {}
    for entry in entries:
        if has(entry, resource):
            out.setdefault(entry["parts"][resource][0], []).append(entry)
    return out
