"""Prices and balances, read to an exact ``Decimal`` and a currency.

The forms read, and why a money object with any other key is unread: docs/contracts.md §4
("Money"). Google money may leave out units or nanos because proto3 JSON leaves zeros out.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, NamedTuple

from svcnb.errors import SvcnbError

from ._text import minor_units

_DECIMAL_POINT = re.compile(r"-?\d+\.\d+")

CURRENCY_KEYS = ("currency", "currencyCode", "currency_code")
# the number of minor-unit digits: value / 10**K (an integer 0..18, one of these keys at most)
EXPONENT_KEYS = (
    "precision",
    "exponent",
    "scale",
    "decimals",
    "decimalPlaces",
    "decimal_places",
    "minorUnits",
    "minor_units",
    "fractionDigits",
    "fraction_digits",
)
# keys that only label the amount for display; they must hold text (or null) to be let through
LABEL_KEYS = (
    "formatted",
    "formattedAmount",
    "formatted_amount",
    "display",
    "displayAmount",
    "display_amount",
    "displayValue",
    "display_value",
)

# what each object form may hold besides currency and labels
_AMOUNT_KEYS = frozenset({"amount", *EXPONENT_KEYS})
_VALUE_KEYS = frozenset({"value", *EXPONENT_KEYS})
_GOOGLE_KEYS = frozenset({"units", "nanos"})
_COMMON_KEYS = frozenset({*CURRENCY_KEYS, *LABEL_KEYS})

# a numeric string on its own (as a JSON number could be written); with a currency, a plain one
_NUMERIC = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_PLAIN = r"-?\d+(?:\.\d+)?"
_CODE = r"[A-Z]{3}"
_WITH_CODE = re.compile(rf"(?P<a>{_PLAIN})\s+(?P<c>{_CODE})|(?P<c2>{_CODE})\s+(?P<a2>{_PLAIN})")
_INTEGER = re.compile(r"-?\d+")


class Money(NamedTuple):
    """A parsed price or balance; ``currency`` is None unless the value stated one.

    ``exact`` is the amount as a Decimal, exactly as stated; ``amount`` is it rounded once to
    the nearest float (what the frame's ``Float64`` column holds).
    """

    amount: float | None
    currency: str | None
    raw: str | None  # the value as sent, JSON-encoded, so nothing is lost
    exact: Decimal | None = None
    # what states the amount's scale: "stated" (an exponent, Google's units and nanos),
    # "point" (written with a decimal point: proves major units for its field), "open" (an
    # integer amount: its scale rests on the assumption money.scale), None for no amount
    basis: str | None = None


class UnknownMoneyKeyError(SvcnbError, ValueError):
    """A money object holds keys svcnb does not understand (``keys``); its amount is unknown."""

    def __init__(self, keys: list[str], raw: str) -> None:
        self.keys = tuple(keys)
        names = ", ".join(repr(k) for k in keys)
        super().__init__(
            f"unknown key {names} in a money object: it may change what the amount means, so "
            f"none is computed ({raw[:80]})"
        )


def _money(exact: Decimal | None, currency: str | None, raw: str, basis: str = "stated") -> Money:
    if exact is None:
        return Money(None, currency, raw, None)
    amount = float(exact)  # the one rounding, correctly rounded
    if amount in (float("inf"), float("-inf")) or (amount == 0 and exact != 0):
        raise ValueError(f"an amount past the range of a float: {raw[:60]}")
    return Money(amount, currency, raw, exact, basis)


def _written(value: Any) -> str:
    """``"point"`` when an amount is written with a decimal point (a JSON number that is no
    integer, a string with a point), else ``"open"``: an integer's scale is not stated."""
    if isinstance(value, float):
        return "point"
    if isinstance(value, str) and "." in value:
        return "point"
    return "open"


def _scaled_as(money: Money, scale: str | None) -> Money:
    """``money`` read with its open scale decided: ``major`` as written, ``minor`` divided by
    10 ** the currency's minor units (hundredths unless the currency has others, JPY none),
    None: unknown (the amount NA, the currency kept)."""
    if money.basis != "open" or money.exact is None:
        return money
    if scale is None:
        return Money(None, money.currency, money.raw, None, "open")
    if scale == "major":
        return money
    digits = minor_units(money.currency)
    if money.exact != money.exact.to_integral_value():
        raise ValueError(f"minor units must be a whole number: {(money.raw or '')[:60]}")
    whole = int(money.exact)
    return _money(_scaled(whole, digits), money.currency, money.raw or "", "open")


def _number(value: Any) -> Decimal:
    """A JSON number or a numeric string, exactly (a float as its shortest repr, which is the
    JSON text it was read from)."""
    if isinstance(value, bool):
        raise ValueError(f"a boolean is not an amount: {value!r}")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"not a finite amount: {value!r}")
        return Decimal(repr(value))
    if isinstance(value, str):
        text = value.strip()
        if not _NUMERIC.fullmatch(text):
            raise ValueError(f"not a numeric string: {value[:40]!r}")
        return Decimal(text)
    raise ValueError(f"expected a number or numeric string, got {type(value).__name__}")


