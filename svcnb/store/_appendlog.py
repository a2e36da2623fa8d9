"""An append-only Delta table inside the store: rows added, never changed, read in commit order.

Each append is one data file, under a name no other writer uses, and one commit: of two writers
at once Delta lets one take the version and the other commits again at the next, so no row is
lost. :meth:`AppendLog.append_if` is a compare-and-set every store gives: Delta writes a commit
file only if none of that version exists (an atomic create on a local disk, a conditional put on
object storage, as the catalog relies on).

A damaged commit is handled as docs/contracts.md §5 says for journal tables. svcnb never moves
one aside by itself: the commit may be restored from a backup (or an object's previous version),
and the data file of a torn commit may belong to a writer still at work, so neither dropping the
commit nor adding that file again is safe to do unasked.
"""

from __future__ import annotations

import json
import os
import secrets
import time
import warnings
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError
from deltalake.transaction import AddAction

from ._catalog import add_action
from ._deltalog import (
    Damage,
    change_problem,
    commit_path,
    damaged_commit,
    damaged_error,
    first_line,
    move_aside,
)
from ._fs import Location
from ._layout import DamagedCommitError, SnapshotWarning, StoreError, fsync_dir

_META = "svcnb.journal"  # the commit metadata key naming the file a commit added
_ATTEMPTS = 20
# the order of rows is the commit order: the commit log is kept, never cleaned up
_CONFIGURATION = {"delta.enableExpiredLogCleanup": "false"}


