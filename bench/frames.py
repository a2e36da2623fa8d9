"""Benchmark: ``svcnb.frames.vms`` on 100,000 VM records against a ``pd.json_normalize`` baseline.

The baseline produces the same columns and dtypes (checked with ``assert_frame_equal``) the usual
way: normalize, rename, parse the price per row, cast. Prints the best of a few runs of each and
the ratio; the target is a ratio of at least 4. Run: ``.venv/bin/python bench/frames.py``.
"""

from __future__ import annotations

import json
import sys
import time
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


def baseline(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The same frame the usual way: json_normalize, rename, parse per row, cast."""
    # max_level=1 keeps an {amount, currency} price whole for parse_money, as the frame does
    flat = pd.json_normalize(records, max_level=1)
    price = flat["billing.priceMonthly"].where(
        flat["billing.priceMonthly"].notna(), flat["plan.priceMonthly"]
    )
    money = price.map(parse_money)
    out = pd.DataFrame(index=flat.index)
    for column, field in SCHEMAS["vms"].items():
        if field.parse.startswith("money_"):
            part = field.parse.removeprefix("money_")
            out[column] = pd.array([getattr(m, part) for m in money], dtype=field.dtype)
        elif field.parse == "decimal":
            out[column] = flat[field.path].astype("int64").astype(field.dtype)
        elif field.dtype.startswith("datetime"):
            out[column] = pd.to_datetime(flat[field.path], utc=True, format="ISO8601").astype(
                field.dtype
            )
        else:
            out[column] = flat[field.path].astype(field.dtype)
    return out


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
    t_base, expected = best_of(baseline, records)
    t_svcnb, got = best_of(frames.vms, records)
    pd.testing.assert_frame_equal(got, expected)
    ratio = t_base / t_svcnb
    print(
        f"vms on {N:,} records: svcnb {t_svcnb * 1000:.0f} ms, json_normalize baseline "
        f"{t_base * 1000:.0f} ms (best of 3 each, same columns and dtypes)"
    )
    print(f"speed-up: {ratio:.1f}x (target >= 4x)")
    return 0 if ratio >= 4 else 1


if __name__ == "__main__":
    sys.exit(main())
