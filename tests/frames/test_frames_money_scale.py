"""An amount written as an integer states no scale: ``{"amount": "1250", "currency": "EUR"}`` is
1,250.00 EUR from one service and 12.50 EUR from another (Stripe-like integer cents). The frames
decide it per field: a value of that field written with a decimal point proves major units, else
the pin ``[money] scale``, else the amount is NA with one warning naming the assumption and the
line that pins it. ``pins={}`` is a service nothing pins (tests/frames/conftest.py pins the
sandbox's dialect otherwise)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from svcnb import frames
from svcnb.assumptions import Pin
from svcnb.frames import AssumptionWarning, UnreadableValueWarning, parse_money

from ._samples import vm

_BILLING = {"nextRenewalAt": None, "status": "active"}
_CENTS = [{"amount": "1250", "currency": "EUR"}, {"amount": 999, "currency": "EUR"}, 4500]


def _fleet(prices, plan_price=None):
    plan = {"slug": "s-2vcpu-4gb", "name": "Standard 4 GB", "priceMonthly": plan_price}
    return [vm(i, plan=plan, billing={"priceMonthly": p, **_BILLING}) for i, p in enumerate(prices)]


def _caught(build):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = build()
    return frame, [w for w in caught if issubclass(w.category, UnreadableValueWarning)]


def _pins(**values):
    units = {"units.ram": Pin("MiB", "a test"), "units.disk": Pin("GiB", "a test")}
    return {**units, **{k.replace("_", "."): Pin(v, "a test") for k, v in values.items()}}


def test_integer_amounts_nothing_proves_nor_pins_are_na_with_one_warning_naming_the_pin():
    frame, caught = _caught(lambda: frames.vms(_fleet(_CENTS), pins=_pins()))
    assert frame["price_monthly_amount"].isna().all()  # never 1,250 EUR nor 12.50 EUR
    assert frame["price_monthly_currency"].tolist()[:2] == ["EUR", "EUR"]  # stated: kept
    assert frame["price_monthly_raw"].notna().all()
    assert frame.attrs["unreadable"] == {"price_monthly_amount": 3}
    assert frame.attrs["assumptions"]["money.scale"] == {"billing.priceMonthly": "unknown"}
    assert len(caught) == 1 and caught[0].category is AssumptionWarning
    text = str(caught[0].message)
    assert "3 value(s) of billing.priceMonthly rest on the assumption money.scale" in text
    assert '[money] scale = "major"' in text and "[accounts.NAME.money]" in text


def test_a_decimal_point_in_the_same_field_proves_major_units():
    frame, caught = _caught(lambda: frames.vms(_fleet([*_CENTS, "12.50"]), pins=_pins()))
    assert frame["price_monthly_amount"].tolist() == [1250.0, 999.0, 4500.0, 12.5]
    assert not caught
    assert frame.attrs["assumptions"]["money.scale"] == {"billing.priceMonthly": "proven"}


def test_a_point_in_another_field_proves_nothing_for_this_one():
    records = _fleet(["12.50", {"amount": "1250", "currency": "EUR"}])
    records[0]["billing"] = None  # its price comes from plan.priceMonthly
    records[0]["plan"]["priceMonthly"] = "12.50"
    records[1]["plan"] = {"slug": "s-2vcpu-4gb", "name": "Standard 4 GB"}
    frame, caught = _caught(lambda: frames.vms(records, pins=_pins()))
    assert frame["price_monthly_amount"].iloc[0] == 12.5
    assert pd.isna(frame["price_monthly_amount"].iloc[1])
    assert frame.attrs["assumptions"]["money.scale"] == {"billing.priceMonthly": "unknown"}
    assert len(caught) == 1


@pytest.mark.parametrize(
    ("scale", "amounts"), [("major", [1250.0, 999.0, 4500.0]), ("minor", [12.5, 9.99, 45.0])]
)
def test_a_pinned_scale_reads_every_integer_amount_at_it(scale, amounts):
    frame, caught = _caught(lambda: frames.vms(_fleet(_CENTS), pins=_pins(money_scale=scale)))
    assert frame["price_monthly_amount"].tolist() == amounts and not caught
    assert frame.attrs["assumptions"]["money.scale"] == {"billing.priceMonthly": "pinned"}


def test_minor_units_follow_the_currency_and_the_wallet_is_decided_alike():
    jpy = parse_money({"amount": "1250", "currency": "JPY"}, "minor")
    assert jpy.amount == 1250.0  # yen have no minor unit
    balance = {"id": "w", "balance": {"amount": 123456, "currency": "EUR"}}
    frame, caught = _caught(lambda: frames.wallet(balance, pins={}))
    assert frame["balance_amount"].isna().all() and len(caught) == 1
    assert "money.scale" in str(caught[0].message)
    pinned = frames.wallet(balance, pins=_pins(money_scale="minor"))
    assert pinned["balance_amount"].tolist() == [1234.56]


def test_parse_money_never_reads_an_integer_amount_without_a_scale():
    for value in ("1250", 1250, {"amount": "1250", "currency": "EUR"}, "1250 EUR"):
        money = parse_money(value)
        assert money.amount is None and money.basis == "open", value
        assert parse_money(value, "major").amount == 1250.0
    for value in ("12.50", 12.5, {"amount": "12.50", "currency": "EUR"}):
        assert parse_money(value).basis == "point"
    stated = parse_money({"amount": 1250, "currency": "EUR", "precision": 2})
    assert stated.amount == 12.5 and stated.basis == "stated"
