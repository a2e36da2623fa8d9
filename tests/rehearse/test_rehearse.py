"""Rehearse on a copy: a sandbox started from a stored snapshot answers what the store holds,
anonymized copies give the same reachability answers, saved states round-trip exactly, and
what is done on a copy touches neither the store nor the account it came from."""

from __future__ import annotations

import json
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pandas as pd
import pytest
from _tiers import dialects

import svcnb
from svcnb import vocab
from svcnb.cli import build_parser
from svcnb.cli.sandbox import run as sandbox_command
from svcnb.client import Client
from svcnb.frames import KEYS
from svcnb.learn.rehearsal import state_from_store
from svcnb.reports import firewall
from svcnb.sandbox import Control, read_state_file, serve, write_state_file
from svcnb.store import RESOURCES, Store

SEED, VMS = 7, 40
# money columns: the raw form is the dialect's (minor units, objects); amount and currency
# are what a user reads
_RAW = {"price_monthly_raw", "balance_raw"}
_WORDS = {"status": vocab.vm_class, "billing_status": vocab.billing_class}


def _client(base_url: str, token: str) -> Client:
    return Client(api_key=token, base_url=base_url, progress=False)


def _snapshot(sandbox, tmp_path: Path, dialect: str = "default") -> Store:
    sandbox.control.reset(seed=SEED, vms=VMS, dialect=dialect)
    store = Store(tmp_path / "store")
    with _client(sandbox.base_url, sandbox.tokens["admin"]) as client:
        store.take(client)
    return store


def _sorted(resource: str, frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(KEYS[resource])).reset_index(drop=True)


def _frames_of(copy: svcnb.Rehearsal) -> dict[str, pd.DataFrame]:
    """What svcnb reads from the copy: a snapshot of it, taken into a store of its own."""
    with copy.connect(progress=False) as client, tempfile.TemporaryDirectory() as where:
        store = Store(where)
        store.take(client)
        return {resource: store.load(resource) for resource in RESOURCES}


def _comparable(resource: str, frame: pd.DataFrame) -> pd.DataFrame:
    out = _sorted(resource, frame).drop(columns=[c for c in _RAW if c in frame.columns])
    for column, classify in _WORDS.items():
        if column in out.columns:
            out[column] = out[column].map(classify)
    return out


@pytest.mark.parametrize("dialect", dialects(["default", "acme", "linkhdr"]))
def test_the_copy_answers_what_the_store_holds(sandbox, tmp_path, dialect):
    store = _snapshot(sandbox, tmp_path, dialect)
    with svcnb.rehearse(store) as copy:
        got = _frames_of(copy)
        notes = copy.notes
    for resource in RESOURCES:
        stored = store.load(resource)
        assert len(got[resource]) == len(stored) > 0, resource
        if dialect == "default":
            # the same words and money forms: every column, raw ones included
            pd.testing.assert_frame_equal(
                _sorted(resource, got[resource]), _sorted(resource, stored), check_like=True
            )
        else:
            pd.testing.assert_frame_equal(
                _comparable(resource, got[resource]),
                _comparable(resource, stored),
                check_like=True,
            )
    # what a user checks by eye: ids, statuses, rules, balance
    vms = _sorted("vms", store.load("vms"))
    assert list(_sorted("vms", got["vms"])["id"]) == list(vms["id"])
    wallet = store.load("wallet")
    assert got["wallet"]["balance_amount"].iloc[0] == wallet["balance_amount"].iloc[0]
    rules = _sorted("firewall_rules", got["firewall_rules"])
    stored_rules = _sorted("firewall_rules", store.load("firewall_rules"))
    assert list(rules["source_ips"].map(list)) == list(stored_rules["source_ips"].map(list))
    # the gaps are said, not papered over
    assert any("tokens" in n and "webhook secrets" in n for n in notes)
    assert any("billing.priceMonthly" in n for n in notes)
    if dialect == "acme":
        assert any("online -> running" in n for n in notes)


