"""Benchmark of the svcnb client's pull at the limiter's pace (run by ``make bench``).

Setup: a sandbox in its own process (so this process's CPU time is the client's alone), 2,000
VMs, 50 ms latency on every API answer, a rate window shortened to 10 s (600 requests per
window), so a detailed pull (20 pages + 2,000 details) spans 4 windows.

Figure 1: pull time / the least time the limiter allows for that many requests, i.e.
          (ceil(requests / limit) - 1) full windows plus one answer's latency (target <= 1.10),
          with the number of 429 answers the sandbox served (target 0, from control /stats),
          and the pull's client CPU as a share of one core over its duration (target <= 15 %).
Figure 2: requests a refresh sends after 2 % of the VMs changed / (pages + changed VMs)
          (target <= 1.2).
Figure 3: svcnb's pull time / the time of a competent hand-written client (``handwritten.py``:
          httpx, 8 threads, pacing from the rate-limit headers) over the same pull, and both
          CPU shares.
Figure 4: time to the first frame of a 10,000-VM fleet at the limiter's pace (600 per minute
          as 10 per 1 s window, so no fresh 600-request burst hides the pace; 50 ms latency):
          ``vms.pull()`` returning plus ``frames.vms(pull.records())``, over the time the list
          pages alone take (``vms.all(details=False)``) (target <= 1.2). Each is measured with
          its own token, so each starts on a fresh budget.

Figure 5: the client's CPU over the first 60 s of a paced detailed pull of 50,000 VMs (600 per
          10 s window, 50 ms latency; ``vms.pull`` reads the 500 list pages, then the details in
          the background), as a share of one core (target <= 15 %); the pull is then cancelled.

``python bench/fetch.py --no-10k --no-50k`` leaves Figures 4 and 5 out, ``--only-50k`` runs
Figure 5 alone. The load average is printed with each figure: on a busy machine the times say
less.
"""

from __future__ import annotations

import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import handwritten  # noqa: E402
import subsandbox  # noqa: E402

import svcnb  # noqa: E402
from svcnb import frames  # noqa: E402
from svcnb.sandbox import Control  # noqa: E402

VMS = 2000
LATENCY_MS = 50
WINDOW_SECONDS = 10.0
LIMIT = 600
PER_PAGE = 100
CHANGED_SHARE = 0.02
BIG_FLEET = 10_000
# 600 per minute, paced: 10 per 1 s window (a 60 s window would let 100 pages go as a burst)
PACE_LIMIT = 10
PACE_WINDOW_SECONDS = 1.0
HUGE_FLEET = 50_000
FIRST_SECONDS = 60.0  # how long Figure 5 watches the paced 50k pull


def _load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def _served(control: Control) -> tuple[int, int]:
    stats = control.stats()
    return stats["requests"], stats["byStatus"].get("429", 0)


def _timed(fn: Callable[[], object]) -> tuple[object, float, float]:
    """(result, wall seconds, CPU seconds of this process) of ``fn()``."""
    cpu0, started = time.process_time(), time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started, time.process_time() - cpu0


def paced(folder: str) -> None:
    # The sandbox clock is frozen (the rate window runs on real time regardless) so that the
    # VMs touched for Figure 2 are the only ones whose updatedAt moves.
    proc, info, _ = subsandbox.start(
        folder, VMS, "--seed", "7", "--latency-ms", str(LATENCY_MS), "--rate-limit", str(LIMIT),
        "--rate-window", str(WINDOW_SECONDS), "--time-scale", "0",
    )  # fmt: skip
    control = Control(info["control_url"])
    try:
        client = svcnb.Client(info["tokens"]["read"], info["base_url"], progress=False)

        # Figure 1: the detailed pull.
        before, _ = _served(control)
        fleet, pulled, cpu = _timed(lambda: client.vms.all(details=True, workers=8))
        after, throttled = _served(control)
        requests = after - before
        windows = math.ceil(requests / LIMIT)
        least = (windows - 1) * WINDOW_SECONDS + LATENCY_MS / 1000
        assert len(fleet) == VMS, f"the pull returned {len(fleet)} VMs, not {VMS}"
        print(
            f"pull: {len(fleet)} VMs, {requests} requests over {windows} windows in "
            f"{pulled:.1f} s (least the limiter allows: {least:.1f} s); {_load()}"
        )
        print(f"Figure 1: pull time / least time = {pulled / least:.3f}  (target <= 1.10)")
        print(f"          429 answers served during the pull = {throttled}  (target 0)")
        print(
            f"          client CPU = {cpu:.2f} s, {100 * cpu / pulled:.1f} % of one core over "
            "the pull  (target <= 15 %)"
        )

        # Figure 2: a refresh after 2 % of the VMs changed.
        changed = random.Random(1).sample([vm["id"] for vm in fleet], int(VMS * CHANGED_SHARE))
        for vm_id in changed:
            control.vm_action(vm_id, "touch")
        pages = math.ceil(VMS / PER_PAGE)
        before, _ = _served(control)
        refreshed = client.vms.all(details=True, previous=fleet)
        after, _ = _served(control)
        moved = {vm["id"] for vm in refreshed} & set(changed)
        assert len(moved) == len(changed) and len(refreshed) == VMS
        ideal = pages + len(changed)
        print(
            f"refresh: {len(changed)} changed VMs, {after - before} requests "
            f"(pages + changed = {ideal}); {_load()}"
        )
        print(
            f"Figure 2: refresh requests / (pages + changed) = {(after - before) / ideal:.3f}"
            "  (target <= 1.2)"
        )
        client.close()

        # Figure 3: the hand-written paced pool over the same pull, on its own token (a fresh
        # budget) after a window's pause, as svcnb's pull started on a fresh one.
        time.sleep(WINDOW_SECONDS)
        token = info["tokens"]["admin"]
        before, _ = _served(control)
        by_hand, manual, manual_cpu = _timed(lambda: handwritten.pull(info["api_root"], token))
        after, throttled_by_hand = _served(control)
        assert len(by_hand) == VMS
        print(
            f"hand-written paced pool: {after - before} requests in {manual:.1f} s, "
            f"{throttled_by_hand} x 429, CPU {100 * manual_cpu / manual:.1f} % of one core; "
            f"{_load()}"
        )
        print(
            f"Figure 3: svcnb pull time / hand-written time = {pulled / manual:.3f}; CPU share "
            f"svcnb {100 * cpu / pulled:.1f} % vs hand-written {100 * manual_cpu / manual:.1f} %"
        )
    finally:
        control.close()
        proc.terminate()
        proc.wait()


