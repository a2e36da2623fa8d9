"""The fast path: most columns of a frame from one pass of Arrow's C++ converter.

Arrow converts the records to a struct array typed from the schema table; columns are then
wrapped as pandas arrays without another pass in Python. Only strict conversions are used, so a
value of the wrong type raises here and the caller's exact Python checks take over.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._schema import BOOL, INT, SCHEMAS, STRING, TIME, Field

# building the pyarrow-backed string array directly skips pandas' per-element re-check
ARROW_STRINGS = pd.StringDtype().storage == "pyarrow"

# An ISO 8601 date-time that states its zone (Z or an offset after the time of day); RE2 and
# Python's re read it alike. Without a zone a time could be any of 27 offsets.
ZONED = r"^\d{4}-?\d{2}-?\d{2}[Tt ]\d{2}(?::?\d{2})?.*(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$"

# Arrow's converter is strict for these target types (a str is not an int, a bool is not an
# int, an int is not a str); decimal128 is used for integers because int64 would truncate 1.5.
_ARROW_TYPES = {
    STRING: pa.string(),
    INT: pa.decimal128(38, 0),
    BOOL: pa.bool_(),
    TIME: pa.string(),
}


@cache
def _plan(resource: str) -> tuple[dict[str, Field], pa.StructType | None]:
    """The columns the Arrow pass can convert exactly (plain paths of strict types) and the
    struct type to convert them to; fixed by the schema table, so worked out once per resource.
    """
    fields = {
        name: field
        for name, field in SCHEMAS[resource].items()
        if not field.parse and "|" not in field.path and field.dtype in _ARROW_TYPES
    }
    return fields, (_struct(fields) if fields else None)


def _struct(fields: dict[str, Field]) -> pa.StructType:
    tree: dict[str, Any] = {}
    for field in fields.values():
        node = tree
        *parents, leaf = field.path.split(".")
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = _ARROW_TYPES[field.dtype]

    def build(node: dict[str, Any]) -> pa.StructType:
        return pa.struct([(k, build(v) if isinstance(v, dict) else v) for k, v in node.items()])

    return build(tree)


def arrow_columns(resource: str, records: list[Any]) -> dict[str, Any]:
    """Most columns in one pass of Arrow's C++ converter over the records.

    Raises on any value of an unexpected type; the caller then runs the exact Python checks,
    which find the record and field. A time column with a value Arrow's pass cannot read
    exactly (no zone, out of range) is left out for the exact path.
    """
    fields, struct = _plan(resource)
    if struct is None:
        return {}
    array = pa.array(records, type=struct)
    children: dict[str, pa.Array] = {}

    def child(path: str) -> pa.Array:
        if path not in children:
            parent, _, leaf = path.rpartition(".")
            holder = child(parent) if parent else array
            # flatten() applies the parent's nulls to its children
            names = [holder.type.field(i).name for i in range(holder.type.num_fields)]
            for name, values in zip(names, holder.flatten(), strict=True):
                children[f"{parent}.{name}" if parent else name] = values
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
            out[name] = pd.Int64Dtype().__from_arrow__(values.cast(pa.int64()))
        elif field.dtype == BOOL:
            out[name] = pd.BooleanDtype().__from_arrow__(values)
        else:
            times = _times(values)
            if times is not None:
                out[name] = times
    return out


def _times(values: pa.Array) -> Any:
    """ISO 8601 strings with zones as datetime64[ns, UTC]; None when one has no zone or fails."""
    if pc.any(pc.invert(pc.match_substring_regex(values, ZONED))).as_py():
        return None
    try:
        parsed = pd.to_datetime(values.to_numpy(zero_copy_only=False), utc=True, format="ISO8601")
        return pd.DatetimeIndex(parsed).astype(TIME).array
    except (ValueError, OverflowError):
        return None
