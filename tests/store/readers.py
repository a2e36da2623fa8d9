"""'The fleet as of a date' as a user without svcnb reads it: DuckDB and Polars on the Delta
tables, nothing of svcnb imported. The queries are the README's."""

from __future__ import annotations

from pathlib import Path

import polars as pl

AS_OF_SQL = """
SELECT * EXCLUDE (_snapshot, _valid_from, _removed)
FROM delta_scan('{table}')
WHERE _valid_from <= TIMESTAMPTZ '{at}'
QUALIFY row_number() OVER (PARTITION BY {keys} ORDER BY _snapshot DESC) = 1 AND NOT _removed
ORDER BY {keys}
"""


def delta_extension() -> str:
    """The DuckDB delta extension shipped in the duckdb-extension-delta wheel."""
    import duckdb
    import duckdb_extension_delta

    folder = Path(duckdb_extension_delta.__file__).parent / "extensions"
    return str(folder / f"v{duckdb.__version__}" / "delta.duckdb_extension")


def duckdb_as_of(table: str, at: object, keys: tuple[str, ...] = ("id",)):
    import duckdb

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{delta_extension()}'")
    sql = AS_OF_SQL.format(table=table, at=at, keys=", ".join(keys))
    return con.execute(sql).to_arrow_table().to_pandas()


def polars_as_of(
    table: str,
    resource_or_at: object,
    at: object = None,
    keys: tuple[str, ...] = ("id",),
    storage_options: dict[str, str] | None = None,
) -> pl.DataFrame:
    """``polars_as_of(store, resource, at)`` or ``polars_as_of(table_url, at)``."""
    if at is None:
        url, when = table, resource_or_at
    else:
        url, when = f"{table}/{resource_or_at}", at
    when = pl.lit(str(when)).str.to_datetime(time_zone="UTC", time_unit="us")
    return (
        pl.read_delta(url, storage_options=storage_options)
        .filter(pl.col("_valid_from") <= when)
        .sort("_snapshot")
        .group_by(list(keys))
        .last()
        .filter(~pl.col("_removed"))
        .drop("_snapshot", "_valid_from", "_removed")
        .sort(list(keys))
    )
