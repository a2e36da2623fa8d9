"""Segment files: typed frames <-> Parquet row versions, and the state at a snapshot.

A segment is a base (every row at its first snapshot) plus one file of the versions written
after it (rewritten whole, under a new name, by each snapshot that changes something). Loading
snapshot N reads at most those two files, so any day costs about one full read however long the
history is; a new segment starts once the changes outgrow a share of the base. The row columns
(``_snapshot``, ``_valid_from``, ``_removed``): docs/contracts.md §5.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from svcnb.frames import KEYS, SCHEMAS, ResourceName, empty

SEQ = "_snapshot"
VALID_FROM = "_valid_from"
REMOVED = "_removed"
_KEY_SEP = "\x1f"

# large_string is what pandas' Arrow-backed string dtype holds: reading it as such spares a
# conversion of every string column on each load
_ARROW = {
    "string": pa.large_string(),
    "Int64": pa.int64(),
    "Float64": pa.float64(),
    "boolean": pa.bool_(),
    # Delta Lake's timestamp is microseconds; the API's times have no finer part
    "datetime64[ns, UTC]": pa.timestamp("us", tz="UTC"),
    "object": pa.list_(pa.string()),
}


def arrow_schema(resource: ResourceName) -> pa.Schema:
    fields = [pa.field(c, _ARROW[f.dtype]) for c, f in SCHEMAS[resource].items()]
    return pa.schema(
        [
            *fields,
            pa.field(SEQ, pa.int64()),
            pa.field(VALID_FROM, pa.timestamp("us", tz="UTC")),
            pa.field(REMOVED, pa.bool_()),
        ]
    )


def to_table(
    resource: ResourceName, frame: pd.DataFrame, seq: int, valid_from: Any, removed: bool = False
) -> pa.Table:
    """Rows of ``frame`` (the resource's columns only) as versions written by snapshot ``seq``
    taken at server time ``valid_from``."""
    schema = arrow_schema(resource)
    columns = list(SCHEMAS[resource])
    data = frame[columns].copy()
    for c, f in SCHEMAS[resource].items():
        if f.dtype == "object":  # lists: Arrow wants lists or None, never NaN
            values = [v if isinstance(v, list) else None for v in data[c]]
            data[c] = pd.Series(values, index=data.index, dtype=object)
    data[SEQ] = np.full(len(data), seq, dtype=np.int64)
    data[VALID_FROM] = pd.Series(
        pd.Timestamp(valid_from), index=data.index, dtype="datetime64[us, UTC]"
    )
    data[REMOVED] = np.full(len(data), removed, dtype=bool)
    table = pa.Table.from_pandas(data, schema=schema, preserve_index=False, safe=False)
    return table.replace_schema_metadata(None)


def parquet_options(table: pa.Table) -> dict[str, Any]:
    """``pq.write_table`` options for a segment file of ``table``."""
    dictionary, compression = encodings(table)
    return {
        "use_dictionary": dictionary,
        "compression": compression,
        "row_group_size": _ROW_GROUP,
    }


_ROW_GROUP = 1 << 20
# Reading or converting a few thousand rows is quicker on the calling thread than spread over
# Arrow's thread pool (a 5,000-VM load: about 4 ms, of which threads cost 0.5 ms, the more on a
# busy machine; measured with bench/store.py). Larger tables use every core.
THREADED_ROWS = 50_000
# A column is compressed only if that saves at least this many bytes: each compressed column
# chunk costs a decoder set-up on every read, and for the many small columns of a frame
# (dictionary-encoded flags, sizes, regions) that cost more time than their bytes were worth.
_WORTH_COMPRESSING = 2048


def encodings(table: pa.Table) -> tuple[list[str], dict[str, str]]:
    """Per column path: dictionary encoding where it is smaller than plain (repeated values, not
    ids or counters), and zstd where that saves ``_WORTH_COMPRESSING`` bytes. Smaller than
    all-zstd with a dictionary everywhere, and faster to read (see ``bench/store.py``)."""
    # trial writes in memory; a frame has few thousand rows, so this is cheap next to the pull
    with_dictionary = _chunk_sizes(table, True)
    plain = _chunk_sizes(table, False)
    dictionary = [c for c, (raw, _) in with_dictionary.items() if raw <= plain[c][0]]
    compression = {}
    for path in with_dictionary:
        raw, packed = (with_dictionary if path in dictionary else plain)[path]
        compression[path] = "zstd" if raw - packed >= _WORTH_COMPRESSING else "none"
    return dictionary, compression


def _chunk_sizes(table: pa.Table, dictionary: bool) -> dict[str, tuple[int, int]]:
    """(uncompressed, zstd) bytes by column path (a list column's is ``name.list.element``)."""
    trial = pa.BufferOutputStream()
    pq.write_table(
        table, trial, use_dictionary=dictionary, compression="zstd", row_group_size=_ROW_GROUP
    )
    metadata = pq.read_metadata(pa.BufferReader(trial.getvalue()))
    sizes: dict[str, tuple[int, int]] = {}
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for i in range(group.num_columns):
            chunk = group.column(i)
            raw, packed = sizes.get(chunk.path_in_schema, (0, 0))
            sizes[chunk.path_in_schema] = (
                raw + chunk.total_uncompressed_size,
                packed + chunk.total_compressed_size,
            )
    return sizes


def normalized(table: pa.Table, upto: int | None = None) -> pa.Table:
    """A segment file as read: one string type per column; with ``upto``, only versions
    written by snapshots up to that seq."""
    if any(pa.types.is_string(t) for t in table.schema.types):
        # other writers (and older files) may store strings as string: same values
        table = table.cast(_widened(table.schema))
    if upto is not None:
        table = versions_upto(table, upto)
    return table.replace_schema_metadata(None)


def versions_upto(table: pa.Table, upto: int) -> pa.Table:
    """The rows of ``table`` written by snapshots up to seq ``upto``."""
    if not table.num_rows:
        return table
    seqs = table.column(SEQ)
    if pc.max(seqs).as_py() <= upto:
        return table
    wanted = pc.less_equal(seqs, upto)
    count = pc.sum(wanted).as_py() or 0
    # versions are appended in snapshot order, so the wanted ones are a prefix: a slice costs
    # nothing where a filter copies every column; anything else is filtered
    if not count or pc.max(seqs.slice(0, count)).as_py() <= upto:
        return table.slice(0, count)
    return table.filter(wanted)


def _widened(schema: pa.Schema) -> pa.Schema:
    return pa.schema(
        [f.with_type(pa.large_string()) if pa.types.is_string(f.type) else f for f in schema]
    )


def _keys(resource: ResourceName, table: pa.Table) -> pa.ChunkedArray | pa.Array:
    keys = KEYS[resource]
    if len(keys) == 1:
        return table.column(keys[0])
    columns = [table.column(k) for k in keys]
    return pc.binary_join_element_wise(*columns, pa.scalar(_KEY_SEP, columns[0].type))


def sort_by_key(resource: ResourceName, table: pa.Table) -> pa.Table:
    order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in KEYS[resource]])
    return table.take(order)


