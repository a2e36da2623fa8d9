"""Idempotency-Key (DESIGN section 3): replay, mismatch, in flight, per token, 24 h lifetime."""

from __future__ import annotations

import threading

from sandbox_support import failure

HOOK = {"url": "https://receiver.example.com/hook", "events": ["vm.stopped"]}


def _count(api) -> int:
    return len(api.data("/webhooks"))


def test_replay_returns_the_stored_answer_and_creates_nothing_more(api):
    before = _count(api)
    first = api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-1"})
    again = api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-1"})
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert _count(api) == before + 1


def test_replay_of_a_stop_does_not_stop_twice(api, sandbox):
    vm = next(v for v in api.data("/vms", params={"perPage": 100}) if v["status"] == "running")
    first = api.post(f"/vms/{vm['id']}/stop", headers={"Idempotency-Key": "stop-1"})
    again = api.post(f"/vms/{vm['id']}/stop", headers={"Idempotency-Key": "stop-1"})
    assert first.status_code == again.status_code == 202
    assert again.json() == first.json()
    without_key = api.post(f"/vms/{vm['id']}/stop")
    failure(without_key, 409)  # a new request (no key) sees the VM already stopping


def test_failures_below_500_are_replayed_too(api):
    vm = next(v for v in api.data("/vms", params={"perPage": 100}) if v["status"] == "stopped")
    first = api.post(f"/vms/{vm['id']}/stop", headers={"Idempotency-Key": "k-409"})
    again = api.post(f"/vms/{vm['id']}/stop", headers={"Idempotency-Key": "k-409"})
    failure(first, 409)
    assert again.content == first.content and again.headers["idempotent-replayed"] == "true"


def test_same_key_with_another_body_is_422(api):
    assert api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-2"}).is_success
    before = _count(api)
    other = {**HOOK, "description": "different"}
    error = failure(api.post("/webhooks", json=other, headers={"Idempotency-Key": "k-2"}), 422)
    assert error.startswith("Idempotency-Key")
    assert _count(api) == before


def test_same_key_on_another_path_is_422(api):
    vms = [v for v in api.data("/vms", params={"perPage": 100}) if v["status"] == "running"]
    assert api.post(f"/vms/{vms[0]['id']}/stop", headers={"Idempotency-Key": "k-3"}).is_success
    failure(api.post(f"/vms/{vms[1]['id']}/stop", headers={"Idempotency-Key": "k-3"}), 422)
    assert api.data(f"/vms/{vms[1]['id']}")["status"] == "running"


def test_key_order_and_spacing_of_the_body_do_not_matter(api):
    first = api.post(
        "/webhooks",
        content=b'{"url":"https://a.example/h","events":["vm.stopped"]}',
        headers={"Idempotency-Key": "k-4"},
    )
    again = api.post(
        "/webhooks",
        content=b'{ "events": ["vm.stopped"], "url": "https://a.example/h" }',
        headers={"Idempotency-Key": "k-4"},
    )
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.content == first.content


def test_same_key_while_the_first_is_in_flight_is_409(api, sandbox):
    sandbox.control.set_faults(latencyMs=600)
    results: list = []

    def send() -> None:
        results.append(api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-5"}))

    first = threading.Thread(target=send)
    first.start()
    threading.Event().wait(0.2)
    second = api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-5"})
    first.join()
    assert "still being processed" in failure(second, 409)
    assert results[0].status_code == 201


def test_keys_are_kept_per_token(api, sandbox):
    other = sandbox.control.create_token("second", ["webhooks:write", "webhooks:read"])["secret"]
    before = _count(api)
    a = api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "shared"})
    b = api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "shared"}, token=other)
    assert a.status_code == b.status_code == 201
    assert "idempotent-replayed" not in b.headers
    assert _count(api) == before + 2


def test_keys_expire_after_24_hours_of_sandbox_time(api, sandbox):
    first = api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-6"})
    sandbox.control.advance(24 * 3600 - 1)
    assert (
        api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-6"}).headers[
            "idempotent-replayed"
        ]
        == "true"
    )
    sandbox.control.advance(1)
    fresh = api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-6"})
    assert fresh.status_code == 201 and "idempotent-replayed" not in fresh.headers
    assert fresh.json()["data"]["id"] != first.json()["data"]["id"]


def test_key_length_bounds(api):
    assert api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k" * 255}).is_success
    error = failure(api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k" * 256}), 422)
    assert error.startswith("Idempotency-Key")


def test_server_errors_are_not_stored_so_a_retry_runs_again(api, sandbox):
    sandbox.control.set_faults(errorRate=1.0, errorRoutes=["POST /webhooks"])
    failure(api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-7"}), 500)
    sandbox.control.set_faults()
    retry = api.post("/webhooks", json=HOOK, headers={"Idempotency-Key": "k-7"})
    assert retry.status_code == 201 and "idempotent-replayed" not in retry.headers
