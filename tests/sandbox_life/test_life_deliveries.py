"""Signed webhook deliveries from a sandbox on loopback to a local HTTPS receiver (trustme)."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from _life_fleet import iso, parse_iso
from _life_receiver import Receiver, https_receiver
from _loopback import loopback_client

from svcnb.sandbox import Sandbox, wait_idle


@pytest.fixture
def receiver(tmp_path) -> Iterator[Receiver]:
    with https_receiver(tmp_path) as r:
        yield r


@pytest.fixture
def sb(make_sandbox, receiver: Receiver) -> Sandbox:
    """A sandbox without VMs that trusts the receiver's CA, its seeded subscriptions removed."""
    sandbox = make_sandbox(vms=0, seed=7, time_scale=0.0, ca_bundle=receiver.ca_path)
    with sandbox.state.lock:
        sandbox.state.backends.webhooks.clear()
    return sandbox


def api(sb: Sandbox) -> httpx.Client:
    return loopback_client(sb.api_root, headers={"x-api-key": sb.tokens["admin"]})


def subscribe(sb: Sandbox, url: str, events: list[str]) -> dict:
    with api(sb) as c:
        answer = c.post("/webhooks", json={"url": url, "events": events, "description": "test"})
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]


def deliveries(sb: Sandbox, webhook_id: str) -> list[dict]:
    assert wait_idle(sb.state, timeout=20)
    with api(sb) as c:
        answer = c.get(f"/webhooks/{webhook_id}/deliveries", params={"perPage": 100})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def webhook(sb: Sandbox, webhook_id: str) -> dict:
    assert wait_idle(sb.state, timeout=20)
    with api(sb) as c:
        items = c.get("/webhooks").json()["data"]
    return next(w for w in items if w["id"] == webhook_id)


def settle(sb: Sandbox) -> None:
    assert wait_idle(sb.state, timeout=20)


def test_every_delivery_is_signed_over_the_raw_body_and_matches_its_record(sb, receiver):
    sub = subscribe(sb, receiver.url, ["vm.stopped", "ticket.reply", "billing.low_balance"])
    sent = [
        sb.control.emit("vm.stopped", {"vm": {"id": "vm_x", "name": "wé€b-1"}}),
        sb.control.emit("ticket.reply", {"ticketId": "t_1", "message": "hello"}),
        sb.control.emit("vm.started", {"vm": {"id": "vm_x"}}),  # not subscribed
        sb.control.emit("billing.low_balance", {"balance": "1.00", "required": "9.00"}),
    ]
    seen = receiver.wait_for(3)
    records = deliveries(sb, sub["id"])
    assert receiver.count() == 3
    assert len(records) == 3

    for got, event, record in zip(seen, [sent[0], sent[1], sent[3]], records, strict=True):
        expected = (
            "sha256=" + hmac.new(sub["secret"].encode(), got.body, hashlib.sha256).hexdigest()
        )
        assert hmac.compare_digest(got.headers["x-service-signature"], expected)
        assert json.loads(got.body) == event  # {id, type, createdAt, data}, nothing else
        assert got.headers["x-service-event"] == event["type"]
        assert got.headers["content-type"] == "application/json"
        assert record["id"] == got.headers["x-service-delivery-id"]
        assert (record["eventId"], record["event"]) == (event["id"], event["type"])
        assert (record["statusCode"], record["success"], record["attempts"]) == (200, True, 1)
        assert record["url"] == receiver.url
        assert record["error"] is None
        assert record["createdAt"] == record["lastAttemptAt"] == event["createdAt"]
    assert len({got.headers["x-service-delivery-id"] for got in seen}) == 3
    assert webhook(sb, sub["id"])["consecutiveFailures"] == 0


