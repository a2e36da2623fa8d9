"""A twin of every named dialect is the same service to svcnb.

For each named dialect: ``svcnb doctor --record`` on a sandbox speaking it, a twin from the file
holding the same account (the sandbox's saved state), then the doctor, svcnb's frames and its
reports on both (``tests/twin/roundtrip.py``). The doctor states only what the dialect is, and
proves enough of it that nothing differs: the same findings, the same frames and reports, and
the twin records the same file again.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _tiers import dialects

from svcnb.sandbox import NAMED, Sandbox, serve

from .roundtrip import accounted, sandbox_round_trip, wrong_points

SEED, VMS = 7, 40


@pytest.fixture(scope="module")
def original() -> Iterator[Sandbox]:
    with serve(vms=VMS, seed=SEED, time_scale=0.0) as sb:
        yield sb


@pytest.mark.parametrize("dialect", dialects(NAMED))
def test_the_twin_of_a_named_dialect_is_the_same_service(original, tmp_path, dialect):
    trip = sandbox_round_trip(original, dialect, VMS, SEED, tmp_path)
    choices = original.control.dialect()["choices"]
    stated = trip.file["dialect"]
    # how it pages is proven in full on every named dialect (40 VMs page in each)
    for point in ("paging", "page_default", "page_max", "over_max", "money", "timestamps"):
        assert stated[point] == choices[point], point
    assert wrong_points(trip.file, choices) == []
    assert accounted(trip.file) == []
    assert "not_expressible" not in trip.file, trip.file["not_expressible"]
    # every point kept at a default is said when the twin starts
    for table in ("not_observed", "inferred"):
        for key in trip.file.get(table, {}):
            assert any(line.split(": ", 2)[1] == key for line in trip.listed), key
    assert trip.differing == [], {
        p: (trip.findings[p], trip.twin_findings[p]) for p in trip.differing
    }
    assert trip.frame_diffs == {}
    assert trip.twin_file == trip.file
