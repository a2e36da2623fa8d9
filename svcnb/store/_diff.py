"""What changed in one frame between two snapshots."""

from __future__ import annotations

from typing import Any

import pandas as pd

from svcnb.frames import KEYS, SCHEMAS, ResourceName

DIFF_COLUMNS = ("change", "column", "before", "after")
_NO_VALUES = {"column": None, "before": None, "after": None}


def _same(a: Any, b: Any) -> bool:
    a_na = a is None or (not isinstance(a, list) and pd.isna(a))
    b_na = b is None or (not isinstance(b, list) and pd.isna(b))
    if a_na or b_na:
        return a_na and b_na
    return bool(a == b)


def _plain(value: Any) -> Any:
    if value is None or (not isinstance(value, list) and pd.isna(value)):
        return None
    return value


def diff_frames(resource: ResourceName, a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Rows added, removed and changed from ``a`` to ``b`` (two frames of ``resource``).

    Returns the key columns, ``change`` ("added" | "removed" | "changed"), ``column`` (the column
    that changed; NA for added and removed rows), ``before`` and ``after`` (the values, object).
    One row per changed column of a changed row.
    """
    keys = list(KEYS[resource])
    left = a.set_index(keys, drop=False)
    right = b.set_index(keys, drop=False)
    rows: list[dict[str, Any]] = []
    for key in right.index.difference(left.index, sort=False):
        rows.append({**_key(keys, key), "change": "added", **_NO_VALUES})
    for key in left.index.difference(right.index, sort=False):
        rows.append({**_key(keys, key), "change": "removed", **_NO_VALUES})
    common = left.index.intersection(right.index, sort=False)
    columns = [c for c in SCHEMAS[resource] if c not in keys]
    lvals = left.loc[common, columns].astype(object)
    rvals = right.loc[common, columns].astype(object)
    for i, key in enumerate(common):
        before, after = lvals.iloc[i], rvals.iloc[i]
        for column in columns:
            if not _same(before[column], after[column]):
                rows.append(
                    {
                        **_key(keys, key),
                        "change": "changed",
                        "column": column,
                        "before": _plain(before[column]),
                        "after": _plain(after[column]),
                    }
                )
    out = pd.DataFrame(rows, columns=[*keys, *DIFF_COLUMNS])
    for k in keys:
        out[k] = out[k].astype("string")
    out["change"] = out["change"].astype("string")
    out["column"] = out["column"].astype("string")
    out["before"] = out["before"].astype(object)
    out["after"] = out["after"].astype(object)
    order = {"removed": 0, "changed": 1, "added": 2}
    out = out.sort_values(
        [*keys, "change"], key=lambda s: s.map(order) if s.name == "change" else s
    )
    return out.reset_index(drop=True)


def _key(keys: list[str], key: Any) -> dict[str, Any]:
    """The key columns of the row at index value ``key`` (a tuple when there are several)."""
    return dict(zip(keys, key if len(keys) > 1 else (key,), strict=True))