def test_anonymized_copy_gives_the_same_reachability(sandbox, tmp_path):
    sandbox.control.reset(seed=SEED, vms=VMS)
    truth = sandbox.control.truth()
    # make one rule name a VM's own address, so a VM-side match is part of the check
    vm = next(v for v in truth["vms"] if v["firewalls"] and v["ipAddress"])
    fw_id = vm["firewalls"][0]["id"]
    rule = next(r for r in truth["rules"] if r["firewallId"] == fw_id and r["direction"] == "IN")
    with _client(sandbox.base_url, sandbox.tokens["admin"]) as client:
        client.firewalls.update_rule(
            fw_id, rule["id"], dest_ips=[vm["ipAddress"]], source_ips=["203.0.113.0/28"]
        )
        store = Store(tmp_path / "store")
        store.take(client)
    stored = {r: store.load(r) for r in ("firewall_rules", "vm_firewalls", "vms")}
    with svcnb.rehearse(store, anonymize=True, key="test-key") as copy:
        got = _frames_of(copy)
        served = json.dumps(copy.control.state())
        pseudonym = copy.address
    # nothing of the account's names or addresses is in the copy
    for record in truth["vms"]:
        assert record["name"] not in served
        assert record["hostname"] not in served
        if record["ipAddress"]:
            assert f'"{record["ipAddress"]}"' not in served
    for record in truth["webhooks"]:
        assert record["url"] not in served
    for record in truth["firewalls"]:
        assert record["name"] not in served
    assert "whsec_" not in served  # the state holds no secret at all
    # the VM's own address in the rule became the VM's pseudonym on both sides
    copied_vm = got["vms"].set_index("id").loc[vm["id"]]
    assert copied_vm["ip_address"] == pseudonym(vm["ipAddress"]) != vm["ipAddress"]
    copied_rule = got["firewall_rules"].set_index("id").loc[rule["id"]]
    assert list(copied_rule["dest_ips"]) == [copied_vm["ip_address"]]
    flows = [
        ("203.0.113.5", 22, "TCP"),
        ("203.0.113.7", 6379, "TCP"),
        ("203.0.113.0/24", 22, "TCP"),
        ("10.1.2.3", 22, "TCP"),
        ("192.168.10.20", 8050, "TCP"),
        ("0.0.0.0/0", 443, "TCP"),
        ("8.8.8.8", 51820, "UDP"),
        ("8.8.8.8", 25, "TCP"),
    ]
    keep = ["vm_id", "allowed", "verdict", "firewall_id", "rule_id", "position"]
    compared = 0
    for source, port, protocol in flows:
        before = firewall.reach(
            stored["firewall_rules"],
            stored["vm_firewalls"],
            stored["vms"],
            source=source,
            port=port,
            protocol=protocol,
        )
        after = firewall.reach(
            got["firewall_rules"],
            got["vm_firewalls"],
            got["vms"],
            source=pseudonym(source),
            port=port,
            protocol=protocol,
        )
        pd.testing.assert_frame_equal(
            after[keep].sort_values("vm_id").reset_index(drop=True),
            before[keep].sort_values("vm_id").reset_index(drop=True),
        )
        compared += len(before)
    assert compared > 8 * 20
    assert pseudonym("0.0.0.0/0") == "0.0.0.0/0"


def test_same_input_same_pseudonym_within_one_copy(sandbox, tmp_path):
    store = _snapshot(sandbox, tmp_path)
    copy = state_from_store(store, anonymize=True, key=b"k")
    p = copy.pseudonyms
    assert p.address("10.0.0.0/8") == p.address("10.0.0.0/8")
    inside = p.address("10.20.30.40")
    assert inside.split(".")[0] == p.address("10.0.0.0/8").split(".")[0]
    # names shared across resources stay one name: a VM's firewall link and the firewall
    names = {f["id"]: f["name"] for f in copy.doc["firewalls"]}
    for vm in copy.doc["vms"]:
        for link in vm["firewalls"]:
            assert link["name"] == names[link["id"]]
    urls = {w["id"]: w["url"] for w in copy.doc["webhooks"]}
    for delivery in copy.doc["deliveries"]:
        assert delivery["url"] == urls[delivery["_webhookId"]]


def test_state_file_round_trip(sandbox, tmp_path):
    sandbox.control.reset(seed=SEED, vms=VMS)
    # renewals, debts, bandwidth: more than the seed says; 60 s past the day's events so no
    # delivery retry is still queued (a saved state does not keep those, docs say so)
    sandbox.control.advance(5 * 86400 + 60)
    saved = sandbox.control.state()
    path = write_state_file(saved, tmp_path / "state.json")
    with serve(saved=read_state_file(path)) as restored:
        assert restored.control.state() == saved
        assert restored.control.truth() == sandbox.control.truth()
        for route in ("/vms?perPage=100", "/firewalls", "/networks", "/wallet", "/webhooks"):
            a = httpx.get(sandbox.api_root + route, headers={"x-api-key": sandbox.tokens["read"]})
            b = httpx.get(restored.api_root + route, headers={"x-api-key": restored.tokens["read"]})
            assert (a.status_code, a.json()) == (b.status_code, b.json()), route
        # the same month ahead on both: the engines carried over, not just the records
        sandbox.control.advance(30 * 86400)
        restored.control.advance(30 * 86400)
        assert restored.control.truth() == sandbox.control.truth()
    # PUT /_sandbox/state, then a reset goes back to it
    sandbox.control.load_state(saved)
    sandbox.control.advance(3600)
    sandbox.control.reset()
    assert sandbox.control.state() == saved


