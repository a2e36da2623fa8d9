"""The detailed pull at 1k, 10k and 50k VMs: svcnb against a competent hand-written client.

Setup per size: a sandbox in its own process (``svcnb sandbox``), latency 0, the token's limit
raised far above what the pull sends, its clock frozen. Each client pulls every VM with details in
a fresh process of its own, so CPU and peak memory are that client's alone.

Printed per size and client: time, requests/s, client CPU ms per request, peak RSS (svcnb's
includes pandas and the rest of its imports) and how much of it the pull itself added, and the
1-minute load average after the run; then the
ratios svcnb / hand-written (targets: time <= 1.0 at every size) and svcnb's CPU per request at
50k / at 1k (target <= 1.5). ``python bench/pull_scale.py 1000 10000`` runs only those sizes.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import subsandbox  # noqa: E402

SIZES = (1_000, 10_000, 50_000)
RAISED = 1_000_000_000


def _sandbox(vms: int, folder: str) -> tuple[subprocess.Popen, dict, str]:
    return subsandbox.start(
        folder, vms, "--rate-limit", str(RAISED), "--ip-rate-limit", str(RAISED),
        "--time-scale", "0",
    )  # fmt: skip


def _worker(who: str, connection: str) -> None:
    """Runs in its own process: one pull, then a JSON line of what it cost."""
    import httpx

    info = json.loads(Path(connection).read_text())
    # Imports come before the clock starts: each client's one-time import (pandas for svcnb)
    # is not part of what a pull costs.
    if who == "svcnb":
        import svcnb

        def run() -> list[dict]:
            client = svcnb.Client(info["tokens"]["admin"], info["base_url"], progress=False)
            try:
                return client.vms.all(details=True)
            finally:
                client.close()
    else:
        sys.path.insert(0, str(HERE))
        from handwritten import pull

        def run() -> list[dict]:
            return pull(info["api_root"], info["tokens"]["admin"])

    stats = httpx.get(info["control_url"] + "/stats").json()["data"]["requests"]
    before_mib = _rss_mib()
    cpu0 = time.process_time()
    started = time.perf_counter()
    fleet = run()
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu0
    sent = httpx.get(info["control_url"] + "/stats").json()["data"]["requests"] - stats
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"vms": len(fleet), "seconds": seconds, "cpu": cpu, "requests": sent,
                      "peak_mib": peak_mib, "grew_mib": peak_mib - before_mib}))  # fmt: skip


def _rss_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _measure(who: str, connection: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", who, connection],
        capture_output=True, text=True, check=True, env={**os.environ, "TQDM_DISABLE": "1"},
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(sizes: tuple[int, ...]) -> int:
    print(f"load average at start: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    header = (
        f"{'VMs':>7} {'client':>12} {'time s':>8} {'req/s':>8} {'CPU ms/req':>11} "
        f"{'peak MiB':>9} {'pull MiB':>9} {'load':>5}"
    )
    rows: dict[int, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory() as folder:
        print(header)
        for vms in sizes:
            proc, _, path = _sandbox(vms, folder)
            try:
                rows[vms] = {}
                for who in ("hand-written", "svcnb"):
                    got = _measure(who, path)
                    assert got["vms"] == vms, f"{who} pulled {got['vms']} of {vms} VMs"
                    rows[vms][who] = got
                    print(
                        f"{vms:>7} {who:>12} {got['seconds']:>8.1f} "
                        f"{got['requests'] / got['seconds']:>8.0f} "
                        f"{1000 * got['cpu'] / got['requests']:>11.2f} {got['peak_mib']:>9.0f} "
                        f"{got['grew_mib']:>9.0f} {os.getloadavg()[0]:>5.2f}"
                    )
            finally:
                proc.terminate()
                proc.wait()
    print("ratios (svcnb / hand-written), measured in this run:")
    for vms, pair in rows.items():
        s, h = pair["svcnb"], pair["hand-written"]
        cpu_s, cpu_h = s["cpu"] / s["requests"], h["cpu"] / h["requests"]
        print(
            f"  {vms:>6} VMs: time {s['seconds'] / h['seconds']:.2f} (target <= 1.0), "
            f"CPU/req {cpu_s / cpu_h:.2f}, peak memory {s['peak_mib'] / h['peak_mib']:.2f}, "
            f"memory grown by the pull {s['grew_mib'] / max(h['grew_mib'], 1):.2f}"
        )
    if len(rows) > 1:
        small, large = min(rows), max(rows)
        per = {n: rows[n]["svcnb"]["cpu"] / rows[n]["svcnb"]["requests"] for n in (small, large)}
        print(
            f"svcnb CPU per request at {large} / at {small} VMs: "
            f"{per[large] / per[small]:.2f} (target <= 1.5)"
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f} (1 min)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3])
        sys.exit(0)
    chosen = tuple(int(a) for a in sys.argv[1:]) or SIZES
    sys.exit(main(chosen))
