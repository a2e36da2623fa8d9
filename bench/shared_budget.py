"""Benchmark of one rate budget shared by processes on one token (run by ``make bench``).

Setup: a sandbox in its own process, 1,000 VMs, 50 ms latency on every API answer, a rate
window shortened to 10 s (600 requests per window). Three svcnb processes, each a detailed pull
(10 pages + 1,000 details) with 8 worker threads, start at the same instant on the same token
and share one budget file (a fresh one in a temporary folder, so no earlier run's state counts).

Figure 1: the 429 answers the sandbox served during the three pulls (target 0, from control
          /stats), and the time until the last pull ended / the least time the limiter allows
          for all their requests together, i.e. (ceil(requests / limit) - 1) full windows plus
          one answer's latency (target <= 1.15).
Figure 2 (contrast; ``--no-contrast`` leaves it out): the same three processes with sharing off
          (``SVCNB_BUDGET=off``), each pacing as if it had the budget alone, against a sandbox
          of 300 VMs: the 429s they meet.

The load average is printed with each figure: on a busy machine the times say less.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import subsandbox  # noqa: E402

from svcnb.sandbox import Control  # noqa: E402

VMS = 1000
CONTRAST_VMS = 300
PROCESSES = 3
WORKERS = 8
LATENCY_MS = 50
WINDOW_SECONDS = 10.0
LIMIT = 600


def _load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def _served(control: Control) -> tuple[int, int]:
    stats = control.stats()
    return stats["requests"], stats["byStatus"].get("429", 0)


def worker(expected: int) -> int:
    """One process's pull (token and server from SVC_API_KEY / SVC_BASE_URL): says "ready",
    pulls when a line comes on stdin, then prints what it did as JSON."""
    import svcnb

    client = svcnb.Client(progress=False)
    print("ready", flush=True)
    sys.stdin.readline()
    fleet = client.vms.all(details=True, workers=WORKERS)
    ended = time.time()
    if len(fleet) != expected:
        raise SystemExit(f"the pull returned {len(fleet)} VMs, not {expected}")
    print(json.dumps({"ended": ended, **client.stats}), flush=True)
    return 0


def _pulls(info: dict, budget: str, expected: int) -> tuple[float, list[dict]]:
    """Three worker processes pulling at once; (when they started, what each printed)."""
    env = {**os.environ, "SVC_API_KEY": info["tokens"]["read"], "SVC_BASE_URL": info["base_url"],
           "SVCNB_BUDGET": budget}  # fmt: skip
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", str(expected)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(PROCESSES)
    ]
    # Each has imported svcnb and made its Client before any of them starts.
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit("a pulling process did not start")
    started = time.time()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = [proc.communicate()[0] for proc in procs]
    if any(proc.returncode for proc in procs):
        raise SystemExit("a pulling process failed")
    return started, [json.loads(out.strip().splitlines()[-1]) for out in outputs]


def _sandbox(folder: str, vms: int) -> tuple[subprocess.Popen, dict, Control]:
    proc, info, _ = subsandbox.start(
        folder, vms, "--seed", "7", "--latency-ms", str(LATENCY_MS), "--rate-limit", str(LIMIT),
        "--rate-window", str(WINDOW_SECONDS), "--time-scale", "0",
    )  # fmt: skip
    return proc, info, Control(info["control_url"])


def shared(folder: str) -> None:
    proc, info, control = _sandbox(folder, VMS)
    try:
        budget = str(Path(folder) / "budget.sqlite")
        before, throttled_before = _served(control)
        start_at, results = _pulls(info, budget, VMS)
        after, throttled_after = _served(control)
        took = max(r["ended"] for r in results) - start_at
        requests, throttled = after - before, throttled_after - throttled_before
        windows = math.ceil(requests / LIMIT)
        least = (windows - 1) * WINDOW_SECONDS + LATENCY_MS / 1000
        waited = ", ".join(f"{r['waited_seconds']:.1f}" for r in results)
        print(
            f"shared budget: {PROCESSES} processes x {VMS} VMs, {requests} requests over "
            f"{windows} windows in {took:.1f} s (least the limiter allows: {least:.1f} s); "
            f"each process waited {waited} s; {_load()}"
        )
        print(f"Figure 1: 429 answers served = {throttled}  (target 0)")
        print(f"          total time / least time = {took / least:.3f}  (target <= 1.15)")
    finally:
        control.close()
        proc.terminate()
        proc.wait()


def unshared(folder: str) -> None:
    proc, info, control = _sandbox(folder, CONTRAST_VMS)
    try:
        before, throttled_before = _served(control)
        _, results = _pulls(info, "off", CONTRAST_VMS)
        after, throttled_after = _served(control)
        throttled = throttled_after - throttled_before
        print(
            f"no shared budget: {PROCESSES} processes x {CONTRAST_VMS} VMs, {after - before} "
            f"requests, {throttled} x 429; {_load()}"
        )
        print(f"Figure 2: 429 answers without sharing = {throttled}  (what sharing avoids)")
    finally:
        control.close()
        proc.terminate()
        proc.wait()


def main(contrast: bool) -> int:
    print(
        f"setup: {VMS} VMs, {LATENCY_MS} ms latency, {LIMIT} requests per {WINDOW_SECONDS:g} s "
        f"window, {PROCESSES} processes x {WORKERS} worker threads on one token, sandbox in its "
        f"own process; {_load()}, {os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory() as folder:
        shared(folder)
        if contrast:
            unshared(folder)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker(int(sys.argv[2])))
    sys.exit(main(contrast="--no-contrast" not in sys.argv[1:]))
