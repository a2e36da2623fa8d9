"""The one request function, over an in-process fake API: envelopes, errors, retries, keys."""

from __future__ import annotations

import httpx
import pytest
from _fakeapi import BASE, TOKEN, FakeApi, envelope

import svcnb
from svcnb.errors import (
    ApiError,
    AuthError,
    Conflict,
    NotFound,
    ScopeError,
    ServerError,
    TransportError,
    ValidationError,
)


def test_get_unwraps_envelope_and_reads_server_time(fake, make_client):
    client = make_client(fake)
    fake.extra[("GET", "/wallet")] = lambda r: envelope(
        {"id": "w_1", "balance": "12.50", "createdAt": "x", "updatedAt": "y"},
        headers={"date": "Sun, 01 Nov 2026 10:00:00 GMT"},
    )
    assert client.wallet.get()["balance"] == "12.50"
    assert client.server_time.isoformat() == "2026-11-01T10:00:00+00:00"
    assert client.stats["requests"] == 1


@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (401, "API token unknown", AuthError),
        (403, "token lacks scope billing:read", ScopeError),
        (404, "wallet not found", NotFound),
        (409, "busy", Conflict),
        (422, "balance: invalid", ValidationError),
        (400, "malformed JSON", ApiError),
    ],
)
def test_each_failure_status_raises_its_own_type(fake, make_client, leak_scan, status, error, kind):
    fake.extra[("GET", "/wallet")] = lambda r: envelope(error, status)
    client = make_client(fake)
    with pytest.raises(kind) as info:
        client.wallet.get()
    leak_scan.add(info.value)
    assert type(info.value) is kind
    assert info.value.status == status
    assert info.value.method == "GET" and info.value.path == "/wallet"
    assert error in str(info.value)


def test_401_says_missing_without_a_token_and_rejected_with_one(fake, make_client, leak_scan):
    with pytest.raises(AuthError) as missing:
        make_client(fake, api_key=None).wallet.get()
    assert missing.value.reason == "missing"
    assert "SVC_API_KEY" in str(missing.value)
    wrong = "svc_wrong_token_but_long_enough_1234"
    leak_scan.tokens.add(wrong)
    with pytest.raises(AuthError) as rejected:
        make_client(fake, api_key=wrong).wallet.get()
    leak_scan.add(rejected.value)
    assert rejected.value.reason == "rejected"
    assert "svc_…1234" in str(rejected.value)
    assert wrong not in str(rejected.value)


def test_403_names_the_scope_the_spec_says_the_endpoint_needs_even_when_the_server_does_not(
    fake, make_client
):
    fake.extra[("GET", "/webhooks")] = lambda r: envelope("Forbidden", 403)
    with pytest.raises(ScopeError) as info:
        make_client(fake).webhooks.list()
    assert info.value.scope == "webhooks:read"
    assert "webhooks:read" in str(info.value) and "GET /webhooks" in str(info.value)


def test_403_names_the_scope_the_call_needs_not_the_first_the_text_lists(fake, make_client):
    said = "token holds vms:read, vms:write, account:read; missing webhooks:read"
    fake.extra[("GET", "/webhooks/wh_1/deliveries")] = lambda r: envelope(said, 403)
    with pytest.raises(ScopeError) as info:
        make_client(fake).webhooks.deliveries("wh_1")
    assert info.value.scope == "webhooks:read" and info.value.server_message == said


def test_403_on_an_endpoint_whose_scope_the_spec_does_not_show(fake, make_client):
    # The spec leaves the wallet's scope "not shown": a guess would name the wrong one on a
    # service that calls it account:read. Only a text naming one scope says it.
    fake.extra[("GET", "/wallet")] = lambda r: envelope("Forbidden", 403)
    with pytest.raises(ScopeError) as info:
        make_client(fake).wallet.get()
    assert info.value.scope is None and "does not know which scope" in str(info.value)
    listing = "Forbidden (token scopes: vms:read, webhooks:read)"
    fake.extra[("GET", "/wallet")] = lambda r: envelope(listing, 403)
    with pytest.raises(ScopeError) as info:
        make_client(fake).wallet.get()
    assert info.value.scope is None and listing in str(info.value)
    needing = "token holds vms:read, webhooks:read; needs account:read"
    fake.extra[("GET", "/wallet")] = lambda r: envelope(needing, 403)
    with pytest.raises(ScopeError) as info:
        make_client(fake).wallet.get()
    assert info.value.scope == "account:read"
    fake.extra[("GET", "/wallet")] = lambda r: envelope("missing scope billing:read", 403)
    with pytest.raises(ScopeError) as info:
        make_client(fake).wallet.get()
    assert info.value.scope == "billing:read"


