"""Random requests against the receiver: never a 5xx, never an event stored without a valid
signature, and every correctly signed new event stored exactly once."""

from __future__ import annotations

import hashlib
import hmac
import json
import tempfile
from datetime import UTC, datetime

from _fuzz import fuzz
from _webhooks_support import SECRET, raw_post
from hypothesis import given
from hypothesis import strategies as st

from svcnb.webhooks import Receiver

NOW = datetime(2026, 11, 1, tzinfo=UTC)

header_text = st.binary(max_size=80).filter(lambda b: b"\r" not in b and b"\n" not in b)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
events = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=12),
        "type": st.sampled_from(["vm.stopped", "vm.created", "billing.low_balance"]),
        # the whole calendar, with offsets: the edges must get a 400, never a 500
        "createdAt": st.one_of(
            st.datetimes(
                min_value=datetime(2000, 1, 1),
                max_value=datetime(2100, 1, 1),
                timezones=st.just(UTC),
            ).map(lambda d: d.isoformat().replace("+00:00", "Z")),
            st.datetimes(timezones=st.timezones() | st.none()).map(lambda d: d.isoformat()),
            st.sampled_from(
                ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "1677-09-21T00:00:00Z"]
            ),
        ),
        "data": json_values,
    },
    optional={"extra": json_values},
)
bodies = st.one_of(
    st.binary(max_size=300),
    events.map(lambda e: json.dumps(e).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
)


# the calendar the receiver's refusal names ("outside 1678..2261"): inside pandas' nanosecond range
EARLIEST = datetime(1678, 1, 1, tzinfo=UTC)
LATEST = datetime(2261, 12, 31, tzinfo=UTC)


def storable(created: str) -> bool:
    try:
        moment = datetime.fromisoformat(created)
        moment = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError):
        return False
    return EARLIEST <= moment <= LATEST


def true_signature(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


@st.composite
def signatures(draw, body: bytes):
    good = true_signature(body)
    return draw(
        st.sampled_from(
            [
                None,
                good,
                good.upper(),
                good[:-1],
                good + "0",
                " " + good + " ",
                "sha256=" + hmac.new(b"whsec_wrong", body, hashlib.sha256).hexdigest(),
                true_signature(body + b"x"),
                good.replace("sha256=", "sha1="),
            ]
        )
        | header_text.map(lambda b: b.decode("latin-1"))
        | st.binary(min_size=32, max_size=32).map(lambda b: "sha256=" + b.hex())
    )


@st.composite
def requests(draw):
    body = draw(bodies)
    signature = draw(signatures(body))
    headers = draw(st.lists(st.tuples(header_text, header_text), max_size=4))
    if signature is not None:
        name = draw(
            st.sampled_from(["X-Service-Signature", "x-service-signature", "X-SERVICE-SIGNATURE"])
        )
        headers.append((name.encode(), signature.encode("latin-1")))
    for name in (b"X-Service-Delivery-Id", b"X-Service-Event"):
        if draw(st.booleans()):
            headers.append((name, draw(header_text)))
    draw(st.randoms()).shuffle(headers)
    return body, headers


def is_valid(body: bytes, headers) -> bool:
    values = [v for k, v in headers if k.decode("latin-1").lower() == "x-service-signature"]
    return len(values) == 1 and values[0].strip(b" \t") == true_signature(body).encode()


def lines(receiver) -> int:
    path = receiver.log.path
    return path.read_bytes().count(b"\n") if path.exists() else 0


@fuzz(200)
@given(batch=st.lists(requests(), min_size=1, max_size=5))
def test_random_requests_never_5xx_and_only_valid_signatures_are_stored(batch):
    with tempfile.TemporaryDirectory() as store:
        receiver = Receiver(SECRET, store, clock=lambda: NOW)
        expected = []
        for body, headers in batch:
            before = lines(receiver)
            response = raw_post(receiver, body, headers)
            assert response.status_code < 500, response.text
            if not is_valid(body, headers):
                assert response.status_code in (401, 413)
                assert lines(receiver) == before
                continue
            if response.status_code == 200 and not response.json()["duplicate"]:
                expected.append(json.loads(body)["id"])
                assert lines(receiver) == before + 1
            else:
                assert lines(receiver) == before
        final = receiver.log.frame()
        assert final["event_id"].tolist() == expected
        assert final["event_id"].is_unique


@fuzz(100)
@given(event=events, delivery=header_text)
def test_every_correctly_signed_event_is_stored_once(event, delivery):
    body = json.dumps(event).encode()
    headers = [
        (b"X-Service-Signature", true_signature(body).encode()),
        (b"X-Service-Delivery-Id", delivery),
    ]
    with tempfile.TemporaryDirectory() as store:
        receiver = Receiver(SECRET, store, clock=lambda: NOW)
        first = raw_post(receiver, body, headers)
        second = raw_post(receiver, body, headers)
        if not storable(event["createdAt"]):
            # outside the calendar the log can hold: refused as a bad payload, nothing kept
            assert first.status_code == second.status_code == 400
            assert "createdAt" in first.json()["error"]
            if "outside" in first.json()["error"]:  # a moment read, beyond what the log holds
                assert f"{EARLIEST.year}..{LATEST.year}" in first.json()["error"]
            assert receiver.log.frame().empty
            return
        assert first.status_code == 200 and not first.json()["duplicate"]
        assert second.status_code == 200 and second.json()["duplicate"]
        frame = receiver.log.frame()
        assert frame["event_id"].tolist() == [event["id"]]
        assert json.loads(frame.loc[0, "data"]) == event["data"]