def first_frame(folder: str) -> None:
    proc, info, _ = subsandbox.start(
        folder, BIG_FLEET, "--seed", "7", "--latency-ms", str(LATENCY_MS), "--rate-limit",
        str(PACE_LIMIT), "--rate-window", str(PACE_WINDOW_SECONDS),
    )  # fmt: skip
    try:
        lister = svcnb.Client(info["tokens"]["read"], info["base_url"], progress=False)
        listed, alone, _ = _timed(lambda: lister.vms.all(details=False))
        assert len(listed) == BIG_FLEET
        lister.close()

        client = svcnb.Client(info["tokens"]["admin"], info["base_url"], progress=False)

        def frame() -> tuple:
            pull = client.vms.pull(details=True)
            listed_at = time.perf_counter()
            return pull, frames.vms(pull.records()), time.perf_counter() - listed_at

        (pull, frame_, building), first, _ = _timed(frame)
        assert len(frame_) == BIG_FLEET
        done, total = pull.progress
        pull.cancel()
        pull.wait(60)
        client.close()
        print(
            f"10k fleet at {PACE_LIMIT} per {PACE_WINDOW_SECONDS:g} s: list pages alone "
            f"{alone:.2f} s; first frame {first:.2f} s (of which building the frame "
            f"{building:.2f} s; {done} of {total} requests answered then); {_load()}"
        )
        print(f"Figure 4: time to first frame / list pages alone = {first / alone:.3f}  "
              "(target <= 1.2)")  # fmt: skip
    finally:
        proc.terminate()
        proc.wait()


def paced_huge(folder: str) -> None:
    proc, info, _ = subsandbox.start(
        folder, HUGE_FLEET, "--seed", "7", "--latency-ms", str(LATENCY_MS), "--rate-limit",
        str(LIMIT), "--rate-window", str(WINDOW_SECONDS),
    )  # fmt: skip
    control = Control(info["control_url"])
    try:
        client = svcnb.Client(info["tokens"]["read"], info["base_url"], progress=False)
        before, throttled_before = _served(control)
        cpu0, started = time.process_time(), time.perf_counter()
        pull = client.vms.pull(details=True)  # returns once the 500 list pages are read
        listed = time.perf_counter() - started
        # The process does nothing else meanwhile: its CPU time is the pull's.
        time.sleep(max(0.0, FIRST_SECONDS - (time.perf_counter() - started)))
        cpu, watched = time.process_time() - cpu0, time.perf_counter() - started
        done, total = pull.progress
        after, throttled = _served(control)
        pull.cancel()
        pull.wait(60)
        client.close()
        print(
            f"50k fleet at {LIMIT} per {WINDOW_SECONDS:g} s, {LATENCY_MS} ms latency: list read "
            f"in {listed:.1f} s; over the first {watched:.1f} s {after - before} requests "
            f"answered ({done} of {total} the pull will send), {throttled - throttled_before} "
            f"x 429, client CPU {cpu:.2f} s; {_load()}"
        )
        print(
            f"Figure 5: client CPU over the first {watched:.0f} s of a paced 50k pull = "
            f"{100 * cpu / watched:.1f} % of one core  (target <= 15 %)"
        )
    finally:
        control.close()
        proc.terminate()
        proc.wait()


def main(small: bool, big: bool, huge: bool) -> int:
    print(
        f"setup: {VMS} VMs, {LATENCY_MS} ms latency, {LIMIT} requests per {WINDOW_SECONDS:g} s "
        f"window, 8 worker threads, sandbox in its own process; {_load()}, "
        f"{os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory() as folder:
        if small:
            paced(folder)
        if big:
            first_frame(folder)
        if huge:
            paced_huge(folder)
    return 0


if __name__ == "__main__":
    flags = sys.argv[1:]
    only_huge = "--only-50k" in flags
    sys.exit(
        main(
            small=not only_huge,
            big="--no-10k" not in flags and not only_huge,
            huge="--no-50k" not in flags,
        )
    )
