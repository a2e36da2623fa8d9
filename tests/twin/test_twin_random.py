"""Twins of random dialects: the doctor states only what the dialect is, and where the sandbox
can say what it proved, the twin is the same service to svcnb (findings, frames, reports and the
file recorded again all equal). Where it cannot (two words svcnb knows only as "transitional",
neither in the sandbox's pools), the twin lists the point at start, and every finding that differs
depends on a point it listed.

Exotic status words are mapped as a user maps them (``--map WORD=CLASS``, which the doctor asks
for); ``make test`` runs the seeds below, ``make test-all`` 50.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dialects.test_dialect_sweep import fleet_size  # tests/ is on sys.path

from svcnb.sandbox import Sandbox, serve

from .roundtrip import Trip, accounted, sandbox_round_trip, wrong_points

# seeds that meet what the recorder deduces rather than reads, each named with what it checks
QUICK = {
    6: "exotic delivery keys ('passed', 'count'), each the one left that can be its field",
    5: "token paging whose lists fit one page: bare lists that ignore perPage",
    20: "the one transitional word seen is exotic: said for provisioning and stopping",
    45: "two exotic delivery keys, told apart by their values (a flag, a number)",
}
SWEPT = 50


@pytest.fixture(scope="module")
def original() -> Iterator[Sandbox]:
    with serve(vms=40, seed=7, time_scale=0.0) as sb:
        yield sb


def round_trip(original: Sandbox, tmp_path, seed: int) -> Trip:
    trip = sandbox_round_trip(original, f"random:{seed}", fleet_size(seed), seed, tmp_path)
    choices = original.control.dialect()["choices"]
    assert wrong_points(trip.file, choices) == []
    assert accounted(trip.file) == []
    for table in ("not_observed", "not_expressible", "inferred"):
        for key in trip.file.get(table, {}):
            assert any(line.split(": ", 2)[1] == key for line in trip.listed), key
    if not trip.listed_points("not expressible"):
        assert trip.differing == [], {
            p: (trip.findings.get(p), trip.twin_findings.get(p)) for p in trip.differing
        }
        assert trip.frame_diffs == {}
        assert trip.twin_file == trip.file
    else:
        assert trip.unexplained("not expressible") == []
    return trip


@pytest.mark.parametrize("seed", sorted(QUICK))
def test_a_random_dialects_twin_is_the_same_service(original, tmp_path, seed):
    trip = round_trip(original, tmp_path, seed)
    assert trip.differing == [], QUICK[seed]
    deduced = {
        6: {"delivery_fields.success", "delivery_fields.attempts"}
        <= set(trip.file.get("inferred", {})),
        5: trip.file["dialect"].get("paging") == "token",
        20: any(line.startswith("inferred: vm_words.transitional") for line in trip.listed),
        45: {"delivery_fields.statusCode", "delivery_fields.success"}
        <= set(trip.file.get("inferred", {})),
    }
    assert deduced[seed], QUICK[seed]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SWEPT))
def test_fifty_random_dialects(original, tmp_path, seed):
    round_trip(original, tmp_path, seed)