def test_a_broken_state_is_refused_and_changes_nothing(sandbox, tmp_path):
    sandbox.control.reset(seed=SEED, vms=VMS)
    before = sandbox.control.state()
    broken = json.loads(json.dumps(before))
    broken["rules"][0]["firewallId"] = "fw_nowhere"
    with pytest.raises(RuntimeError, match="422.*fw_nowhere.*nothing was changed"):
        sandbox.control.load_state(broken)
    with pytest.raises(RuntimeError, match="422.*not a sandbox state"):
        sandbox.control.load_state({"vms": []})
    assert sandbox.control.state() == before


def _run_command(argv: list[str], connection: Path) -> tuple[threading.Event, threading.Thread]:
    args = build_parser("sandbox").parse_args(["sandbox", *argv])
    stop = threading.Event()
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("code", sandbox_command(args, stop)))
    thread.start()
    deadline = time.monotonic() + 30
    while not connection.exists():
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.05)
    thread.result = result  # type: ignore[attr-defined]
    return stop, thread


def test_command_from_store_and_save_on_exit(sandbox, tmp_path, capsys):
    store = _snapshot(sandbox, tmp_path)
    connection = tmp_path / "copy.json"
    out = tmp_path / "saved.json"
    argv = [
        "--from-store",
        str(store.path),
        "--anonymize",
        "--time-scale",
        "0",
        "--quiet",
        "--connection-file",
        str(connection),
        "--save-state-on-exit",
        str(out),
    ]
    stop, thread = _run_command(argv, connection)
    info = json.loads(connection.read_text())
    control = Control(info["control_url"])
    try:
        state = control.state()
    finally:
        control.close()
        stop.set()
        thread.join(30)
    assert thread.result["code"] == 0  # type: ignore[attr-defined]
    printed = capsys.readouterr().out
    assert "a copy of snapshot" in printed and "anonymized" in printed
    assert "note: not in a store, so not in the copy: API tokens" in printed
    saved = json.loads(out.read_text())
    # the account as the sandbox held it, and where it listened (not part of the account)
    assert saved.pop("listen") == {"port": int(info["base_url"].rsplit(":", 1)[1])}
    assert saved == state
    assert len(state["vms"]) == VMS
    # and the saved file starts the next sandbox where this one stopped, on the same port
    connection2 = tmp_path / "again.json"
    stop, thread = _run_command(
        [
            "--state-file",
            str(out),
            "--quiet",
            "--time-scale",
            "0",
            "--connection-file",
            str(connection2),
        ],
        connection2,
    )
    again = json.loads(connection2.read_text())
    assert again["base_url"] == info["base_url"]
    control = Control(again["control_url"])
    try:
        assert control.state() == state
    finally:
        control.close()
        stop.set()
        thread.join(30)


