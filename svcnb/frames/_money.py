"""Prices and balances. The spec leaves their form "not shown"; services send a number, a numeric
string, ``{amount, currency}`` (amount a number or numeric string) or minor units
``{value, currency, precision}`` (``{"value": 1250, "precision": 2}`` is 12.50)."""

from __future__ import annotations

import json
import math
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple


class Money(NamedTuple):
    """A parsed price or balance; ``currency`` is None unless an object form stated it."""

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


def _minor(value: Any, precision: Any, raw: str) -> float:
    """``value / 10**precision``, exact in Decimal before the one rounding to float."""
    if isinstance(precision, bool) or not isinstance(precision, int) or not 0 <= precision <= 18:
        raise ValueError(f"minor-unit precision must be an integer 0..18: {raw[:60]}")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"minor-unit value must be an integer: {raw[:60]}")
    try:
        units = Decimal(value.strip() if isinstance(value, str) else value)
    except InvalidOperation:
        raise ValueError(f"minor-unit value is not a number: {raw[:60]}") from None
    if not units.is_finite() or units != units.to_integral_value():
        raise ValueError(f"minor-unit value must be a whole number: {raw[:60]}")
    return float(units.scaleb(-precision))


def parse_money(value: Any) -> Money:
    """Parse any of the forms in the module docstring; None gives an all-None Money.

    Raises ValueError naming what was wrong when the value is none of them (frames turn that
    into an NA amount with the raw value kept, unless built with ``strict=True``).
    """
    if value is None:
        return Money(None, None, None)
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, dict):
        currency = value.get("currency")
        if currency is not None and not isinstance(currency, str):
            raise ValueError(f"currency must be a string, got {type(currency).__name__}")
        if "amount" in value:
            amount = None if value["amount"] is None else _number(value["amount"])
            return Money(amount, currency, raw)
        if "value" in value:
            # without a precision, 1250 could be 1250.00 or 12.50: never guessed
            if "precision" not in value:
                raise ValueError(f"minor-unit money object without 'precision': {raw[:60]}")
            if value["value"] is None:
                return Money(None, currency, raw)
            return Money(_minor(value["value"], value["precision"], raw), currency, raw)
        raise ValueError(f"money object without 'amount' or 'value': {raw[:60]}")
    return Money(_number(value), None, raw)


def money_value(raw: str | None) -> Any:
    """The value as the API sent it, from the JSON kept in a ``*_raw`` column."""
    return None if raw is None else json.loads(raw)
