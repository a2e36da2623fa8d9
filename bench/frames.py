"""Benchmark: ``svcnb.frames.vms`` on 100,000 VM records against what a user writes without it.

Two baselines, each asserted to give the very same frame (``assert_frame_equal``):
``pd.json_normalize`` on its fast path (no ``max_level``, so pandas' simple normaliser runs),
then rename, parse the price per row and cast; and a plain column builder (one list per column,
one cast per column). Prints the best of 3 runs of each and both ratios; targets: at least 4x
json_normalize, at least 3x the column builder. Run: ``.venv/bin/python bench/frames.py``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from svcnb import frames
from svcnb.frames import SCHEMAS, parse_money

N = 100_000
_PRICES: list[Any] = [12.5, "12.50", {"amount": "12.50", "currency": "EUR"}]
_STATUS = ["running", "stopped", "provisioning", "suspended"]


def make_records(n: int) -> list[dict[str, Any]]:
    """VM objects shaped like ``GET /vms/{id}`` without the link lists (summaries)."""
    out = []
    for i in range(n):
        out.append(
            {
                "id": f"vm-{i:06d}",
                "name": f"web-{i}",
                "hostname": f"web-{i}.example.test",
                "status": _STATUS[i % 4],
                "vcpu": 1 + i % 8,
                "ram": 1024 * (1 + i % 8),
                "disk": 25 * (1 + i % 8),
                "bandwidth": 1000 + i % 5000,
                "networkSpeed": 1000,
                "network10gEnabled": i % 7 == 0,
                "dailyBackupEnabled": i % 2 == 0,
                "isProtected": i % 11 == 0,
                "ipAddress": None if i % 50 == 0 else f"198.51.{i // 250 % 256}.{i % 250}",
                "region": {"slug": f"r{i % 6}", "name": f"Region {i % 6}"},
                "plan": {"slug": f"s-{i % 8}", "name": f"Plan {i % 8}", "priceMonthly": 5},
                "osTemplate": {"slug": "debian-12", "name": "Debian", "version": "12"},
                "billing": {
                    "priceMonthly": _PRICES[i % 3],
                    "nextRenewalAt": f"2026-12-{1 + i % 28:02d}T00:00:00Z",
                    "status": "active",
                },
                "createdAt": "2026-01-01T10:00:00Z",
                "bandwidthUsedBytes": 1_000_003 * i,
                "bandwidthPackBytes": str(2**40 + i),
                "updatedAt": f"2026-11-{1 + i % 28:02d}T10:{i % 60:02d}:00Z",
            }
        )
    return out


def _column(field, values: list[Any]) -> Any:
    """One column of ``values`` at the schema's dtype, as both baselines cast it."""
    if field.parse == "decimal":
        return pd.array([None if v is None else int(v) for v in values], dtype=field.dtype)
    if field.dtype.startswith("datetime"):
        return pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601").astype(
            field.dtype
        )
    return pd.array(values, dtype=field.dtype)


def _frame(fields: dict[str, Any], price: list[Any], values: Callable[[str], list[Any]]):
    money = [parse_money(p) for p in price]
    out = {}
    for column, field in fields.items():
        if field.parse.startswith("money_"):
            part = field.parse.removeprefix("money_")
            out[column] = pd.array([getattr(m, part) for m in money], dtype=field.dtype)
        else:
            out[column] = _column(field, values(field.path))
    return pd.DataFrame(out)


def normalize_baseline(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The same frame through ``pd.json_normalize`` on its fast path (no ``max_level``), which
    flattens an ``{amount, currency}`` price into two columns: put it back together."""
    flat = pd.json_normalize(records)
    price = flat["billing.priceMonthly"].astype(object)
    if "billing.priceMonthly.amount" in flat:
        amount = flat["billing.priceMonthly.amount"]
        whole = amount.notna()
        price[whole] = [
            {"amount": a, "currency": c}
            for a, c in zip(
                amount[whole], flat.loc[whole, "billing.priceMonthly.currency"], strict=True
            )
        ]
    price = price.where(price.notna(), flat["plan.priceMonthly"].astype(object))
    na = {c: None for c in flat.columns}

    def values(path: str) -> list[Any]:
        return flat[path].astype(object).where(flat[path].notna(), na[path]).tolist()

    return _frame(SCHEMAS["vms"], price.tolist(), values)


def _dig(record: dict[str, Any], keys: list[str]) -> Any:
    for key in keys:
        if not isinstance(record, dict):
            return None
        record = record.get(key)
    return record


def column_baseline(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The same frame the plain way: one list per column, then one cast per column."""
    price = []
    for r in records:
        billing = r.get("billing") or {}
        value = billing.get("priceMonthly")
        price.append(value if value is not None else (r.get("plan") or {}).get("priceMonthly"))

    def values(path: str) -> list[Any]:
        keys = path.split(".")
        if len(keys) == 1:
            return [r.get(path) for r in records]
        return [_dig(r, keys) for r in records]

    return _frame(SCHEMAS["vms"], price, values)


def best_of(fn, records, runs: int = 3) -> tuple[float, pd.DataFrame]:
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn(records)
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> int:
    records = make_records(N)
    json.dumps(records[0])  # the records are plain JSON values, as the client returns them
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min)")
    t_svcnb, got = best_of(frames.vms, records)
    ok = True
    for name, fn, target in (
        ("pd.json_normalize (fast path)", normalize_baseline, 4.0),
        ("plain column builder", column_baseline, 3.0),
    ):
        t_base, expected = best_of(fn, records)
        pd.testing.assert_frame_equal(got, expected)
        ratio = t_base / t_svcnb
        ok = ok and ratio >= target
        print(
            f"vms on {N:,} records: svcnb {t_svcnb * 1000:.0f} ms, {name} {t_base * 1000:.0f} ms "
            f"(best of 3 each, same frame asserted): svcnb is {ratio:.1f}x faster "
            f"(target >= {target:g}x)"
        )
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
