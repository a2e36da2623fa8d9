"""Money as decimals and text: amounts become Decimals here, and the text people read or export.

Frames hold amounts as ``Float64`` (pandas has no decimal dtype that survives Parquet and the
arithmetic the reports do). A price the API states as ``"12.50"`` is exactly the float nearest
12.5, whose shortest repr is ``12.5``: ``Decimal(repr(x))`` gives the stated value back. A *sum*
of such floats can carry binary noise (``760.1800000000001``); amounts are therefore summed here
as decimals, and shown or exported with the currency's minor units when the extra digits are
only that noise. Genuine extra precision (a price of ``0.125``) is kept as it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

import pandas as pd

# ISO 4217 minor units where they are not 2.
_MINOR_UNITS = {"JPY": 0, "KRW": 0, "HUF": 2, "BHD": 3, "KWD": 3, "TND": 3}
# Below this, the difference between a float and its rounding to minor units is binary noise.
_NOISE = Decimal("1e-9")


def minor_units(currency: Any) -> int:
    """Decimal places of ``currency`` (2 when unknown)."""
    if currency is None or _missing(currency):
        return 2
    return _MINOR_UNITS.get(str(currency).upper(), 2)


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def to_decimal(value: Any, currency: Any = None) -> Decimal | None:
    """``value`` as the exact decimal it stands for; None when missing.

    A float is read through its shortest repr (the text it was parsed from), then rounded to the
    currency's minor units only when the digits beyond them are binary noise.
    """
    if value is None or _missing(value):
        return None
    if isinstance(value, Decimal):
        exact = value
    else:
        try:
            exact = Decimal(repr(float(value))) if not isinstance(value, str) else Decimal(value)
        except (InvalidOperation, ValueError):
            return None
    places = Decimal(1).scaleb(-minor_units(currency))
    rounded = exact.quantize(places)
    return rounded if abs(exact - rounded) < _NOISE else exact


def exact_sum(values: Iterable[Any], currency: Any = None) -> Decimal:
    """The decimal sum of ``values`` (missing ones skipped), in the currency's minor units."""
    # each distinct value read once: a fleet's prices are a handful of amounts, repeated
    counts = Counter(values.tolist() if hasattr(values, "tolist") else values)
    read = ((to_decimal(v, currency), n) for v, n in counts.items())
    total = sum((d * n for d, n in read if d is not None), Decimal(0))
    return to_decimal(total, currency) or Decimal(0)


def money_text(
    value: Any, currency: Any = None, *, thousands: bool = True, missing: str = ""
) -> str:
    """``1,234.50 EUR``: the amount with its currency's places (``missing`` when there is none)."""
    exact = to_decimal(value, currency)
    if exact is None:
        return missing
    places = max(minor_units(currency), -exact.as_tuple().exponent)  # type: ignore[operator]
    text = f"{exact:,.{places}f}" if thousands else f"{exact:.{places}f}"
    unit = "" if currency is None or _missing(currency) else f" {currency}"
    return text + unit


def plain_text(value: Any, currency: Any = None) -> str:
    """The exact decimal text of an amount for CSV and JSON (``12.5``, ``760.18``)."""
    exact = to_decimal(value, currency)
    return "" if exact is None else format(exact, "f")
