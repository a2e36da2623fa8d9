"""Every money form a service may send where the spec says "not shown", read to an exact amount
and a currency; a money object with a key svcnb does not understand is NA (amount and currency),
with one warning naming the key and where it was seen, never a figure computed from the keys it
did understand. The whole-column path and the value-by-value path give the same frame."""

from __future__ import annotations

import re
import warnings
from decimal import Decimal

import pandas as pd
import pytest
from _fuzz import fuzz
from hypothesis import given
from hypothesis import strategies as st

from svcnb import frames
from svcnb.frames import RecordError, UnknownMoneyKeyError, UnreadableValueWarning, parse_money
from svcnb.money import money_value
from svcnb.reports import billing

from ._samples import vm

_BILLING = {"nextRenewalAt": "2026-12-01T00:00:00Z", "status": "active"}

# (value as sent, exact amount, currency)
FORMS = [
    (12.5, "12.5", None),
    (7, "7", None),
    ("12.50", "12.50", None),
    ("12.50 EUR", "12.50", "EUR"),
    ("EUR 12.50", "12.50", "EUR"),
    ("-3.10 USD", "-3.10", "USD"),
    ("JPY 1200", "1200", "JPY"),
    ({"amount": "12.50", "currency": "EUR"}, "12.50", "EUR"),
    ({"amount": 12.5, "currency": "EUR"}, "12.5", "EUR"),
    ({"amount": "12.50", "currencyCode": "EUR"}, "12.50", "EUR"),
    ({"amount": "12.50", "currency_code": "USD"}, "12.50", "USD"),
    ({"amount": "12.50", "currency": "EUR", "currencyCode": "EUR"}, "12.50", "EUR"),
    ({"currencyCode": "EUR", "units": "12", "nanos": 500000000}, "12.5", "EUR"),
    ({"currencyCode": "USD", "units": 3, "nanos": 10}, "3.000000010", "USD"),
    ({"currencyCode": "EUR", "units": "-1", "nanos": -750000000}, "-1.75", "EUR"),
    ({"currencyCode": "EUR", "nanos": 990000000}, "0.99", "EUR"),
    ({"currencyCode": "EUR", "units": "40"}, "40", "EUR"),
    ({"value": 1250, "currency": "EUR", "precision": 2}, "12.50", "EUR"),
    ({"value": 1250, "currency": "EUR", "exponent": 2}, "12.50", "EUR"),
    ({"value": 1250, "currency": "EUR", "scale": 2}, "12.50", "EUR"),
    ({"value": 1250, "currency": "EUR", "decimals": 2}, "12.50", "EUR"),
    ({"value": 1250, "currency": "EUR", "minorUnits": 2}, "12.50", "EUR"),
    ({"value": "123456", "currencyCode": "BHD", "minor_units": 3}, "123.456", "BHD"),
    ({"amount": 1250, "currency": "EUR", "precision": 2}, "12.50", "EUR"),
    ({"amount": 1250, "currency": "EUR", "exponent": 2}, "12.50", "EUR"),
    ({"amount": 1250, "currencyCode": "EUR", "minorUnits": 2}, "12.50", "EUR"),
    ({"amount": "12.50", "currency": "EUR", "precision": 2}, "12.50", "EUR"),
    ({"amount": "12.5", "currency": "EUR", "decimals": 2}, "12.5", "EUR"),
    ({"amount": 12.5, "currency": "EUR", "precision": 2}, "12.5", "EUR"),
    ({"amount": 1250, "currency": "EUR"}, "1250", "EUR"),  # no exponent: as stated
    ({"amount": "12.50", "currency": "EUR", "formatted": "€12.50"}, "12.50", "EUR"),
    ({"amount": "12.50", "currency": "EUR", "display": "12,50 €"}, "12.50", "EUR"),
    # exact beyond a float: the Decimal keeps every digit, the column holds it rounded once
    (
        {"value": "1234567890123456789", "currency": "EUR", "precision": 2},
        "12345678901234567.89",
        "EUR",
    ),
]