def test_failed_attempts_are_retried_10_then_20_seconds_later_on_the_clock(sb, receiver):
    receiver.answers = [500]
    sub = subscribe(sb, receiver.url, ["vm.stopped"])
    event = sb.control.emit("vm.stopped", {"vm": {"id": "vm_x"}})
    start = parse_iso(event["createdAt"])
    receiver.wait_for(1)

    for seconds, expected in [(9, 1), (1, 2), (19, 2), (1, 3), (3600, 3)]:
        sb.control.advance(seconds)
        settle(sb)
        assert receiver.count() == expected, f"after advancing {seconds} s"

    records = deliveries(sb, sub["id"])
    assert [r["attempts"] for r in records] == [1, 2, 3]
    assert [r["lastAttemptAt"] for r in records] == [
        iso(start),
        iso(start + timedelta(seconds=10)),
        iso(start + timedelta(seconds=30)),
    ]
    assert {r["createdAt"] for r in records} == {event["createdAt"]}
    assert [r["statusCode"] for r in records] == [500, 500, 500]
    assert not any(r["success"] for r in records)
    assert all(r["error"] == "receiver answered 500" for r in records)
    # every attempt carries its own delivery id, and the records name exactly those sent
    sent_ids = [got.headers["x-service-delivery-id"] for got in receiver.wait_for(3)]
    assert [r["id"] for r in records] == sent_ids
    assert len(set(sent_ids)) == 3
    # the same bytes, the same signature, on every attempt
    assert len({(got.body, got.headers["x-service-signature"]) for got in receiver.seen}) == 1
    assert webhook(sb, sub["id"])["consecutiveFailures"] == 3


def test_a_retry_that_succeeds_ends_the_delivery_and_resets_the_failure_count(sb, receiver):
    receiver.answers = [503, 204]
    sub = subscribe(sb, receiver.url, ["ticket.reply"])
    sb.control.emit("ticket.reply", {"ticketId": "t_9"})
    receiver.wait_for(1)
    settle(sb)
    assert webhook(sb, sub["id"])["consecutiveFailures"] == 1
    sb.control.advance(120)
    settle(sb)
    assert receiver.count() == 2
    records = deliveries(sb, sub["id"])
    assert [(r["attempts"], r["statusCode"], r["success"]) for r in records] == [
        (1, 503, False),
        (2, 204, True),
    ]
    assert webhook(sb, sub["id"])["consecutiveFailures"] == 0


def test_disabled_after_exactly_50_consecutive_failures_and_enabled_again_by_patch(sb, receiver):
    receiver.answers = [500]
    sub = subscribe(sb, receiver.url, ["vm.stopped"])
    # 16 events fail all three attempts (48); the 17th fails twice more: 50 in a row
    for n in range(17):
        sb.control.emit("vm.stopped", {"vm": {"id": f"vm_{n}"}})
        sb.control.advance(15)
        settle(sb)
        sb.control.advance(15)
        settle(sb)
        if n < 16:
            assert webhook(sb, sub["id"])["isActive"] is True
    state = webhook(sb, sub["id"])
    assert state["isActive"] is False
    assert state["consecutiveFailures"] == 50
    assert receiver.count() == 50
    records = deliveries(sb, sub["id"])
    assert len(records) == 50
    assert not any(r["success"] for r in records)
    assert [r["id"] for r in records] == [g.headers["x-service-delivery-id"] for g in receiver.seen]

    # disabled: nothing more is sent
    sb.control.emit("vm.stopped", {"vm": {"id": "vm_late"}})
    sb.control.advance(60)
    settle(sb)
    assert receiver.count() == 50

    receiver.answers = [200]
    with api(sb) as c:
        answer = c.patch(f"/webhooks/{sub['id']}", json={"isActive": True})
    assert answer.status_code == 200, answer.text
    event = sb.control.emit("vm.stopped", {"vm": {"id": "vm_back"}})
    seen = receiver.wait_for(51)
    assert json.loads(seen[-1].body)["id"] == event["id"]
    settle(sb)
    again = webhook(sb, sub["id"])
    assert (again["isActive"], again["consecutiveFailures"]) == (True, 0)
    assert deliveries(sb, sub["id"])[-1]["success"] is True