def test_422_names_the_field_the_server_named(fake, make_client):
    fake.extra[("POST", "/webhooks")] = lambda r: envelope("url: must be an HTTPS URL", 422)
    with pytest.raises(ValidationError) as info:
        make_client(fake).webhooks.create("http://x.example/hook", ["vm.stopped"])
    assert info.value.field == "url"


def test_a_server_that_echoes_the_token_is_masked(fake, make_client, leak_scan):
    fake.extra[("GET", "/wallet")] = lambda r: envelope(f"bad key {TOKEN}", 401)
    with pytest.raises(AuthError) as info:
        make_client(fake).wallet.get()
    leak_scan.add(info.value)
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value)
    assert "svc_…" + TOKEN[-4:] in str(info.value)


def test_reads_are_retried_on_5xx_and_dropped_connections(fake, make_client):
    failures = iter([envelope("boom", 500), "drop", envelope("bad gw", 502), "timeout"])

    def fault(request):
        step = next(failures, None)
        if step == "drop":
            raise httpx.RemoteProtocolError("peer closed connection", request=request)
        if step == "timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        return step

    fake.fault = fault
    client = make_client(fake, sleep=False)
    assert client.vms.get("vm_0001")["id"] == "vm_0001"
    assert client.stats["retries"] == 4
    assert client.stats["requests"] == 5
    assert len(client.slept) == 4


def test_reads_give_up_after_max_retries_with_a_useful_error(fake, make_client, leak_scan):
    def fault(request):
        raise httpx.ConnectError("connection refused", request=request)

    fake.fault = fault
    client = make_client(fake, sleep=False, max_retries=2)
    with pytest.raises(TransportError) as info:
        client.vms.get("vm_0001")
    leak_scan.add(info.value)
    assert "3 attempt(s)" in str(info.value) and "GET /vms/vm_0001" in str(info.value)
    fake.fault = lambda r: envelope("down", 503)
    with pytest.raises(ServerError) as info:
        client.vms.get("vm_0001")
    assert info.value.status == 503


def test_a_write_keeps_one_idempotency_key_across_retries(fake, make_client):
    seen = []
    outcomes = iter(["drop", envelope("boom", 500), "timeout"])

    def fault(request):
        if request.method != "POST":
            return None
        seen.append(request.headers.get("idempotency-key"))
        step = next(outcomes, None)
        if step == "drop":
            raise httpx.ReadError("connection reset", request=request)
        if step == "timeout":
            raise httpx.WriteTimeout("timed out", request=request)
        return step

    fake.fault = fault
    client = make_client(fake, sleep=False)
    assert client.vms.stop("vm_0001") == "act_1"
    assert len(seen) == 4
    assert seen[0] and len(set(seen)) == 1
    # A second call is a new call: a new key.
    client.vms.stop("vm_0002")
    assert seen[-1] != seen[0]


def test_every_write_carries_a_key_and_reads_carry_none(fake, make_client):
    fake.extra[("PATCH", "/webhooks/wh_1")] = lambda r: envelope({"id": "wh_1", "isActive": True})
    fake.extra[("DELETE", "/networks/n_1/attachments/vm_1")] = lambda r: envelope(
        {"vmId": "vm_1", "networkId": "n_1"}
    )
    client = make_client(fake)
    client.vms.stop("vm_0001")
    client.webhooks.set_active("wh_1", True)
    client.networks.detach("n_1", "vm_1")
    client.vms.get("vm_0001")
    keys = {r.method: r.headers.get("idempotency-key") for r in fake.requests}
    assert keys["GET"] is None
    assert all(keys[m] for m in ("POST", "PATCH", "DELETE"))


def test_a_write_is_not_repeated_after_a_502(fake, make_client):
    fake.extra[("DELETE", "/networks/n_1/attachments/vm_1")] = lambda r: envelope("upstream", 502)
    client = make_client(fake, sleep=False)
    with pytest.raises(ServerError):
        client.networks.detach("n_1", "vm_1")
    assert [r.method for r in fake.requests] == ["DELETE"]


def test_a_409_for_a_key_still_in_flight_is_waited_out(fake, make_client):
    answers = iter([envelope("Idempotency-Key: still being processed", 409)])
    fake.fault = lambda r: next(answers, None) if r.method == "POST" else None
    client = make_client(fake, sleep=False)
    assert client.vms.stop("vm_0001") == "act_1"
    assert len(fake.actions) == 1
    # An ordinary state conflict is not retried.
    fake.fault = lambda r: envelope("VM is not running", 409) if r.method == "POST" else None
    with pytest.raises(Conflict, match="not running"):
        client.vms.stop("vm_0001")


