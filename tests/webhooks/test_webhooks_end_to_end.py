"""The receiver against the sandbox over HTTPS on loopback, driven through the svcnb client.

trustme makes a CA and a certificate for 127.0.0.1; the receiver serves it under uvicorn in a
thread; the sandbox is started with ``ca_bundle`` so its deliveries trust that CA. The sandbox
clock is frozen (only ``advance`` moves it), and the receiver judges event age by it through
``SandboxClock``: by the machine's clock every sandbox event would be weeks old.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import time
from datetime import datetime, timedelta

import httpx
import pytest
from _webhooks_support import FailFirstAnswers, Recorder, needs_openssl, openssl_signature

import svcnb
from svcnb.sandbox import SandboxClock, wait_idle
from svcnb.sandbox import serve as serve_sandbox
from svcnb.store import EventLog, Store
from svcnb.webhooks import Receiver, free_port, serve

# more than a sandbox stop takes, so one advance stops the VM (its retries would fall due in the
# same advance, so the retry tests emit their event instead)
STOP_SECONDS = 120
WAIT_SECONDS = 30  # real seconds to wait for the sandbox's delivery worker


@pytest.fixture(scope="module")
def sandbox(tls):
    with serve_sandbox(vms=12, seed=7, ca_bundle=str(tls.ca_pem)) as sb:
        yield sb


@pytest.fixture
def client(sandbox):
    with svcnb.Client(
        api_key=sandbox.tokens["admin"], base_url=sandbox.base_url, progress=False
    ) as c:
        yield c


@pytest.fixture
def clock(sandbox):
    with SandboxClock(sandbox.control_url, interval=0.05) as c:
        yield c


@pytest.fixture
def subscribe(client):
    """Create a subscription at https://127.0.0.1:<free port>/hook; disable it afterwards so later
    tests' events do not reach it (and the 10-subscription cap is not hit)."""
    made = []

    def make(events):
        port = free_port()
        hook = client.webhooks.create(f"https://127.0.0.1:{port}/hook", events, "svcnb e2e test")
        made.append(hook["id"])
        return hook, port

    yield make
    for wh_id in made:
        client.webhooks.set_active(wh_id, False)


def running_vm(client) -> str:
    return next(v["id"] for v in client.vms.list() if v["status"] == "running")


def wait_for(what, predicate, timeout=WAIT_SECONDS):
    """Poll ``predicate`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what}")
        time.sleep(0.05)


def deliveries(client, wh_id, count):
    """The subscription's delivery records, once there are at least ``count``."""
    return wait_for(
        f"{count} delivery records",
        lambda: (d := client.webhooks.deliveries(wh_id)) and len(d) >= count and d,
    )


def subscription(client, wh_id) -> dict:
    (sub,) = [w for w in client.webhooks.list() if w["id"] == wh_id]
    return sub


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_signed_vm_stopped_arrives_and_is_logged_once(
    sandbox, client, clock, subscribe, tls, tmp_path
):
    hook, port = subscribe(["vm.stopped"])
    receiver = Receiver(hook["secret"], tmp_path / "store", clock=clock)
    recorder = Recorder(receiver)
    vm_id = running_vm(client)
    with serve(recorder, certfile=tls.cert_pem, keyfile=tls.key_pem, port=port):
        client.vms.stop(vm_id)
        sandbox.control.advance(STOP_SECONDS)
        (record,) = deliveries(client, hook["id"], 1)

        assert record["success"] is True and record["statusCode"] == 200
        assert record["attempts"] == 1
        log = Store(tmp_path / "store").events()  # how a user reads the log back
        assert len(log) == 1
        row = log.iloc[0]
        assert row["type"] == "vm.stopped" and row["event_header"] == "vm.stopped"
        assert row["event_id"] == record["eventId"]
        assert row["delivery_id"] == record["id"]
        assert not row["possible_replay"]
        # the event is stamped inside the advance; the receiver's view of the sandbox clock is
        # anywhere from before the advance (a sample not yet taken) to its end
        assert -STOP_SECONDS <= row["age_seconds"] <= STOP_SECONDS
        (emitted,) = [e for e in sandbox.control.events() if e["id"] == record["eventId"]]
        assert emitted["type"] == "vm.stopped"
        assert json.loads(row["data"]) == emitted["data"]  # logged exactly as signed
        assert vm_id in row["data"]

        # the very same delivery sent again (same bytes, same headers) is acknowledged, not logged
        (body, headers) = recorder.requests[0]
        replay_headers = [(k.decode(), v.decode()) for k, v in headers if k != b"host"]
        context = ssl.create_default_context(cafile=tls.ca_pem)
        with httpx.Client(verify=context, trust_env=False, timeout=10) as http:
            again = http.post(
                f"https://127.0.0.1:{port}/hook", content=body, headers=replay_headers
            )
        assert again.status_code == 200 and again.json()["duplicate"] is True
        assert len(EventLog(tmp_path / "store").frame()) == 1
        assert receiver.stats["accepted"] == 1 and receiver.stats["duplicates"] == 1

    assert hook["secret"] not in (tmp_path / "store" / "webhook_events.jsonl").read_text()


