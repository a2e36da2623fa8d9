"""Prices and balances: the API sends a number, a numeric string or ``{amount, currency}``."""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple


class Money(NamedTuple):
    """A parsed price or balance; ``currency`` is None unless the object form stated it."""

    amount: float | None
    currency: str | None
    raw: str | None  # the value as sent, JSON-encoded, so nothing is lost


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"a boolean is not an amount: {value!r}")
    if isinstance(value, int | float):
        amount = float(value)
    elif isinstance(value, str):
        try:
            amount = float(value.strip())
        except ValueError:
            raise ValueError(f"not a numeric string: {value[:40]!r}") from None
    else:
        raise ValueError(f"expected a number or numeric string, got {type(value).__name__}")
    if not math.isfinite(amount):
        raise ValueError(f"not a finite amount: {value!r}")
    return amount


def parse_money(value: Any) -> Money:
    """Parse any of the three forms; None gives an all-None Money.

    Raises ValueError naming what was wrong when the value is none of the three forms.
    """
    if value is None:
        return Money(None, None, None)
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, dict):
        if "amount" not in value:
            raise ValueError(f"money object without 'amount': {raw[:60]}")
        currency = value.get("currency")
        if currency is not None and not isinstance(currency, str):
            raise ValueError(f"currency must be a string, got {type(currency).__name__}")
        amount = None if value["amount"] is None else _number(value["amount"])
        return Money(amount, currency, raw)
    return Money(_number(value), None, raw)


def money_value(raw: str | None) -> Any:
    """The value as the API sent it, from the JSON kept in a ``*_raw`` column."""
    return None if raw is None else json.loads(raw)
