"""A store whose latest Delta commit is damaged, empty or a no-op, on disk and on the loopback S3
server: no published snapshot is ever listed less, and no take deletes a file one needs."""

from __future__ import annotations

import json
import uuid
import warnings
from collections.abc import Callable
from copy import deepcopy

import pandas as pd
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from frames._samples import account

from svcnb.store import RESOURCES, DamagedCommitError, SnapshotWarning, Store
from svcnb.store._segments import to_frame
from svcnb.store._snapshots import state_at

from .test_store_disk import DAY, T0, evolve, frames_of

CATALOG = "_snapshots"


def _torn_before_add(data: bytes) -> bytes:
    # a commit cut at a line end: every line it keeps is good JSON, but its add is gone
    lines = data.splitlines(keepends=True)
    return b"".join(line for line in lines[:1] if b'"add"' not in line)


DAMAGES: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda data: b"",
    "no-op": lambda data: b'{"commitInfo":{}}\n',
    "truncated": lambda data: data[: len(data) // 2],
    "garbage": lambda data: b"\x00\xff\xfe not a commit \x13\x37\n",
    "torn-at-a-line": _torn_before_add,
}


@pytest.fixture
def where(request, tmp_path) -> str:
    if request.param == "disk":
        return str(tmp_path / "store")
    return request.getfixturevalue("s3_url")


# On S3 a damaged commit is read and written through the object store, but judged by the same
# code as on disk: `make test` runs every case on disk and one on S3 (an empty catalog commit:
# the error, read through the object store); `make test-all` every case on S3. The object
# store's own reads and writes are held by tests/store/test_store_s3.py.
_WHERE = ["disk", pytest.param("s3", marks=pytest.mark.slow)]


def _cases(quick_on_s3: tuple[str, ...]) -> list:
    return [
        pytest.param(
            kind,
            damage,
            id=f"{kind}-{damage}",
            marks=() if kind == "disk" or damage in quick_on_s3 else pytest.mark.slow,
        )
        for kind in ("disk", "s3")
        for damage in DAMAGES
    ]


def _fs(url: str) -> tuple[pafs.FileSystem, str]:
    fs, root = pafs.FileSystem.from_uri(url)
    return fs, root.rstrip("/")


def _latest_commit(url: str, table: str) -> str:
    fs, root = _fs(url)
    infos = fs.get_file_info(pafs.FileSelector(f"{root}/{table}/_delta_log"))
    return max(i.path for i in infos if i.path.endswith(".json"))


def _read(url: str, path: str) -> bytes:
    fs, _ = _fs(url)
    with fs.open_input_stream(path) as stream:
        return stream.read()


def _write(url: str, path: str, data: bytes) -> None:
    fs, _ = _fs(url)
    with fs.open_output_stream(path) as out:
        out.write(data)


def _data_files(url: str) -> set[str]:
    """Every Parquet file of the store (data and catalog files), by path."""
    fs, root = _fs(url)
    infos = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    return {i.path for i in infos if i.path.endswith(".parquet") and "_delta_log" not in i.path}


def _copy_store(source: str, target: str) -> None:
    fs, src = _fs(source)
    _, dst = _fs(target)
    local = isinstance(fs, pafs.LocalFileSystem)
    for info in fs.get_file_info(pafs.FileSelector(src, recursive=True)):
        if info.type == pafs.FileType.File:
            path = dst + info.path[len(src) :]
            if local:  # S3 has no folders to make (a marker object would be listed)
                fs.create_dir(path.rpartition("/")[0])
            fs.copy_file(info.path, path)


# kind ("disk"/"s3") -> the url of a store holding _three_snapshots' three, and their records
_BUILT: dict[str, tuple[str, object]] = {}


def _three_snapshots(url: str) -> dict:
    """Three daily snapshots in the empty store at ``url``; the records of the last. They are
    written once per kind of storage, beside the first test's store, and copied file by file
    to each test's (every path in a store is relative to its root): the bytes a take of the
    same records writes, at a fraction of the cost of three takes on the S3 server."""
    kind = "s3" if url.startswith("s3://") else "disk"
    if kind not in _BUILT:
        template = f"{url.rstrip('/').rpartition('/')[0]}/three-snapshots-{uuid.uuid4().hex[:8]}"
        store, records = Store(template), account(6)
        for day in range(3):
            if day:
                records = evolve(records, day)
            store.write(frames_of(records), server_time=T0 + day * DAY)
        _BUILT[kind] = (template, records)
    template, records = _BUILT[kind]
    _copy_store(template, url)
    return deepcopy(records)


