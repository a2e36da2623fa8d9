"""The detailed pull at 1k, 10k and 50k VMs: svcnb against a competent hand-written client.

Two hand-written clients (``handwritten.py``): the one the target is set against (httpx, 8
threads, paced from the rate-limit headers) and the same client on urllib3's pool, the wire svcnb
itself uses, so the figures also show what svcnb costs over its own wire written by hand.

Setup per size: a sandbox in its own process (``svcnb sandbox``), latency 0, the token's limit
raised far above what the pull sends, its clock frozen. Each client pulls every VM with details in
a fresh process of its own, so CPU and peak memory are that client's alone.

The machine is shared (2 cores, other work running), so one run of each says little: each size
runs ``ROUNDS`` pulls per client (8 at 1k, 6 at 10k, 4 at 50k) in alternating order (the
clients in turn, the turn reversed every other round), so a load that rises or falls during the
run weighs on every client alike, and compares medians.

Printed per run: time, requests/s, client CPU ms per request, peak RSS (svcnb's includes pandas
and the rest of its imports) and how much of it the pull itself added, and the 1- and 5-minute
load average after the run; then per size and client the medians, the ratios of the medians
svcnb / hand-written httpx (target: time <= 1.0 at every size) and svcnb / hand-written urllib3,
and svcnb's median CPU per request at 50k / at 1k (target <= 1.5).
``python bench/pull_scale.py 1000 10000 --rounds 6`` runs only those sizes, 6 pulls per client
each.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
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
# Pulls per client and size (hand, svcnb, svcnb, hand, ...): more where one pull is short and
# a moment's noise weighs most.
ROUNDS = {1_000: 8, 10_000: 6, 50_000: 4}
HAND, HAND_URLLIB3, SVCNB = "hand httpx", "hand urllib3", "svcnb"
CLIENTS = (HAND, SVCNB, HAND_URLLIB3)


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
    if who == SVCNB:
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

        wire = "urllib3" if who == HAND_URLLIB3 else "httpx"

        def run() -> list[dict]:
            return pull(info["api_root"], info["tokens"]["admin"], wire=wire)

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
        capture_output=True, text=True, env={**os.environ, "TQDM_DISABLE": "1"},
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"the {who} pull failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _order(rounds: int) -> list[str]:
    """The clients in turn, the turn reversed every other round (a b c, c b a, ...): each runs
    as often early as late, so a load that rises or falls through the run weighs on all alike."""
    out: list[str] = []
    for r in range(rounds):
        out.extend(CLIENTS if r % 2 == 0 else CLIENTS[::-1])
    return out


def _median(values: list[float]) -> float:
    return statistics.median(values)


def main(sizes: tuple[int, ...], rounds: int | None) -> int:
    print(
        f"load average at start: {_loads()}, {os.cpu_count()} cores; pulls per client in "
        f"alternating order ({', '.join(CLIENTS)}, then reversed, ...), medians per client"
    )
    header = (
        f"{'VMs':>7} {'run':>3} {'client':>12} {'time s':>8} {'req/s':>8} {'CPU ms/req':>11} "
        f"{'peak MiB':>9} {'pull MiB':>9} {'load 1/5 min':>13}"
    )
    rows: dict[int, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        print(header)
        for vms in sizes:
            proc, _, path = _sandbox(vms, folder)
            try:
                rows[vms] = {who: [] for who in CLIENTS}
                for run, who in enumerate(_order(rounds or ROUNDS.get(vms, 4)), 1):
                    got = _measure(who, path)
                    assert got["vms"] == vms, f"{who} pulled {got['vms']} of {vms} VMs"
                    got["load"] = _loads()
                    rows[vms][who].append(got)
                    print(
                        f"{vms:>7} {run:>3} {who:>12} {got['seconds']:>8.1f} "
                        f"{got['requests'] / got['seconds']:>8.0f} "
                        f"{1000 * got['cpu'] / got['requests']:>11.2f} {got['peak_mib']:>9.0f} "
                        f"{got['grew_mib']:>9.0f} {got['load']:>13}",
                        flush=True,
                    )
            finally:
                proc.terminate()
                proc.wait()
    med: dict[int, dict[str, dict[str, float]]] = {}
    print("medians per client:")
    for vms, pair in rows.items():
        med[vms] = {}
        for who, runs in pair.items():
            m = {
                "seconds": _median([r["seconds"] for r in runs]),
                "rps": _median([r["requests"] / r["seconds"] for r in runs]),
                "cpu_ms": _median([1000 * r["cpu"] / r["requests"] for r in runs]),
                "peak_mib": _median([r["peak_mib"] for r in runs]),
                "grew_mib": _median([r["grew_mib"] for r in runs]),
            }
            med[vms][who] = m
            print(
                f"{vms:>7} {who:>12}: time {m['seconds']:.2f} s, {m['rps']:.0f} req/s, "
                f"CPU {m['cpu_ms']:.3f} ms/req, peak {m['peak_mib']:.0f} MiB "
                f"(pull {m['grew_mib']:.0f} MiB)"
            )
    for base, target in ((HAND, " (target <= 1.0)"), (HAND_URLLIB3, "")):
        print(f"ratios of the medians (svcnb / {base}), measured in this run:")
        for vms, by in med.items():
            s, h = by[SVCNB], by[base]
            print(
                f"  {vms:>6} VMs: time {s['seconds'] / h['seconds']:.2f}{target}, "
                f"CPU/req {s['cpu_ms'] / h['cpu_ms']:.2f}, peak memory "
                f"{s['peak_mib'] / h['peak_mib']:.2f}, memory grown by the pull "
                f"{s['grew_mib'] / max(h['grew_mib'], 1):.2f}"
            )
    if len(med) > 1:
        small, large = min(med), max(med)
        per = {n: med[n][SVCNB]["cpu_ms"] for n in (small, large)}
        print(
            f"svcnb CPU per request at {large} / at {small} VMs: "
            f"{per[large] / per[small]:.2f} (target <= 1.5)"
        )
    print(f"load average at end: {_loads()}")
    return 0


def _loads() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f}/{five:.2f}"


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3])
        sys.exit(0)
    args = sys.argv[1:]
    rounds = None
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at : at + 2]
    chosen = tuple(int(a) for a in args) or SIZES
    sys.exit(main(chosen, rounds))
