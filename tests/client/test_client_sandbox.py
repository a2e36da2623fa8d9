"""The client against the sandbox over loopback HTTP, with faults."""

from __future__ import annotations

import contextlib
import threading
import time

import httpx
import pytest
from _loopback import loopback_client

import svcnb
from svcnb.errors import (
    AuthError,
    Conflict,
    NotFound,
    ScopeError,
    UpstreamSyncError,
    ValidationError,
)


@pytest.fixture
def connect_to(leak_scan):
    """``connect_to(sb, role="admin", **options)``: a Client on sandbox ``sb``, token scanned."""
    made = []

    def make(sb, role="admin", *, token=None, base_url=None, **options):
        token = token or sb.tokens[role]
        leak_scan.tokens.update(sb.tokens.values())
        leak_scan.tokens.add(token)
        options.setdefault("progress", False)
        client = svcnb.Client(token, base_url or sb.base_url, **options)
        leak_scan.add(client)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def _running(client, n=1):
    return [v["id"] for v in client.vms.list() if v["status"] == "running"][:n]


def test_detailed_pull_under_faults_equals_the_fault_free_pull(make_sandbox, connect_to):
    sb = make_sandbox(vms=130, seed=11, rate_limit=45, rate_window_seconds=1.0)
    clean = connect_to(sb, "read").vms.all(details=True)
    assert len(clean) == 130 and all("sshKeys" in vm for vm in clean)
    sb.control.set_faults(errorRate=0.10, dropRate=0.05, seed=5)
    raw = loopback_client(sb.api_root, headers={"x-api-key": sb.tokens["admin"]})

    def spend(times):  # another program on the same token, not paced: the pull meets 429s
        for _ in range(times):
            with contextlib.suppress(httpx.HTTPError):
                if raw.get("/wallet").status_code == 429:
                    return

    client = connect_to(sb, max_retries=10)
    pulling = threading.Event()
    pulling.set()

    def rival():
        # Keeps spending the token's budget until the pull has met a 429. A fixed schedule of
        # spends did not ensure that: when the pull began just after a window turned over (a
        # slow machine), the governor paced it to the budget and no 429 came.
        while pulling.is_set() and client.stats["rate_limited"] == 0:
            spend(200)
            time.sleep(0.01)

    spend(200)  # the token's window is used up before the pull starts
    spender = threading.Thread(target=rival)
    spender.start()
    try:
        faulted = client.vms.all(details=True)
    finally:
        pulling.clear()
        spender.join()
        raw.close()
    assert faulted == clean
    served = sb.control.stats()["byStatus"]
    assert served.get("500", 0) > 0 and served.get("429", 0) > 0
    assert client.stats["rate_limited"] > 0
    assert client.stats["retries"] > client.stats["rate_limited"]


def test_a_stop_whose_answer_is_dropped_leaves_exactly_one_action(sandbox, connect_to, leak_scan):
    client = connect_to(sandbox)
    vm_id = _running(client)[0]
    before = len(sandbox.control.actions())
    # Seed 1 draws 0.13 then 0.85: the first answer is cut, the retry's gets through.
    sandbox.control.set_faults(dropRate=0.5, seed=1)
    action_id = client.vms.stop(vm_id)
    sandbox.control.set_faults()
    actions = sandbox.control.actions()[before:]
    assert [(a["vmId"], a["type"], a["id"]) for a in actions] == [(vm_id, "stop", action_id)]
    assert client.stats["retries"] == 1
    # Without the Idempotency-Key the retry would have met a stopping VM: a 409.
    with pytest.raises(Conflict) as info:
        client.vms.stop(vm_id)
    leak_scan.add(info.value)
    assert "stopping" in str(info.value)


def test_stop_can_wait_until_the_vm_is_stopped(sandbox, connect_to):
    client = connect_to(sandbox)
    first, second = _running(client, 2)
    with pytest.raises(TimeoutError, match=f"VM {second} did not reach 'stopped' within 0.3s"):
        client.vms.stop(second, wait=True, timeout=0.3)  # the sandbox clock is frozen
    result = {}
    waiter = threading.Thread(
        target=lambda: result.update(action=client.vms.stop(first, wait=True, timeout=60))
    )
    waiter.start()
    deadline = time.monotonic() + 60
    while waiter.is_alive() and time.monotonic() < deadline:
        sandbox.control.advance(600)  # the frozen sandbox clock moves only when told
        waiter.join(timeout=0.2)
    assert result["action"].startswith("act_")
    assert client.vms.get(first)["status"] == "stopped"


