from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from _webhooks_support import SECRET, event_body, post, sign, signed_headers

from svcnb.webhooks import Receiver

CREATED = datetime(2026, 11, 1, tzinfo=UTC)


class ManualClock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return ManualClock(CREATED + timedelta(seconds=2))


@pytest.fixture
def receiver(tmp_path, clock):
    return Receiver(SECRET, tmp_path / "store", tolerance=300, clock=clock)


def stored(receiver):
    return receiver.log.frame()


def test_signed_event_is_acknowledged_and_logged(receiver):
    body = event_body("evt_1", data={"vmId": "vm_7", "status": "stopped"})
    response = post(receiver, body, signed_headers(body, "dlv_1"))
    assert response.status_code == 200
    assert response.json() == {"received": True, "duplicate": False, "eventId": "evt_1"}
    row = stored(receiver).iloc[0]
    assert row["event_id"] == "evt_1" and row["delivery_id"] == "dlv_1"
    assert row["type"] == "vm.stopped" and row["event_header"] == "vm.stopped"
    assert row["received_at"] == CREATED + timedelta(seconds=2)
    assert row["age_seconds"] == 2.0 and not row["possible_replay"]
    assert json.loads(row["data"]) == {"vmId": "vm_7", "status": "stopped"}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-Service-Signature": "sha256=" + "0" * 64},
        {"X-Service-Signature": sign(event_body(), "whsec_someone_else")},
        {"X-Service-Signature": sign(event_body()).upper()},
        {"X-Service-Signature": "hello"},
    ],
    ids=["unsigned", "zeros", "other-secret", "uppercase", "garbage"],
)
def test_unsigned_or_badly_signed_gets_401_and_nothing_is_kept(receiver, headers):
    headers = {**headers, "X-Service-Delivery-Id": "dlv_1", "X-Service-Event": "vm.stopped"}
    response = post(receiver, event_body(), headers)
    assert response.status_code == 401
    assert "X-Service-Signature" in response.json()["error"]
    assert not (receiver.log.path).exists()
    # nothing of it is remembered either: the genuine delivery afterwards is accepted
    assert (
        post(receiver, event_body(), signed_headers(event_body(), "dlv_1")).json()["duplicate"]
        is False
    )


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "JSON list"),
        (b'{"type": "vm.stopped", "createdAt": "2026-11-01T00:00:00Z", "data": {}}', "'id'"),
        (b'{"id": "", "type": "x", "createdAt": "2026-11-01T00:00:00Z", "data": {}}', "'id'"),
        (b'{"id": "e", "createdAt": "2026-11-01T00:00:00Z", "data": {}}', "'type'"),
        (b'{"id": "e", "type": "x", "data": {}}', "'createdAt'"),
        (b'{"id": "e", "type": "x", "createdAt": "yesterday", "data": {}}', "ISO 8601"),
        (b'{"id": "e", "type": "x", "createdAt": "2026-11-01T00:00:00Z"}', "'data'"),
        (b"[" * 100_000, "not JSON"),
    ],
    ids=[
        "text",
        "list",
        "no-id",
        "empty-id",
        "no-type",
        "no-created",
        "bad-date",
        "no-data",
        "deep",
    ],
)
def test_signed_body_that_is_not_an_event_gets_400_and_is_not_kept(receiver, body, says):
    response = post(receiver, body, {"X-Service-Signature": sign(body)})
    assert response.status_code == 400
    assert says in response.json()["error"]
    assert len(stored(receiver)) == 0


def test_same_delivery_twice_is_logged_once(receiver):
    body = event_body()
    first = post(receiver, body, signed_headers(body, "dlv_1"))
    again = post(receiver, body, signed_headers(body, "dlv_1"))
    assert first.status_code == again.status_code == 200
    assert again.json()["duplicate"] is True
    assert len(stored(receiver)) == 1
    assert receiver.stats["accepted"] == 1 and receiver.stats["duplicates"] == 1


def test_retry_with_new_delivery_id_is_deduplicated_by_signed_event_id(receiver):
    body = event_body("evt_1")
    post(receiver, body, signed_headers(body, "dlv_1"))
    retry = post(receiver, body, signed_headers(body, "dlv_2"))
    assert retry.status_code == 200 and retry.json()["duplicate"] is True
    assert stored(receiver)["delivery_id"].tolist() == ["dlv_1"]


def test_reused_delivery_id_with_another_event_is_not_stored_again(receiver):
    # the delivery id is unsigned; a replayed header must not smuggle a second copy in
    post(receiver, event_body("evt_1"), signed_headers(event_body("evt_1"), "dlv_1"))
    response = post(receiver, event_body("evt_2"), signed_headers(event_body("evt_2"), "dlv_1"))
    assert response.json()["duplicate"] is True
    assert stored(receiver)["event_id"].tolist() == ["evt_1"]


