"""Sandbox throughput: GET /vms pages and GET /vms/{id} on loopback with 10,000 VMs, and the
first page against the last at several fleet sizes.

The sandbox runs as ``svcnb sandbox`` in its own process (faults off, rate limits raised);
several keep-alive clients in threads send a fixed number of requests per endpoint;
the script prints requests/s per endpoint and the ratio to the 500 req/s target. Then, for each
size of ``--page-fleets`` (10k and 50k VMs by default), it serves ``GET /vms?page=1`` and
``GET /vms?page=LAST`` (pages of 100), alternating, best of three rounds each, and prints both
rates and their ratio last/first: a page should cost the same wherever it is in the fleet
(ratio about 1.0).

Run: ``.venv/bin/python bench/sandbox_throughput.py [--vms N] [--requests N] [--clients N]
[--page-fleets 10000,50000]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx

TARGET = 500.0


def _drive(api_root: str, token: str, paths: list[str], clients: int) -> tuple[float, list[float]]:
    """Send every path once, spread over ``clients`` threads; return (seconds, latencies).

    The clients use the standard library's ``http.client`` on keep-alive connections: it costs
    far less CPU per request than httpx, so on a small machine the figure is the server's.
    """
    root = urlsplit(api_root)
    latencies: list[float] = []
    lock = threading.Lock()
    chunks = [paths[i::clients] for i in range(clients)]
    failures: list[str] = []

    def work(chunk: list[str]) -> None:
        mine: list[float] = []
        connection = http.client.HTTPConnection(root.hostname, root.port, timeout=30)
        try:
            for path in chunk:
                started = time.perf_counter()
                connection.request("GET", root.path + path, headers={"x-api-key": token})
                response = connection.getresponse()
                response.read()
                mine.append(time.perf_counter() - started)
                if response.status != 200:
                    failures.append(f"{path}: {response.status}")
        finally:
            connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=work, args=(chunk,)) for chunk in chunks]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} requests failed, e.g. {failures[:3]}")
    return elapsed, latencies


def _start_server(vms: int, connection_file: Path) -> subprocess.Popen:
    """The sandbox CLI in its own process, so the clients here do not share its GIL."""
    command = [
        sys.executable,
        "-m",
        "svcnb",
        "sandbox",
        "--vms",
        str(vms),
        "--seed",
        "7",
        "--time-scale",
        "0",
        "--rate-limit",
        str(10**9),
        "--ip-rate-limit",
        str(10**9),
        "--connection-file",
        str(connection_file),
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (connection_file.exists() and connection_file.stat().st_size):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit(
                "the sandbox did not start; run the command by hand to see why: "
                + " ".join(command)
            )
        time.sleep(0.05)
    return process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vms", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=3000, help="per endpoint")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument(
        "--page-fleets",
        default="10000,50000",
        help="fleet sizes (comma-separated) for the first page against the last; '' skips it",
    )
    args = parser.parse_args()
    with _sandbox(args.vms) as info:
        _measure(info["api_root"], info["tokens"]["read"], args)
    for size in [int(n) for n in args.page_fleets.split(",") if n.strip()]:
        with _sandbox(size) as info:
            _measure_positions(info["api_root"], info["tokens"]["read"], size, args)


@contextmanager
def _sandbox(vms: int) -> Iterator[dict]:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        process = _start_server(vms, Path(tmp) / "sandbox.json")
        try:
            info = json.loads((Path(tmp) / "sandbox.json").read_text())
            print(
                f"sandbox with {vms} VMs up in {time.perf_counter() - started:.2f} s "
                f"(separate process)"
            )
            yield info
        finally:
            process.terminate()
            process.wait(timeout=30)


def _measure_positions(api_root: str, token: str, vms: int, args: argparse.Namespace) -> None:
    """Rate of the first page and of the last page (pages of 100), and last/first.

    The two alternate over three rounds and each keeps its best round, so a burst of load from
    elsewhere on the machine cannot pass for a difference between the pages.
    """
    last = max(1, -(-vms // 100))
    pages = {"first": 1, "last": last}
    per_round = max(100, args.requests // 3)
    _drive(api_root, token, [f"/vms?page={p}&perPage=100" for p in (1, last)] * 100, args.clients)
    best: dict[str, tuple[float, list[float]]] = {}
    for _ in range(3):
        for name, page in pages.items():
            paths = [f"/vms?page={page}&perPage=100"] * per_round
            elapsed, latencies = _drive(api_root, token, paths, args.clients)
            rate = len(paths) / elapsed
            if name not in best or rate > best[name][0]:
                best[name] = (rate, latencies)
    for name, page in pages.items():
        rate, latencies = best[name]
        quantiles = statistics.quantiles(latencies, n=100)
        print(
            f"  {vms:>6} VMs  GET /vms?page={page:<4} perPage=100 {rate:8.0f} req/s"
            f"  p50 {quantiles[49] * 1000:.1f} ms  p95 {quantiles[94] * 1000:.1f} ms"
            f"  [best of 3 rounds of {per_round}]"
        )
    print(f"  {vms:>6} VMs  last/first page rate: {best['last'][0] / best['first'][0]:.2f}")


def _measure(api_root: str, token: str, args: argparse.Namespace) -> None:
    with httpx.Client(base_url=api_root, headers={"x-api-key": token}) as http:
        total_pages = http.get("/vms", params={"perPage": 100}).json()["meta"]["totalPages"]
        ids = [
            vm["id"]
            for p in range(1, total_pages + 1)
            for vm in http.get("/vms", params={"page": p, "perPage": 100}).json()["data"]
        ]
    pages = [f"/vms?page={1 + i % max(1, args.vms // 20)}&perPage=20" for i in range(args.requests)]
    details = [f"/vms/{ids[(i * 7919) % len(ids)]}" for i in range(args.requests)]
    _drive(api_root, token, pages[:200], args.clients)  # warm up
    for name, paths in (("GET /vms (pages of 20)", pages), ("GET /vms/{id}", details)):
        elapsed, latencies = _drive(api_root, token, paths, args.clients)
        rate = len(paths) / elapsed
        quantiles = statistics.quantiles(latencies, n=100)
        print(
            f"{name:24s} {rate:8.0f} req/s  ({rate / TARGET:.2f}x the {TARGET:.0f} req/s "
            f"target)  p50 {quantiles[49] * 1000:.1f} ms  p95 {quantiles[94] * 1000:.1f} ms"
            f"  [{len(paths)} requests, {args.clients} clients]"
        )


if __name__ == "__main__":
    main()