def test_each_failure_status_raises_its_own_type(sandbox, connect_to, leak_scan):
    admin = connect_to(sandbox)
    reader = connect_to(sandbox, "read")
    vm_id = _running(admin)[0]
    fw = admin.firewalls.list()[0]["id"]
    rule = admin.firewalls.rules(fw)[0]["id"]
    raised = []

    def expect(kind, call):
        with pytest.raises(kind) as info:
            call()
        leak_scan.add(info.value)
        assert type(info.value) is kind
        raised.append(info.value)
        return info.value

    e403 = expect(ScopeError, lambda: reader.vms.stop(vm_id))
    assert e403.status == 403 and e403.scope == "vms:write"
    assert "vms:write" in str(e403) and f"POST /vms/{vm_id}/stop" in str(e403)
    e404 = expect(NotFound, lambda: admin.vms.get("vm_missing"))
    assert "vm_missing" in str(e404) and "GET /vms/vm_missing" in str(e404)
    admin.vms.stop(vm_id)
    e409 = expect(Conflict, lambda: admin.vms.stop(vm_id))
    assert "only a running VM can be stopped" in str(e409)
    e422 = expect(
        ValidationError, lambda: admin.webhooks.create("http://h.example/x", ["vm.stopped"])
    )
    assert e422.field == "url" and "HTTPS" in str(e422)
    sandbox.control.set_faults(upstreamSyncFail=True)
    e502 = expect(UpstreamSyncError, lambda: admin.firewalls.update_rule(fw, rule, port="8443"))
    assert e502.status == 502 and e502.rule["id"] == rule and e502.rule["port"] == "8443"
    assert "upstream" in str(e502)
    assert len({type(e) for e in raised}) == 5


def test_401_missing_and_rejected(sandbox, connect_to, leak_scan):
    with pytest.raises(AuthError) as missing:
        svcnb.Client(base_url=sandbox.base_url, progress=False).wallet.get()
    assert missing.value.reason == "missing"
    made = sandbox.control.create_token("short-lived", ["billing:read"])
    client = connect_to(sandbox, token=made["secret"])
    assert client.wallet.get()["id"]
    sandbox.control.revoke_token(made["id"])
    with pytest.raises(AuthError) as rejected:
        client.wallet.get()
    leak_scan.add(rejected.value)
    assert rejected.value.reason == "rejected"
    assert made["secret"][-4:] in str(rejected.value) and made["secret"] not in str(rejected.value)


@pytest.mark.parametrize("suffix", ["", "/api/v1", "/api/public/v1", "/api/v1/api/public/v1"])
def test_base_path_found_whatever_the_base_url_holds(sandbox, connect_to, suffix):
    client = connect_to(sandbox, base_url=sandbox.base_url + suffix)
    assert len(client.vms.list()) == 40
    assert client.wallet.get()["id"]


class _OnlyLongForm(httpx.HTTPTransport):
    """A gateway in front of the sandbox that serves only the published ``/api/v1/...`` form."""

    def handle_request(self, request):
        if not request.url.path.startswith("/api/v1/api/public/v1"):
            return httpx.Response(404, json={"success": False, "error": "no such route"})
        return super().handle_request(request)


def test_base_path_falls_back_to_the_published_form_and_remembers_it(sandbox, leak_scan):
    client = svcnb.Client(
        sandbox.tokens["read"], sandbox.base_url, progress=False, transport=_OnlyLongForm()
    )
    leak_scan.add(client)
    assert client.vms.get(client.vms.list()[0]["id"])["sshKeys"] is not None
    assert client.base_path == "/api/v1/api/public/v1"
    assert client.stats["requests"] == 3  # one 404 on the first call only
    client.close()


