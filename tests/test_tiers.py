"""What ``make test`` leaves to ``make test-all``: the ledger ``scripts/test_costs.py`` writes
keeps every file in ``make test``, runs the README and the notebooks whole, and forgets no test
it measured before."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import _tiers
import pytest

_SPEC = importlib.util.spec_from_file_location(
    "test_costs", Path(__file__).resolve().parent.parent / "scripts" / "test_costs.py"
)
assert _SPEC is not None and _SPEC.loader is not None
test_costs = importlib.util.module_from_spec(_SPEC)
sys.modules["test_costs"] = test_costs
_SPEC.loader.exec_module(test_costs)

REPORT = """\
============================= slowest durations ==============================
3.10s call     tests/store/test_a.py::test_slow[disk]
0.40s setup    tests/store/test_a.py::test_slow[disk]
2.00s call     tests/store/test_a.py::test_slow[s3 bucket]
0.90s call     tests/store/test_b.py::test_only
0.60s call     tests/store/test_c.py::test_x
0.70s call     tests/store/test_c.py::test_y
0.20s call     tests/store/test_c.py::test_z
9.00s call     tests/test_readme.py::test_block_runs_as_written[README.md:98]
9.00s call     notebooks/04_billing_review.ipynb::Cell 3
9.00s call     tests/browser/test_browser_pages.py::test_wide
"""


def test_costs_add_the_phases_of_a_test_and_keep_ids_with_spaces():
    got = test_costs.costs(REPORT)
    assert got["tests/store/test_a.py::test_slow[disk]"] == pytest.approx(3.5)
    assert got["tests/store/test_a.py::test_slow[s3 bucket]"] == 2.0
    assert got["notebooks/04_billing_review.ipynb::Cell 3"] == 9.0


def test_each_file_keeps_its_cheapest_test_and_whole_files_stay_whole():
    costly = test_costs.costly(test_costs.costs(REPORT), {})
    assert set(costly) == {
        # test_a: its cheaper parameter stays; test_b: its only test stays
        "tests/store/test_a.py::test_slow[disk]",
        # test_c: x and y cost 0.5 s or more, z is the cheapest
        "tests/store/test_c.py::test_x",
        "tests/store/test_c.py::test_y",
    }


def test_a_test_make_test_no_longer_runs_keeps_the_cost_measured_before():
    measured = {"tests/store/test_c.py::test_z": 0.2, "tests/store/test_c.py::test_x": 0.1}
    before = {"tests/store/test_c.py::test_y": 4.0}
    assert test_costs.costly(measured, before) == {"tests/store/test_c.py::test_y": 4.0}


def test_the_ledger_names_tests_that_exist_and_the_browser_runs_what_keep_names(request):
    ledger = _tiers.read_ledger()
    assert ledger and all(seconds >= _tiers.THRESHOLD for seconds in ledger.values())
    assert not set(ledger) & _tiers.KEEP
    assert not [t for t in ledger if t.startswith(_tiers.WHOLE)]
    for kept in _tiers.KEEP:  # a kept test that was renamed would leave its surface untested
        assert Path(request.config.rootpath, kept.split("::")[0]).is_file(), kept