def _row(price, **kwargs):
    return frames.vms([vm(1, billing={"priceMonthly": price, **_BILLING})], **kwargs).iloc[0]


@pytest.mark.parametrize(("price", "exact", "currency"), FORMS)
def test_each_money_form_gives_its_exact_amount_and_currency(price, exact, currency):
    money = parse_money(price, "major")
    assert money.exact == Decimal(exact) and money.currency == currency
    assert money.amount == float(Decimal(exact))  # one rounding, from the Decimal
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadableValueWarning)
        row = _row(price)
    assert row["price_monthly_amount"] == float(Decimal(exact))
    if currency is None:
        assert row["price_monthly_currency"] is pd.NA
    else:
        assert row["price_monthly_currency"] == currency
    assert money_value(row["price_monthly_raw"]) == price


def _caught(build):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = build()
    return frame, [w for w in caught if issubclass(w.category, UnreadableValueWarning)]


@pytest.mark.parametrize(
    ("price", "key"),
    [
        ({"amount": "12.50", "currency": "EUR", "vat": "0.19"}, "vat"),
        ({"amount": "12.50", "currency": "EUR", "taxRate": 19}, "taxRate"),
        ({"amount": "12.50", "currency": "EUR", "multiplier": 100}, "multiplier"),
        ({"amount": "12.50", "currency": "EUR", "unit": "cents"}, "unit"),
        ({"cents": 1250, "currency": "EUR"}, "cents"),
        ({"value": 1250, "currency": "EUR", "precision": 2, "vat": 0}, "vat"),
        ({"currencyCode": "EUR", "units": "12", "nanos": 0, "precision": 2}, "precision"),
        ({"currencyCode": "EUR", "units": "12", "taxIncluded": False}, "taxIncluded"),
        ({"amount": "12.50", "value": 1250, "currency": "EUR"}, "value"),
        ({"amount": "12.50", "currency": "EUR", "symbol": "€"}, "symbol"),
        ({"amount": "12.50", "currency": "EUR", "formatted": 12.5}, "formatted"),
    ],
)
def test_an_unknown_key_makes_the_amount_and_currency_na_with_one_warning_naming_it(price, key):
    with pytest.raises(UnknownMoneyKeyError) as raised:
        parse_money(price)
    assert raised.value.keys == (key,)
    records = [vm(0)] + [vm(i, billing={"priceMonthly": price, **_BILLING}) for i in (1, 2, 3)]
    frame, caught = _caught(lambda: frames.vms(records))
    assert len(caught) == 1  # once per key per frame, not per row
    text = str(caught[0].message)
    assert text.count(repr(key)) == 1 and "billing.priceMonthly" in text
    assert "3 record(s)" in text and "'vm-00001'" in text
    assert frame["price_monthly_amount"].isna().tolist() == [False, True, True, True]
    assert frame["price_monthly_currency"].iloc[1:].isna().all()
    assert frame.attrs["unreadable"] == {"price_monthly_amount": 3}
    assert money_value(frame["price_monthly_raw"].iloc[1]) == price
    with pytest.raises(RecordError, match=f"vm-00001.*billing.priceMonthly.*'{key}'"):
        frames.vms(records, strict=True)


def test_each_unknown_key_is_named_once_with_where_it_was_seen():
    plan = {"slug": "s-2", "name": "Standard 2", "priceMonthly": {"amount": 9, "vat": 1}}
    records = [
        vm(0, billing={"priceMonthly": {"amount": 5, "currency": "EUR", "vat": 1}, **_BILLING}),
        vm(1, billing={"priceMonthly": {"amount": 5, "currency": "EUR", "vat": 2}, **_BILLING}),
        vm(2, billing={"priceMonthly": {"amount": 5, "taxRate": 1}, **_BILLING}),
        vm(3, billing={"priceMonthly": None, **_BILLING}, plan=plan),
    ]
    frame, caught = _caught(lambda: frames.vms(records))
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "unknown key 'vat' in the money object at billing.priceMonthly (2 record(s)" in text
    assert "unknown key 'taxRate' in the money object at billing.priceMonthly (1" in text
    assert "unknown key 'vat' in the money object at plan.priceMonthly (1" in text
    assert frame["price_monthly_amount"].isna().all()
    assert frame.attrs["unreadable"] == {"price_monthly_amount": 4}


