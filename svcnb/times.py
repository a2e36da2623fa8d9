"""A user's time as UTC: the one reader of every time svcnb is given (docs/contracts.md §5).

Times the API serves are read by the frames (``svcnb.frames``: a time without a zone there rests
on the assumption ``times.zone``), not here: a user's time without a zone is UTC because
snapshot times are the server's, which are UTC.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from svcnb.errors import SvcnbError

__all__ = ["TimeError", "to_utc"]


class TimeError(SvcnbError, ValueError):
    """A time svcnb was given cannot be read (not a time, empty, or outside what pandas holds)."""


def to_utc(value: Any, name: str = "at") -> pd.Timestamp:
    """A timezone-aware UTC timestamp from a string, datetime or Timestamp (naive means UTC),
    in nanoseconds as every frame holds its times. ``name`` is how the user wrote the parameter
    (``--at``): a TimeError names it, also for a time outside what pandas represents."""
    try:
        ts = pd.Timestamp(value)
    except (TypeError, ValueError) as exc:
        if "out of range" in str(exc):
            raise TimeError(_outside(name, value)) from None
        raise TimeError(
            f"{name}={value!r} is not a time; give an ISO 8601 date or date-time"
        ) from None
    except OverflowError:
        raise TimeError(_outside(name, value)) from None
    if pd.isna(ts):
        raise TimeError(f"{name} is empty; give an ISO 8601 date or date-time")
    try:
        # a time beyond nanoseconds' range (pandas reads "2262-05-01" in seconds) would fail
        # later, as "Out of bounds nanosecond timestamp", wherever it meets a frame's times
        ts = ts.as_unit("ns")
        return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    except (OverflowError, ValueError):  # OutOfBoundsDatetime is a ValueError
        raise TimeError(_outside(name, value)) from None


def _outside(name: str, value: Any) -> str:
    return (
        f"{name}={value!r} is outside the times pandas represents (from "
        f"{pd.Timestamp.min.ceil('D'):%Y-%m-%d} to {pd.Timestamp.max.floor('D'):%Y-%m-%d}, UTC); "
        "give a time between them"
    )
