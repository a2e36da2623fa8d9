"""The sandbox clock that the life and delivery engines plug into."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from svcnb.sandbox import Clock

EPOCH = datetime(2026, 11, 1, tzinfo=UTC)


def test_frozen_clock_moves_only_by_advance():
    clock = Clock(EPOCH, time_scale=0)
    time.sleep(0.01)
    assert clock.now() == EPOCH
    assert clock.advance(90) == EPOCH + timedelta(seconds=90) == clock.now()


def test_jobs_run_in_time_order_with_now_at_their_own_time():
    clock = Clock(EPOCH)
    seen: list[tuple[str, datetime]] = []
    clock.schedule(EPOCH + timedelta(seconds=20), lambda: seen.append(("b", clock.now())))
    clock.schedule(EPOCH + timedelta(seconds=10), lambda: seen.append(("a", clock.now())))
    late = clock.schedule(EPOCH + timedelta(seconds=99), lambda: seen.append(("late", clock.now())))
    clock.advance(30)
    assert seen == [("a", EPOCH + timedelta(seconds=10)), ("b", EPOCH + timedelta(seconds=20))]
    assert clock.now() == EPOCH + timedelta(seconds=30)
    clock.cancel(late)
    clock.advance(100)
    assert [name for name, _ in seen] == ["a", "b"]


def test_a_job_may_schedule_another_that_falls_due_in_the_same_advance():
    clock = Clock(EPOCH)
    seen: list[datetime] = []

    def first() -> None:
        seen.append(clock.now())
        clock.schedule(clock.now() + timedelta(seconds=5), lambda: seen.append(clock.now()))

    clock.schedule(EPOCH + timedelta(seconds=1), first)
    clock.advance(10)
    assert seen == [EPOCH + timedelta(seconds=1), EPOCH + timedelta(seconds=6)]
    assert clock.pending() == 0


def test_scaled_clock_runs_k_times_real_time_and_run_due_fires_jobs():
    clock = Clock(EPOCH, time_scale=1000)
    fired: list[datetime] = []
    clock.schedule(EPOCH + timedelta(seconds=50), lambda: fired.append(clock.now()))
    time.sleep(0.1)
    assert clock.now() - EPOCH >= timedelta(seconds=100)
    assert clock.run_due() == 1 and fired == [EPOCH + timedelta(seconds=50)]


def test_clock_refuses_to_go_back_or_take_naive_times():
    clock = Clock(EPOCH)
    with pytest.raises(ValueError, match="forward"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="timezone"):
        clock.schedule(datetime(2026, 11, 2), lambda: None)