def test_event_without_delivery_id_is_deduplicated_by_event_id(receiver):
    body = event_body()
    for _ in range(2):
        assert post(receiver, body, {"X-Service-Signature": sign(body)}).status_code == 200
    frame = stored(receiver)
    assert len(frame) == 1 and frame["delivery_id"].isna().all()


@pytest.mark.parametrize(("age", "flagged"), [(299, False), (300, False), (301, True)])
def test_old_events_are_stored_but_flagged_as_possible_replay(receiver, clock, age, flagged):
    clock.now = CREATED + timedelta(seconds=age)
    body = event_body()
    assert post(receiver, body, signed_headers(body)).status_code == 200
    row = stored(receiver).iloc[0]
    assert bool(row["possible_replay"]) is flagged
    assert row["age_seconds"] == age


def test_created_at_with_offset_is_compared_in_utc(receiver, clock):
    clock.now = datetime(2026, 11, 1, 0, 1, tzinfo=UTC)
    body = event_body(created_at="2026-11-01T01:00:00+01:00")  # = 00:00 UTC
    post(receiver, body, signed_headers(body))
    row = stored(receiver).iloc[0]
    assert row["age_seconds"] == 60.0
    assert row["created_at"] == CREATED


def test_type_comes_from_the_signed_body_not_the_unsigned_header(receiver):
    body = event_body(type_="vm.stopped")
    headers = {**signed_headers(body), "X-Service-Event": "billing.payment_received"}
    assert post(receiver, body, headers).status_code == 200
    row = stored(receiver).iloc[0]
    assert row["type"] == "vm.stopped"
    assert row["event_header"] == "billing.payment_received"


def test_two_delivery_id_headers_are_refused(receiver):
    body = event_body()
    headers = [
        ("X-Service-Signature", sign(body)),
        ("X-Service-Delivery-Id", "dlv_1"),
        ("X-Service-Delivery-Id", "dlv_2"),
    ]
    assert post(receiver, body, headers).status_code == 400
    assert len(stored(receiver)) == 0


def test_oversized_body_gets_413_unread(tmp_path, clock):
    receiver = Receiver(SECRET, tmp_path, clock=clock, max_body_bytes=1000)
    body = event_body(data={"pad": "x" * 2000})
    assert post(receiver, body, signed_headers(body)).status_code == 413
    assert not receiver.log.path.exists()


def test_only_post_is_handled_and_any_path_works(receiver):
    body = event_body()
    assert post(receiver, body, signed_headers(body), path="/any/path/x").status_code == 200

    async def get():
        transport = httpx.ASGITransport(app=receiver)
        async with httpx.AsyncClient(transport=transport, base_url="http://r.test") as c:
            return await c.get("/hook")

    assert asyncio.run(get()).status_code == 405


def test_unwritable_store_answers_503_so_the_service_retries(tmp_path, clock):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store folder should be")
    receiver = Receiver(SECRET, blocker, clock=clock)
    body = event_body()
    response = post(receiver, body, signed_headers(body))
    assert response.status_code == 503
    assert "will retry" in response.json()["error"]
    assert receiver.stats["store_errors"] == 1


def test_acknowledged_event_is_already_on_disk(receiver):
    body = event_body()
    post(receiver, body, signed_headers(body))
    # read back through the file alone, as a process started after a crash would
    lines = receiver.log.path.read_bytes().splitlines()
    assert [json.loads(line)["event_id"] for line in lines] == ["evt_1"]


def test_secret_never_shown_or_written(receiver):
    body = event_body()
    post(receiver, body, signed_headers(body))
    post(receiver, body, {"X-Service-Signature": sign(body, "whsec_wrong")})
    assert SECRET not in repr(receiver)
    text = receiver.log.path.read_text()
    assert SECRET not in text
    assert sign(body)[7:] not in text and "sha256=" not in text


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"secret": ""}, ValueError),
        ({"secret": None}, ValueError),
        ({"secret": 123}, TypeError),
        ({"tolerance": -1}, ValueError),
    ],
)
def test_bad_construction_is_refused(tmp_path, kwargs, error):
    args = {"secret": SECRET, "store_path": tmp_path, **kwargs}
    with pytest.raises(error):
        Receiver(**args)


def test_sender_hanging_up_mid_body_is_not_a_server_error(receiver):
    body = event_body()
    messages = [
        {"type": "http.request", "body": body[:10], "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent = []

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/hook",
        "headers": [(b"x-service-signature", sign(body).encode())],
        "query_string": b"",
    }
    asyncio.run(receiver(scope, receive, send))
    assert sent[0]["status"] == 400
    assert not receiver.log.path.exists()
