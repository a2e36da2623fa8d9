"""The catalog: which snapshots exist, in a Delta table of its own, and how writers agree on it.

``<store>/_snapshots`` holds one row per published snapshot, in one file that each snapshot
replaces (the old file stays one snapshot longer for readers that already opened it). Columns:
snapshot (the seq, 1, 2, ...), snapshot_id, server_time, local_time (UTC), server (base URL),
account (wallet id), missing (resources that could not be read, comma-separated) and entry (JSON:
``rows``, ``parts`` and ``resources`` per resource, see ``svcnb.store._snapshots``).

Publishing is optimistic: a writer reads the catalog at Delta version V, writes its data files
under names nobody else uses, then commits "remove the catalog file of V, add mine" at version
V + 1. If another writer published first, Delta refuses the commit (both removed the same file,
and both set the same application transaction id) and the writer starts again from the new
catalog. So a snapshot is in the catalog whole or not at all, and writers never lose one another's
snapshots. Readers only see snapshots in the catalog.

After publishing, the writer brings each resource's Delta table in line with the catalog (adds
the new files, removes the ones they replace), so engines that read the tables without svcnb see
published rows only. A writer killed in between leaves the tables one snapshot behind; the next
writer catches them up (``sync``).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from collections.abc import Iterable
from typing import Any

import pandas as pd
import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction
from deltalake.exceptions import DeltaError, TableNotFoundError
from deltalake.transaction import AddAction, RemoveAction

from ._fs import Location
from ._layout import StoreError

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


def _add(loc: Location, table: str, name: str) -> AddAction:
    path = loc.file(table, name)
    stats = json.dumps({"numRecords": loc.parquet_rows(path)})
    return AddAction(name, loc.size(path), partition_of(name), _now_ms(), True, stats)


class Catalog:
    """The catalog of one store, re-read only when its Delta table moved."""

    def __init__(self, loc: Location) -> None:
        self.loc = loc
        self._table: DeltaTable | None = None
        self._file: str | None = None
        self._entries: list[dict[str, Any]] = []
        self._read_version = -1

    def _options(self) -> dict[str, str] | None:
        return self.loc.storage_options or None

    def _next_commit(self, version: int) -> str:
        return f"{self.loc.root}/{CATALOG}/_delta_log/{version + 1:020d}.json"

    def read(self) -> tuple[list[dict[str, Any]], int]:
        """Published snapshots in order, and the catalog's Delta version (-1: no catalog yet).

        The list is shared between callers: treat it as read-only.
        """
        try:
            if self._table is None:
                self._table = DeltaTable(
                    self.loc.table_url(CATALOG), storage_options=self._options()
                )
            elif self.loc.exists(self._next_commit(self._table.version())):
                self._table.update_incremental()
            elif self._read_version == self._table.version():
                # one existence check per read: the common case, nothing new, costs no more
                return self._entries, self._read_version
        except TableNotFoundError:
            self._table = None
            return [], -1
        except (DeltaError, OSError) as exc:
            raise StoreError(f"the catalog of {self.loc.url} cannot be read: {exc}") from None
        version = self._table.version()
        paths = self._table.get_add_actions(flatten=True).column("path").to_pylist()
        if not paths:  # created, nothing published yet
            self._file, self._entries = None, []
        elif len(paths) != 1:
            raise StoreError(
                f"the catalog of {self.loc.url} at version {version} holds {len(paths)} files, "
                "svcnb writes one: something else wrote to it; restore it with Delta's "
                f"RESTORE to an earlier version (DeltaTable({CATALOG!r}).restore(N))"
            )
        elif paths[0] != self._file:
            self._entries = self._parse(paths[0])
            self._file = paths[0]
        self._read_version = version
        return self._entries, version

    @property
    def last(self) -> list[dict[str, Any]]:
        """The entries of the latest ``read``, without looking for newer ones."""
        return self._entries

    def _parse(self, name: str) -> list[dict[str, Any]]:
        try:
            table = self.loc.read_parquet(self.loc.file(CATALOG, name))
            rows = table.select(["snapshot_id", "entry"]).to_pylist()
            return [json.loads(row["entry"]) for row in rows]
        except (OSError, pa.ArrowException, ValueError, KeyError) as exc:
            raise StoreError(
                f"the catalog file {name} of {self.loc.url} is not readable ({exc}). Restore "
                f"the catalog table to an earlier version with Delta's RESTORE "
                f"(DeltaTable('{self.loc.table_url(CATALOG)}').restore(N)) and take the "
                "snapshots since again"
            ) from None

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
        """
        seq = entries[-1]["seq"]
        name = data_file(seq, secrets.token_hex(4), "catalog")
        self.loc.write_parquet(
            self.loc.file(CATALOG, name), _catalog_table(entries), compression="zstd"
        )
        add = _add(self.loc, CATALOG, name)
        props = CommitProperties(
            app_transactions=[Transaction(_APP, seq)],
            custom_metadata={"svcnb.snapshot": entries[-1]["snapshot_id"]},
        )
        try:
            at = DeltaTable(
                self.loc.table_url(CATALOG), version=version, storage_options=self._options()
            )
            actions = [add]
            for old in at.get_add_actions(flatten=True).column("path").to_pylist():
                size = self.loc.size(self.loc.file(CATALOG, old))
                actions.append(RemoveAction(old, True, _now_ms(), size))
            at.create_write_transaction(
                actions, mode="append", schema=SCHEMA, commit_properties=props
            )
        except (DeltaError, OSError) as exc:
            self.loc.delete(self.loc.file(CATALOG, name))
            return str(exc)
        return None

    def sweep(self, keep: int = 2) -> None:
        """Delete catalog files older than the last ``keep`` published ones."""
        entries, _ = self.read()
        if not entries:
            return
        newest = entries[-1]["seq"]
        names = sorted(
            (n for n in self.loc.list_files(CATALOG) if (file_seq(n) or 0) <= newest),
            key=lambda n: (file_seq(n), n),
        )
        current = self._file
        kept = [n for n in names if n == current]
        older = [n for n in names if n != current]
        for name in older[: max(0, len(older) - (keep - len(kept)))]:
            self.loc.delete(self.loc.file(CATALOG, name))


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
        "entry": [json.dumps(e, sort_keys=True, separators=(",", ":")) for e in entries],
    }
    return pa.table(columns, schema=SCHEMA)


