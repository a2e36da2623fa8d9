"""Durations are typed: one reader (``svcnb.reports.duration``) for ``svcnb report``, the
panels and the reports; a bare number is days, months are refused with an example."""

from __future__ import annotations

import pandas as pd
import pytest

from svcnb.cli import main
from svcnb.errors import SvcnbError
from svcnb.reports import DurationError, billing, duration, replay

DAY = pd.Timedelta(days=1)


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("30", 30),
        (" 30 ", 30),
        ("1.5", 1.5),
        (30, 30),
        (2.5, 2.5),
        ("30d", 30),
        ("30D", 30),
        ("2w", 14),
        ("2W", 14),
        ("12h", 0.5),
        ("90 days", 90),
        ("1 day", 1),
        ("1 week", 7),
        ("36 hours", 1.5),
        ("1d12h", 1.5),
        ("45min", 45 / 1440),
        ("P1DT12H", 1.5),
        ("1 days 12:00:00", 1.5),
        (pd.Timedelta(days=3), 3),
        ("0", 0),
    ],
)
def test_a_bare_number_is_days_and_units_read_as_said(text, days):
    assert duration(text) == pd.Timedelta(days=days)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("3M", "--within 91d for about 3 months"),
        ("1 month", "--within 30d for about 1 month"),
        ("3 months", "--within 91d"),
        ("3m", "--within 3min for minutes"),
        ("1y", "--within 365d for about 1 year"),
        ("soon", "--within 90d"),
        ("30 parsecs", "'parsecs' is not a unit"),
        ("", "--within is empty"),
        ("-5d", "negative"),
        ("1e999", "--within 90d"),
    ],
)
def test_what_is_not_a_duration_is_a_duration_error_with_an_example(text, words):
    with pytest.raises(DurationError) as caught:
        duration(text, name="--within")
    said = str(caught.value)
    assert words in said and "\n" not in said
    assert said.startswith("--within")
    assert isinstance(caught.value, SvcnbError) and isinstance(caught.value, ValueError)


def test_the_example_is_written_as_the_caller_spells_the_parameter():
    with pytest.raises(DurationError, match=r"within='30d' for about 1 month"):
        duration("1M", name="within")
    with pytest.raises(DurationError, match=r"e\.g\. '90d'"):
        duration("soon")
    for wrong in (None, True, float("nan"), object()):
        with pytest.raises(DurationError):
            duration(wrong)


def test_the_reports_read_their_durations_the_same_way(played):
    _, seen = played
    last = seen[-1]
    days = billing.renewals(last["vms"], last["wallet"], now=last["now"], within="30")
    want = billing.renewals(last["vms"], last["wallet"], now=last["now"], within="30d")
    assert len(want) > 0 and days.equals(want)
    with pytest.raises(DurationError, match="months"):
        billing.renewals(last["vms"], last["wallet"], now=last["now"], within="1M")
    with pytest.raises(DurationError, match="cycle='month'"):
        billing.renewals(last["vms"], last["wallet"], now=last["now"], cycle="soon")


def test_replay_every_is_a_duration_too(played):
    store, _ = played
    daily = replay(billing.runway, store, every="1")
    assert len(daily) == len(replay(billing.runway, store, every="1d")) >= 5
    with pytest.raises(DurationError, match="more than 0"):
        replay(billing.runway, store, every="0")


def test_within_a_bare_number_is_days_in_the_cli(played, capsys):
    store, _ = played
    base = ["report", "billing", "--store", str(store.path), "--table", "renewals"]
    assert main([*base, "--within", "30"]) == 0
    bare = capsys.readouterr().out
    assert "Renewals within 30 days" in bare
    assert "(none)" not in bare
    assert main([*base, "--within", "30d"]) == 0
    assert capsys.readouterr().out == bare
    assert main([*base, "--within", "2w", "--format", "csv"]) == 0
    two_weeks = capsys.readouterr().out
    assert main([*base, "--within", "14", "--format", "csv"]) == 0
    assert capsys.readouterr().out == two_weeks


@pytest.mark.parametrize(
    ("within", "words"),
    [
        ("3M", "--within 91d for about 3 months"),
        ("3 months", "months and years differ in length"),
        ("soon", "a number of days (30)"),
    ],
)
def test_within_that_is_not_a_duration_is_one_line_and_exit_2(played, capsys, within, words):
    store, _ = played
    assert main(["report", "billing", "--store", str(store.path), "--within", within]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("svcnb report: --within") and words in line


def test_horizons_read_through_the_same_reader(played, capsys):
    store, _ = played
    base = ["report", "whatif", "--store", str(store.path), "--table", "topup", "--format", "csv"]
    assert main([*base, "--horizons", "4w,60d,90"]) == 0
    out = capsys.readouterr().out
    assert [line.split(",")[0] for line in out.splitlines()[1:]] == ["28", "60", "90"]
    assert main([*base, "--horizons", "36h"]) == 2
    assert "not a whole number of days" in _one_line(capsys.readouterr().err)
    assert main([*base, "--horizons", "3M"]) == 2
    assert "months" in _one_line(capsys.readouterr().err)


def test_help_says_a_bare_number_is_days(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "a bare number is days (30)" in text and "months are refused" in text
