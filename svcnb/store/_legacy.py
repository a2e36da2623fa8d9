"""Stores in svcnb's first format, read for migration only.

```
<store>/manifest.json                          published snapshots (entries as below)
<store>/<resource>/segment=<first seq>/base.parquet     every row at the segment's first snapshot
<store>/<resource>/segment=<first seq>/changes.parquet  versions since, with _seq and _removed
```

An entry: ``{"snapshot_id", "seq", "server_time", "local_time", "rows": {resource: n},
"parts": {resource: [segment, versions in changes.parquet with _seq <= seq]},
"resources": {resource: {"status", "reason"?, "rows"?, "unreadable"?}}}`` (``resources`` is
absent from entries written before missing resources were recorded: every resource was read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from svcnb.frames import ResourceName

from ._layout import StoreError
from ._segments import SEQ, normalized, state, to_frame

MANIFEST = "manifest.json"
_OLD_SEQ = "_seq"


def is_legacy(path: str | Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def read_entries(path: Path) -> list[dict[str, Any]]:
    try:
        doc = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        entries = doc["snapshots"]
        if doc.get("format") != 1 or not isinstance(entries, list):
            raise ValueError(f"unknown manifest format {doc.get('format')!r}")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StoreError(f"{path / MANIFEST} is not a readable svcnb manifest ({exc})") from None
    return entries


def _read(path: Path, upto: int | None = None) -> pa.Table:
    table = pq.read_table(path)
    # the first format called the seq column _seq (int32) and kept no valid-from time
    i = table.schema.get_field_index(_OLD_SEQ)
    table = table.set_column(i, SEQ, table.column(i).cast(pa.int64()))
    return normalized(table, upto)


def frame_at(path: Path, resource: ResourceName, entry: dict[str, Any]) -> pd.DataFrame:
    """``resource`` as snapshot ``entry`` holds it, exactly as the first format's load gave it."""
    segment, expected = entry["parts"][resource]
    folder = path / resource / f"segment={segment:06d}"
    tables = [_read(folder / "base.parquet")]
    if expected:
        changes = _read(folder / "changes.parquet", entry["seq"])
        if changes.num_rows != expected:
            raise StoreError(
                f"{folder / 'changes.parquet'} holds {changes.num_rows} versions up to snapshot "
                f"{entry['seq']}, the manifest recorded {expected}: the old store is damaged"
            )
        tables.append(changes)
    table = state(resource, tables, entry["seq"])
    if table.num_rows != entry["rows"][resource]:
        raise StoreError(
            f"{resource} at snapshot {entry['snapshot_id']} has {table.num_rows} rows, the "
            f"manifest recorded {entry['rows'][resource]}: the old store is damaged"
        )
    return to_frame(resource, table)
