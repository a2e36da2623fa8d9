"""Benchmark: ``svcnb.frames.vms`` on 100,000 VM records against what a user writes without it.

Two baselines, each asserted to give the very same frame (``assert_frame_equal``):
``pd.json_normalize`` on its fast path (no ``max_level``, so pandas' simple normaliser runs),
then rename, parse the price per row and cast; and a plain column builder (one list per column,
one cast per column). The machine is shared, so each builder runs ``ROUNDS`` times in
alternating order (svcnb, normalize, columns, then the reverse, ...) and the medians of wall and
CPU time are compared; a round's times and the load average are printed as it ends. Targets: at
least 4x json_normalize, at least 3x the column builder by CPU time (both ratios are printed,
each with PASS or FAIL, then the run's verdict; the exit code is 1 when a ratio misses its
target). svcnb reads as its user does: the plans' slugs prove ram in MiB, the disk unit (which
no answer proves) is pinned; the baselines take both as sent.
Run: ``.venv/bin/python bench/frames.py [ROUNDS]``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from svcnb import frames
from svcnb.frames import SCHEMAS, parse_money

N = 100_000
ROUNDS = 7  # builds per builder, in alternating order; medians are compared
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
                # the slug states the ram size, which proves the unit of ram (MiB)
                "plan": {
                    "slug": f"s-{1 + i % 8}vcpu-{1 + i % 8}gb",
                    "name": f"Plan {i % 8}",
                    "priceMonthly": 5,
                },
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


def svcnb_vms(records: list[dict[str, Any]]) -> pd.DataFrame:
    """``frames.vms`` as its user calls it: the plans' slugs prove ram in MiB, but no answer
    states a disk size, so the disk unit is pinned (and no config file of this machine's)."""
    return frames.vms(records, units={"disk": "GiB"}, pins={})


def _timed(fn: Callable[[list], pd.DataFrame], records: list) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, the frame) of one build."""
    cpu0, start = time.process_time(), time.perf_counter()
    frame = fn(records)
    return time.perf_counter() - start, time.process_time() - cpu0, frame


def _loads() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f}/{five:.2f}"


def main(rounds: int) -> int:
    records = make_records(N)
    json.dumps(records[0])  # the records are plain JSON values, as the client returns them
    print(f"load average (1/5 min): {_loads()}, {os.cpu_count()} cores")
    builders: dict[str, Callable[[list], pd.DataFrame]] = {
        "svcnb": svcnb_vms,
        "pd.json_normalize (fast path)": normalize_baseline,
        "plain column builder": column_baseline,
    }
    targets = {"pd.json_normalize (fast path)": 4.0, "plain column builder": 3.0}
    wall: dict[str, list[float]] = {name: [] for name in builders}
    cpu: dict[str, list[float]] = {name: [] for name in builders}
    got = svcnb_vms(records)  # warm-up (imports, caches), and the frame the others must equal
    for fn in builders.values():
        pd.testing.assert_frame_equal(got, fn(records))
    print(f"same frame asserted for every builder; {rounds} rounds, order alternating")
    for r in range(rounds):
        # svcnb, normalize, columns, then columns, normalize, svcnb, ...: a load that rises or
        # falls through the run weighs on every builder alike
        order = list(builders) if r % 2 == 0 else list(builders)[::-1]
        for name in order:
            seconds, cpu_seconds, _ = _timed(builders[name], records)
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
        print(
            f"  round {r + 1}: "
            + ", ".join(f"{n.split(' ')[0]} {wall[n][-1] * 1000:.0f} ms" for n in builders)
            + f"; load {_loads()}",
            flush=True,
        )
    med = {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in builders}
    ok = True
    s_wall, s_cpu = med["svcnb"]
    print(f"vms on {N:,} records, medians of {rounds} runs (wall / CPU):")
    print(f"  svcnb: {s_wall * 1000:.0f} ms / {s_cpu * 1000:.0f} ms")
    for name, target in targets.items():
        b_wall, b_cpu = med[name]
        met = b_cpu / s_cpu >= target  # CPU time: what a busy machine disturbs least
        ok = ok and met
        print(
            f"  {name}: {b_wall * 1000:.0f} ms / {b_cpu * 1000:.0f} ms: svcnb is "
            f"{b_wall / s_wall:.1f}x faster by wall time, {b_cpu / s_cpu:.1f}x by CPU time "
            f"(target >= {target:g}x by CPU time): {'PASS' if met else 'FAIL'}"
        )
    print(f"load average (1/5 min): {_loads()}")
    print(f"bench/frames.py: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS))
