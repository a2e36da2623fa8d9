"""svcnb is right on many plausible services, or says what it could not read.

Each case resets one sandbox to a dialect (a named one, or ``random:SEED`` drawing every point
the spec leaves open from the seed), pulls the account through svcnb into a store, and holds
records and reports against the sandbox's ground truth (``tests/dialects/sweep.py``). No check
may be silently wrong. ``make test`` sweeps the named dialects and 10 random ones; ``make
test-all`` 400 random ones.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svcnb import vocab
from svcnb.sandbox import Sandbox, serve

from .sweep import sweep_one

NAMED = ("default", "acme", "linkhdr", "cursor", "drf", "google", "hal", "zeropage", "capped")
SWEPT = 10  # make test
SLOW_SWEPT = 400  # make test-all


@pytest.fixture(scope="module")
def server() -> Iterator[Sandbox]:
    # the sweep sends a few thousand requests: a raised limit keeps it from waiting on 429s
    with serve(vms=57, seed=7, time_scale=0.0, rate_limit=1_000_000) as sb:
        yield sb


def fleet_size(seed: int) -> int:
    # sizes around the page caps the dialects draw (10..200), so short and capped pages occur
    return 5 + (seed * 37) % 180


@pytest.mark.parametrize("dialect", NAMED)
def test_named_dialects_have_no_silent_wrong_result(server: Sandbox, dialect: str) -> None:
    outcome = sweep_one(server, dialect, vms=57, seed=7)
    assert outcome.checks > 200
    assert outcome.silent_wrong == []


@pytest.mark.parametrize("seed", range(SWEPT))
def test_random_dialects_have_no_silent_wrong_result(server: Sandbox, seed: int) -> None:
    outcome = sweep_one(server, f"random:{seed}", vms=fleet_size(seed), seed=seed)
    assert outcome.silent_wrong == []


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SWEPT, SLOW_SWEPT))
def test_many_more_random_dialects(server: Sandbox, seed: int) -> None:
    outcome = sweep_one(server, f"random:{seed}", vms=fleet_size(seed), seed=seed)
    assert outcome.silent_wrong == []


def test_exotic_words_are_flagged_not_guessed(server: Sandbox) -> None:
    # some of the first seeds draw words no vocabulary knows; they must show up as flagged
    flagged = next(
        (o for s in range(12) if (o := sweep_one(server, f"random:{s}", vms=40, seed=s)).flagged),
        None,
    )
    assert flagged is not None and flagged.silent_wrong == []


def test_the_sweep_catches_a_wrong_vocabulary(server: Sandbox) -> None:
    # the checker itself can fail: map acme's word for overdue to "paid" and the runway lies
    wrong = vocab.Vocabulary(billing_status={"past_due": "paid"})
    with vocab.using(wrong):
        outcome = sweep_one(server, "acme", vms=57, seed=7, vocabulary=wrong)
    assert outcome.silent_wrong