class AppendLog:
    """The append-only table ``name`` of the store at ``loc``, with columns ``schema``;
    remembers what it read until the table moves."""

    def __init__(self, loc: Location, name: str, schema: pa.Schema, what: str) -> None:
        self.loc = loc
        self.name = name
        self.schema = schema
        self.what = what  # how errors name the table: "the journal's alerts"
        self.url = loc.table_url(name)
        self._created = False
        self._table: DeltaTable | None = None
        self._write_table: DeltaTable | None = None
        self._version = -1
        self._files: dict[str, pa.Table] = {}  # data file -> its rows
        self._order: dict[str, int] = {}  # data file -> the version that added it
        self._sound = -1  # the latest version whose commit the writer found sound
        self._base = -2  # the version this writer's last commit was built on

    def _options(self) -> dict[str, str] | None:
        return self.loc.storage_options or None

    def append(self, rows: pa.Table) -> None:
        """Add ``rows`` in one commit, on top of whatever others committed; StoreError when the
        store cannot be written."""
        path, add, props = self._stage(rows)
        error: Exception | None = None
        for _ in range(_ATTEMPTS):
            try:
                # a blind append: another writer's commit at the same version makes Delta
                # refuse this one, and it commits again on top of theirs
                table = self._writer()
                table.create_write_transaction(
                    [add], mode="append", schema=self.schema, commit_properties=props
                )
                break
            except DamagedCommitError:
                self.loc.delete(path)
                raise
            except (DeltaError, OSError) as exc:
                error, self._write_table = exc, None  # read the log afresh next attempt
                # another writer went first: try again; anything else may be a damaged commit,
                # which no attempt gets past (looking for one reads the log)
                conflict = isinstance(exc, CommitFailedError)
                damage = None if conflict else damaged_commit(self.loc, self.name)
                if damage is not None:
                    self.loc.delete(path)
                    raise self._damaged(damage, "written") from None
                time.sleep(0.01 + secrets.randbelow(50) / 1000)
        else:
            self.loc.delete(path)
            raise StoreError(
                f"{self.what} ({self.url}) could not be committed after {_ATTEMPTS} attempts "
                f"({first_line(error) if error else 'no error'}); nothing was recorded, try again"
            )
        self._sync(table)

    def append_if(self, rows: pa.Table, version: int) -> bool:
        """Add ``rows`` in one commit if the table is still at ``version`` (as :meth:`read`
        reported it); False, writing nothing, when anyone appended since. StoreError when the
        store cannot be written."""
        # no retry: a commit at the next version is the compare-and-set; another writer's commit
        # there makes Delta refuse this one instead of committing it on top
        path, add, props = self._stage(rows, retries=0)
        # a table not created yet when it was read is at version 0 once created, with no row
        expected = max(version, 0)
        try:
            table = self._writer()
            if table.version() != expected:
                self.loc.delete(path)
                return False
            table.create_write_transaction(
                [add], mode="append", schema=self.schema, commit_properties=props
            )
        except CommitFailedError:
            self.loc.delete(path)
            self._write_table = None
            return False
        except DamagedCommitError:
            self.loc.delete(path)
            raise
        except (DeltaError, OSError) as exc:
            self.loc.delete(path)
            self._write_table = None
            raise self._failed(exc, "written") from None
        self._sync(table)
        return True

    def _stage(
        self, rows: pa.Table, retries: int | None = None
    ) -> tuple[str, AddAction, CommitProperties]:
        """Write ``rows`` as one data file under a name no one else uses; return the file's
        path, its add action and the commit's properties."""
        if rows.num_rows == 0:
            raise ValueError(f"nothing to append to {self.what}")
        rid = secrets.token_hex(8)
        name = f"{int(time.time() * 1000):013d}-{rid}.parquet"
        path = self.loc.file(self.name, name)
        try:
            self._create()
            facts = self.loc.write_parquet(path, rows.cast(self.schema), compression="zstd")
        except (DeltaError, OSError) as exc:
            raise self._failed(exc, "written") from None
        add = add_action(name, facts)
        props = CommitProperties(custom_metadata={_META: rid}, max_commit_retries=retries)
        return path, add, props

    def _sync(self, table: DeltaTable) -> None:
        # this writer's commit is after the version it was built on: the next one, when the
        # table is found one version on (see _writer)
        self._base = table.version()
        if self.loc.local:
            # on disk before append returns (the data file already is); the commit is one of
            # those after the version it was built on
            log = Path(self.loc.root) / self.name / "_delta_log"
            start = table.version() + 1
            table.update_incremental()
            for version in range(start, table.version() + 1):
                _fsync(log / f"{version:020d}.json")
            fsync_dir(log)

    def _writer(self) -> DeltaTable:
        # the table at its latest version; kept between appends so each reads only the commits
        # since the last (loading it afresh replays the whole log, one read per append)
        if self._write_table is None:
            self._write_table = DeltaTable(self.url, storage_options=self._options())
        else:
            self._write_table.update_incremental()
        version = self._write_table.version()
        if version not in (self._sound, self._base + 1):
            # never on top of a damaged latest commit: it would stay inside the log for good.
            # One read when another writer moved the table; none when it holds only this
            # writer's own last commit, which it knows sound
            path = commit_path(self.loc, self.name, version)
            problem = change_problem(self.loc.read_bytes(path))
            if problem:
                self._write_table = None
                raise self._damaged(Damage(path, version, problem, True), "written")
            self._sound = version
        return self._write_table

    def _create(self) -> None:
        if self._created:
            return
        try:
            DeltaTable.create(
                self.url,
                self.schema,
                mode="ignore",
                configuration=_CONFIGURATION,
                storage_options=self._options(),
            )
        except (DeltaError, OSError):
            # another writer created it at the same moment: use theirs
            DeltaTable(self.url, storage_options=self._options())
        self._created = True

    def read(self) -> tuple[list[tuple[int, pa.Table]], int]:
        """Each data file's rows with the version that added it, in commit order, and the
        table's version read (-1: no table yet), for :meth:`append_if`.

        A damaged latest commit (docs/contracts.md §5) is named in a SnapshotWarning and
        the table read at the version before it; DamagedCommitError for an earlier one."""
        try:
            if self._table is None:
                self._table = DeltaTable(self.url, storage_options=self._options())
            else:
                self._table.update_incremental()
            table = self._table
        except TableNotFoundError:
            return [], -1
        except (DeltaError, OSError) as exc:
            self._table = None  # a table half brought up to date is not read again
            damage = damaged_commit(self.loc, self.name)
            if damage is None:
                raise self._failed(exc, "read") from None
            table = self._before(damage)
        version = table.version()
        if version != self._version:
            damage = self._catch_up(version)
            if damage is not None:
                self._table = None
                table = self._before(damage)
                version = table.version()
                if version != self._version:
                    self._catch_up(version)
            self._files_of(table)
        # a file whose commit is not in the log (none should be: the log is kept) first
        names = sorted(self._files, key=lambda name: (self._order.get(name, -1), name))
        return [(self._order.get(name, -1), self._files[name]) for name in names], version

    def _before(self, damage: Damage) -> DeltaTable:
        """The table at the version before its damaged latest commit, warning once per read;
        DamagedCommitError when the damaged commit is not the latest (the commits after it
        would be left out too) or is the one that created the table."""
        if not damage.latest or damage.version == 0:
            raise self._damaged(damage, "read")
        warnings.warn(str(self._damaged(damage, "read in full")), SnapshotWarning, stacklevel=4)
        try:
            return DeltaTable(self.url, version=damage.version - 1, storage_options=self._options())
        except (DeltaError, OSError) as exc:
            raise self._failed(exc, "read") from None

    def _catch_up(self, version: int) -> Damage | None:
        """Read the commits after the last one read, up to ``version``: the version that added
        each file (its place in the order), and whether each is sound. Returns the first
        damaged one, having read those before it."""
        latest = version
        try:
            # the commits are read once each (pyarrow's file system: deltalake's history()
            # holds the interpreter)
            for commit in range(self._version + 1, version + 1):
                path = commit_path(self.loc, self.name, commit)
                data = self.loc.read_bytes(path)
                problem = change_problem(data)
                if problem:
                    if latest == version:  # the latest of the log, not only of this read?
                        latest = self._latest_version(version)
                    return Damage(path, commit, problem, commit == latest)
                for line in data.splitlines():
                    action = json.loads(line) if line.strip() else {}
                    if "add" in action:
                        self._order[unquote(action["add"]["path"])] = commit
                self._version = commit
        except (OSError, pa.ArrowException, KeyError, ValueError) as exc:
            raise self._failed(exc, "read") from None
        return None

    def _latest_version(self, version: int) -> int:
        while self.loc.exists(commit_path(self.loc, self.name, version + 1)):
            version += 1
        return version

    def _files_of(self, table: DeltaTable) -> None:
        """Hold the rows of the files ``table`` holds at its version, each file read once."""
        try:
            paths = {
                unquote(p) for p in table.get_add_actions(flatten=True).column("path").to_pylist()
            }
            for gone in set(self._files) - paths:
                del self._files[gone]
            for name in sorted(paths - set(self._files)):
                self._files[name] = self.loc.read_parquet(self.loc.file(self.name, name))
        except (DeltaError, OSError, pa.ArrowException, KeyError, ValueError) as exc:
            raise self._failed(exc, "read") from None

    def _failed(self, exc: BaseException, doing: str) -> StoreError:
        """The error for a table that cannot be read or written: DamagedCommitError naming a
        damaged commit when there is one, else what deltalake said, in one line."""
        damage = damaged_commit(self.loc, self.name)
        if damage is not None:
            return self._damaged(damage, doing)
        return StoreError(
            f"{self.what} ({self.url}) cannot be {doing} ({first_line(exc)}); its rows are in "
            f"the Delta table {self.url}, which any Delta reader opens"
        )

    def _damaged(self, damage: Damage, doing: str) -> DamagedCommitError:
        if damage.latest and damage.version > 0:
            consequence = (
                f"svcnb reads the rows committed before it (a row it added, if any, is not "
                f"read) and writes nothing to {self.what} until it is repaired"
            )
            repair = (
                f"Restore it from a backup (on object storage: the object's previous version), "
                f"or move it aside: {move_aside(self.loc, self.name, damage)}; then "
                f"{self.what} can be written again"
            )
        else:
            consequence = f"Delta cannot read {self.what} past it"
            repair = (
                "Restore it from a backup (on object storage: the object's previous version); "
                f"every row is in a data file of {self.url}"
            )
        return damaged_error(
            self.loc,
            self.name,
            damage,
            f"{self.what} ({self.url}) cannot be {doing}",
            consequence,
            repair,
        )


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - the commit is there; only its durability is unsure
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