def state(resource: ResourceName, tables: list[pa.Table], upto: int) -> pa.Table:
    """The rows present at snapshot ``upto``, sorted by key, from a segment's base (unique keys,
    sorted) and its changes (versions in the order written)."""
    if not tables:
        return to_table(resource, empty(resource), 0, "1970-01-01T00:00:00Z")
    base = tables[0]
    changes = tables[1] if len(tables) > 1 else None
    if changes is not None:
        changes = versions_upto(changes, upto)
    if changes is None or not changes.num_rows:
        return base
    # One take over base + changes, in base order: a base row whose key changed points at the
    # key's last version (dropped if that is a tombstone); keys the base lacks are merged in.
    # One hash lookup of the last versions' keys in the base does all the matching.
    n = base.num_rows
    change_keys = _keys(resource, changes)
    last = _last_rows(change_keys)
    last_keys = change_keys.take(last)
    removed = changes.column(REMOVED).take(last).to_numpy(zero_copy_only=False)
    base_keys = _keys(resource, base)
    found = pc.index_in(last_keys, value_set=base_keys)
    in_base = found.is_valid().to_numpy(zero_copy_only=False)
    row = found.fill_null(0).to_numpy(zero_copy_only=False)
    order = np.arange(n, dtype=np.int64)
    replaced = in_base & ~removed
    order[row[replaced]] = n + last[replaced]
    dropped = row[in_base & removed]
    keep: np.ndarray | None = None
    if len(dropped):
        keep = np.ones(n, dtype=bool)
        keep[dropped] = False
        order = order[keep]
    added = ~in_base & ~removed
    if added.any():
        # positions are in key order (a replaced row keeps its key): merge the new keys in
        kept_rows = np.flatnonzero(keep) if keep is not None else np.arange(n)
        new_keys = last_keys.filter(pa.array(added)).to_numpy(zero_copy_only=False)
        by_key = np.argsort(new_keys, kind="stable")
        kept_keys = base_keys.take(pa.array(kept_rows)).to_numpy(zero_copy_only=False)
        where = np.searchsorted(kept_keys, new_keys[by_key])
        order = np.insert(order, where, (n + last[added])[by_key])
    return pa.concat_tables([base, changes]).take(pa.array(order))


