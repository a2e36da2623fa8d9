"""Benchmark: 180 daily snapshots of 5,000 VMs, 3 % of VMs changing per day (synthetic, no server).

Compares the store with the naive layout, one full Parquet file of the ``vms`` frame per day:

- size on disk of the store / total size of the 180 full files (target <= 0.10);
- time of ``Store.load("vms", at=day)`` / time of ``pd.read_parquet(that day's full file)``,
  best of 9 each, run alternately, for every day; the worst day is the figure (target <= 2).
  The 9 runs of a day are spread over 3 passes through all days, so that a burst of load from
  another process on this shared machine cannot spoil all of one day's runs (it treats both
  sides alike). Both sides give the same frame: same columns, dtypes and values (checked).

Run: ``.venv/bin/python bench/store.py``. Takes about a minute.
"""

from __future__ import annotations

import gc
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from svcnb import frames
from svcnb.store import Store

N_VMS = 5_000
DAYS = 180
CHANGING = 0.03
_STATUS = ["running", "running", "running", "stopped", "suspended"]
_REGIONS = [("fra1", "Frankfurt 1"), ("ams1", "Amsterdam 1"), ("nyc1", "New York 1")]
_PRICES: list[Any] = [12.5, "12.50", {"amount": "12.50", "currency": "EUR"}]


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def fleet(start: datetime) -> list[dict[str, Any]]:
    rng = random.Random(7)
    out = []
    for i in range(N_VMS):
        size = rng.choice([1, 2, 4, 8])
        slug, region = rng.choice(_REGIONS)
        out.append(
            {
                "id": f"vm-{i:05d}",
                "name": f"app-{i}",
                "hostname": f"app-{i}.{slug}.example.test",
                "status": rng.choice(_STATUS),
                "vcpu": size,
                "ram": 1024 * size,
                "disk": 25 * size,
                "bandwidth": 1000 * size,
                "networkSpeed": 1000,
                "network10gEnabled": size == 8,
                "dailyBackupEnabled": rng.random() < 0.3,
                "isProtected": rng.random() < 0.1,
                "ipAddress": f"198.51.{i // 250}.{i % 250}",
                "region": {"slug": slug, "name": region},
                "plan": {"slug": f"s-{size}", "name": f"Standard {size}"},
                "osTemplate": {"slug": "debian-12", "name": "Debian", "version": "12"},
                "billing": {
                    "priceMonthly": _PRICES[i % 3],
                    "nextRenewalAt": _stamp(start + timedelta(days=rng.randrange(30))),
                    "status": "active",
                },
                "createdAt": _stamp(start - timedelta(days=rng.randrange(400))),
                "bandwidthUsedBytes": rng.randrange(10**9),
                "bandwidthPackBytes": str(1000 * size * 2**30),
                "updatedAt": _stamp(start),
            }
        )
    return out


def next_day(records: list[dict[str, Any]], now: datetime, rng: random.Random) -> None:
    """3 % of VMs change: bandwidth grows, some change status or renew."""
    for vm in rng.sample(records, int(N_VMS * CHANGING)):
        vm["bandwidthUsedBytes"] += rng.randrange(10**8)
        if rng.random() < 0.2:
            vm["status"] = rng.choice(_STATUS)
        if rng.random() < 0.1:
            vm["billing"] = {**vm["billing"], "nextRenewalAt": _stamp(now + timedelta(days=30))}
        vm["updatedAt"] = _stamp(now)


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


PASSES, RUNS_PER_PASS = 3, 3


def best_pair(a, b, runs: int = RUNS_PER_PASS) -> tuple[float, float]:
    """Best wall time of each, the two run alternately so a busy machine slows both alike.

    The garbage collector is off while timing, as ``timeit`` does: a full collection walks every
    object of this process (the 5,000 VM records the benchmark keeps), a cost of the benchmark's
    own heap that lands on whichever call happens to cross the allocation threshold.
    """
    ta, tb = [], []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            for fn, times in ((a, ta), (b, tb)):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
    finally:
        if enabled:
            gc.enable()
    return min(ta), min(tb)


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="svcnb-bench-store-"))
    try:
        store, full = Store(work / "store"), work / "full"
        full.mkdir()
        start = datetime(2026, 1, 1, tzinfo=UTC)
        records, rng = fleet(start), random.Random(11)
        days, expected = [], {}
        t0 = time.perf_counter()
        for day in range(DAYS):
            now = start + timedelta(days=day)
            if day:
                next_day(records, now, rng)
            frame = frames.vms(records)
            store.write({"vms": frame}, server_time=now, partial=True)
            frame.to_parquet(full / f"{day:03d}.parquet", index=False)
            days.append(now)
            if day % 45 == 0 or day == DAYS - 1:
                expected[day] = frame
        t_write = time.perf_counter() - t0

        store_bytes, full_bytes = size_of(store.path), size_of(full)
        size_ratio = store_bytes / full_bytes

        for day, frame in expected.items():  # the store gives back what was written
            want = frame.sort_values("id").reset_index(drop=True)
            loaded = store.load("vms", at=days[day])
            pd.testing.assert_frame_equal(loaded, want)
            # the baseline reads the same frame, dtypes included: the comparison is like for like
            pd.testing.assert_frame_equal(pd.read_parquet(full / f"{day:03d}.parquet"), loaded)

        best_load = [float("inf")] * DAYS
        best_full = [float("inf")] * DAYS
        for _ in range(PASSES):
            for day, now in enumerate(days):
                t_load, t_full = best_pair(
                    lambda now=now: store.load("vms", at=now),
                    lambda day=day: pd.read_parquet(full / f"{day:03d}.parquet"),
                )
                best_load[day] = min(best_load[day], t_load)
                best_full[day] = min(best_full[day], t_full)
        ratios = [t_load / t_full for t_load, t_full in zip(best_load, best_full, strict=True)]
        ratios_s = pd.Series(ratios)

        print(f"{DAYS} daily snapshots of {N_VMS:,} VMs, {CHANGING:.0%} changing per day")
        print(f"  written in {t_write:.1f} s (store and full files together)")
        print(
            f"  on disk: store {store_bytes / 1e6:.2f} MB, one full file per day "
            f"{full_bytes / 1e6:.2f} MB -> ratio {size_ratio:.3f} (target <= 0.10)"
        )
        runs = PASSES * RUNS_PER_PASS
        print(
            f"  load as of a day / read that day's full file (best of {runs}, all {DAYS} days): "
            f"median {ratios_s.median():.2f}, worst {ratios_s.max():.2f} on day "
            f"{ratios_s.idxmax()} (target <= 2)"
        )
        ok = size_ratio <= 0.10 and ratios_s.max() <= 2
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
