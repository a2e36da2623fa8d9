"""Benchmark of the report panels' answer times (run by ``make bench``).

Setup per size N: a store of N VMs with 30 daily snapshots built through the sandbox
(``svcnb.sandbox.serve(vms=N, seed=7, time_scale=0.0)``, its rate limits raised so the build is
not paced; the clock moved 10 minutes so every VM is provisioned, then
``Store.build_history(client, days=29, advance=control.advance)``). A built store is cached under
``$SVCNB_BENCH_CACHE`` (default: ``<tmp>/svcnb-bench-panels``) keyed by N, so the 10,000-VM one
(several minutes to build) is built once; ``--rebuild`` builds it again.

Per panel, in one run:

- billing, what-if, bandwidth: the first render (constructing the panel: slider, latest
  snapshot's report, tables, plots) and the as-of moves (the date slider set to another
  snapshot: the middle one, one near the start, the one before the latest; median and worst),
  with the report's own compute time at that as-of beside it (``from_store``: billing.run_rate
  and billing.runway; whatif.topup_needed and whatif.what_if_stop; bandwidth.projection; median
  over the same as-of times). What-if also: a horizon change, a choice of 3 VMs to terminate,
  stop/terminate switched back.
- webhooks (reads the live sandbox, not the store): first render (reading the subscriptions and
  their deliveries), choosing another subscription, and Refresh; beside it
  webhooks.health.from_store on the latest snapshot.

Target: any panel control answers in <= 0.5 s at 1,000 VMs and <= 2 s at 10,000 VMs. Figures are
printed, never asserted; the machine is shared, so each figure has its process CPU time beside
it ([cpu ...]: the wall time less the waiting for a core) and the 1-minute load average is
printed beside each panel's figures.

``python bench/panels.py`` runs 1,000 VMs; ``python bench/panels.py 1000 10000`` runs both;
``--panels billing,whatif`` runs only those.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import svcnb
from svcnb.panels import BandwidthPanel, BillingPanel, WebhooksPanel, WhatIfPanel
from svcnb.reports import bandwidth, billing, webhooks, whatif
from svcnb.sandbox import serve
from svcnb.store import Store

DAYS = 29  # 30 daily snapshots
SEED = 7
PROVISIONED = 600  # seconds: every VM of the seed has left provisioning by then
UNPACED = {"rate_limit": 10**9, "ip_rate_limit": 10**9}
PANELS = ("billing", "whatif", "bandwidth", "webhooks")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


class Took(float):
    """Wall-clock seconds of one call, with the process CPU seconds it used (``cpu``): on a
    shared machine the wall time includes waiting for a core, the CPU time does not."""

    cpu: float


def timed(fn: Callable[[], Any]) -> tuple[Took, Any]:
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    took = Took(time.perf_counter() - start)
    took.cpu = time.process_time() - cpu
    return took, out


def cache_dir() -> Path:
    default = Path(tempfile.gettempdir()) / "svcnb-bench-panels"
    return Path(os.environ.get("SVCNB_BENCH_CACHE", default))


def store_for(n: int, rebuild: bool) -> Path:
    """The cached store of ``n`` VMs, built first when absent (or ``rebuild``)."""
    path = cache_dir() / f"store-{n}-days{DAYS + 1}-seed{SEED}"
    done = path / "BUILT"
    if done.exists() and not rebuild:
        print(f"  store: cached {path}")
        return path
    shutil.rmtree(path, ignore_errors=True)
    start = time.perf_counter()
    with serve(vms=n, seed=SEED, time_scale=0.0, **UNPACED) as sandbox:
        sandbox.control.advance(PROVISIONED)
        client = svcnb.Client(
            api_key=sandbox.tokens["admin"], base_url=sandbox.base_url, progress=False
        )
        with client:
            Store(path).build_history(client, DAYS, sandbox.control.advance)
    done.write_text("built\n")
    print(f"  store: built {path} in {time.perf_counter() - start:.0f} s (sandbox) ({load()})")
    return path


def fig(seconds: list[Took]) -> str:
    """Median wall time (worst), and the median CPU time beside it."""
    cpu = statistics.median(s.cpu for s in seconds)
    if len(seconds) == 1:
        return f"{seconds[0]:6.2f} s [cpu {cpu:.2f}]"
    return f"{statistics.median(seconds):6.2f} s (worst {max(seconds):.2f}) [cpu {cpu:.2f}]"


def as_of_panel(
    title: str,
    make: Callable[[], Any],
    reports: dict[str, Callable[[Any], Any]],
    store: Store,
    extra: Callable[[Any], dict[str, list[Took]]] | None = None,
) -> None:
    first, panel = timed(make)
    times = [value for _, value in panel.date_slider.options]
    targets = [times[len(times) // 2], times[min(2, len(times) - 1)], times[-2]]
    moves = [timed(lambda t=t: setattr(panel.date_slider, "value", t))[0] for t in targets]
    computed = {
        name: [timed(lambda t=t, r=r: r(t))[0] for t in targets] for name, r in reports.items()
    }
    print(f"  {title:10s} first render {fig([first])}   as-of move {fig(moves)}   ({load()})")
    for name, seconds in computed.items():
        print(f"  {'':10s}   report {name}.from_store {fig(seconds)}")
    for name, seconds in (extra(panel) if extra else {}).items():
        print(f"  {'':10s}   {name} {fig(seconds)}")


def whatif_controls(panel: WhatIfPanel) -> dict[str, list[Took]]:
    horizon = [
        timed(lambda d=d: setattr(panel.horizon, "value", d))[0]
        for d in (panel.horizons[0], panel.horizons[-1])
    ]
    ids = panel._vm_ids[: len(panel._vm_ids) // 2 : max(1, len(panel._vm_ids) // 6)][:3]
    chosen = [timed(lambda: panel.choose(how="terminate", vm_ids=ids))[0]]
    how = [timed(lambda: setattr(panel.how, "value", "stop"))[0]]
    return {"horizon change": horizon, "choose 3 VMs": chosen, "stop/terminate": how}


def webhooks_panel(n: int, store: Store) -> None:
    with serve(vms=n, seed=SEED, time_scale=0.0, **UNPACED) as sandbox:
        sandbox.control.advance(PROVISIONED + DAYS * 86400)
        client = svcnb.Client(
            api_key=sandbox.tokens["admin"], base_url=sandbox.base_url, progress=False
        )
        with client:
            first, panel = timed(lambda: WebhooksPanel(client))
            ids = list(panel._shown_ids)
            picks = [timed(lambda i=i: panel.select(i))[0] for i in (ids[1:] + ids[:1])[:3]]
            refresh = [timed(panel.refresh)[0]]
    report = [timed(lambda: webhooks.health.from_store(store))[0] for _ in range(3)]
    print(
        f"  {'webhooks':10s} first render {fig([first])}   choose a subscription {fig(picks)}"
        f"   refresh {fig(refresh)}   ({load()}; {len(ids)} subscriptions)"
    )
    print(f"  {'':10s}   report webhooks.health.from_store {fig(report)}")


def run(n: int, panels: list[str], rebuild: bool) -> None:
    print(f"== {n:,} VMs, {DAYS + 1} daily snapshots ({load()})")
    path = store_for(n, rebuild)
    out = Path(tempfile.mkdtemp(prefix="svcnb-bench-panels-out-"))
    store = Store(path)
    try:
        if "billing" in panels:
            as_of_panel(
                "billing",
                lambda: BillingPanel(Store(path), export_dir=out),
                {
                    "billing.run_rate": lambda t: billing.run_rate.from_store(store, at=t),
                    "billing.runway": lambda t: billing.runway.from_store(store, at=t),
                },
                store,
            )
        if "whatif" in panels:
            as_of_panel(
                "what-if",
                lambda: WhatIfPanel(Store(path), export_dir=out),
                {
                    "whatif.topup_needed": lambda t: whatif.topup_needed.from_store(store, at=t),
                    "whatif.what_if_stop": lambda t: whatif.what_if_stop.from_store(store, at=t),
                },
                store,
                whatif_controls,
            )
        if "bandwidth" in panels:
            as_of_panel(
                "bandwidth",
                lambda: BandwidthPanel(Store(path), export_dir=out),
                {"bandwidth.projection": lambda t: bandwidth.projection.from_store(store, at=t)},
                store,
            )
        if "webhooks" in panels:
            webhooks_panel(n, store)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000], help="fleet sizes (VMs)")
    parser.add_argument("--panels", default=",".join(PANELS), help="comma-separated panels")
    parser.add_argument("--rebuild", action="store_true", help="build the cached stores again")
    args = parser.parse_args()
    panels = [p.strip() for p in args.panels.split(",") if p.strip()]
    unknown = sorted(set(panels) - set(PANELS))
    if unknown:
        parser.error(f"unknown panels {unknown}; choose from {', '.join(PANELS)}")
    warnings.simplefilter("ignore")  # incomplete-list warnings of the sandbox's seed
    for n in args.sizes:
        run(n, panels, args.rebuild)


if __name__ == "__main__":
    main()
