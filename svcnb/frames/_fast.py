"""The fast path: most columns of a frame from one pass of Arrow's C++ converter.

Arrow converts the records to a struct array typed from the schema table; columns are then
wrapped as pandas arrays without another pass in Python. Only strict conversions are used, so a
value of the wrong type raises here and the caller's exact Python checks take over.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._schema import BOOL, INT, SCHEMAS, STRING, TIME, Field, ResourceName

# building the pyarrow-backed string array directly skips pandas' per-element re-check
ARROW_STRINGS = pd.StringDtype().storage == "pyarrow"

# An ISO 8601 date-time that states its zone (Z or an offset after the time of day); RE2 and
# Python's re read it alike. Without a zone a time could be any of 27 offsets.
ZONED = r"^\d{4}-?\d{2}-?\d{2}[Tt ]\d{2}(?::?\d{2})?.*(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$"

# Arrow's converter is strict for these target types (a str is not an int, a bool is not an
# int, an int is not a str), except that int64 truncates 1.5 to 1. An integer field is therefore
# read twice, a struct may repeat a name: as int64 and as float64 (which keeps 1.5 but takes True
# for 1.0), and the column is kept only where both agree. decimal128 is strict alone, but costs
# four times as much per value.
_ARROW_TYPES = {
    STRING: pa.string(),
    INT: pa.int64(),
    BOOL: pa.bool_(),
    TIME: pa.string(),
}
_TWIN = {INT: pa.float64()}


@cache
def _plan(resource: ResourceName) -> tuple[dict[str, Field], pa.StructType | None]:
    """The columns the Arrow pass can convert exactly (plain paths of strict types) and the
    struct type to convert them to; fixed by the schema table, so worked out once per resource.
    """
    fields = {
        name: field
        for name, field in SCHEMAS[resource].items()
        if not field.parse and "|" not in field.path and field.dtype in _ARROW_TYPES
    }
    return fields, (_struct(fields) if fields else None)


@cache
def arrow_objects(resource: ResourceName) -> frozenset[str]:
    """The paths the Arrow pass reads as structs: after it succeeded, each value there is an
    object or null in every record."""
    fields, _ = _plan(resource)
    return frozenset(
        path.rsplit(".", n)[0]
        for path in (f.path for f in fields.values())
        for n in range(1, path.count(".") + 1)
    )


def _struct(fields: dict[str, Field]) -> pa.StructType:
    tree: dict[str, Any] = {}
    for field in fields.values():
        node = tree
        *parents, leaf = field.path.split(".")
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = field.dtype

    def build(node: dict[str, Any]) -> pa.StructType:
        members = []
        for name, value in node.items():
            if isinstance(value, dict):
                members.append((name, build(value)))
                continue
            members.append((name, _ARROW_TYPES[value]))
            if value in _TWIN:
                members.append((name, _TWIN[value]))
        return pa.struct(members)

    return build(tree)


def arrow_columns(resource: ResourceName, records: list[Any]) -> dict[str, Any]:
    """Most columns in one pass of Arrow's C++ converter over the records.

    Raises on any value of an unexpected type; the caller then runs the exact Python checks,
    which find the record and field. A column with a value Arrow's pass cannot read exactly
    (a time without a zone or out of range, an integer field holding 1.5) is left out for the
    exact path.
    """
    fields, struct = _plan(resource)
    if struct is None:
        return {}
    array = pa.array(records, type=struct)
    children: dict[str, pa.Array] = {}
    twins: dict[str, pa.Array] = {}  # the second reading of a repeated name

    def child(path: str) -> pa.Array:
        if path not in children:
            parent, _, leaf = path.rpartition(".")
            holder = child(parent) if parent else array
            # flatten() applies the parent's nulls to its children
            names = [holder.type.field(i).name for i in range(holder.type.num_fields)]
            for name, values in zip(names, holder.flatten(), strict=True):
                full = f"{parent}.{name}" if parent else name
                (twins if full in children else children)[full] = values
        return children[path]

    out: dict[str, Any] = {}
    for name, field in fields.items():
        values = child(field.path)
        if field.dtype == STRING:
            out[name] = (
                pd.arrays.ArrowStringArray(values.cast(pa.large_string()))
                if ARROW_STRINGS
                else pd.array(values.to_pylist(), dtype=STRING)
            )
        elif field.dtype == INT:
            as_float = twins[field.path]
            if pc.all(pc.equal(values.cast(as_float.type), as_float), min_count=0).as_py():
                out[name] = pd.Int64Dtype().__from_arrow__(values)  # type: ignore[attr-defined]  # pandas-stubs omit __from_arrow__
        elif field.dtype == BOOL:
            out[name] = pd.BooleanDtype().__from_arrow__(values)  # type: ignore[attr-defined]  # pandas-stubs omit __from_arrow__
        else:
            times = _times(values)
            if times is not None:
                out[name] = times
    return out


# Arrow's ISO 8601 cast and pandas agree wherever Arrow reads a value, except that pandas refuses
# a local time past the nanosecond range before applying its offset: times outside these years
# go to pandas, which decides.
_UTC_NS = pa.timestamp("ns", tz="UTC")
_SAFE_YEARS = (
    pa.scalar(datetime(1678, 1, 1, tzinfo=UTC), type=_UTC_NS),
    pa.scalar(datetime(2262, 1, 1, tzinfo=UTC), type=_UTC_NS),
)


def utc_times(values: pa.Array) -> Any:
    """ISO 8601 strings with zones as datetime64[ns, UTC] in one Arrow cast; None when a value
    needs pandas (a form Arrow does not read, or a year near the edge of the nanosecond range).
    """
    try:
        stamps = values.cast(_UTC_NS)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if stamps.null_count < len(stamps):
        low, high = pc.min_max(stamps).values()
        if pc.less(low, _SAFE_YEARS[0]).as_py() or pc.greater_equal(high, _SAFE_YEARS[1]).as_py():
            return None
    return pd.DatetimeTZDtype(unit="ns", tz="UTC").__from_arrow__(stamps)


def _times(values: pa.Array) -> Any:
    """ISO 8601 strings with zones as datetime64[ns, UTC]; None when one has no zone or fails."""
    times = utc_times(values)
    if times is not None:
        return times
    if pc.any(pc.invert(pc.match_substring_regex(values, ZONED))).as_py():
        return None
    try:
        parsed = pd.to_datetime(values.to_numpy(zero_copy_only=False), utc=True, format="ISO8601")
        return pd.DatetimeIndex(parsed).astype(TIME).array
    except (ValueError, OverflowError):
        return None
