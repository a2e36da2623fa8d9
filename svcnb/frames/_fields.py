"""The API <-> frame field map, derived from ``SCHEMAS`` both ways (the schema table is its one
source).

``API_FIELDS[resource][column]`` is the API field a column is read from as the spec names it:
the first alternative of its path, dotted for a nested field (``region.slug``).
``COLUMNS[resource][name]`` is the reverse: every name a column is read from (each alternative
of every path, ``status_code`` as well as ``statusCode``) to the columns read from it, in the
frame's order; a money field gives three (``_raw``, ``_amount``, ``_currency``).
:func:`column_of` gives the one column of a name, :func:`api_record` writes frame values back
at their API fields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._schema import SCHEMAS, ResourceName

__all__ = ["API_FIELDS", "COLUMNS", "api_record", "column_of"]


def _names(path: str) -> list[str]:
    return path.split("|")


API_FIELDS: dict[ResourceName, dict[str, str]] = {
    resource: {column: _names(field.path)[0] for column, field in schema.items()}
    for resource, schema in SCHEMAS.items()
}


def _reverse(resource: ResourceName) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for column, field in SCHEMAS[resource].items():
        for name in _names(field.path):
            out.setdefault(name, []).append(column)
    return {name: tuple(columns) for name, columns in out.items()}


COLUMNS: dict[ResourceName, dict[str, tuple[str, ...]]] = {
    resource: _reverse(resource) for resource in SCHEMAS
}


def column_of(resource: ResourceName, name: str) -> str:
    """The column of ``resource`` read from the API field ``name`` (any name the schema reads
    it under). KeyError when no column reads ``name``; ValueError when several do (a money
    field: its parts are three columns)."""
    columns = COLUMNS[resource].get(name)
    if columns is None:
        raise KeyError(f"no column of {resource} is read from the API field {name!r}")
    if len(columns) > 1:
        raise ValueError(
            f"the API field {name!r} of {resource} is read into {', '.join(columns)}: name one"
        )
    return columns[0]


def api_record(
    resource: ResourceName, values: Mapping[str, object], columns: Iterable[str] | None = None
) -> dict[str, object]:
    """``values`` (column -> value, a frame row as plain values) as the API record they were read
    from: each column's value at its API field (:data:`API_FIELDS`; ``region.slug`` goes into
    ``{"region": {"slug": ...}}``), in the order ``columns`` names them (default: the frame's).

    Values are written as given: turning a time, a list or a number into the API's text is the
    caller's. A column read from a money value is refused (ValueError): the API states the three
    parts as one value (``svcnb.money``).
    """
    schema = SCHEMAS[resource]
    record: dict[str, object] = {}
    for column in schema if columns is None else columns:
        field = schema[column]
        if field.parse.startswith("money_"):
            raise ValueError(
                f"{resource}.{column} is one part of the money value {field.path}: state the "
                "value, not its parts"
            )
        *parents, leaf = API_FIELDS[resource][column].split(".")
        where = record
        for parent in parents:
            inner = where.setdefault(parent, {})
            if not isinstance(inner, dict):
                raise ValueError(f"{resource}: {parent} is both a value and an object")
            where = inner
        where[leaf] = values[column]
    return record