@needs_openssl
def test_sandbox_signature_agrees_with_openssl(sandbox, client, clock, subscribe, tls, tmp_path):
    hook, port = subscribe(["vm.stopped"])
    recorder = Recorder(Receiver(hook["secret"], tmp_path / "store", clock=clock))
    with serve(recorder, certfile=tls.cert_pem, keyfile=tls.key_pem, port=port):
        client.vms.stop(running_vm(client))
        sandbox.control.advance(STOP_SECONDS)
        deliveries(client, hook["id"], 1)
    body, headers = recorder.requests[0]
    sent = dict((k.decode().lower(), v.decode()) for k, v in headers)["x-service-signature"]
    assert sent == openssl_signature(body, hook["secret"], tmp_path)


def test_receiver_down_sandbox_retries_at_10_then_20_seconds(
    sandbox, client, clock, subscribe, tls, tmp_path
):
    hook, port = subscribe(["vm.stopped"])  # nothing listens on the port yet
    # emitted now rather than by a stop, so the retries fall due at known steps of the clock
    sandbox.control.emit("vm.stopped", {"vmId": running_vm(client)})  # attempt 1 is due at once
    deliveries(client, hook["id"], 1)
    sandbox.control.advance(10)  # attempt 2
    deliveries(client, hook["id"], 2)

    receiver = Receiver(hook["secret"], tmp_path / "store", clock=clock)
    with serve(receiver, certfile=tls.cert_pem, keyfile=tls.key_pem, port=port):
        sandbox.control.advance(20)  # attempt 3 finds the receiver back
        records = deliveries(client, hook["id"], 3)
    sandbox.control.advance(600)  # no fourth attempt, whatever happens
    records = client.webhooks.deliveries(hook["id"])

    assert [r["attempts"] for r in records] == [1, 2, 3]
    assert [r["success"] for r in records] == [False, False, True], [r["error"] for r in records]
    assert records[0]["statusCode"] is None and records[1]["statusCode"] is None
    assert len({r["eventId"] for r in records}) == 1
    assert len({r["id"] for r in records}) == 3  # a new delivery id per attempt
    times = [at(r["lastAttemptAt"]) for r in records]
    assert times[1] - times[0] == timedelta(seconds=10)
    assert times[2] - times[1] == timedelta(seconds=20)
    log = EventLog(tmp_path / "store").frame()
    assert log["event_id"].tolist() == [records[0]["eventId"]]
    assert log["delivery_id"].tolist() == [records[2]["id"]]


def test_retry_after_a_lost_answer_is_logged_once(sandbox, client, clock, subscribe, tls, tmp_path):
    hook, port = subscribe(["vm.stopped"])
    receiver = Receiver(hook["secret"], tmp_path / "store", clock=clock)
    with serve(FailFirstAnswers(receiver), certfile=tls.cert_pem, keyfile=tls.key_pem, port=port):
        sandbox.control.emit("vm.stopped", {"vmId": running_vm(client)})
        deliveries(client, hook["id"], 1)
        sandbox.control.advance(10)
        records = deliveries(client, hook["id"], 2)
    assert [(r["attempts"], r["statusCode"]) for r in records] == [(1, 503), (2, 200)]
    log = EventLog(tmp_path / "store").frame()
    assert len(log) == 1  # stored by attempt 1; attempt 2 was a duplicate
    assert log.loc[0, "delivery_id"] == records[0]["id"]
    assert receiver.stats == {**receiver.stats, "accepted": 1, "duplicates": 1}


