"""Benchmark of the svcnb client's bulk pull against a loopback sandbox (run by ``make bench``).

Setup: 2,000 VMs, 50 ms injected latency on every API answer, and a rate window shortened to
10 s (600 requests per window), so a detailed pull (20 pages + 2,000 details) spans 4 windows.

Figure 1: pull time / the least time the limiter allows for that many requests, i.e.
          (ceil(requests / limit) - 1) full windows plus one answer's latency (target <= 1.15),
          with the number of 429 answers the sandbox served (target 0, from control /stats).
Figure 2: requests a refresh sends after 2 % of the VMs changed / (pages + changed VMs)
          (target <= 1.2).
Figure 3: a hand-written sequential httpx loop over the same pull, as a multiple of the svcnb
          pull time (the baseline a user would write by hand).

Only ratios are printed as results; absolute seconds are shown for context.
"""

from __future__ import annotations

import math
import random
import sys
import time

import httpx

import svcnb
from svcnb.sandbox import serve

VMS = 2000
LATENCY_MS = 50
WINDOW_SECONDS = 10.0
LIMIT = 600
PER_PAGE = 100
CHANGED_SHARE = 0.02


def _served(sb) -> tuple[int, int]:
    stats = sb.control.stats()
    return stats["requests"], stats["byStatus"].get("429", 0)


def hand_written_pull(sb) -> list[dict]:
    """What a user writes without svcnb: pages, then each VM, one after another."""
    out = []
    headers = {"x-api-key": sb.tokens["read"]}
    with httpx.Client(base_url=sb.api_root, headers=headers, timeout=30) as http:
        page = 1
        while True:
            answer = http.get("/vms", params={"page": page, "perPage": PER_PAGE})
            if answer.status_code == 429:
                time.sleep(float(answer.headers["retry-after"]))
                continue
            body = answer.json()
            for summary in body["data"]:
                while True:
                    detail = http.get(f"/vms/{summary['id']}")
                    if detail.status_code != 429:
                        break
                    time.sleep(float(detail.headers["retry-after"]))
                out.append(detail.json()["data"])
            if page >= body["meta"]["totalPages"]:
                return out
            page += 1


def main() -> int:
    print(
        f"setup: {VMS} VMs, {LATENCY_MS} ms latency, {LIMIT} requests per {WINDOW_SECONDS:g} s "
        "window, 8 worker threads"
    )
    with serve(vms=VMS, seed=7, latency_ms=LATENCY_MS, rate_window_seconds=WINDOW_SECONDS) as sb:
        client = svcnb.Client(sb.tokens["read"], sb.base_url, progress=False)

        # Figure 1: the detailed pull.
        before, _ = _served(sb)
        started = time.perf_counter()
        fleet = client.vms.all(details=True, workers=8)
        pulled = time.perf_counter() - started
        after, throttled = _served(sb)
        requests = after - before
        windows = math.ceil(requests / LIMIT)
        least = (windows - 1) * WINDOW_SECONDS + LATENCY_MS / 1000
        assert len(fleet) == VMS, f"the pull returned {len(fleet)} VMs, not {VMS}"
        print(
            f"pull: {len(fleet)} VMs, {requests} requests over {windows} windows in "
            f"{pulled:.1f} s (least the limiter allows: {least:.1f} s)"
        )
        print(f"Figure 1: pull time / least time = {pulled / least:.3f}  (target <= 1.15)")
        print(f"          429 answers served during the pull = {throttled}  (target 0)")

        # Figure 2: a refresh after 2 % of the VMs changed.
        changed = random.Random(1).sample([vm["id"] for vm in fleet], int(VMS * CHANGED_SHARE))
        for vm_id in changed:
            sb.control.vm_action(vm_id, "touch")
        pages = math.ceil(VMS / PER_PAGE)
        before, _ = _served(sb)
        refreshed = client.vms.all(details=True, previous=fleet)
        after, _ = _served(sb)
        moved = {vm["id"] for vm in refreshed} & set(changed)
        assert len(moved) == len(changed) and len(refreshed) == VMS
        ideal = pages + len(changed)
        print(
            f"refresh: {len(changed)} changed VMs, {after - before} requests "
            f"(pages + changed = {ideal})"
        )
        print(
            f"Figure 2: refresh requests / (pages + changed) = {(after - before) / ideal:.3f}"
            "  (target <= 1.2)"
        )

        # Figure 3: the hand-written sequential loop over the same pull.
        time.sleep(WINDOW_SECONDS)  # start it on a fresh window too
        started = time.perf_counter()
        by_hand = hand_written_pull(sb)
        manual = time.perf_counter() - started
        assert len(by_hand) == VMS
        print(f"baseline: hand-written sequential loop took {manual:.1f} s")
        print(f"Figure 3: hand-written loop time / svcnb pull time = {manual / pulled:.2f}")
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
