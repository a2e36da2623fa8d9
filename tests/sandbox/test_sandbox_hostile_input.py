"""Input the sandbox cannot store is refused with a 400 envelope and changes nothing; what is
stored can always be served; X-Forwarded-For counts only from proxies the operator names."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from sandbox_support import account_view, failure

from svcnb.cli import build_parser
from svcnb.sandbox import SandboxConfig, caller_ip, create_app

PREFIX = "/api/public/v1"


def _first_rule(api) -> tuple[str, dict]:
    fw = api.all("/firewalls")[0]
    return fw["id"], api.all(f"/firewalls/{fw['id']}/rules")[0]


def _patch_raw(api, fw_id: str, rule_id: str, raw: bytes) -> httpx.Response:
    return api.patch(
        f"/firewalls/{fw_id}/rules/{rule_id}",
        content=raw,
        headers={"content-type": "application/json"},
    )


def test_a_lone_surrogate_in_a_rule_description_is_refused_and_the_rules_still_read(api):
    fw_id, rule = _first_rule(api)
    before = api.all(f"/firewalls/{fw_id}/rules")
    error = failure(_patch_raw(api, fw_id, rule["id"], b'{"description": "x\\ud800y"}'), 400)
    assert "surrogate" in error and "U+D800" in error
    rules = api.get(f"/firewalls/{fw_id}/rules", params={"perPage": 100})
    assert rules.status_code == 200, rules.text
    assert rules.json()["data"] == before
    # a proper pair (an emoji escaped as two surrogates) is Unicode text and is stored
    fine = _patch_raw(api, fw_id, rule["id"], b'{"description": "ok \\ud83d\\ude00"}')
    assert fine.status_code == 200, fine.text
    assert fine.json()["data"]["description"] == "ok \U0001f600"
    assert api.get(f"/firewalls/{fw_id}/rules").status_code == 200


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        (b'{"description": "caf\xe9"}', "UTF-8"),
        (b'\xff\xfe{"description": "x"}', "UTF-8"),
        (b'{"description": "a", "description": "b"}', "duplicate key 'description'"),
        (b'{"position": NaN}', "NaN"),
        (b'{"position": Infinity}', "Infinity"),
        (b'{"position": 1e400}', "out of range"),
        (b'{"description": ' + b"[" * 33 + b"]" * 33 + b"}", "nested deeper than 32"),
        (b'{"description": ' + b"[" * 30000 + b"]" * 30000 + b"}", "nested deeper"),
        (b'{"description": ' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}", "nested deeper"),
    ],
    ids=["latin1", "utf16-bom", "duplicate", "nan", "infinity", "huge", "depth-33", "deep", "objs"],
)
def test_bodies_that_cannot_be_stored_are_a_400_that_changes_nothing(api, raw, names):
    fw_id, rule = _first_rule(api)
    before = account_view(api)
    error = failure(_patch_raw(api, fw_id, rule["id"], raw), 400)
    assert names in error
    assert account_view(api) == before


def test_nesting_within_the_limit_is_parsed_and_judged_by_the_rules(api):
    fw_id, rule = _first_rule(api)
    raw = b'{"description": ' + b"[" * 31 + b"]" * 31 + b"}"
    assert "description: must be a string" in failure(_patch_raw(api, fw_id, rule["id"], raw), 422)


def test_control_refuses_event_data_it_could_not_serve_and_events_still_read(sandbox):
    url = sandbox.control_url + "/events"
    before = httpx.get(url).json()["data"]
    for raw in (
        b'{"type": "vm.created", "data": {"note": "\\udfff"}}',
        b'{"type": "vm.created", "data": {"n": NaN}}',
        b'{"type": "vm.created", "data": ' + b'{"a":' * 40 + b"1" + b"}" * 40 + b"}",
    ):
        failure(httpx.post(url, content=raw, headers={"content-type": "application/json"}), 400)
    after = httpx.get(url)
    assert after.status_code == 200 and after.json()["data"] == before


def test_a_stored_value_that_is_not_text_is_still_served(api, sandbox):
    """The route that serves never answers 500 for what a record holds."""
    fw_id, rule = _first_rule(api)
    with sandbox.state.lock:
        sandbox.state.backends.firewalls.rules[rule["id"]]["description"] = "bad \ud800 text"
    response = api.get(f"/firewalls/{fw_id}/rules", params={"perPage": 100})
    assert response.status_code == 200, response.text
    served = [r for r in response.json()["data"] if r["id"] == rule["id"]][0]
    assert served["description"] == "bad \ud800 text"  # the escape says what is stored


def _call(app, method: str, path: str, chunks: list[bytes], headers: dict[str, str], token: str):
    """One request straight into the ASGI app: the body arrives as ``chunks``; the client goes
    away before the body ended when the last chunk still says more was coming."""
    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    if chunks and chunks[-1] == b"<gone>":
        messages = messages[:-2] + [{**messages[-2], "more_body": True}]
        messages.append({"type": "http.disconnect"})
    sent: list[dict] = []

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    raw_headers = [(k.encode(), v.encode()) for k, v in {**headers, "x-api-key": token}.items()]
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": raw_headers,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 80),
        "scheme": "http",
        "http_version": "1.1",
    }
    asyncio.run(app(scope, receive, send))
    status = sent[0]["status"]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return status, json.loads(body)


def test_a_body_cut_off_by_a_disconnect_or_short_of_its_length_is_not_applied():
    app = create_app(SandboxConfig(vms=3, seed=5))
    state = app.state.sandbox
    token = state.default_secrets["admin"]
    rule = state.backends.firewalls.all_rules()[0]
    path = f"{PREFIX}/firewalls/{rule['firewallId']}/rules/{rule['id']}"
    original = dict(rule)
    whole = b'{"description": "changed"}'
    cases = [
        # the client went away after the first half, while more body was announced
        ([whole[:13], b"<gone>"], {"content-type": "application/json"}, "disconnected"),
        # a body that parses as JSON but is shorter than its Content-Length
        ([b'{"position": 1}'], {"content-length": "40"}, "Content-Length says 40"),
    ]
    for chunks, headers, names in cases:
        status, body = _call(app, "PATCH", path, chunks, headers, token)
        assert status == 400 and body["success"] is False, body
        assert names in body["error"]
        assert state.backends.firewalls.rules[rule["id"]] == original
    status, body = _call(app, "PATCH", path, [whole[:10], whole[10:]], {}, token)
    assert status == 200 and body["data"]["description"] == "changed"


# -- X-Forwarded-For ------------------------------------------------------------------------------
def _anonymous(sb, forwarded_for: str | None) -> int:
    headers = {"x-forwarded-for": forwarded_for} if forwarded_for else {}
    return httpx.get(sb.api_root + "/vms", headers=headers).status_code


def test_a_spoofed_forwarded_for_from_an_untrusted_peer_gets_no_fresh_bucket(make_sandbox):
    sb = make_sandbox(vms=2, ip_rate_limit=2)
    assert [_anonymous(sb, f"203.0.113.{i}") for i in range(1, 4)] == [401, 401, 429]
    assert _anonymous(sb, "198.51.100.77") == 429
    assert _anonymous(sb, None) == 429


def test_forwarded_for_counts_from_a_proxy_the_operator_named(make_sandbox):
    sb = make_sandbox(vms=2, ip_rate_limit=1, trusted_proxies=["127.0.0.1"])
    assert _anonymous(sb, "203.0.113.1") == 401
    assert _anonymous(sb, "203.0.113.1") == 429
    assert _anonymous(sb, "203.0.113.2") == 401  # another caller behind the proxy
    # the caller cannot prepend its own hops: the rightmost untrusted one counts
    assert _anonymous(sb, "10.9.9.9, 203.0.113.2") == 429
    assert _anonymous(sb, None) == 401  # the proxy's own requests count as the proxy's


def test_trusted_proxies_through_control_settings(make_sandbox):
    sb = make_sandbox(vms=2, ip_rate_limit=1)
    settings = sb.control.settings()
    assert "trustedProxies" not in settings  # listed once set
    assert _anonymous(sb, "203.0.113.1") == 401
    assert _anonymous(sb, "203.0.113.2") == 429
    changed = sb.control.settings(trustedProxies=["127.0.0.0/8", "::1"])
    assert changed["trustedProxies"] == ["127.0.0.0/8", "::1"]
    assert _anonymous(sb, "203.0.113.3") == 401
    assert _anonymous(sb, "203.0.113.3") == 429
    bad = httpx.put(sb.control_url + "/settings", json={"trustedProxies": ["proxy.local"]})
    assert "not an IP address" in failure(bad, 422)
    sb.control.reset()
    assert "trustedProxies" not in sb.control.settings()


def test_trusted_proxy_option_of_the_cli_and_the_config():
    args = build_parser("sandbox").parse_args(
        ["sandbox", "--trusted-proxy", "10.0.0.1", "--trusted-proxy", "192.168.0.0/16"]
    )
    assert args.trusted_proxy == ["10.0.0.1", "192.168.0.0/16"]
    assert SandboxConfig(trusted_proxies=["10.0.0.1/32"]).trusted_proxies == ("10.0.0.1",)
    with pytest.raises(ValueError, match="not an IP address"):
        SandboxConfig(trusted_proxies=["gateway"])


@pytest.mark.parametrize(
    ("peer", "header", "proxies", "caller"),
    [
        ("127.0.0.1", "1.2.3.4", (), "127.0.0.1"),
        ("127.0.0.1", "1.2.3.4", ("10.0.0.1",), "127.0.0.1"),
        ("10.0.0.1", "1.2.3.4", ("10.0.0.1",), "1.2.3.4"),
        ("10.0.0.1", "1.2.3.4, 10.0.0.2", ("10.0.0.0/8",), "1.2.3.4"),
        ("10.0.0.1", "garbage, 1.2.3.4", ("10.0.0.1",), "1.2.3.4"),
        ("10.0.0.1", "1.2.3.4, garbage", ("10.0.0.1",), "10.0.0.1"),
        ("10.0.0.1", "[2001:db8::1]:443", ("10.0.0.1",), "2001:db8::1"),
        ("10.0.0.1", "5.6.7.8:1234", ("10.0.0.1",), "5.6.7.8"),
        ("10.0.0.1", "10.0.0.3", ("10.0.0.0/8",), "10.0.0.1"),
    ],
)
def test_caller_ip(peer, header, proxies, caller):
    assert caller_ip(peer, header, proxies) == caller