def _rows(url: str) -> dict[str, dict[str, pd.DataFrame]]:
    """Every listed snapshot's rows of every resource, by snapshot id (a fresh Store: nothing
    in memory, as another process)."""
    store = Store(url)
    out = {}
    for sid, when in store.snapshots()[["snapshot_id", "server_time"]].itertuples(index=False):
        frames = {r: store.load(r, at=when) for r in RESOURCES}
        assert {f.attrs["as_of_snapshot"] for f in frames.values()} == {sid}
        out[sid] = frames
    return out


def _same_rows(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for sid, frames in want.items():
        for resource, frame in frames.items():
            pd.testing.assert_frame_equal(got[sid][resource], frame, obj=f"{sid} {resource}")


@pytest.mark.parametrize(("where", "damage"), _cases(("empty",)), indirect=["where"])
def test_a_damaged_latest_catalog_commit_is_an_error_and_no_take_publishes_over_it(where, damage):
    records = _three_snapshots(where)
    before = _rows(where)
    assert len(before) == 3
    files = _data_files(where)
    commit = _latest_commit(where, CATALOG)
    good = _read(where, commit)
    _write(where, commit, DAMAGES[damage](good))

    # never a shorter list: the commit is named, with what to do
    with pytest.raises(DamagedCommitError) as listed:
        Store(where).snapshots()
    message = str(listed.value)
    assert commit.rpartition("/")[2] in message and listed.value.path.endswith(commit)
    assert f"Restore {listed.value.path} from a backup" in message and "move it out" in message
    # the next take refuses too: it would publish over the snapshot the commit held
    with pytest.raises(DamagedCommitError):
        Store(where).write(frames_of(evolve(records, 3)), server_time=T0 + 3 * DAY)
    assert _data_files(where) >= files  # nothing was deleted

    # restored as the error says, every snapshot is back with the same rows
    _write(where, commit, good)
    _same_rows(_rows(where), before)
    Store(where).write(frames_of(evolve(records, 3)), server_time=T0 + 3 * DAY)
    after = _rows(where)
    assert len(after) == 4
    _same_rows({sid: after[sid] for sid in before}, before)


@pytest.mark.parametrize(("where", "damage"), _cases(()), indirect=["where"])
def test_a_damaged_latest_resource_table_commit_loses_no_snapshot(where, damage):
    records = _three_snapshots(where)
    before = _rows(where)
    commit = _latest_commit(where, "vms")
    _write(where, commit, DAMAGES[damage](_read(where, commit)))

    # svcnb reads through the catalog: the resource table's log is for other engines
    _same_rows(_rows(where), before)
    store = Store(where)
    if damage in ("truncated", "garbage"):
        # the table cannot be brought in line with the catalog: the warning names the commit
        with pytest.warns(SnapshotWarning, match=commit.rpartition("/")[2]) as caught:
            store.write(frames_of(evolve(records, 3)), server_time=T0 + 3 * DAY)
        assert any("move it out" in str(w.message) for w in caught)
    else:
        store.write(frames_of(evolve(records, 3)), server_time=T0 + 3 * DAY)
        # and the next take brought the table in line again for those engines
        latest = Store(where).load("vms")
        table = DeltaTable(f"{where}/vms").to_pandas()
        live = table.sort_values("_snapshot").drop_duplicates("id", keep="last")
        assert sorted(live.loc[~live["_removed"], "id"]) == sorted(latest["id"])
    after = _rows(where)
    assert len(after) == 4
    _same_rows({sid: after[sid] for sid in before}, before)


@pytest.mark.parametrize("where", _WHERE, indirect=True)
def test_a_take_after_the_catalog_went_back_deletes_no_file_of_the_snapshot_it_lost(where):
    """The error's last resort (moving the damaged commit out of the log) takes the catalog
    back one snapshot; the takes after it must leave every file of the snapshot it dropped,
    whose catalog file, its only record, stays too."""
    records = _three_snapshots(where)
    before = _rows(where)
    commit = _latest_commit(where, CATALOG)
    data = _read(where, commit)
    (lost,) = [json.loads(line)["add"]["path"] for line in data.splitlines() if b'"add"' in line]
    fs, root = _fs(where)
    fs.delete_file(commit)
    assert len(Store(where).snapshots()) == 2

    for day in (3, 4):
        records = evolve(records, day)
        Store(where).write(frames_of(records), server_time=T0 + day * DAY)
    after = _rows(where)
    assert len(after) == 4
    kept = list(before)[:2]
    _same_rows({sid: after[sid] for sid in kept}, {sid: before[sid] for sid in kept})
    # the lost snapshot can still be read from its catalog file, every row as before
    assert f"{root}/{CATALOG}/{lost}" in _data_files(where)
    with fs.open_input_file(f"{root}/{CATALOG}/{lost}") as source:
        listed = [json.loads(e) for e in pq.read_table(source).column("entry").to_pylist()]
    loc = Store(where)._loc
    sid = list(before)[2]
    assert listed[-1]["snapshot_id"] == sid
    for resource in RESOURCES:
        rows = to_frame(resource, state_at(loc, resource, listed[-1], listed))
        rows.attrs = before[sid][resource].attrs
        pd.testing.assert_frame_equal(rows, before[sid][resource], obj=resource)


@pytest.mark.parametrize("where", _WHERE, indirect=True)
def test_a_publish_that_landed_but_reported_an_error_keeps_every_file(where, monkeypatch):
    """The reply to a commit can be lost after the commit landed (a connection reset): the
    writer must not take back the files of a snapshot that is published."""
    records = _three_snapshots(where)
    real = DeltaTable.create_write_transaction
    failed: list[str] = []

    def landed_then_lost(self, actions, *args, **kwargs):
        real(self, actions, *args, **kwargs)
        if not failed and self.table_uri.rstrip("/").endswith(CATALOG):
            failed.append(self.table_uri)
            raise OSError("connection reset by peer")

    monkeypatch.setattr(DeltaTable, "create_write_transaction", landed_then_lost)
    new = Store(where).write(frames_of(evolve(records, 3)), server_time=T0 + 3 * DAY)
    assert failed
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no snapshot skipped for a missing file
        rows = _rows(where)
    assert list(rows)[-1] == new and len(rows) == 4


def _vms_table_holds_the_latest(where: str) -> None:
    latest = Store(where).load("vms")
    table = DeltaTable(f"{where}/vms").to_pandas()
    live = table.sort_values("_snapshot").drop_duplicates("id", keep="last")
    assert sorted(live.loc[~live["_removed"], "id"]) == sorted(latest["id"])


@pytest.mark.parametrize("where", ["disk"], indirect=True)
@pytest.mark.parametrize("damage", ["no-op", "truncated"])
def test_a_store_that_wrote_before_sees_a_later_damage_as_a_new_one_does(where, damage):
    """A Store keeps each resource table open between its snapshots (opening it again costs
    a read of its log); a commit changed behind its back is still seen at its next take."""
    store, records = Store(where), account(6)
    for day in range(3):
        records = evolve(records, day) if day else records
        store.write(frames_of(records), server_time=T0 + day * DAY)
    commit = _latest_commit(where, "vms")
    _write(where, commit, DAMAGES[damage](_read(where, commit)))
    records = evolve(records, 3)
    if damage == "truncated":
        with pytest.warns(SnapshotWarning, match=commit.rpartition("/")[2]):
            store.write(frames_of(records), server_time=T0 + 3 * DAY)
    else:
        store.write(frames_of(records), server_time=T0 + 3 * DAY)
        _vms_table_holds_the_latest(where)


@pytest.mark.parametrize("where", ["disk"], indirect=True)
def test_a_table_another_writer_changed_is_read_again_before_it_is_brought_in_line(where):
    store, records = Store(where), account(6)
    store.write(frames_of(records), server_time=T0)
    # another process publishes a snapshot in which the VMs changed
    changed = evolve(records, 1)
    Store(where).write(frames_of(changed), server_time=T0 + DAY)
    # then this one, with the VMs of its first snapshot: the table must drop the other's rows
    store.write(frames_of(records), server_time=T0 + 2 * DAY)
    _vms_table_holds_the_latest(where)
    assert sorted(Store(where).load("vms")["id"]) == sorted(v["id"] for v in records["vms"])