def sync(
    loc: Location, table: str, schema: pa.Schema, expected: Iterable[str], attempts: int = 5
) -> None:
    """Make the Delta table ``table`` hold exactly the files ``expected`` (names in its
    folder), adding and removing in one commit; creates the table the first time, partitioned
    by account when the files are in account folders (a store of several accounts)."""
    want = set(expected)
    url = loc.table_url(table)
    options = loc.storage_options or None
    by = [PARTITION] if any(partition_of(name) for name in want) else None
    if by:
        schema = schema.append(pa.field(PARTITION, pa.string()))
    for _ in range(attempts):
        try:
            dt = DeltaTable.create(
                url, schema, mode="ignore", partition_by=by, storage_options=options
            )
            active = set(dt.get_add_actions(flatten=True).column("path").to_pylist())
            adds = [_add(loc, table, name) for name in sorted(want - active)]
            removes = [
                RemoveAction(name, True, _now_ms(), loc.size(loc.file(table, name)))
                for name in sorted(active - want)
            ]
            if not adds and not removes:
                return
            dt.create_write_transaction(
                [*adds, *removes], mode="append", schema=schema, partition_by=by
            )
            return
        except (DeltaError, OSError):
            time.sleep(0.05 + secrets.randbelow(100) / 1000)
    raise StoreError(f"the Delta table {url} could not be brought in line with the catalog")