def test_command_refuses_a_file_that_is_not_a_state(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    args = build_parser("sandbox").parse_args(["sandbox", "--state-file", str(bad)])
    assert sandbox_command(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a sandbox state" in err[0]


def test_bulk_stop_on_the_copy_leaves_store_and_source_untouched(sandbox, tmp_path):
    store = _snapshot(sandbox, tmp_path)
    source_before = sandbox.control.state()
    snapshots_before = store.snapshots()
    vms_before = store.load("vms")
    running = vms_before[vms_before["status"] == "running"]["id"].tolist()
    assert len(running) > 10
    with svcnb.rehearse(store) as copy, copy.connect(progress=False) as client:
        for vm_id in running:
            client.vms.stop(vm_id)
        copy.control.advance(60)
        after = {vm["id"]: vm["status"] for vm in client.vms.list()}
    assert {after[v] for v in running} == {"stopped"}
    assert sandbox.control.state() == source_before
    pd.testing.assert_frame_equal(store.snapshots(), snapshots_before)
    pd.testing.assert_frame_equal(store.load("vms"), vms_before)


def test_a_resource_the_snapshot_missed_is_said_not_invented(sandbox, tmp_path):
    sandbox.control.reset(seed=SEED, vms=VMS)
    token = sandbox.control.create_token(
        name="no-billing",
        scopes=["vms:read", "firewalls:read", "networks:read", "webhooks:read"],
    )["secret"]
    store = Store(tmp_path / "store")
    with _client(sandbox.base_url, token) as client:
        store.take(client)
    copy = state_from_store(store)
    wallet_notes = [n for n in copy.notes if n.startswith("wallet:")]
    assert len(wallet_notes) == 2
    assert "not read at snapshot" in wallet_notes[0]
    assert "not the account's balance" in wallet_notes[1]


def test_readme_rehearsal_snippet_runs(sandbox, tmp_path, monkeypatch):
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Rehearsing on a copy") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    sandbox.control.reset(seed=SEED, vms=VMS)
    with _client(sandbox.base_url, sandbox.tokens["admin"]) as client:
        Store(tmp_path / "data" / "store").take(client)
    namespace: dict = {"svcnb": svcnb}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["copy"].notes
    assert namespace["copy"].address("203.0.113.5") != "203.0.113.5"


def test_command_says_in_one_line_when_there_is_nothing_to_copy(sandbox, tmp_path, capsys):
    store = _snapshot(sandbox, tmp_path)
    for argv in (
        ["--from-store", str(tmp_path / "empty")],
        ["--from-store", str(store.path), "--at", "2020-01-01"],
        ["--from-store", str(store.path), "--at", "not a time"],
    ):
        args = build_parser("sandbox").parse_args(["sandbox", *argv])
        assert sandbox_command(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("svcnb sandbox: "), err


def test_a_balance_in_another_currency_is_not_labelled_eur_on_the_copy(tmp_path):
    import warnings
    from decimal import Decimal

    from frames._samples import account

    from svcnb import frames

    records = account(2)
    records["wallet"][0]["balance"] = {"amount": "1234.50", "currency": "USD"}
    store = Store(tmp_path / "store")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the VMs' units, unpinned here: not this test's point
        wrote = {"vms": frames.vms(records["vms"]), "wallet": frames.wallet(records["wallet"])}
        store.write(wrote, server_time="2026-11-01T00:00:00Z", partial=True)
        copy = state_from_store(store)
    # the sandbox's wallet names only EUR: the copy states the amount and no currency at all
    assert Decimal(copy.doc["wallet"]["_balance"]) == Decimal("1234.50")
    assert copy.doc["wallet"]["_balance_form"] == "string"
    assert any("USD" in n and "without a currency" in n for n in copy.notes)


def test_a_store_of_several_accounts_is_copied_one_named_account_at_a_time(
    sandbox, make_sandbox, tmp_path, capsys
):
    sandbox.control.reset(seed=SEED, vms=VMS)
    south = make_sandbox(vms=6, seed=12, time_scale=0.0)
    store = Store(tmp_path / "store")
    for name, sb in (("north", sandbox), ("south", south)):
        with _client(sb.base_url, sb.tokens["admin"]) as client:
            store.take(client, account=name)
    # not told which: one line naming the accounts and the option
    for extra in ([], ["--account", "west"]):
        args = build_parser("sandbox").parse_args(
            ["sandbox", "--from-store", str(store.path), *extra]
        )
        assert sandbox_command(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("svcnb sandbox: "), err
        assert "north, south" in err[0], err
        assert ("--account NAME" in err[0]) == (not extra), err
    # told which: the copy holds that account
    connection = tmp_path / "copy.json"
    argv = ["--from-store", str(store.path), "--account", "south", "--time-scale", "0"]
    stop, thread = _run_command(
        [*argv, "--quiet", "--connection-file", str(connection)], connection
    )
    control = Control(json.loads(connection.read_text())["control_url"])
    try:
        state = control.state()
    finally:
        control.close()
        stop.set()
        thread.join(30)
    assert thread.result["code"] == 0  # type: ignore[attr-defined]
    assert len(state["vms"]) == 6
    assert "of account south" in capsys.readouterr().out
    # and in Python
    with svcnb.rehearse(store, account="north") as copy:
        assert len(copy.control.state()["vms"]) == VMS
    with pytest.raises(svcnb.SvcnbError, match="several accounts.*account=NAME"):
        svcnb.rehearse(store)