def test_every_endpoint_round_trips(sandbox, connect_to):
    client = connect_to(sandbox)
    assert client.server_time is None
    assert {fw["id"] for fw in client.firewalls.list()}
    assert client.server_time == sandbox.control.now()
    networks = client.networks.list()
    net = networks[0]
    vms = client.vms.all()
    same_region = [
        v
        for v in vms
        if v["region"]
        and v["region"]["slug"] == net["region"]["slug"]
        and net["id"] not in {p["id"] for p in v["privateNetworks"]}
    ]
    attachment = client.networks.attach(net["id"], same_region[0]["id"])
    assert attachment["vmId"] == same_region[0]["id"] and attachment["privateIp"]
    assert attachment["id"] in {a["id"] for a in client.networks.attachments(net["id"])}
    with pytest.raises(Conflict):
        client.networks.attach(net["id"], same_region[0]["id"])
    assert client.networks.detach(net["id"], same_region[0]["id"]) == {
        "vmId": same_region[0]["id"],
        "networkId": net["id"],
    }
    hook = client.webhooks.create("https://hooks.example.com/new", ["vm.stopped"], "test")
    assert hook["secret"]
    listed = {w["id"]: w for w in client.webhooks.list()}
    assert "secret" not in listed[hook["id"]]
    assert client.webhooks.set_active(hook["id"], False)["isActive"] is False
    assert client.webhooks.deliveries(hook["id"]) == []
    balance = client.wallet.get()["balance"]
    assert balance is not None


def test_many_pages_and_an_incremental_refresh(make_sandbox, connect_to):
    sb = make_sandbox(vms=250, seed=3)
    client = connect_to(sb)
    summaries = client.vms.list()
    assert len(summaries) == 250 and len({v["id"] for v in summaries}) == 250
    full = client.vms.all()
    assert [v["id"] for v in full] == [v["id"] for v in summaries]
    changed = [full[5]["id"], full[120]["id"], full[249]["id"]]
    for vm_id in changed:
        sb.control.vm_action(vm_id, "touch")
    before = client.stats["requests"]
    refreshed = client.vms.all(previous=full)
    # 3 pages, read twice (the set proven: no detail read checks the unchanged VMs) + 3 details
    assert client.stats["requests"] - before == 3 * 2 + len(changed)
    assert refreshed == client.vms.all()
    assert {v["id"] for v in refreshed if v not in full} == set(changed)


def test_connect_uses_the_environment_then_a_background_sandbox(
    sandbox, monkeypatch, capsys, leak_scan
):
    import svcnb._connect as connecting

    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["read"])
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    client = svcnb.connect(progress=False)
    leak_scan.add(client)
    assert client.base_url == sandbox.base_url and len(client.vms.list()) == 40
    monkeypatch.delenv("SVC_API_KEY")
    monkeypatch.delenv("SVC_BASE_URL")
    monkeypatch.delenv("SVCNB_SANDBOX", raising=False)
    monkeypatch.setattr(connecting, "_sandbox", None)
    first = svcnb.connect(progress=False, sandbox={"vms": 12})
    second = svcnb.connect(progress=False)
    leak_scan.tokens.update(connecting._sandbox.tokens.values())
    leak_scan.add(first)
    assert first.base_url == second.base_url != sandbox.base_url
    assert len(second.vms.list()) == 12
    out = capsys.readouterr().out
    assert out.count("local sandbox") == 1 and "simulated data" in out
    assert "svc_" not in out


def test_connect_uses_a_sandbox_connection_file(sandbox, monkeypatch, tmp_path, leak_scan):
    path = sandbox.write_connection_file(tmp_path / "sandbox.json")
    monkeypatch.setenv("SVCNB_SANDBOX", str(path))
    client = svcnb.connect(progress=False)
    leak_scan.add(client)
    assert client.base_url == sandbox.base_url
    assert client.webhooks.create("https://h.example/x", ["vm.stopped"])["secret"]  # admin
    (tmp_path / "broken.json").write_text("{}")
    monkeypatch.setenv("SVCNB_SANDBOX", str(tmp_path / "broken.json"))
    with pytest.raises(ValueError, match="SVCNB_SANDBOX=.*broken.json.*not a readable"):
        svcnb.connect()