def test_49_failures_then_a_success_keep_the_subscription_active(sb, receiver):
    receiver.answers = [500] * 49 + [200]
    sub = subscribe(sb, receiver.url, ["vm.stopped"])
    for n in range(17):
        sb.control.emit("vm.stopped", {"vm": {"id": f"vm_{n}"}})
        sb.control.advance(30)
        settle(sb)
    assert receiver.count() == 50  # the 50th attempt succeeded, so the 17th event ended there
    state = webhook(sb, sub["id"])
    assert (state["isActive"], state["consecutiveFailures"]) == (True, 0)


def test_only_loopback_receivers_are_called(sb, receiver):
    sub = subscribe(sb, "https://hooks.example.com/svc", ["vm.stopped"])
    sb.control.emit("vm.stopped", {"vm": {"id": "vm_x"}})
    sb.control.advance(60)
    records = deliveries(sb, sub["id"])
    assert [(r["attempts"], r["statusCode"], r["success"]) for r in records] == [
        (1, None, False),
        (2, None, False),
        (3, None, False),
    ]
    assert "only delivers webhooks to loopback" in records[0]["error"]
    assert "hooks.example.com" in records[0]["error"]
    assert receiver.count() == 0


def test_a_receiver_whose_certificate_is_not_trusted_is_a_failed_attempt(make_sandbox, receiver):
    sb = make_sandbox(vms=0, seed=7, time_scale=0.0)  # no ca_bundle
    sub = subscribe(sb, receiver.url.replace("127.0.0.1", "localhost"), ["ticket.reply"])
    sb.control.emit("ticket.reply", {"ticketId": "t_1"})
    (record,) = deliveries(sb, sub["id"])
    assert record["success"] is False
    assert record["statusCode"] is None
    assert "certificate" in record["error"]
    assert receiver.count() == 0


def test_an_answer_later_than_the_timeout_is_a_failed_attempt(sb, receiver, monkeypatch):
    from svcnb.sandbox import _deliveries

    monkeypatch.setattr(_deliveries, "TIMEOUT_SECONDS", 0.3)  # the real limit is 15 s
    receiver.delay = 1.0
    sub = subscribe(sb, receiver.url, ["ticket.reply"])
    sb.control.emit("ticket.reply", {"ticketId": "t_1"})
    (record,) = deliveries(sb, sub["id"])
    assert (record["statusCode"], record["success"]) == (None, False)
    assert record["error"] == "timed out after 0.3 s"


def test_attempts_fall_due_in_clock_order_so_a_burst_still_stops_at_exactly_50(sb, receiver):
    receiver.answers = [500]
    sub = subscribe(sb, receiver.url, ["vm.stopped"])
    for n in range(20):  # 60 attempts would fall due; the 50th disables the subscription
        sb.control.emit("vm.stopped", {"vm": {"id": f"vm_{n}"}})
    sb.control.advance(3600)
    records = deliveries(sb, sub["id"])
    assert receiver.count() == len(records) == 50
    # all first attempts, then all second attempts, then third attempts of the first ten events
    assert [r["attempts"] for r in records] == [1] * 20 + [2] * 20 + [3] * 10
    state = webhook(sb, sub["id"])
    assert (state["isActive"], state["consecutiveFailures"]) == (False, 50)


def test_a_reset_drops_what_the_old_account_still_had_to_deliver(sb, receiver):
    receiver.delay = 0.3
    sub = subscribe(sb, receiver.url, ["ticket.reply"])
    from svcnb.sandbox._deliveries import _COURIERS

    sent = {sb.control.emit("ticket.reply", {"n": n})["id"] for n in range(5)}
    old_courier = _COURIERS[sb.state]
    sb.control.reset(seed=7, vms=0)
    assert old_courier.wait_idle(timeout=20)  # the old account's worker has finished its queue
    assert receiver.count() <= 1  # at most the attempt already on the wire
    with sb.state.lock:
        assert sub["id"] not in sb.state.backends.webhooks.webhooks
        assert not [d for d in sb.state.backends.webhooks.deliveries if d["eventId"] in sent]
