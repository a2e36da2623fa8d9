"""The whole-column shortcuts (one Arrow cast per time column, integers read as int64 and float64,
each distinct price parsed once, digit strings cast in Arrow) give exactly the frame, the counts
and the warning of reading every value on its own."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from _fuzz import fuzz
from hypothesis import given
from hypothesis import strategies as st

from svcnb import frames
from svcnb.frames import RecordError, UnreadableValueWarning, parse_money

from ._samples import vm


def _read(records, **kwargs):
    """The frame and the warning texts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = frames.vms(records, **kwargs)
    return frame, [str(w.message) for w in caught if w.category is UnreadableValueWarning]


def _per_value(records):
    """The same records with every shortcut off: no Arrow pass, no Arrow time cast."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr("svcnb.frames._build.arrow_columns", lambda resource, records: {})
        m.setattr("svcnb.frames._build.utc_times", lambda values: None)
        m.setattr("svcnb.frames._fast.utc_times", lambda values: None)
        return _read(records)


def _same(records):
    fast, fast_warned = _read(records)
    exact, exact_warned = _per_value(records)
    pd.testing.assert_frame_equal(fast, exact)
    assert fast.attrs == exact.attrs
    assert fast_warned == exact_warned
    return fast


_DATES = st.sampled_from(["2026-03-04", "20260304", "1999-12-31", "2262-04-11", "1677-09-22"])
_CLOCKS = st.sampled_from(
    ["10", "10:20", "1020", "10:20:30", "23:59:59.999999999", "10:20:30.5", "10:20:30.1234567891"]
)
_ZONES = st.sampled_from(
    ["", "Z", "z", "+02", "+0230", "+02:30", "-11:00", " Z", "+24:00", "+2:30"]
)
_TIMES = st.one_of(
    st.builds(lambda d, s, c, z: d + s + c + z, _DATES, st.sampled_from("Tt "), _CLOCKS, _ZONES),
    st.none(),
    st.just("2026-02-30T00:00:00Z"),
)


@fuzz(60)
@given(times=st.lists(_TIMES, min_size=1, max_size=4))
def test_a_time_column_cast_by_arrow_is_the_one_pandas_reads(times):
    _same([vm(i, updatedAt=t, createdAt=t) for i, t in enumerate(times)])


@pytest.mark.parametrize(
    "value", [2**53 + 1, 2**60, -(2**62), 1.5e9, 2.5, -1.5, True, None, float("nan"), "7"]
)
def test_an_integer_column_read_by_arrow_is_the_one_read_value_by_value(value):
    _same([vm(0), vm(1, bandwidthUsedBytes=value, vcpu=value)])


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**30, 1e20])
def test_an_integer_past_64_bits_is_unreadable_not_an_error(value):
    frame = _same([vm(0), vm(1, bandwidthUsedBytes=value), vm(2)])
    assert frame["bandwidth_used_bytes"].isna().tolist() == [False, True, False]
    assert frame.attrs["unreadable"] == {"bandwidth_used_bytes": 1}
    with pytest.raises(RecordError, match="vm-00001.*bandwidthUsedBytes"):
        frames.vms([vm(0), vm(1, bandwidthUsedBytes=value)], strict=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("007", 7),
        (" 12 ", 12),
        ("999999999999999999", 999_999_999_999_999_999),
        (2**40, 2**40),
        ("1_000", None),
        ("-5", None),
        ("2 TB", None),
        ("99999999999999999999", None),  # past 64 bits
    ],
)
def test_pack_bytes_digit_strings_whole_column_or_one_by_one(text, expected):
    records = [vm(0), vm(1, bandwidthPackBytes=text)]
    frame, warned = _read(records)
    got = frame["bandwidth_pack_bytes"].iloc[1]
    assert (got is pd.NA) if expected is None else (got == expected)
    assert frame["bandwidth_pack_bytes"].iloc[0] == 2_147_483_648_000
    assert bool(warned) == (expected is None)


_PRICES = [
    1,
    1.0,
    True,
    "1",
    " 1 ",
    12.5,
    "12.50",
    None,
    {"amount": 1},
    {"amount": 1.0},
    {"amount": True},
    {"amount": "1", "currency": "EUR"},
    {"currency": "EUR", "amount": "1"},
    {"value": 1250, "currency": "EUR", "precision": 2},
    {"value": 1250, "currency": "EUR", "precision": 2.0},
    {"amount": [1]},
    {"cents": 5},
    {},
    [12.5],
    "twelve",
]


@fuzz(60)
@given(prices=st.lists(st.sampled_from(_PRICES), min_size=1, max_size=12))
def test_each_distinct_price_parsed_once_gives_each_record_its_own_reading(prices):
    records = [
        vm(
            i,
            billing={"priceMonthly": p, "nextRenewalAt": None, "status": "active"},
            plan={"slug": "s-2", "name": "Standard 2"},
        )
        for i, p in enumerate(prices)
    ]
    frame, warned = _read(records)
    failed = []
    for i, price in enumerate(prices):
        try:
            want = parse_money(price, "major")  # the scale the sandbox pins (conftest.py)
        except ValueError:
            want = parse_money(None)._replace(raw=frames._build._raw(price))
            failed.append(i)
        row = frame.iloc[i]
        for part in ("amount", "currency", "raw"):
            got = row[f"price_monthly_{part}"]
            expected = getattr(want, part)
            assert (got is pd.NA) if expected is None else (got == expected), (price, part)
            if part == "amount" and expected is not None:
                assert type(expected) is float
    if failed:
        assert frame.attrs["unreadable"] == {"price_monthly_amount": len(failed)}
        assert f"vm-{failed[0]:05d}" in warned[0]
        with pytest.raises(RecordError, match=f"vm-{failed[0]:05d}"):
            frames.vms(records, strict=True)
    else:
        assert not warned and "unreadable" not in frame.attrs


def test_a_present_billing_price_still_yields_to_a_plan_that_is_not_an_object():
    records = [vm(0), vm(1, plan="s-2")]
    frame = _same(records)
    assert frame["price_monthly_amount"].isna().tolist() == [False, True]
    assert frame.attrs["unreadable"]["price_monthly_amount"] == 1


def test_the_plan_price_is_read_only_where_billing_has_none():
    records = [vm(i) for i in range(4)]
    records[2]["billing"]["priceMonthly"] = None
    records[2]["plan"]["priceMonthly"] = "9.99"
    frame = _same(records)
    assert frame["price_monthly_raw"].tolist() == ["12.5", '"12.50"', '"9.99"', "12.5"]
