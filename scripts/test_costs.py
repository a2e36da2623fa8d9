"""Writes ``tests/costly.txt``: the tests ``make test`` leaves to ``make test-all`` for their cost.

    .venv/bin/python -m pytest -m "" --durations=0 -q > durations.txt
    .venv/bin/python scripts/test_costs.py durations.txt

A test's cost is its setup, call and teardown in that run (wall seconds on the workers of
``-n auto``). A test of ``THRESHOLD`` seconds or more goes in, except:

- the tests of a file that runs whole, as one story (``WHOLE``: the notebooks, the README);
- the browser tests (``_tiers.mark_costly`` runs only those ``KEEP`` names);
- the tests ``tests/_tiers.py`` keeps (``KEEP``): one end-to-end check per surface;
- the cheapest test of each file (``_tiers.unit``) that ``KEEP`` keeps none of, so that every
  file still runs in ``make test``.

A test the run did not measure keeps its line, so a durations file of ``make test`` (which does
not run the costly ones) refreshes the rest without losing them.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _tiers import BROWSER, KEEP, LEDGER, THRESHOLD, WHOLE, read_ledger, unit  # noqa: E402

LINE = re.compile(r"^(\d+\.\d+)s (?:call|setup|teardown)\s+(.+?)\s*$")


def costs(text: str) -> dict[str, float]:
    """Seconds per test id in a ``--durations=0`` report."""
    out: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        if found := LINE.match(line):
            out[found[2]] += float(found[1])
    return dict(out)


def costly(measured: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    by_unit: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for test, seconds in {**before, **measured}.items():
        by_unit[unit(test)].append((seconds, test))
    out = {}
    for name, tests in by_unit.items():
        if name.startswith(WHOLE) or name == BROWSER:  # _tiers.mark_costly decides those
            continue
        kept = {test for _, test in tests if test in KEEP} or {min(tests)[1]}
        for seconds, test in tests:
            if seconds >= THRESHOLD and test not in kept:
                out[test] = seconds
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    measured = costs(Path(argv[0]).read_text())
    if not measured:
        print(f"no --durations=0 lines in {argv[0]}", file=sys.stderr)
        return 2
    # a costly test is absent from a make test run: its cost is the one measured before
    before = {t: s for t, s in read_ledger().items() if t not in measured}
    out = costly(measured, before)
    lines = [f"{seconds:.1f}\t{test}" for test, seconds in sorted(out.items())]
    LEDGER.write_text(
        "# seconds\ttest: what make test leaves to make test-all (scripts/test_costs.py)\n"
        + "\n".join(lines)
        + "\n"
    )
    kept = {t: s for t, s in measured.items() if t not in out}
    kept = {t: s for t, s in kept.items() if unit(t) != BROWSER or t in KEEP}
    print(
        f"{len(out)} tests in {LEDGER.relative_to(ROOT)} ({sum(out.values()):.0f} s); "
        f"make test keeps {len(kept)} measured ({sum(kept.values()):.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
