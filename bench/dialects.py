"""Dialect sweep (run by ``make bench``): svcnb against many plausible services.

Every named dialect and ``random:0`` .. ``random:N-1`` (N = 200, or the first argument) is served
by one loopback sandbox; svcnb pulls each account into a store, and the records and every report
are held against the sandbox's ground truth (``tests/dialects/sweep.py``).

Prints: dialects swept, checks per dialect, silent wrong results (must be 0), flagged unknowns
(values svcnb said it could not read), and the share of dialects with at least one flag.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the repository (tests.dialects) and tests/ (its helpers import each other as pytest puts them:
# from tests/, e.g. _tiers)
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from svcnb.sandbox import serve  # noqa: E402
from tests.dialects.sweep import sweep_one  # noqa: E402
from tests.dialects.test_dialect_sweep import NAMED, fleet_size  # noqa: E402


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    dialects = [(name, 57, 7) for name in NAMED]
    dialects += [(f"random:{s}", fleet_size(s), s) for s in range(count)]
    outcomes = []
    started = time.monotonic()
    warnings.simplefilter("ignore")
    with serve(vms=57, seed=7, time_scale=0.0, rate_limit=1_000_000) as sb:
        for name, vms, seed in dialects:
            outcomes.append(sweep_one(sb, name, vms=vms, seed=seed))
    seconds = time.monotonic() - started
    checks = [o.checks for o in outcomes]
    wrong = sum(len(o.silent_wrong) for o in outcomes)
    flagged = sum(o.flagged for o in outcomes)
    print(f"dialects swept:          {len(outcomes)} ({len(NAMED)} named + {count} random)")
    print(
        f"checks per dialect:      min {min(checks)}, median {sorted(checks)[len(checks) // 2]}, "
        f"max {max(checks)} ({sum(checks)} in all)"
    )
    print(f"silent wrong results:    {wrong}")
    print(f"flagged unknowns:        {flagged}")
    print(f"dialects with a flag:    {sum(1 for o in outcomes if o.flagged)} of {len(outcomes)}")
    print(f"(sweep took {seconds:.0f} s)")
    for o in outcomes:
        for line in o.silent_wrong[:3]:
            print(f"  WRONG {o.dialect}: {line}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
