"""Checks running at once announce each alert once: two `svcnb check` processes on one store,
two checks in threads with Store objects of their own (a local folder and S3), and a check that
died holding its claim."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
from test_alerts import OFF, vm

import svcnb.alerts
from svcnb import frames
from svcnb.alerts import check
from svcnb.cli import main
from svcnb.store import AlertRecord, RuleEdit, Store

RULES = replace(OFF, bandwidth_days=3)
KEYS = [f"bandwidth:vm-{i}" for i in range(5)]
WHEN = pd.Timestamp("2026-12-01T00:00Z")

# each process waits, once its rules are evaluated, until the other's are too: both then decide
# what fired from the same alert state, as two cron jobs started together do
RACER = """
import sys, time
from pathlib import Path

import svcnb.alerts
from svcnb.cli import main

gate, me, argv = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
evaluate = svcnb.alerts.evaluate


def together(*args, **kwargs):
    seen = evaluate(*args, **kwargs)
    (gate / me).touch()
    deadline = time.monotonic() + 60
    while len(list(gate.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    return seen


svcnb.alerts.evaluate = together
sys.exit(main(argv))
"""


def five_vms_over_their_pack(store: Store) -> None:
    vms = [{**vm(used=2000, pack=1000), "id": f"vm-{i}", "name": f"web-{i}"} for i in range(5)]
    wallet = [{"id": "w-1", "balance": {"amount": "500.00", "currency": "EUR"}}]
    store.write(
        {"vms": frames.vms(vms), "wallet": frames.wallet(wallet)}, server_time=WHEN, partial=True
    )


def outcomes(store: Store) -> Counter:
    log = store.journal.log()
    return Counter(log.loc[log["kind"] == "alert", "outcome"])


def test_two_svcnb_checks_started_together_deliver_each_alert_once(receiver, tls, tmp_path):
    store_path = tmp_path / "s"
    five_vms_over_their_pack(Store(store_path))
    config = tmp_path / "c.toml"
    config.write_text(
        "[alerts]\nrunway_days = false\nlow_balance_days = false\nbandwidth_days = 3\n"
        "webhook_failures_left = false\nhigh_findings = false\n"
        f'url = "{receiver.url}"\nca_bundle = "{tls.ca_pem}"\n'
    )
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = ["check", "--store", str(store_path), "--config", str(config)]
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(gate), name, *argv],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("one", "two")
    ]
    done = [r.communicate(timeout=120) for r in racers]
    codes = sorted(r.returncode for r in racers)
    assert codes == [0, 1], done  # one announced the five, the other found them claimed
    sent = Counter(a["key"] for body in receiver.bodies for a in body["fired"])
    assert sent == Counter(KEYS)  # each alert delivered once
    assert len(receiver.bodies) == 1
    counts = outcomes(Store(store_path))
    assert counts["alert fired"] == 5 and counts["alert claimed"] == 5
    # and they stand: the next check (in this process: its exit code is what is checked)
    # announces nothing
    assert main(argv) == 0
    assert len(receiver.bodies) == 1


@pytest.mark.parametrize("where", ["local", "s3"])
def test_two_checks_at_once_on_their_own_store_objects_claim_each_alert_once(
    where, tmp_path, request, monkeypatch
):
    url = str(tmp_path / "s") if where == "local" else request.getfixturevalue("s3_url")
    five_vms_over_their_pack(Store(url))
    both_evaluated = threading.Barrier(2, timeout=60)
    evaluate = svcnb.alerts.evaluate

    def together(*args, **kwargs):
        seen = evaluate(*args, **kwargs)
        both_evaluated.wait()
        return seen

    monkeypatch.setattr(svcnb.alerts, "evaluate", together)
    sent: list[dict] = []

    def send(body: dict) -> int:
        sent.append(body)
        return 1

    results: list = [None, None]

    def run(i: int) -> None:
        results[i] = check(Store(url), RULES, send=send)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert all(r is not None for r in results)
    fired = sorted(len(r.fired) for r in results)
    assert fired == [0, 5]
    # the check that found them claimed says they stand (another check announces them)
    assert sorted(len(r.standing) for r in results) == [0, 5]
    assert Counter(a["key"] for body in sent for a in body["fired"]) == Counter(KEYS)
    counts = outcomes(Store(url))
    assert counts["alert fired"] == 5 and counts["alert claimed"] == 5


def test_a_claim_left_by_a_check_that_died_holds_until_it_runs_out(tmp_path):
    store = Store(tmp_path / "s")
    five_vms_over_their_pack(store)
    rows = pd.DataFrame({"key": KEYS[:2], "rule": "bandwidth_days", "message": "m"})

    def claim(seconds: float) -> None:
        # what a check writes when it takes these alerts to deliver, its claim running `seconds`
        until = datetime.now(UTC) + timedelta(seconds=seconds)
        for row in rows.itertuples(index=False):
            store.journal.append(
                AlertRecord(
                    time=WHEN,
                    account=store.account_in_scope(),
                    outcome="alert claimed",
                    alert_key=row.key,
                    alert_rule=row.rule,
                    snapshot_id="x",
                    message=row.message,
                    claimed_until=until,
                )
            )

    sent: list[dict] = []

    def send(body: dict) -> int:
        sent.append(body)
        return 1

    claim(600)  # a check is delivering these two, or died doing so a moment ago
    first = check(store, RULES, send=send)
    assert sorted(first.fired["key"]) == KEYS[2:]
    assert sorted(first.standing["key"]) == KEYS[:2]
    claim(-1)  # its claim ran out: they were never announced, so they fire now
    second = check(store, RULES, send=send)
    assert sorted(second.fired["key"]) == KEYS[:2]
    assert Counter(a["key"] for body in sent for a in body["fired"]) == Counter(KEYS)
    assert check(store, RULES, send=send).fired.empty


def test_an_alert_not_delivered_is_freed_for_the_next_check(tmp_path):
    from svcnb.alerts import DeliveryError

    store = Store(tmp_path / "s")
    five_vms_over_their_pack(store)

    def refused(body: dict) -> int:
        raise DeliveryError("the alert receiver refused the message")

    with pytest.raises(DeliveryError):
        check(store, RULES, send=refused)
    assert outcomes(store)["alert not delivered"] == 5
    assert sorted(check(store, RULES, send=lambda body: 1).fired["key"]) == KEYS


@pytest.mark.parametrize("where", ["local", "s3"])
def test_of_writers_that_read_the_same_audit_version_one_lands(where, tmp_path, request):
    url = str(tmp_path / "s") if where == "local" else request.getfixturevalue("s3_url")
    Store(url).journal.append(RuleEdit(firewall_id=None, rule_id=None, outcome="first"))
    stores = [Store(url) for _ in range(6)]
    versions = [s.journal.read(RuleEdit).attrs["version"] for s in stores]
    assert len(set(versions)) == 1
    go = threading.Barrier(len(stores), timeout=60)
    landed: list[bool] = [False] * len(stores)

    def write(i: int) -> None:
        go.wait()
        record = RuleEdit(firewall_id=None, rule_id=None, outcome=f"writer {i}")
        landed[i] = stores[i].journal.append_if([record], version=versions[i])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sum(landed) == 1
    log = Store(url).journal.log()
    assert log["outcome"].tolist() == ["first", f"writer {landed.index(True)}"]
    assert Store(url).journal.read(RuleEdit).attrs["version"] == versions[0] + 1
