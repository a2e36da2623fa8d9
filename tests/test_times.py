"""A user's time is read by one function: every door that takes one says the same thing, with
one error type, about a time it cannot read."""

from __future__ import annotations

import pandas as pd
import pytest

from svcnb.cli import main
from svcnb.store import Store
from svcnb.times import TimeError, to_utc


def test_to_utc_reads_text_datetimes_and_naive_times_as_utc():
    assert to_utc("2026-11-15") == pd.Timestamp("2026-11-15", tz="UTC")
    assert to_utc("2026-11-15T02:00+02:00") == pd.Timestamp("2026-11-15", tz="UTC")
    assert to_utc(pd.Timestamp("2026-11-15 00:00")).tzinfo is not None


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("soonish", "until='soonish' is not a time; give an ISO 8601 date or date-time"),
        ("", "until is empty; give an ISO 8601 date or date-time"),
        ("2300-01-01", "until='2300-01-01' is outside the times pandas represents"),
    ],
)
def test_every_door_says_the_same_of_a_time_it_cannot_read(value, said, tmp_path, capsys):
    store = Store(tmp_path / "store")
    doors = {
        "to_utc": lambda: to_utc(value, "until"),
        "Store.history": lambda: store.history("vms", until=value),
        "accept_finding": lambda: store.journal.accept_finding(
            "f-1", reason="why", owner="me", until=value
        ),
    }
    for door, call in doors.items():
        with pytest.raises(TimeError) as raised:
            call()
        assert said in str(raised.value), door
    (tmp_path / "store").mkdir()
    assert main(["report", "billing", "--store", str(tmp_path / "store"), "--at", value]) == 2
    assert said.replace("until", "--at") in capsys.readouterr().err
