"""Money, in one place: where the API's amounts are read, and where every amount becomes text.

- **The reader**: :func:`parse_money` (``svcnb.money.parse_money(value, scale=None) -> Money``)
  reads every form a price or balance may take (a number, ``"12.50"``, ``"12.50 EUR"``,
  ``{amount, currency}``, minor units with an exponent, Google's units and nanos) to an exact
  Decimal and a currency, or to NA naming what it could not read (``svcnb.money._read``).
  The frames read ``priceMonthly`` and ``balance`` through it, and so does ``svcnb doctor``.
- **The formatter**: :func:`money_text` (``1,234.50 EUR``, ``1,234 JPY``: the currency's ISO
  4217 minor units) for people, :func:`plain_text` (``760.18``) for CSV and JSON, on top of
  :func:`to_decimal` and :func:`exact_sum` (``svcnb.money._text``). Every surface (report
  tables, the CLI, panels, alerts, notebooks, pages) writes amounts with them.

The sandbox reads and writes its own amounts in its dialect (``svcnb.sandbox._speak``:
``read_money`` of its canonical forms, ``write_money`` in the dialect's form); it never parses a
served form, and the two sides meet only over HTTP.
"""

from __future__ import annotations

from ._read import (
    CURRENCY_KEYS,
    EXPONENT_KEYS,
    LABEL_KEYS,
    Money,
    UnknownMoneyKeyError,
    keys_beside_money,
    money_value,
    parse_money,
)
from ._text import exact_sum, minor_units, money_text, plain_text, to_decimal

__all__ = [
    "CURRENCY_KEYS",
    "EXPONENT_KEYS",
    "LABEL_KEYS",
    "Money",
    "UnknownMoneyKeyError",
    "exact_sum",
    "keys_beside_money",
    "minor_units",
    "money_text",
    "money_value",
    "parse_money",
    "plain_text",
    "to_decimal",
]
