"""Every bench ``make bench`` runs loads: its imports resolve from a fresh process as ``make
bench`` starts it (``python bench/NAME.py``), so a bench is never found broken only when the
whole sweep is run (``bench/dialects.py`` failed that way for a day)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs each bench's module body (its imports, its constants) but not its main(): run_path under
# another name than __main__, as make bench would find an ImportError before any timing.
_LOAD = """
import runpy, sys, traceback
root, benches = sys.argv[1], sys.argv[2:]
ours = (root + "/tests/", root + "/bench/")
path0, failed = list(sys.path), []
for path in benches:
    try:
        runpy.run_path(path, run_name="bench_loaded")
    except Exception:
        failed.append(path + ":\\n" + traceback.format_exc(limit=-3))
    # each bench as if alone: what another put on the path, or loaded from the repository's
    # tests and benches, would hide a bench that cannot find its own
    sys.path[:] = path0
    for name, module in list(sys.modules.items()):
        where = str(getattr(module, "__file__", None) or "")
        if where.startswith(ours):
            del sys.modules[name]
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_every_bench_make_bench_runs_loads() -> None:
    benches = [
        str(p)
        for p in sorted((ROOT / "bench").glob("*.py"))
        if 'if __name__ == "__main__":' in p.read_text()
    ]
    assert len(benches) >= 10
    # from the repository root, as make bench runs them, with nothing of pytest's sys.path
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, str(ROOT), *benches],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