def test_fifty_failures_disable_and_enabling_resumes(
    sandbox, client, clock, subscribe, tls, tmp_path
):
    hook, port = subscribe(["billing.low_balance"])
    for i in range(50):  # nothing listens: each first attempt fails
        sandbox.control.emit("billing.low_balance", {"n": i})
    records = deliveries(client, hook["id"], 50)
    sub = subscription(client, hook["id"])
    assert sub["isActive"] is False
    assert sub["consecutiveFailures"] == 50
    assert len(records) == 50 and not any(r["success"] for r in records)

    sandbox.control.advance(60)  # retries fall due while disabled: dropped, not attempted
    sandbox.control.emit("billing.low_balance", {"n": "while disabled"})  # not even queued
    # the sandbox's worker must have dropped those retries before the subscription is enabled
    # again, or they would be sent; no public call says so, hence the sandbox's own helper
    assert wait_idle(sandbox.state, timeout=WAIT_SECONDS)
    assert len(client.webhooks.deliveries(hook["id"])) == 50

    receiver = Receiver(hook["secret"], tmp_path / "store", clock=clock)
    with serve(receiver, certfile=tls.cert_pem, keyfile=tls.key_pem, port=port):
        client.webhooks.set_active(hook["id"], True)
        sandbox.control.emit("billing.low_balance", {"n": "after enabling"})
        records = deliveries(client, hook["id"], 51)
    assert records[-1]["success"] is True
    sub = subscription(client, hook["id"])
    assert sub["isActive"] is True and sub["consecutiveFailures"] == 0
    log = EventLog(tmp_path / "store").frame()
    assert [json.loads(d) for d in log["data"]] == [{"n": "after enabling"}]


def test_sandbox_clock_follows_advance_and_never_runs_ahead(sandbox, clock):
    start = sandbox.control.now()
    assert clock() == start  # frozen sandbox: no extrapolation
    after = sandbox.control.advance(3600)
    assert clock() <= after  # it may lag the sandbox, never lead it
    wait_for("the clock to catch up with advance", lambda: clock() == after, timeout=10)


def test_sandbox_clock_names_a_wrong_url():
    with pytest.raises(ConnectionError, match="sb.control_url"):
        SandboxClock(f"http://127.0.0.1:{free_port()}/_sandbox", timeout=2)


def test_old_event_is_flagged_but_still_acknowledged(
    sandbox, client, clock, subscribe, tls, tmp_path
):
    hook, port = subscribe(["vm.stopped"])

    def hour_ahead():  # as if the event had been captured an hour ago and replayed now
        return clock() + timedelta(hours=1)

    receiver = Receiver(hook["secret"], tmp_path / "store", tolerance=300, clock=hour_ahead)
    with serve(receiver, certfile=tls.cert_pem, keyfile=tls.key_pem, port=port):
        sandbox.control.emit("vm.stopped", {"vmId": "vm_replayed"})
        (record,) = deliveries(client, hook["id"], 1)
    assert record["success"] is True  # not refused: a refusal would count towards disabling
    assert subscription(client, hook["id"])["consecutiveFailures"] == 0
    row = EventLog(tmp_path / "store").frame().iloc[0]
    assert row["possible_replay"] and row["age_seconds"] >= 3600


def test_svcnb_listen_follows_the_sandbox_clock(sandbox, client, subscribe, tls, tmp_path):
    hook, port = subscribe(["vm.stopped"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVCNB_")}
    env["SVCNB_WEBHOOK_SECRET"] = hook["secret"]
    args = ["--port", port, "--cert", tls.cert_pem, "--key", tls.key_pem, "--store", tmp_path]
    args += ["--sandbox-clock", sandbox.control_url]
    proc = subprocess.Popen(
        [sys.executable, "-m", "svcnb", "listen", *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert f"https://127.0.0.1:{port}/" in proc.stdout.readline()
        vm_id = running_vm(client)
        client.vms.stop(vm_id)
        sandbox.control.advance(STOP_SECONDS)
        (record,) = deliveries(client, hook["id"], 1)
        assert record["success"] is True
    finally:
        proc.terminate()
        proc.wait(20)
    row = EventLog(tmp_path).frame().iloc[0]
    assert row["type"] == "vm.stopped" and vm_id in row["data"]
    assert not row["possible_replay"]  # judged by the sandbox's clock, not the machine's
    assert hook["secret"] not in proc.stdout.read() + proc.stderr.read()
