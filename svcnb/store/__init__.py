"""The Parquet snapshot store: take, list, load as of a time, history, diff.

A folder DuckDB, pyarrow, Dask or Spark can read without svcnb: one Hive-partitioned dataset per
resource plus a manifest (layout in ``svcnb.store._layout``). Unchanged rows are not written
again; a snapshot is published by an atomic rename; tokens and webhook secrets never enter it.
A resource that could not be read is recorded as missing, with the reason, never as empty:
reading it at that snapshot raises ``MissingResourceError``.
"""

from __future__ import annotations

from ._layout import MissingResourceError, SnapshotWarning, StoreError
from ._snapshots import RESOURCES
from ._store import Store

__all__ = ["RESOURCES", "MissingResourceError", "SnapshotWarning", "Store", "StoreError"]