def _exponent(obj: dict[str, Any], raw: str) -> tuple[str, int] | None:
    """The minor-unit key and its digits, None when the object has none."""
    present = [k for k in EXPONENT_KEYS if k in obj]
    if not present:
        return None
    if len(present) > 1:
        raise ValueError(f"minor units stated twice ({', '.join(present)}): {raw[:60]}")
    key = present[0]
    digits = obj[key]
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 18:
        raise ValueError(f"minor-unit {key!r} must be an integer 0..18: {raw[:60]}")
    return key, digits


def _minor(value: Any, digits: int, raw: str) -> Decimal:
    """Minor units (an integer or an integer string) ``/ 10**digits``, exactly."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"minor-unit value must be an integer: {raw[:60]}")
    text = value.strip() if isinstance(value, str) else str(value)
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"minor-unit value must be a whole number: {raw[:60]}")
    return _scaled(int(text), digits)


def _scaled(integer: int, digits: int) -> Decimal:
    """``integer / 10**digits`` exactly (the constructor never rounds; arithmetic would, to the
    context's 28 digits)."""
    return Decimal(f"{integer}E-{digits}")


def _amount_with_digits(amount: Any, key: str, digits: int, raw: str) -> Decimal:
    """``amount`` beside a minor-unit key: a JSON integer is minor units; a number written with a
    decimal point and at most ``digits`` decimals is already the amount; else it is unread."""
    if isinstance(amount, bool):
        raise ValueError(f"a boolean is not an amount: {raw[:60]}")
    if isinstance(amount, int):
        return _scaled(amount, digits)
    if isinstance(amount, float):
        if amount != amount or amount in (float("inf"), float("-inf")):
            raise ValueError(f"not a finite amount: {raw[:60]}")
        text = repr(amount)
    elif isinstance(amount, str):
        text = amount.strip()
    else:
        raise ValueError(f"expected a number or numeric string, got {type(amount).__name__}")
    if re.fullmatch(r"-?\d+", text):
        raise ValueError(
            f"amount {amount!r} beside {key!r}: minor units or the amount itself? An integer "
            f"string could be either: {raw[:60]}"
        )
    match = re.fullmatch(r"-?\d+\.(\d+)", text)
    if match is None:
        raise ValueError(f"amount {amount!r} beside {key!r} is not a plain decimal: {raw[:60]}")
    if len(match.group(1)) > digits:
        raise ValueError(
            f"amount {amount!r} has more decimals than {key!r} = {digits} allows: {raw[:60]}"
        )
    return Decimal(text)


def _currency(obj: dict[str, Any], raw: str) -> str | None:
    stated = {}
    for key in CURRENCY_KEYS:
        value = obj.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{key} must be a string, got {type(value).__name__}")
        stated[key] = value
    if len(set(stated.values())) > 1:
        named = ", ".join(f"{k}={v!r}" for k, v in stated.items())
        raise ValueError(f"the money object states two currencies ({named}): {raw[:60]}")
    return next(iter(stated.values()), None)


def _unknown(obj: dict[str, Any], allowed: frozenset[str], raw: str) -> None:
    unknown = [
        k
        for k in obj
        if k not in allowed
        and not (k in LABEL_KEYS and (obj[k] is None or isinstance(obj[k], str)))
    ]
    if unknown:
        raise UnknownMoneyKeyError(unknown, raw)


def _object(obj: dict[str, Any], raw: str) -> Money:
    if "amount" in obj:
        form = _AMOUNT_KEYS
    elif "value" in obj:
        form = _VALUE_KEYS
    elif "units" in obj or "nanos" in obj:
        form = _GOOGLE_KEYS
    else:
        _unknown(obj, _COMMON_KEYS, raw)  # e.g. {"cents": 1250} names 'cents'
        raise ValueError(f"money object without 'amount', 'value' or 'units': {raw[:60]}")
    # a key the form does not know (also 'precision' where it has no place) names itself
    _unknown(obj, form | (_COMMON_KEYS - set(LABEL_KEYS)), raw)
    currency = _currency(obj, raw)
    if form is _AMOUNT_KEYS:
        exponent = _exponent(obj, raw)
        amount = obj["amount"]
        if amount is None:
            return Money(None, currency, raw)
        if exponent is None:
            return _money(_number(amount), currency, raw, _written(amount))
        return _money(_amount_with_digits(amount, *exponent, raw), currency, raw)
    if form is _VALUE_KEYS:
        exponent = _exponent(obj, raw)
        # without the digits, 1250 could be 1250.00 or 12.50: never guessed; a decimal string
        # ("12.50", PayPal's {currency_code, value}) is the amount itself
        if exponent is None:
            value = obj["value"]
            if isinstance(value, str) and _DECIMAL_POINT.fullmatch(value.strip()):
                return _money(Decimal(value.strip()), currency, raw, "point")
            raise ValueError(f"minor-unit money object without 'precision': {raw[:60]}")
        if obj["value"] is None:
            return Money(None, currency, raw)
        return _money(_minor(obj["value"], exponent[1], raw), currency, raw)
    return _money(_google(obj, raw), currency, raw)


def _google(obj: dict[str, Any], raw: str) -> Decimal:
    """``units + nanos / 10**9`` of Google's money type, exactly."""
    units, nanos = obj.get("units", 0), obj.get("nanos", 0)
    if isinstance(units, bool) or not isinstance(units, int | str):
        raise ValueError(f"units must be an integer or integer string: {raw[:60]}")
    if isinstance(units, str):
        if not _INTEGER.fullmatch(units.strip()):
            raise ValueError(f"units must be an integer or integer string: {raw[:60]}")
        units = int(units.strip())
    if isinstance(nanos, bool) or not isinstance(nanos, int) or not -(10**9) < nanos < 10**9:
        raise ValueError(f"nanos must be an integer with |nanos| < 10**9: {raw[:60]}")
    if units * nanos < 0:
        raise ValueError(f"units and nanos of opposite signs: {raw[:60]}")
    return _scaled(units * 10**9 + nanos, 9)


def parse_money(value: Any, scale: str | None = None) -> Money:
    """Parse any of the forms of docs/contracts.md §4 (Money); None gives an all-None Money.

    An amount written as an integer (``1250``, ``"1250"``, ``{"amount": "1250", "currency":
    "EUR"}``, ``"1250 EUR"``) states no scale: 1,250.00 or 12.50? ``scale`` decides it
    (``"major"``, ``"minor"``: the assumption ``money.scale``, see ``svcnb.assumptions``);
    without one such an amount is NA (``basis == "open"``, the currency kept). The frames
    decide it per field: a value of the field written with a decimal point proves major units,
    else a pin, else NA with one warning.

    Raises ValueError naming what was wrong when the value is none of them, and
    ``UnknownMoneyKeyError`` (a ValueError naming ``keys``) for an object with a key svcnb does
    not understand (frames turn either into an NA amount and currency with the raw value kept,
    unless built with ``strict=True``).
    """
    if scale not in (None, "major", "minor"):
        raise ValueError(f"scale must be 'major', 'minor' or None, not {scale!r}")
    return _scaled_as(_read(value), scale)


def _read(value: Any) -> Money:
    if value is None:
        return Money(None, None, None)
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, dict):
        return _object(value, raw)
    if isinstance(value, str):
        match = _WITH_CODE.fullmatch(value.strip())
        if match is not None:
            amount = match.group("a") or match.group("a2")
            code = match.group("c") or match.group("c2")
            return _money(Decimal(amount), code, raw, _written(amount))
    try:
        return _money(_number(value), None, raw, _written(value))
    except ValueError:
        if isinstance(value, str) and re.search(r"[A-Za-z]{2}|[^\x00-\x7f]", value):
            raise ValueError(
                f"not an amount: {value[:40]!r} (a string states a currency as '12.50 EUR' or "
                "'EUR 12.50': a three-letter upper-case code and a plain decimal)"
            ) from None
        raise


def money_value(raw: str | None) -> Any:
    """The value as the API sent it, from the JSON kept in a ``*_raw`` column."""
    return None if raw is None else json.loads(raw)


# A key beside a money value that may change what the value means: a currency stated beside a
# bare number (Stripe's wallet says "currency": "eur" next to a balance in cents), a unit, a
# scale. Such a key, where the spec lists no other key, makes the value unknown.
_BESIDE = re.compile(
    r"curr|ccy|unit|cent|minor|scale|decimal|exponent|precision|multipl|factor|tax|vat", re.I
)


def keys_beside_money(obj: Any, spec_keys: frozenset[str]) -> list[str]:
    """Keys of ``obj`` (an object holding a money value) that the spec does not list and that
    may change what that money means; ``[]`` when there are none."""
    if not isinstance(obj, dict):
        return []
    return [k for k in obj if k not in spec_keys and _BESIDE.search(str(k))]
