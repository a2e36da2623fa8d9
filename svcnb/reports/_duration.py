"""One reader of durations for everything a user types: ``duration("30") -> 30 days``.

``svcnb report --within``, ``--horizons``, the panels' ``within``/``horizon``/``lookback`` and the
reports' own duration parameters all read durations here, so a duration means the same thing
everywhere:

- a bare number is days: ``30``, ``1.5`` (an ``int`` or ``float`` from Python too);
- a number and a unit, or several: ``30d``, ``2w``, ``12h``, ``90 days``, ``1 week``,
  ``45min``, ``30s``, ``1d12h`` (``D``, ``W``, ``H`` as pandas writes them also);
- what pandas writes itself: ``1 days 02:00:00``, ISO 8601 ``P1DT2H``; a ``Timedelta`` or
  ``datetime.timedelta`` as it is.

Months and years are refused, not guessed: they differ in length, so "3 months" has no one
length (and ``m`` could mean minutes). Negative durations are refused. A refusal is a
:class:`DurationError` whose one line names the text and gives an example.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

import pandas as pd

from svcnb.errors import SvcnbError

__all__ = ["DurationError", "duration", "duration_text"]

_UNITS = {
    "w": "weeks",
    "wk": "weeks",
    "wks": "weeks",
    "week": "weeks",
    "weeks": "weeks",
    "d": "days",
    "day": "days",
    "days": "days",
    "h": "hours",
    "hr": "hours",
    "hrs": "hours",
    "hour": "hours",
    "hours": "hours",
    "min": "minutes",
    "mins": "minutes",
    "minute": "minutes",
    "minutes": "minutes",
    "s": "seconds",
    "sec": "seconds",
    "secs": "seconds",
    "second": "seconds",
    "seconds": "seconds",
}
# units with no one length (or, for "m", no one meaning): refused with the reason
_CALENDAR = {"m", "mo", "mon", "mth", "month", "months", "y", "yr", "yrs", "year", "years"}

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_PART = re.compile(rf"({_NUMBER})\s*([a-z]+)\.?", re.IGNORECASE)
_PARTS = re.compile(rf"(?:{_NUMBER}\s*[a-z]+\.?\s*,?\s*(?:and\s+)?)+", re.IGNORECASE)


# the longest duration read: added to any time of this century it stays a time pandas
# represents (up to 2262-04-11), where "Out of bounds nanosecond timestamp" would name nothing
LONGEST = pd.Timedelta(days=365 * 200)


class DurationError(SvcnbError, ValueError):
    """Text (or a value) that is not a duration svcnb reads; the message gives an example."""


def _example(name: str | None, text: str = "90d") -> str:
    if name is None:
        return f"'{text}'"
    if name.startswith("-"):
        return f"{name} {text}"
    return f"{name}='{text}'"


def _said(value: Any, name: str | None) -> str:
    shown = repr(value) if not isinstance(value, str) else repr(value.strip())
    return f"{name} {shown}" if name else shown


def duration(value: Any, *, name: str | None = None) -> pd.Timedelta:
    """``value`` as a ``pd.Timedelta``: a bare number is days; see the module docstring.

    ``name`` is how the caller's user wrote the parameter (``"--within"``, ``"within"``): the
    error names it and gives its example in that form. Raises :class:`DurationError` (a
    ``ValueError``) for anything else, including months, years and negative durations.
    """
    hint = (
        f"give a number of days (30) or a number and a unit (30d, 2w, 12h, '90 days'), "
        f"e.g. {_example(name)}"
    )
    if isinstance(value, pd.Timedelta | dt.timedelta) and not pd.isna(value):
        out = pd.Timedelta(value)
    elif isinstance(value, bool) or value is None:
        raise DurationError(f"{_said(value, name)} is not a duration: {hint}")
    elif isinstance(value, int | float):
        if not math.isfinite(value):
            raise DurationError(f"{_said(value, name)} is not a duration: {hint}")
        out = _days(value, value, name, hint)
    elif isinstance(value, str):
        out = _parse(value, name, hint)
    else:
        raise DurationError(
            f"{_said(value, name)} is a {type(value).__name__}, not a duration: {hint}"
        )
    if out < pd.Timedelta(0):
        raise DurationError(
            f"{_said(value, name)} is negative: give a duration of 0 or more, e.g. {_example(name)}"
        )
    if out > LONGEST:
        raise _too_long(value, name)
    return out


def _too_long(value: Any, name: str | None) -> DurationError:
    return DurationError(
        f"{_said(value, name)} is longer than svcnb counts: pandas represents times only up "
        f"to {pd.Timestamp.max:%Y-%m-%d}, so a duration is at most {LONGEST.days} days "
        f"(200 years), e.g. {_example(name)}"
    )


def _days(number: float, value: Any, name: str | None, hint: str) -> pd.Timedelta:
    try:
        return pd.Timedelta(days=float(number))
    except (OverflowError, ValueError):
        raise _too_long(value, name) from None


def _parse(text: str, name: str | None, hint: str) -> pd.Timedelta:
    body = text.strip()
    if not body:
        raise DurationError(f"{'no duration given' if not name else name + ' is empty'}: {hint}")
    negative = body.startswith("-")
    bare = body.lstrip("+-").strip()
    if re.fullmatch(_NUMBER, bare):
        out = _days(float(bare), text, name, hint)
        return -out if negative else out
    if _PARTS.fullmatch(bare):
        total = pd.Timedelta(0)
        for number, unit in _PART.findall(bare):
            word = unit.lower()
            if word in _CALENDAR:
                n = float(number)
                years = word.startswith("y")
                about = f"{round(n * (365.25 if years else 30.44))}d"
                said = f"{number} {'year' if years else 'month'}{'' if n == 1 else 's'}"
                minutes = _example(name, number + "min")
                minutes = f" (or {minutes} for minutes)" if unit == "m" else ""
                raise DurationError(
                    f"{_said(text, name)}: months and years differ in length, so svcnb does not "
                    f"count in them; give days, e.g. {_example(name, about)} for about "
                    f"{said}{minutes}"
                )
            if word not in _UNITS:
                raise DurationError(
                    f"{_said(text, name)}: {unit!r} is not a unit svcnb reads; {hint}"
                )
            try:
                # the unit is a keyword (weeks=, days=, ...): mypy cannot match a ** mapping
                # against pandas-stubs' keyword parameters
                total += pd.Timedelta(**{_UNITS[word]: float(number)})  # type: ignore[arg-type]
            except (OverflowError, ValueError):
                raise _too_long(text, name) from None
        return -total if negative else total
    # the forms pandas writes itself: "1 days 02:00:00", "02:00:00", ISO 8601 "P1DT2H"
    if ":" in body or re.fullmatch(r"-?P[0-9DTHMSW.]+", body, re.IGNORECASE):
        try:
            given: pd.Timedelta | None = pd.Timedelta(body)
        except (ValueError, OverflowError):
            given = None
        if given is not None and not pd.isna(given):
            return given
    raise DurationError(f"{_said(text, name)} is not a duration: {hint}")


def duration_text(value: pd.Timedelta) -> str:
    """``value`` in words for a title: ``30 days``, ``1 day``, ``1.5 days``, ``12 hours``."""
    seconds = value.total_seconds()
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60), ("second", 1)):
        if seconds >= size or unit == "second":
            n = seconds / size
            if unit != "day" and n != int(n):
                continue
            return f"{n:g} {unit}{'' if n == 1 else 's'}"
    return f"{seconds:g} seconds"  # pragma: no cover - the loop ends at seconds
