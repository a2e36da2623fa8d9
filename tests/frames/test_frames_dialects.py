"""Frames read every form a service may use where the spec says "not shown" (docs/dialects.md):
money in minor units, times with offsets or fractions, renamed delivery fields; and what none of
them is becomes NA, counted and warned, never a guess."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from svcnb import config, frames
from svcnb.assumptions import Pin
from svcnb.frames import AssumptionWarning, RecordError, UnreadableValueWarning, parse_money
from svcnb.money import money_value

from ._samples import account, vm

_PRICE = {"nextRenewalAt": None, "status": "active"}


@pytest.mark.parametrize(
    ("price", "amount", "currency"),
    [
        ({"value": 1250, "currency": "EUR", "precision": 2}, 12.5, "EUR"),
        ({"value": "1999", "currency": "USD", "precision": 2}, 19.99, "USD"),
        ({"value": 7, "currency": "JPY", "precision": 0}, 7.0, "JPY"),
        ({"value": 123456789, "currency": "BHD", "precision": 3}, 123456.789, "BHD"),
        ({"value": -500, "currency": "EUR", "precision": 2}, -5.0, "EUR"),
        ({"amount": 12.5, "currency": "EUR"}, 12.5, "EUR"),
        ({"amount": "0.10"}, 0.1, None),
        (" 9.99 ", 9.99, None),
        (3, 3.0, None),
    ],
)
def test_every_money_form_gives_amount_currency_and_the_raw_value(price, amount, currency):
    got = parse_money(price, "major")
    assert got.amount == amount and got.currency == currency
    row = frames.vms([vm(1, billing={"priceMonthly": price, **_PRICE})]).iloc[0]
    assert row["price_monthly_amount"] == amount
    assert (
        (row["price_monthly_currency"] is pd.NA)
        if currency is None
        else (row["price_monthly_currency"] == currency)
    )
    assert parse_money(price).raw == row["price_monthly_raw"]


@given(st.integers(min_value=-(10**15), max_value=10**15), st.integers(min_value=0, max_value=6))
def test_minor_units_are_exact_to_the_nearest_float(value, precision):
    money = parse_money({"value": value, "currency": "EUR", "precision": precision})
    assert money.amount == float(f"{value}e-{precision}")


@pytest.mark.parametrize(
    "price",
    [
        {"value": 1250, "currency": "EUR"},  # no precision: 12.50 or 1250.00, never guessed
        {"value": 12.5, "currency": "EUR", "precision": 2},
        {"value": 1250, "currency": "EUR", "precision": "2"},
        {"value": True, "currency": "EUR", "precision": 2},
        {"cents": 1250},
        {"amount": "12,50"},
        {"amount": 5, "currency": 978},
        "twelve",
        "NaN",
        [12.5],
        False,
    ],
)
def test_a_money_form_nobody_knows_is_na_with_the_raw_value_kept(price):
    with pytest.raises(ValueError):
        parse_money(price)
    records = [vm(0), vm(1, billing={"priceMonthly": price, **_PRICE}), vm(2)]
    with pytest.warns(UnreadableValueWarning, match=r"price_monthly_amount: 1.*'vm-00001'"):
        frame = frames.vms(records)
    row = frame.iloc[1]
    assert row["price_monthly_amount"] is pd.NA and row["price_monthly_currency"] is pd.NA
    assert money_value(row["price_monthly_raw"]) == price
    assert frame.attrs["unreadable"] == {"price_monthly_amount": 1}
    assert frame["price_monthly_amount"].notna().tolist() == [True, False, True]
    with pytest.raises(RecordError, match="billing.priceMonthly"):
        frames.vms(records, strict=True)


def test_an_unreadable_billing_price_does_not_fall_back_to_the_plan():
    record = vm(1, billing={"priceMonthly": {"cents": 1}, **_PRICE})
    record["plan"]["priceMonthly"] = 10
    with pytest.warns(UnreadableValueWarning):
        row = frames.vms([record]).iloc[0]
    assert row["price_monthly_amount"] is pd.NA


def test_a_balance_in_minor_units_and_an_unknown_one():
    wallet = {
        **account()["wallet"][0],
        "balance": {"value": 15000, "currency": "EUR", "precision": 2},
    }
    frame = frames.wallet(wallet)
    assert frame["balance_amount"].iloc[0] == 150.0 and frame["balance_currency"].iloc[0] == "EUR"
    with pytest.warns(UnreadableValueWarning, match="balance_amount: 1"):
        frame = frames.wallet({**wallet, "balance": {"credits": 3}})
    assert frame["balance_amount"].isna().all()
    assert frame["balance_raw"].iloc[0] == '{"credits":3}'


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-01T00:00:00Z",
        "2026-11-01T00:00:00+00:00",
        "2026-11-01T00:00:00.000Z",
        "2026-11-01T02:00:00+02:00",
        "2026-10-31T19:00:00-05:00",
        "2026-11-01T01:00:00+0100",
        "2026-11-01T00:00:00.000000Z",
        "2026-11-01t00:00:00z",
    ],
)
def test_times_with_any_zone_or_offset_are_read_as_utc(text):
    frame = frames.vms([vm(0, updatedAt=text), vm(1)])
    assert frame["updated_at"].iloc[0] == pd.Timestamp("2026-11-01T00:00:00Z")
    assert str(frame["updated_at"].dt.tz) == "UTC"
    assert "unreadable" not in frame.attrs


def test_fractions_of_a_second_are_kept():
    frame = frames.vms([vm(0, updatedAt="2026-11-01T02:00:00.250+02:00")])
    assert frame["updated_at"].iloc[0] == pd.Timestamp("2026-11-01T00:00:00.250Z")


@pytest.mark.parametrize("text", ["2026-11-01T00:00:00", "2026-11-01", "2026-11-01T00:00:00.5"])
def test_a_time_without_a_zone_is_unreadable_never_guessed(text):
    with pytest.warns(UnreadableValueWarning, match=r"'vm-00001'.*zone") as caught:
        frame = frames.vms([vm(0), vm(1, updatedAt=text)])
    assert frame["updated_at"].isna().tolist() == [False, True]
    assert frame.attrs["unreadable"] == {"updated_at": 1}
    with pytest.raises(RecordError, match="updatedAt"):
        frames.vms([vm(1, updatedAt=text)], strict=True)
    if "T" in text:  # a date-time: its zone is the assumption, named with the line pinning it
        (warning,) = [w for w in caught if w.category is AssumptionWarning]
        assert "times.zone" in str(warning.message)
        assert '[times] zone = "UTC"' in str(warning.message)


@pytest.mark.parametrize(
    ("zone", "utc"),
    [("UTC", "2026-11-01T00:00:00Z"), ("Europe/Berlin", "2026-10-31T23:00:00Z")],
)
def test_a_time_without_a_zone_is_read_in_the_zone_pinned(zone, utc):
    pins = {**config.pins(), "times.zone": Pin(zone, "a test")}  # the sandbox's, and a zone
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadableValueWarning)
        frame = frames.vms([vm(0), vm(1, updatedAt="2026-11-01T00:00:00")], pins=pins)
    assert frame["updated_at"].iloc[1] == pd.Timestamp(utc)
    assert frame.attrs["assumptions"]["times.zone"] == {"updatedAt": "pinned"}
    # an hour a clock change skips or repeats is no one instant: NA, never a guess
    if zone != "UTC":
        with pytest.warns(UnreadableValueWarning, match="no one instant"):
            gap = frames.vms([vm(1, updatedAt="2026-03-29T02:30:00")], pins=pins)
        assert gap["updated_at"].isna().all()


def test_the_fast_path_agrees_on_offsets(monkeypatch):
    records = [vm(i, updatedAt=f"2026-11-01T0{i}:00:00+0{i}:00") for i in range(5)]
    fast = frames.vms(records)
    monkeypatch.setattr("svcnb.frames._build.arrow_columns", lambda resource, records: {})
    pd.testing.assert_frame_equal(fast, frames.vms(records))
    assert fast["updated_at"].nunique() == 1


_DELIVERY = account()["deliveries"][0]
_CANONICAL = {
    "statusCode": 500,
    "success": False,
    "attempts": 2,
    "eventId": "evt-1",
    "createdAt": "2026-11-01T00:00:00Z",
    "lastAttemptAt": "2026-11-01T00:00:10Z",
}
_SYNONYMS = {
    "statusCode": ["status_code", "responseStatus", "httpStatus", "responseCode"],
    "success": ["ok", "delivered", "succeeded", "successful"],
    "attempts": ["attempt", "attemptCount", "tries"],
    "eventId": ["event_id"],
    "createdAt": ["created_at"],
    "lastAttemptAt": ["last_attempt_at", "updatedAt"],
}


def _delivery(names: dict[str, str]) -> dict:
    record = {k: v for k, v in _DELIVERY.items() if k not in _CANONICAL}
    for canonical, value in _CANONICAL.items():
        record[names.get(canonical, canonical)] = value
    return record


@given(st.fixed_dictionaries({k: st.sampled_from([k, *v]) for k, v in _SYNONYMS.items()}))
def test_delivery_fields_are_read_under_any_of_their_names(names):
    got = frames.deliveries([_delivery(names)])
    want = frames.deliveries([_delivery({})])
    pd.testing.assert_frame_equal(got, want)
    assert want["success"].iloc[0] is False or want["success"].iloc[0] == False  # noqa: E712
    assert want["status_code"].iloc[0] == 500 and want["attempts"].iloc[0] == 2


def test_a_delivery_field_none_of_the_names_gives_is_na_never_false_or_zero():
    record = _delivery({"success": "passed", "attempts": "count", "statusCode": "result"})
    frame = frames.deliveries([record])
    row = frame.iloc[0]
    assert row["success"] is pd.NA and row["attempts"] is pd.NA and row["status_code"] is pd.NA
    assert row["event_id"] == "evt-1"
    assert frame.dtypes["success"] == "boolean" and frame.dtypes["attempts"] == "Int64"


# --- delivery keys svcnb cannot place ------------------------------------------------------


def _deliveries_warned(records: list[dict]) -> tuple[pd.DataFrame, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = frames.deliveries(records)
    return frame, [w for w in caught if issubclass(w.category, frames.UnplacedKeyWarning)]


@pytest.mark.parametrize(
    ("key", "value", "blanked"),
    [
        ("passed", True, {"success", "status_code"}),
        ("result", 500, {"success", "status_code"}),
        ("outcome", "failed", {"success", "status_code"}),
        ("count", 2, {"attempts"}),
        ("tries_made", 2, {"attempts"}),
        ("sentAt", "2026-11-01T00:00:30Z", {"created_at", "last_attempt_at"}),
        ("timestamp", 1_793_491_230, {"created_at", "last_attempt_at"}),
        ("response", {"status": 503, "body": "busy"}, {"success", "status_code"}),
        ("zq", None, {"success", "status_code", "attempts", "created_at", "last_attempt_at"}),
    ],
)
def test_a_key_that_could_be_a_delivery_field_makes_that_field_unknown(key, value, blanked):
    # the record also says every field under its known name: the unplaced key may contradict it
    records = [{**_delivery({}), "id": f"d{i}", key: value} for i in range(5)]
    records.append({**_delivery({}), "id": "plain"})
    frame, told = _deliveries_warned(records)
    assert len(told) == 1 and repr(key) in str(told[0].message)
    with_key = frame[frame["id"] != "plain"]
    for column in ("status_code", "success", "attempts", "created_at", "last_attempt_at"):
        if column in blanked:
            assert with_key[column].isna().all(), column  # never False or 0
        else:
            assert with_key[column].notna().all(), column
    plain = frame[frame["id"] == "plain"].iloc[0]
    assert plain["success"] == False and plain["attempts"] == 2  # noqa: E712
    assert frame.attrs["unplaced"] == {
        key: [c for c in frames.SCHEMAS["deliveries"] if c in blanked]
    }
    assert all(frame.attrs["unreadable"][c] == 5 for c in blanked)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("requestBody", '{"id": "evt-1"}'),
        ("responseHeaders", {"Content-Type": "text/plain", "Retry-After": "30"}),
        ("request", {"headers": {"X-Service-Event": "vm.stopped"}, "body": "{}"}),
        ("attemptId", "att-9"),
        ("webhook_id", "wh-1"),
        ("durationMs", 812),
        ("failureReason", "receiver answered 500"),
        ("eventType", "vm.stopped"),
        ("signature", "sha256=00"),
    ],
)
def test_keys_that_are_clearly_none_of_the_fields_change_nothing(key, value):
    record = {**_delivery({}), key: value}
    frame, told = _deliveries_warned([record])
    assert told == []
    pd.testing.assert_frame_equal(frame, frames.deliveries([_delivery({})]))


def test_one_warning_per_frame_names_every_unplaced_key():
    records = [
        {**_delivery({}), "id": f"d{i}", "tries_made": 3, "outcome": "ok"} for i in range(200)
    ]
    _, told = _deliveries_warned(records)
    assert len(told) == 1
    message = str(told[0].message)
    assert "'outcome' in 200 record(s)" in message and "'tries_made' in 200 record(s)" in message


def test_strict_stops_at_a_key_it_cannot_place():
    with pytest.raises(frames.RecordError, match="tries_made"):
        frames.deliveries([{**_delivery({}), "tries_made": 3}], strict=True)


def test_the_clients_delivery_keys_are_the_ones_the_frame_reads():
    from svcnb.client._records import SCHEMAS as CLIENT
    from svcnb.frames import PLACED

    assert CLIENT["delivery"][0] == PLACED
