"""What ``make test`` runs, and what it leaves to ``make test-all``.

By cost: a test that took ``THRESHOLD`` seconds or more in a measured run is listed in
``tests/costly.txt`` (``scripts/test_costs.py`` writes it) and runs in ``make test-all`` only.
``KEEP`` names the end-to-end checks that stay whatever they cost; every file keeps at least one
test, its cheapest if ``KEEP`` names none; the notebooks and the README run whole (``WHOLE``);
of the browser tests, only those ``KEEP`` names.
``make test`` must take at most four minutes on two cores, install included; the whole suite
takes about ten.

By dialect: the same check repeated over many dialects runs in ``make test`` on a sample and in
``make test-all`` on every dialect named.

A check repeated per dialect asserts one behaviour; the dialects differ in how the service says
things, which the dialect sweeps (``tests/dialects``) and the frames' and client's own tests walk
one point at a time. The sample is the default dialect and ``acme``, the named dialect that
differs from it at the most points (23 of the choices the sweeps count: other words, money forms,
paging, delivery fields; ``test_dialect_sweep`` holds it to that), unless a test names its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

QUICK_DIALECTS = ("default", "acme")

THRESHOLD = 0.5  # seconds, on the four workers of ``-n auto`` on two cores
LEDGER = Path(__file__).with_name("costly.txt")
# files whose tests run in order as one story, each on what the one before made: whole or not
# at all (nbval runs a notebook's cells in order; the README's blocks share one folder)
WHOLE = ("notebooks/", "tests/test_readme.py")

# End-to-end checks make test keeps whatever they cost: one per surface a user meets, where the
# file's cheapest test does not reach it
KEEP = frozenset(
    {
        "tests/dialects/test_dialect_sweep.py::test_named_dialects_have_no_silent_wrong_result[acme]",
        # the house's rules and the token's safety, walked over all of svcnb
        "tests/test_layers.py::test_imports_run_down_the_floors_only",
        "tests/test_layers.py::test_the_sandbox_and_the_client_side_meet_only_over_http",
        "tests/test_private_imports.py::test_no_package_imports_another_packages_private_module",
        "tests/test_private_imports.py::test_tests_reach_few_private_names_each_for_a_reason",
        "tests/test_no_token_leaks.py::test_a_store_written_through_a_sandbox_holds_none_of_its_secrets",
        # the rules of reading: every assumption registered, the doctor never vouches for one
        "tests/test_assumptions.py::test_no_reader_makes_a_choice_the_registry_does_not_hold",
        "tests/test_doctor.py::test_a_word_providers_differ_on_is_assumed_never_vouched",
        # in the browser: every row of a big grid, and the stop flow
        "tests/browser/test_browser_grids.py::test_a_grid_holds_and_searches_every_row",
        "tests/browser/test_browser_vm_panel.py::test_stop_a_vm_by_clicking_stop_and_confirm",
    }
)


# the browser tests: one unit, on one worker with one JupyterLab (tests/conftest.py); each opens
# a notebook and runs its kernel over a store (15-25 s on two cores), so make test runs what KEEP
# names of it, nothing else
BROWSER = "tests/browser/"


def unit(test: str) -> str:
    """The unit a test is handed out and kept by: its file, or for the browser tests their
    folder."""
    file = test.split("::")[0]
    return BROWSER if file.startswith(BROWSER) else file


def read_ledger() -> dict[str, float]:
    """``tests/costly.txt``: test id -> the seconds it took when measured."""
    out = {}
    for line in LEDGER.read_text().splitlines():
        if line and not line.startswith("#"):
            seconds, _, test = line.partition("\t")
            out[test] = float(seconds)
    return out


def mark_costly(items: list[pytest.Item]) -> list[str]:
    """Marks slow the items the ledger lists; returns the ledger's ids no item has (stale
    lines, meaningful only when the whole suite was collected)."""
    ledger = read_ledger()
    for item in items:
        if item.nodeid in ledger or (unit(item.nodeid) == BROWSER and item.nodeid not in KEEP):
            item.add_marker(pytest.mark.slow)
    return sorted(set(ledger) - {item.nodeid for item in items})


def dialects(names: Iterable[str], quick: Iterable[str] = QUICK_DIALECTS) -> list:
    """``names`` as parameters, those outside ``quick`` marked slow (``make test-all``)."""
    keep = set(quick)
    return [n if n in keep else pytest.param(n, marks=pytest.mark.slow, id=n) for n in names]