def _last_rows(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Positions of the last occurrence of each distinct key, in order of position."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    codes = pc.dictionary_encode(keys).indices.to_numpy(zero_copy_only=False)
    # the first occurrence of each code in the reversed codes is its last one
    _, first_from_end = np.unique(codes[::-1], return_index=True)
    return np.sort(len(codes) - 1 - first_from_end)


def _pandas_types() -> dict[pa.DataType, Any]:
    """Arrow type -> the schema's pandas dtype, so ``to_pandas`` gives them with no fix-up."""
    string = pd.StringDtype()  # made per call: it follows pd.options.mode.string_storage
    return {
        pa.string(): string,
        pa.large_string(): string,
        pa.int64(): pd.Int64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
        pa.float64(): pd.Float64Dtype(),
    }


def to_frame(
    resource: ResourceName, table: pa.Table, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """The frame exactly as ``svcnb.frames`` builds it: same columns, dtypes, list values; only
    ``columns`` of them (in that order) when given: a history of one column of 10,000 VMs over
    30 snapshots turned every column of each into pandas, lists cell by cell."""
    schema = SCHEMAS[resource]
    if columns is not None:
        schema = {c: schema[c] for c in columns}
    table = table.select(list(schema))
    threaded = table.num_rows >= THREADED_ROWS
    frame = table.to_pandas(types_mapper=_pandas_types().get, use_threads=threaded)
    for c, f in schema.items():
        if f.dtype == "object":
            frame[c] = pd.Series(table.column(c).to_pylist(), dtype=object)
        elif f.dtype.startswith("datetime") and frame[c].dtype != f.dtype:
            frame[c] = frame[c].astype(f.dtype)
    return frame


def row_hashes(resource: ResourceName, frame: pd.DataFrame) -> pd.Series:
    """One 64-bit hash per row over every column, indexed by key, to find changed rows."""
    data = frame[list(SCHEMAS[resource])].copy()
    for c, f in SCHEMAS[resource].items():
        if f.dtype == "object":
            data[c] = pd.array(
                [json.dumps(v) if isinstance(v, list) else None for v in data[c]], dtype="string"
            )
    hashes = pd.util.hash_pandas_object(data, index=False)
    hashes.index = frame_keys(resource, frame)
    return hashes


def frame_keys(resource: ResourceName, frame: pd.DataFrame) -> pd.Index:
    keys = KEYS[resource]
    if len(keys) == 1:
        return pd.Index(frame[keys[0]].astype(object), name=keys[0])
    joined = frame[keys[0]].astype(object)
    for k in keys[1:]:
        joined = joined + _KEY_SEP + frame[k].astype(object)
    return pd.Index(joined)
