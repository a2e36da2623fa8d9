"""Mutation sweep (run by ``make bench``): svcnb against spec-legal variants of the sandbox's
answers, said by a loopback proxy (``tests/dialects/mutations.py``).

Variants ``draw(0)`` .. ``draw(N-1)`` (N = 50, or the first argument; a second argument is the
first seed), each 1-3 mutations of what the spec leaves "not shown", are pulled through svcnb
into a store and every value held against the sandbox's truth.

Prints: variants tried, silent wrong (must be 0), loud (svcnb flagged what it could not read),
passed, and the time; then every silent-wrong variant (reproducible by its seed) with the known
finding that explains it, if any. Exits 1 when a silent wrong value is not a known finding.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
# the built-in vocabulary and units: never a user's config file
os.environ["SVCNB_CONFIG"] = str(Path(tempfile.mkdtemp()) / "config.toml")

from dialects.mutations import (  # noqa: E402
    FINDINGS,
    VMS,
    check_variant,
    draw,
    proxy_to,
    unexplained,
)

from svcnb.sandbox import serve  # noqa: E402


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)  # groups recorded as missing are counted, not logged
    results = []
    started = time.monotonic()
    with (
        serve(vms=VMS, seed=0, time_scale=0.0, rate_limit=1_000_000) as sandbox,
        proxy_to(sandbox.base_url) as proxy,
    ):
        for seed in range(first, first + count):
            results.append(check_variant(sandbox, proxy, draw(seed)))
    seconds = time.monotonic() - started
    verdicts = [r.verdict for r in results]
    wrong = [r for r in results if r.verdict == "silent wrong"]
    new = [r for r in wrong if unexplained(r, tuple(FINDINGS))]
    print(f"variants tried:  {len(results)} (seeds {first}..{first + count - 1})")
    print(f"silent wrong:    {len(wrong)} ({len(wrong) - len(new)} explained by known findings)")
    print(f"loud:            {verdicts.count('loud')}")
    print(f"passed:          {verdicts.count('passed')}")
    print(
        f"time:            {seconds:.0f} s ({seconds / max(1, len(results)):.2f} s per variant, "
        f"{sum(r.outcome.checks for r in results)} checks)"
    )
    for r in wrong:
        known = [k for k, f in FINDINGS.items() if any(map(f.explains, r.outcome.silent_wrong))]
        label = "NEW" if r in new else "KNOWN " + ", ".join(known)
        print(f"\n{label}: {r.describe(3)}")
    seen = {
        k
        for r in wrong
        for k, f in FINDINGS.items()
        if any(map(f.explains, r.outcome.silent_wrong))
    }
    for key in sorted(seen):  # the findings this run met (those fixed are kept as tests)
        print(f"\nfinding {key}: {FINDINGS[key].reason}")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
