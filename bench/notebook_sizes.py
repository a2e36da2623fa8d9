"""The six notebooks' file sizes once run and saved, at 40 and 1,000 VMs (``make bench`` does not
run it: it takes minutes; ``python bench/notebook_sizes.py 40 1000``).

Per size N: a sandbox of N VMs (seed 7, its clock at 60 times real time, its rate limits raised
so the run is not paced) that ``SVCNB_SANDBOX`` names, a new store per size, and each notebook
executed in order by nbclient in a fresh kernel, as JupyterLab runs it, then written as JupyterLab
saves it: with no widget state (JupyterLab's widget manager saves none unless its ``saveState``
setting is switched on) and, for comparison, with it (what "Save Widget State Automatically"
adds). Printed: each notebook's size both ways, and which output kinds weigh most. The target: a
saved notebook under 1 MB at 1,000 VMs, its outputs still readable on reopening (the text and
image outputs are kept; only the live widgets' state is not).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from svcnb.jupyter.notebooks import shipped
from svcnb.sandbox import serve


def _weights(nb: nbformat.NotebookNode) -> Counter:
    """Bytes per output MIME type (and the widget state in the metadata)."""
    out: Counter = Counter()
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            for mime, data in output.get("data", {}).items():
                out[mime] += len(json.dumps(data))
            if "text" in output:
                out["stream"] += len(output["text"])
    if "widgets" in nb.metadata:
        out["metadata.widgets"] += len(json.dumps(nb.metadata["widgets"]))
    return out


def run(vms: int, folder: Path) -> None:
    with serve(
        vms=vms, seed=7, time_scale=60.0, rate_limit=1_000_000, ip_rate_limit=1_000_000
    ) as sb:
        sb.write_connection_file(folder / "sandbox.json")
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SVC_", "SVCNB_"))},
            "SVCNB_SANDBOX": str(folder / "sandbox.json"),
            "SVCNB_STORE": str(folder / "store"),
            "SVCNB_CONFIG": str(folder / "config.toml"),
            "SVCNB_BUDGET": "off",
        }
        print(f"\n{vms} VMs")
        print(f"  {'notebook':<28} {'saved':>10} {'with widget state':>18}  {'run':>6}  heaviest")
        for path in sorted(shipped().glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            began = time.monotonic()
            client = NotebookClient(
                nb,
                timeout=1800,
                kernel_name="python3",
                resources={"metadata": {"path": str(folder)}},
                store_widget_state=True,
                allow_errors=True,  # measured all the same; the failing cells are counted
            )
            client.execute(env=env)
            took = time.monotonic() - began
            with_state = len(nbformat.writes(nb))
            nb.metadata.pop("widgets", None)
            saved = nbformat.writes(nb)
            (folder / path.name).write_text(saved)
            heavy = ", ".join(f"{k} {v / 1e3:.0f} kB" for k, v in _weights(nb).most_common(2))
            failed = sum(
                1 for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
            )
            heavy += f"; {failed} cell(s) failed" if failed else ""
            print(
                f"  {path.name:<28} {len(saved) / 1e3:>8.0f} kB {with_state / 1e3:>15.0f} kB  "
                f"{took:>5.0f}s  {heavy}",
                flush=True,
            )


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [40, 1000]
    for vms in sizes:
        with tempfile.TemporaryDirectory(prefix=f"svcnb-nb-{vms}-") as tmp:
            run(vms, Path(tmp))


if __name__ == "__main__":
    main(sys.argv[1:])