def test_labels_change_nothing_but_a_label_that_is_not_text_is_a_key_not_understood():
    assert parse_money({"amount": "9.99", "currency": "EUR", "formatted": "€9.99"}).exact == (
        Decimal("9.99")
    )
    assert parse_money({"amount": 5, "currency": "EUR", "display": None}, "major").amount == 5.0
    for label in ({"formatted": 999}, {"display": {"text": "9.99"}}):
        with pytest.raises(UnknownMoneyKeyError):
            parse_money({"amount": "9.99", "currency": "EUR", **label})


def test_precision_beside_an_integer_amount_is_minor_units_and_without_it_the_amount_is_as_stated():
    minor = _row({"amount": 1250, "currency": "EUR", "precision": 2})
    assert minor["price_monthly_amount"] == 12.5  # not 1250
    stated = _row({"amount": 1250, "currency": "EUR"})
    assert stated["price_monthly_amount"] == 1250.0
    assert parse_money({"amount": 1250, "currency": "EUR", "precision": 2}).exact == Decimal("12.5")


_STRING_FORMS = "a string states a currency as '12.50 EUR' or 'EUR 12.50'"


@pytest.mark.parametrize(
    ("price", "why"),
    [
        # minor units or major? an integer string beside an exponent could be either
        ({"amount": "1250", "currency": "EUR", "precision": 2}, "minor units or the amount"),
        ({"amount": "12.505", "currency": "EUR", "precision": 2}, "more decimals than"),
        ({"amount": 1250, "currency": "EUR", "precision": 2, "exponent": 2}, "stated twice"),
        ({"amount": 1250, "currency": "EUR", "precision": -2}, "'precision' must be an integer"),
        ({"amount": 1250, "currency": "EUR", "scale": True}, "'scale' must be an integer 0..18"),
        ({"amount": 1, "currency": "EUR", "currencyCode": "USD"}, "states two currencies"),
        ({"amount": 1, "currencyCode": 978}, "currencyCode must be a string"),
        ({"currencyCode": "EUR", "units": "12", "nanos": 10**9}, "|nanos| < 10**9"),
        ({"currencyCode": "EUR", "units": "12", "nanos": -5}, "opposite signs"),
        ({"currencyCode": "EUR", "units": "12.5"}, "units must be an integer"),
        ({"currencyCode": "EUR", "units": 12, "nanos": "5"}, "nanos must be an integer"),
        ({"currencyCode": "EUR", "units": 12.0}, "units must be an integer"),
        ({"value": 1250, "currencyCode": "EUR", "minorUnits": 19}, "'minorUnits' must be"),
        ("12.50 eur", _STRING_FORMS),
        ("12.50EUR", _STRING_FORMS),
        ("EUR 12,50", _STRING_FORMS),
        ("€12.50", _STRING_FORMS),
        ("12.50 EUR extra", _STRING_FORMS),
        ("EURO 12.50", _STRING_FORMS),
        ("12.50 EU", _STRING_FORMS),
    ],
)
def test_a_form_not_fully_understood_is_na_with_a_warning_saying_why(price, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        parse_money(price)
    records = [vm(0), vm(1, billing={"priceMonthly": price, **_BILLING})]
    frame, caught = _caught(lambda: frames.vms(records))
    assert len(caught) == 1 and "vm-00001" in str(caught[0].message)
    assert why in str(caught[0].message)
    assert frame["price_monthly_amount"].isna().tolist() == [False, True]
    assert frame["price_monthly_currency"].iloc[1] is pd.NA


def test_currency_codes_keep_eur_and_usd_apart_never_one_figure_without_a_currency():
    prices = [
        {"amount": "10.00", "currencyCode": "EUR"},
        {"amount": "5.00", "currencyCode": "USD"},
        {"currencyCode": "USD", "units": "2", "nanos": 500000000},
        "EUR 1.25",
    ]
    vms = frames.vms([vm(i, billing={"priceMonthly": p, **_BILLING}) for i, p in enumerate(prices)])
    assert vms["price_monthly_currency"].tolist() == ["EUR", "USD", "USD", "EUR"]
    total = billing.monthly_total(vms).set_index("currency")["monthly_amount"]
    assert total.to_dict() == {"EUR": 11.25, "USD": 7.5}


# values drawn for the whole-column versus value-by-value comparison: every form above, the
# unknown-key and unread ones, and plain odd values
_DRAWN = [p for p, _, _ in FORMS] + [
    {"amount": "12.50", "currency": "EUR", "vat": "0.19"},
    {"currencyCode": "EUR", "units": "12", "precision": 2},
    {"cents": 1250},
    {"amount": "1250", "currency": "EUR", "precision": 2},
    {"amount": 1, "currency": "EUR", "currencyCode": "USD"},
    "12.50 eur",
    None,
    True,
    [1],
]
_EXPECTED = {repr(p): (float(Decimal(e)), c) for p, e, c in FORMS}


@fuzz(60)
@given(prices=st.lists(st.sampled_from(_DRAWN), min_size=1, max_size=10))
def test_the_fast_and_the_exact_path_give_the_same_frame_for_every_money_form(prices):
    records = [
        vm(i, billing={"priceMonthly": p, **_BILLING}, plan={"slug": "s-2", "name": "S"})
        for i, p in enumerate(prices)
    ]
    fast, fast_warned = _caught(lambda: frames.vms(records))
    with pytest.MonkeyPatch.context() as m:
        m.setattr("svcnb.frames._build.arrow_columns", lambda resource, records: {})
        m.setattr("svcnb.frames._build.utc_times", lambda values: None)
        m.setattr("svcnb.frames._fast.utc_times", lambda values: None)
        exact, exact_warned = _caught(lambda: frames.vms(records))
    pd.testing.assert_frame_equal(fast, exact)
    assert fast.attrs == exact.attrs
    assert [str(w.message) for w in fast_warned] == [str(w.message) for w in exact_warned]
    for i, price in enumerate(prices):
        amount, currency = (
            fast["price_monthly_amount"].iloc[i],
            fast["price_monthly_currency"].iloc[i],
        )
        if repr(price) in _EXPECTED:
            assert (amount, currency if currency is not pd.NA else None) == _EXPECTED[repr(price)]
        else:
            assert amount is pd.NA and currency is pd.NA


def test_a_key_beside_the_money_in_a_few_records_of_a_fleet_blanks_those_records_only():
    # a fleet's billing and plan objects share a few sets of keys, each looked at once: the
    # records whose object holds one more key must still be found, each of them, and no other
    records = [vm(i) for i in range(300)]
    records[150]["billing"]["currency"] = "eur"
    records[151]["plan"]["priceUnit"] = "cents"
    records[299]["billing"]["taxRate"] = 0.2
    frame, caught = _caught(lambda: frames.vms(records))
    assert len(caught) == 1
    message = str(caught[0].message)
    for key in ("'billing.currency' (1 record(s))", "'plan.priceUnit' (1 record(s))"):
        assert key in message
    assert "'billing.taxRate' (1 record(s))" in message
    blank = frame.index[frame["price_monthly_amount"].isna()].tolist()
    assert blank == [150, 151, 299]
    assert frame["price_monthly_currency"].iloc[[150, 151, 299]].isna().all()
    assert frame.attrs["unreadable"] == {"price_monthly_amount": 3}
    assert frame["price_monthly_raw"].iloc[150] is not pd.NA  # the value as sent is kept
