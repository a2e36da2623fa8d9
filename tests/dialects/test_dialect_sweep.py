"""svcnb is right on many plausible services, or says what it could not read.

Each case resets one sandbox to a dialect (a named one, or ``random:SEED`` drawing every point
the spec leaves open from the seed), pulls the account through svcnb into a store, and holds
records and reports against the sandbox's ground truth (``tests/dialects/sweep.py``). No check
may be silently wrong. ``make test`` sweeps ``acme`` (``tests/_tiers.py``: each case costs
seconds); ``make test-all`` every named dialect and 400 random ones, among them those that speak
every choice (``cover.COVER``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _tiers import QUICK_DIALECTS, dialects

from svcnb import vocab
from svcnb.sandbox import Sandbox, serve

from .cover import COVER, NAMED, NAMED_VMS, SEEDS, choices, fleet_size, unspoken
from .sweep import Outcome, sweep_one


@pytest.fixture(scope="module")
def server() -> Iterator[Sandbox]:
    # the sweep sends a few thousand requests: a raised limit keeps it from waiting on 429s
    with serve(vms=57, seed=7, time_scale=0.0, rate_limit=1_000_000) as sb:
        yield sb


# a random dialect's sweep, once per module: the exotic-words test reads the quick sweeps' outcomes
_SWEPT: dict[tuple[int, int], Outcome] = {}


def _random(server: Sandbox, seed: int) -> Outcome:
    key = (id(server), seed)
    if key not in _SWEPT:
        _SWEPT[key] = sweep_one(server, f"random:{seed}", vms=fleet_size(seed), seed=seed)
    return _SWEPT[key]


@pytest.mark.parametrize("dialect", dialects(NAMED))
def test_named_dialects_have_no_silent_wrong_result(server: Sandbox, dialect: str) -> None:
    outcome = sweep_one(server, dialect, vms=NAMED_VMS, seed=7)
    assert outcome.checks > 200
    assert outcome.silent_wrong == []


@pytest.mark.parametrize("seed", COVER)
def test_random_dialects_have_no_silent_wrong_result(server: Sandbox, seed: int) -> None:
    assert _random(server, seed).silent_wrong == []


@pytest.mark.slow
@pytest.mark.parametrize("seed", [s for s in range(SEEDS) if s not in COVER])
def test_many_more_random_dialects(server: Sandbox, seed: int) -> None:
    assert _random(server, seed).silent_wrong == []


def test_the_quick_seeds_speak_every_choice_the_random_draws_make() -> None:
    assert unspoken(COVER) == set()
    # the quick tier's other named dialect is the one unlike the default at the most points
    default = choices("default", NAMED_VMS)
    unlike = max(NAMED, key=lambda n: len(choices(n, NAMED_VMS) - default))
    assert QUICK_DIALECTS[1] == unlike
    assert unspoken(COVER[1:])  # without its first seed a choice goes unspoken: it can fail


def test_exotic_words_are_flagged_not_guessed(server: Sandbox) -> None:
    # some of the quick seeds draw words no vocabulary knows; they must show up as flagged
    flagged = next((o for s in COVER if (o := _random(server, s)).flagged), None)
    assert flagged is not None and flagged.silent_wrong == []


def test_the_sweep_catches_a_wrong_vocabulary(server: Sandbox) -> None:
    # the checker itself can fail: map acme's word for overdue to "paid" and the runway lies
    wrong = vocab.Vocabulary(billing_status={"past_due": "paid"})
    with vocab.using(wrong):
        outcome = sweep_one(server, "acme", vms=57, seed=7, vocabulary=wrong)
    assert outcome.silent_wrong
