"""Money, in one place: where the API's amounts are read, and where every amount becomes text.

The reader is :func:`parse_money` (``svcnb.money._read``; the forms: docs/contracts.md §4), the
formatter :func:`money_text` for people and :func:`plain_text` for CSV and JSON, on top of
:func:`to_decimal` and :func:`exact_sum` (``svcnb.money._text``; contracts §6).

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