def test_429_waits_retry_after_then_backs_off_with_jitter(fake, make_client):
    answers = iter([envelope("Rate limit", 429, headers={"retry-after": "3"})] * 3)
    fake.fault = lambda r: next(answers, None)
    client = make_client(fake, sleep=False)
    # this test looks at the call's own waits
    client._req.governor.pause = lambda seconds, ends=None: None
    assert client.vms.get("vm_0001")["id"] == "vm_0001"
    assert client.stats["rate_limited"] == 3
    first, second, third = client.slept
    assert 3 + 0.5 <= first <= 3 + 1.0
    assert 3 + 1.0 <= second <= 3 + 2.0
    assert 3 + 2.0 <= third <= 3 + 4.0


def test_non_envelope_answer_is_an_error_naming_the_base_url(fake, make_client):
    fake.extra[("GET", "/wallet")] = lambda r: httpx.Response(200, text="<html>login</html>")
    with pytest.raises(ApiError, match="not the API's JSON envelope"):
        make_client(fake).wallet.get()


@pytest.mark.parametrize("prefix", ["/api/public/v1", "/api/v1/api/public/v1"])
def test_base_path_is_found_and_remembered(make_client, prefix):
    api = FakeApi(vms=3, prefix=prefix)
    client = make_client(api)
    assert client.base_path is None
    assert client.vms.get("vm_0001")["id"] == "vm_0001"
    assert client.base_path == prefix
    before = len(api.requests)
    client.vms.get("vm_0002")
    assert len(api.requests) == before + 1
    assert api.requests[-1].url.path == f"{prefix}/vms/vm_0002"


@pytest.mark.parametrize(
    ("base_url", "prefix"),
    [
        (BASE + "/api/v1", "/api/v1/api/public/v1"),
        (BASE + "/api/public/v1", "/api/public/v1"),
        (BASE + "/api/v1/api/public/v1/", "/api/v1/api/public/v1"),
    ],
)
def test_a_base_url_that_holds_a_prefix_works(make_client, base_url, prefix):
    api = FakeApi(vms=2, prefix=prefix)
    client = make_client(api, base_url=base_url)
    assert client.vms.get("vm_0001")["id"] == "vm_0001"
    assert api.requests[-1].url.path == f"{prefix}/vms/vm_0001"


def test_a_missing_resource_under_both_prefixes_says_so(fake, make_client):
    client = make_client(fake)
    fake.prefix = "/nowhere"
    with pytest.raises(NotFound, match="under both"):
        client.vms.get("vm_0001")
    assert client.base_path is None


def test_configuration_arguments_then_environment(monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", "svc_from_environment_abcd")
    monkeypatch.setenv("SVC_BASE_URL", "http://env.test")
    client = svcnb.Client(progress=False)
    assert client.base_url == "http://env.test"
    assert repr(client) == "Client(base_url='http://env.test', api_key='svc_…abcd')"
    client = svcnb.Client("svc_from_argument_wxyz", "http://arg.test")
    assert client.base_url == "http://arg.test" and "wxyz" in repr(client)
    monkeypatch.delenv("SVC_BASE_URL")
    with pytest.raises(ValueError, match="SVC_BASE_URL"):
        svcnb.Client()
    with pytest.raises(ValueError, match="timeout"):
        svcnb.Client(base_url="http://x.test", timeout=0)
    with pytest.raises(ValueError, match="max_retries"):
        svcnb.Client(base_url="http://x.test", max_retries=-1)


def test_short_tokens_are_not_revealed_by_their_tail():
    # a held token shows as its mask wherever it is printed, formatted or repr'd
    assert str(svcnb.client.Secret("svc_abc")) == "svc_…"
    assert repr(svcnb.client.Secret("svc_abc")) == "Secret('svc_…')"
    assert str(svcnb.client.Secret("")) == "<none>"
    assert f"{svcnb.client.Secret(TOKEN)}" == "svc_…" + TOKEN[-4:]


def test_the_leak_scan_finds_a_token_in_a_log_line_or_an_error():
    import logging

    from _leakscan import LeakScan

    scan = LeakScan()
    scan.tokens.add(TOKEN)
    logger = logging.getLogger("svcnb.selftest")
    logger.addHandler(scan)
    logger.propagate = False
    try:
        logger.warning("sent key %s", TOKEN)
    finally:
        logger.removeHandler(scan)
    scan.add(ValueError(f"boom {TOKEN[:-1]}"))  # not the whole token: not a leak
    assert [where for where, _ in scan.leaks()] == ["log svcnb.selftest"]


def test_a_write_that_never_got_an_answer_says_it_may_have_been_applied(fake, make_client):
    def fault(request):
        raise httpx.ReadError("connection reset", request=request)

    fake.fault = fault
    client = make_client(fake, sleep=False, max_retries=1)
    with pytest.raises(TransportError, match="may have been applied") as info:
        client.vms.stop("vm_0001")
    key = fake.requests[-1].headers["idempotency-key"]
    assert key in str(info.value)
    assert {r.headers["idempotency-key"] for r in fake.requests} == {key}
