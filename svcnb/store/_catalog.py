"""The catalog: which snapshots exist (``<store>/_snapshots``), and how writers agree on it.

The catalog is one file that each snapshot replaces (the old file stays one snapshot longer for
readers that already opened it). A writer reads it at Delta version V, writes its data files
under names nobody else uses, then commits "remove the catalog file of V, add mine" at V + 1.
Had another writer published first, Delta refuses the commit (both removed the same file, and
both set the same application transaction id) and the writer starts again from the new catalog.

deltalake reads an empty or no-op commit as one that changes nothing: had it replaced a
snapshot's publish, the catalog would list one snapshot less, and the next writer would take
that snapshot's number and, tidying, delete its files. Hence ``Catalog._check_latest`` on every
read that finds the catalog moved, and ``svcnb.store._snapshots.tidy`` deleting only files a
published snapshot named and a later one replaced.

After publishing, the writer brings each resource's Delta table in line with the catalog, so
engines reading the tables without svcnb see published rows only. A writer killed in between
leaves the tables one snapshot behind; the next writer catches them up (``sync``).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
from deltalake import CommitProperties, DeltaTable, Transaction
from deltalake.exceptions import DeltaError, TableNotFoundError
from deltalake.transaction import AddAction, RemoveAction

from ._deltalog import (
    CREATE,
    Damage,
    commit_path,
    damaged_commit,
    damaged_error,
    first_line,
    log_folder,
    parse_commit,
)
from ._fs import Facts, Location
from ._layout import DamagedCommitError, StoreError

CATALOG = "_snapshots"
# the partition column of the resource tables of a store of several accounts (the account's
# name in the config); its files live under <resource>/account=NAME/
PARTITION = "account"
_APP = "svcnb.snapshots"
_TS = pa.timestamp("us", tz="UTC")
SCHEMA = pa.schema(
    [
        pa.field("snapshot", pa.int64()),
        pa.field("snapshot_id", pa.string()),
        pa.field("server_time", _TS),
        pa.field("local_time", _TS),
        pa.field("server", pa.string()),
        pa.field("account", pa.string()),
        pa.field("missing", pa.string()),
        pa.field("entry", pa.string()),
    ]
)
# what the columns hold is kept in the JSON entry too; these are for readers without svcnb
_TOP = ("snapshot_id", "seq", "server_time", "local_time", "server", "account")


def file_seq(name: str) -> int | None:
    """The seq a data file was written for (its name starts with it, after the account
    partition folder if any), None for other files."""
    head = name.rpartition("/")[2].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def data_file(seq: int, nonce: str, kind: str) -> str:
    return f"{seq:08d}-{nonce}-{kind}.parquet"


def _now_ms() -> int:
    return int(time.time() * 1000)


def partition_of(name: str) -> dict[str, str]:
    """The Delta partition values of a data file: ``account=NAME/...`` in a store of several
    accounts, none in a single-account store (files at the table's root)."""
    folder, _, _ = name.rpartition("/")
    key, _, value = folder.partition("=")
    return {key: value} if folder and key == PARTITION else {}


def add_action(name: str, facts: Facts) -> AddAction:
    """The Delta add of data file ``name`` (its path in the table), of ``facts``' rows and size."""
    rows, size = facts
    stats = json.dumps({"numRecords": rows})
    return AddAction(name, size, partition_of(name), _now_ms(), True, stats)


def _add(loc: Location, table: str, name: str, written: Mapping[str, Facts]) -> AddAction:
    """The add of file ``name`` to ``table``: its facts from ``written`` (by path) when this
    process just wrote it, else read from the file."""
    path = loc.file(table, name)
    return add_action(name, written.get(path) or loc.parquet_facts(path))


class Catalog:
    """The catalog of one store, re-read only when its Delta table moved."""

    def __init__(self, loc: Location) -> None:
        self.loc = loc
        self._table: DeltaTable | None = None
        self._file: str | None = None
        self._entries: list[dict[str, Any]] = []
        self._read_version = -1
        self._held: dict[str, list[dict[str, Any]]] = {}
        # the resource tables as this process last brought them in line (``sync``)
        self.in_line: dict[str, InLine] = {}

    def _options(self) -> dict[str, str] | None:
        return self.loc.storage_options or None

    def read(self) -> tuple[list[dict[str, Any]], int]:
        """Published snapshots in order, and the catalog's Delta version (-1: no catalog yet).

        The list is shared between callers: treat it as read-only. Raises DamagedCommitError
        when the latest commit is not one svcnb wrote: read past it, the list could be short.
        """
        try:
            if self._table is None:
                self._table = DeltaTable(
                    self.loc.table_url(CATALOG), storage_options=self._options()
                )
            elif self.loc.exists(commit_path(self.loc, CATALOG, self._table.version() + 1)):
                self._table.update_incremental()
            elif self._read_version == self._table.version():
                # one existence check per read: the common case, nothing new, costs no more
                return self._entries, self._read_version
        except TableNotFoundError:
            self._table = None
            return [], -1
        except (DeltaError, OSError) as exc:
            self._table = None  # a table half brought up to date is not read again
            raise self._unreadable(exc) from None
        version = self._table.version()
        added = self._table.get_add_actions(flatten=True).column("path").to_pylist()
        paths = [unquote(p) for p in added]
        if version != self._read_version:
            try:
                self._check_latest(version, paths)
            except StoreError:
                # the commit may be restored before the next read: read the log afresh then
                self._table = None
                raise
        if not paths:  # created, nothing published yet
            self._file, self._entries = None, []
        elif paths[0] != self._file:
            self._entries = self._parse(paths[0])
            self._file = paths[0]
        self._read_version = version
        return self._entries, version

    def _check_latest(self, version: int, paths: list[str]) -> None:
        """Raise unless the latest commit that can change what the catalog holds is what
        svcnb's publish writes: it adds the one file the catalog holds. Anything else (empty,
        torn, a no-op, another tool's) may have replaced the commit of a snapshot, which would
        then be missing from the list."""
        for at in range(version, 0, -1):  # version 0 creates the table; deltalake checks it
            path = commit_path(self.loc, CATALOG, at)
            try:
                problem, actions = parse_commit(self.loc.read_bytes(path))
            except (OSError, pa.ArrowException) as exc:
                raise StoreError(
                    f"the catalog of {self.loc.url} cannot be read: its commit "
                    f"{self.loc.url_of(path)} cannot be read ({first_line(exc)}); try again"
                ) from None
            kinds = {kind for action in actions for kind in action}
            if problem is None and kinds & CREATE and kinds <= CREATE | {"commitInfo"}:
                # writers that found no catalog all create it; the ones after the first add
                # only the table's schema again, and the commit before holds the catalog
                continue
            if problem is None:
                added = [unquote(a["add"].get("path", "")) for a in actions if "add" in a]
                if not added:
                    problem = f"adds no catalog file (it holds only {', '.join(sorted(kinds))})"
                elif len(paths) != 1 or added != paths:
                    problem = (
                        f"leaves {len(paths)} catalog files ({', '.join(paths) or 'none'}) where "
                        f"svcnb's commits leave the one they add ({', '.join(added)})"
                    )
            if problem:
                raise self._damaged(Damage(path, at, problem, at == version), replaced=True)
            return

    def _damaged(self, damage: Damage, *, replaced: bool = False) -> DamagedCommitError:
        """The error for commit ``damage``: ``replaced`` when deltalake read it as changing
        nothing (the list could be short), else deltalake could not read it."""
        where = self.loc.url_of(damage.path)
        folder = self.loc.url_of(log_folder(self.loc, CATALOG))
        if replaced:
            why = (
                "svcnb publishes each snapshot as one commit that adds the catalog's new file; "
                "read past this one, the snapshots it published would be missing from the list "
                "and the next snapshot would be published over them"
            )
        else:
            why = "Delta cannot read the catalog past it"
        todo = (
            f"Restore {where} from a backup (on object storage: the object's previous "
            "version, where the bucket keeps versions)"
        )
        if damage.latest:
            todo += (
                f". If it cannot be restored, move it out of {folder}: the catalog then lists "
                "the snapshots published before it, and the files of any it published stay "
                "where they are"
            )
        return damaged_error(
            self.loc,
            CATALOG,
            damage,
            f"the catalog of {self.loc.url} cannot be trusted",
            f"{why}, so nothing is read or written until it is repaired",
            todo,
        )

    def _unreadable(self, exc: BaseException) -> StoreError:
        found = damaged_commit(self.loc, CATALOG)
        if found:
            return self._damaged(found)
        return StoreError(f"the catalog of {self.loc.url} cannot be read: {first_line(exc)}")

    @property
    def last(self) -> list[dict[str, Any]]:
        """The entries of the latest ``read``, without looking for newer ones."""
        return self._entries

    def _parse(self, name: str) -> list[dict[str, Any]]:
        try:
            return self._entries_in(name)
        except (OSError, pa.ArrowException, ValueError, KeyError) as exc:
            raise StoreError(
                f"the catalog file {name} of {self.loc.url} is not readable ({exc}). Restore "
                f"the catalog table to an earlier version with Delta's RESTORE "
                f"(DeltaTable('{self.loc.table_url(CATALOG)}').restore(N)) and take the "
                "snapshots since again"
            ) from None

    def _entries_in(self, name: str) -> list[dict[str, Any]]:
        # catalog files are never rewritten: each is read once per process
        held = self._held.get(name)
        if held is None:
            table = self.loc.read_parquet(self.loc.file(CATALOG, name))
            held = [json.loads(text) for text in table.column("entry").to_pylist()]
            self._held[name] = held
        return held

    def held(self) -> list[list[dict[str, Any]]]:
        """The entries of every catalog file in the catalog's folder, after a ``read``.

        Besides the current file these are the ones readers of earlier versions still use,
        and any whose commit is not in the log (moved out of it, or its writer was killed
        before committing): a file such a list needs may be the only copy of a published
        snapshot's rows, so whoever deletes files keeps those. Raises StoreError naming a
        catalog file that cannot be read, since what it would protect is then unknown.
        """
        newest = self._entries[-1]["seq"] if self._entries else 0
        out = []
        for name in self.loc.list_files(CATALOG):
            seq = file_seq(name)
            if seq is None:
                continue
            if name == self._file:
                out.append(self._entries)
                continue
            try:
                out.append(self._entries_in(name))
            except (OSError, pa.ArrowException, ValueError, KeyError) as exc:
                path = self.loc.file(CATALOG, name)
                if seq > newest or not self.loc.exists(path):
                    continue  # a writer at work, or one that took its file back when refused
                raise StoreError(
                    f"the catalog file {self.loc.url_of(path)} cannot be read ({exc}); it may "
                    "list snapshots the catalog does not, so no data file is deleted while it "
                    "is there. Restore it from a backup, or move it out of the store if you "
                    "know it holds none"
                ) from None
        return out

    def create(self) -> None:
        """Create the (empty) catalog table unless it exists: every publish is then a commit
        on top of a version some writer read, which Delta checks."""
        # another writer may create it at the same moment: then read theirs
        with contextlib.suppress(DeltaError, OSError):
            DeltaTable.create(
                self.loc.table_url(CATALOG), SCHEMA, mode="ignore", storage_options=self._options()
            )

    def publish(self, entries: list[dict[str, Any]], version: int) -> str | None:
        """Publish ``entries`` (those read at ``version`` plus the new one) as the catalog.

        Returns None when published, else why not: another writer published since
        ``version`` (Delta refused the commit), and nothing of this one is in the catalog.
        Raises StoreError, deleting nothing, when it cannot tell.
        """
        seq = entries[-1]["seq"]
        name = data_file(seq, secrets.token_hex(4), "catalog")
        path = self.loc.file(CATALOG, name)
        add = add_action(
            name, self.loc.write_parquet(path, _catalog_table(entries), compression="zstd")
        )
        props = CommitProperties(
            app_transactions=[Transaction(_APP, seq)],
            custom_metadata={"svcnb.snapshot": entries[-1]["snapshot_id"]},
        )
        try:
            at = self._table  # as read() left it: at that version unless another read moved it
            if at is None or at.version() != version:
                at = DeltaTable(
                    self.loc.table_url(CATALOG), version=version, storage_options=self._options()
                )
            actions: list[AddAction | RemoveAction] = [add]
            for old, size in _sizes(at).items():
                actions.append(RemoveAction(old, True, _now_ms(), size))
            at.create_write_transaction(
                actions, mode="append", schema=SCHEMA, commit_properties=props
            )
        except (DeltaError, OSError) as exc:
            # an error can come after the commit landed (the reply lost on the way back): then
            # the file is the published catalog. Only the catalog as it now stands can tell
            if self.holds(entries[-1]):
                return None
            self.loc.delete(self.loc.file(CATALOG, name))
            return first_line(exc)
        return None

    def holds(self, entry: dict[str, Any]) -> bool:
        """Whether the catalog as it now stands lists ``entry``; raises StoreError when it
        cannot be read."""
        mine = canonical(entry)
        return any(canonical(e) == mine for e in self.read()[0])

    def sweep(self, keep: int = 2) -> None:
        """Delete catalog files older than the last ``keep`` published ones, each only when
        the catalog lists every snapshot it does: one that lists a snapshot the catalog lacks
        (its commit was moved out of the log, or never made) is that snapshot's only record."""
        entries, _ = self.read()
        if not entries:
            return
        newest = entries[-1]["seq"]
        names = sorted(
            (n for n in self.loc.list_files(CATALOG) if (file_seq(n) or newest + 1) <= newest),
            key=lambda n: (file_seq(n), n),
        )
        current = self._file
        kept = [n for n in names if n == current]
        older = [n for n in names if n != current]
        published = {canonical(e) for e in entries}
        for name in older[: max(0, len(older) - (keep - len(kept)))]:
            try:
                held = self._entries_in(name)
            except (OSError, pa.ArrowException, ValueError, KeyError):
                continue  # what it lists is unknown: it stays
            if all(canonical(e) in published for e in held):
                self.loc.delete(self.loc.file(CATALOG, name))
                self._held.pop(name, None)


def canonical(entry: dict[str, Any]) -> str:
    """A catalog entry as the catalog stores it: two entries are one snapshot when equal."""
    return json.dumps(entry, sort_keys=True, separators=(",", ":"))


def _catalog_table(entries: list[dict[str, Any]]) -> pa.Table:
    def ts(key: str) -> list[Any]:
        return [pd.Timestamp(e[key]) if e.get(key) else None for e in entries]

    columns = {
        "snapshot": [e["seq"] for e in entries],
        "snapshot_id": [e["snapshot_id"] for e in entries],
        "server_time": ts("server_time"),
        "local_time": ts("local_time"),
        "server": [e.get("server") for e in entries],
        "account": [e.get("account") for e in entries],
        "missing": [
            ", ".join(r for r, s in e["resources"].items() if s.get("status") == "missing")
            for e in entries
        ],
        "entry": [canonical(e) for e in entries],
    }
    return pa.table(columns, schema=SCHEMA)


@dataclass
class InLine:
    """A resource table as this process last left it: open at its latest version, the files it
    holds, and the size and time of that version's commit, by which the next ``sync`` knows
    that nobody has changed the table since (another writer, a repair, a damaged commit)."""

    table: DeltaTable
    files: Mapping[str, int]  # name -> size in bytes, which a commit removing the file states
    mark: tuple[int | None, int | None]


def _sizes(dt: DeltaTable) -> dict[str, int]:
    """The files ``dt`` holds at its version, with their sizes as its log states them."""
    actions = dt.get_add_actions(flatten=True)
    return dict(
        zip(
            actions.column("path").to_pylist(),
            actions.column("size_bytes").to_pylist(),
            strict=True,
        )
    )


def _latest_mark(loc: Location, table: str, version: int) -> tuple[int | None, int | None] | None:
    """The size and time of commit ``version`` of ``table`` while it is the latest, else None."""
    this = loc.fs.get_file_info(commit_path(loc, table, version))
    if this.type != pafs.FileType.File or loc.exists(commit_path(loc, table, version + 1)):
        return None
    return this.size, this.mtime_ns


def sync(
    loc: Location,
    table: str,
    schema: pa.Schema,
    expected: Iterable[str],
    kept: dict[str, InLine],
    written: Mapping[str, Facts] | None = None,
    attempts: int = 5,
) -> None:
    """Make the Delta table ``table`` hold exactly the files ``expected`` (names in its
    folder), adding and removing in one commit; creates the table the first time, partitioned
    by account when the files are in account folders (a store of several accounts).

    ``kept`` holds the tables as this process last left them (``InLine``, by table name), so a
    table nobody changed since is not opened again: two existence checks instead of reading its
    log, every resource at every snapshot (on object storage, a request per commit read).
    ``written`` gives the rows and sizes of files this process just wrote (by path), which are
    then not read back."""
    want = set(expected)
    url = loc.table_url(table)
    options = loc.storage_options or None
    by = [PARTITION] if any(partition_of(name) for name in want) else None
    if by:
        schema = schema.append(pa.field(PARTITION, pa.string()))
    error: BaseException | None = None
    for _ in range(attempts):
        try:
            known = kept.pop(table, None)
            # the mark of a kept table just found unchanged: kept again if nothing is committed,
            # as the next sync checks it before trusting the table (two requests fewer on S3)
            checked = None
            if known is not None and _latest_mark(loc, table, known.table.version()) == known.mark:
                dt, active, checked = known.table, dict(known.files), known.mark
            else:
                try:
                    # create(mode="ignore") would open an existing table twice
                    dt = DeltaTable(url, storage_options=options)
                except TableNotFoundError:
                    dt = DeltaTable.create(
                        url, schema, mode="ignore", partition_by=by, storage_options=options
                    )
                active = _sizes(dt)
            adds = [_add(loc, table, name, written or {}) for name in sorted(want - active.keys())]
            # each size as the log states it: no request per removed file
            removes = [
                RemoveAction(name, True, _now_ms(), active[name])
                for name in sorted(active.keys() - want)
            ]
            if adds or removes:
                before = dt.version()
                dt.create_write_transaction(
                    [*adds, *removes], mode="append", schema=schema, partition_by=by
                )
                dt.update_incremental()  # to this commit, and any another writer made since
                if dt.version() == before + 1:  # this commit alone: it left exactly what is wanted
                    active = {n: s for n, s in active.items() if n in want}
                    active.update((a.path, a.size) for a in adds)
                else:
                    active = _sizes(dt)
                checked = None
            mark = checked if checked is not None else _latest_mark(loc, table, dt.version())
            if mark is not None:
                kept[table] = InLine(dt, active, mark)
            return
        except (DeltaError, OSError) as exc:
            error = exc
            time.sleep(0.05 + secrets.randbelow(100) / 1000)
    found = damaged_commit(loc, table)
    if found is None:
        why = f": {first_line(error)}" if error else ""
        raise StoreError(
            f"the Delta table {url} could not be brought in line with the catalog{why}"
        )
    folder = loc.url_of(log_folder(loc, table))
    if found.latest:
        todo = (
            f"move it out of {folder} (or restore it from a backup): the next snapshot brings "
            "the table in line again"
        )
    else:
        todo = (
            f"restore it from a backup, or move the whole log {folder} out of the store (the "
            "data files stay): the next snapshot writes the log anew from the catalog"
        )
    raise damaged_error(
        loc,
        table,
        found,
        f"the Delta table {url} cannot be brought in line with the catalog",
        "svcnb reads snapshots through the catalog and is not affected; engines that read the "
        "table without svcnb fail on it",
        f"To repair it, {todo}",
    )
