"""Byte-for-byte answers of the default dialect: a broad script of requests (reads, writes,
every failure class, both base paths, paging edges) replayed on a fresh sandbox and compared with
the answers recorded in ``golden/default.json`` before the dialect layer existed.

Set ``SVCNB_WRITE_GOLDEN=1`` to record the file again (only when a change of the default wire
form is intended).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import httpx
import pytest
from _loopback import loopback_client

from svcnb.sandbox import serve

GOLDEN = Path(__file__).parent / "golden" / "default.json"
# headers that depend on real time, not on the sandbox state
_VOLATILE_HEADERS = {"x-ratelimit-reset", "retry-after"}
_SECRETS = [
    (re.compile(r'"secret":"whsec_[0-9a-f]+"'), '"secret":"<secret>"'),
    (re.compile(r"Retry after \d+ seconds"), "Retry after <n> seconds"),
]
API = "/api/public/v1"


def _masked(text: str) -> str:
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def _record(name: str, response: httpx.Response) -> dict:
    headers = {
        k: v for k, v in sorted(response.headers.items()) if k.lower() not in _VOLATILE_HEADERS
    }
    if "content-length" in headers:
        headers["content-length"] = "<n>"  # masked bodies can change length
    return {
        "name": name,
        "status": response.status_code,
        "headers": headers,
        "body": _masked(response.text),
    }


def run_script(base_url: str, tokens: dict[str, str]) -> list[dict]:
    """Replay the script against a fresh seed-7, 40-VM sandbox and return what came back."""
    out: list[dict] = []
    http = loopback_client(base_url, timeout=30.0)
    control = loopback_client(base_url + "/_sandbox", timeout=30.0)
    admin = {"x-api-key": tokens["admin"]}
    read = {"x-api-key": tokens["read"]}

    def call(name: str, method: str, path: str, headers=admin, prefix=API, **kw) -> httpx.Response:
        response = http.request(method, prefix + path, headers=headers, **kw)
        out.append(_record(name, response))
        return response

    try:
        vms = call("vms page 1", "GET", "/vms").json()["data"]
        call("vms page 2 of 7", "GET", "/vms", params={"page": 2, "perPage": 7})
        call("vms perPage 100", "GET", "/vms", params={"perPage": 100})
        call("vms page beyond", "GET", "/vms", params={"page": 9, "perPage": 10})
        call("vms perPage 101", "GET", "/vms", params={"perPage": 101})
        call("vms page 0", "GET", "/vms", params={"page": 0})
        call("vms unknown query", "GET", "/vms", params={"sort": "name"})
        call("vms prefixed path", "GET", "/vms", prefix="/api/v1" + API, params={"perPage": 3})
        all_vms = http.get(API + "/vms", headers=admin, params={"perPage": 100}).json()["data"]
        for vm in all_vms:
            call(f"vm {vm['status']}", "GET", f"/vms/{vm['id']}")
        call("vm unknown", "GET", "/vms/vm_nope")
        running = [vm for vm in all_vms if vm["status"] == "running"]
        stopped = [vm for vm in all_vms if vm["status"] == "stopped"]
        call("stop running", "POST", f"/vms/{running[0]['id']}/stop")
        call("get stopping", "GET", f"/vms/{running[0]['id']}")
        call("stop stopped", "POST", f"/vms/{stopped[0]['id']}/stop")
        call("stop with read token", "POST", f"/vms/{running[1]['id']}/stop", headers=read)
        call("stop with body", "POST", f"/vms/{running[1]['id']}/stop", json={"x": 1})
        call("no token", "GET", "/vms", headers={})
        call("unknown token", "GET", "/vms", headers={"x-api-key": "svc_unknown"})
        call("no endpoint", "GET", "/nothing")
        call("wrong method", "DELETE", "/vms")
        call("outside prefix", "GET", "/api/public/v2/vms")

        firewalls = call("firewalls", "GET", "/firewalls").json()["data"]
        fw = firewalls[0]["id"]
        rules = call("rules", "GET", f"/firewalls/{fw}/rules").json()["data"]
        rule = rules[0]["id"]
        call("rules page 2", "GET", f"/firewalls/{fw}/rules", params={"page": 2, "perPage": 2})
        call("rules unknown firewall", "GET", "/firewalls/fw_nope/rules")
        call("patch rule", "PATCH", f"/firewalls/{fw}/rules/{rule}", json={"port": "2222"})
        call(
            "patch rule port 65", "PATCH", f"/firewalls/{fw}/rules/{rule}", json={"port": "9" * 65}
        )
        call("patch rule empty", "PATCH", f"/firewalls/{fw}/rules/{rule}", json={})
        call("patch rule unknown field", "PATCH", f"/firewalls/{fw}/rules/{rule}", json={"a": 1})
        call(
            "patch rule malformed",
            "PATCH",
            f"/firewalls/{fw}/rules/{rule}",
            content=b"{nope",
            headers={**admin, "content-type": "application/json"},
        )
        call("patch rule array", "PATCH", f"/firewalls/{fw}/rules/{rule}", json=[1])
        call(
            "patch rule sourceIps",
            "PATCH",
            f"/firewalls/{fw}/rules/{rule}",
            json={"sourceIps": ["1" * 65]},
        )

        networks = call("networks", "GET", "/networks").json()["data"]
        call("networks page 2", "GET", "/networks", params={"page": 2, "perPage": 3})
        net = networks[0]
        call("attachments", "GET", f"/networks/{net['id']}/attachments")
        here = [
            vm
            for vm in all_vms
            if vm["region"]["slug"] == net["region"]["slug"] and vm["status"] != "terminated"
        ]
        elsewhere = [vm for vm in all_vms if vm["region"]["slug"] != net["region"]["slug"]]
        attached = {
            a["vmId"]
            for a in http.get(
                f"{API}/networks/{net['id']}/attachments", headers=admin, params={"perPage": 100}
            ).json()["data"]
        }
        free = [vm for vm in here if vm["id"] not in attached]
        path = f"/networks/{net['id']}/attachments"
        call("attach", "POST", path, json={"vmId": free[0]["id"]})
        call("attach twice", "POST", path, json={"vmId": free[0]["id"]})
        call("attach mismatch", "POST", path, json={"vmId": elsewhere[0]["id"]})
        call("attach bad ip", "POST", path, json={"vmId": free[1]["id"], "privateIp": "1.2.3.4"})
        call("attach ip", "POST", path, json={"vmId": free[1]["id"], "privateIp": "10.10.9.9"})
        call(
            "attach ip taken", "POST", path, json={"vmId": free[2]["id"], "privateIp": "10.10.9.9"}
        )
        call("attach no vmId", "POST", path, json={})
        call("attach unknown vm", "POST", path, json={"vmId": "vm_nope"})
        call("detach", "DELETE", f"{path}/{free[0]['id']}")
        call("detach again", "DELETE", f"{path}/{free[0]['id']}")
        call("attachments after", "GET", path)

        call("wallet", "GET", "/wallet")
        call("wallet read token", "GET", "/wallet", headers=read)
        hooks = call("webhooks", "GET", "/webhooks").json()["data"]
        call("webhooks query", "GET", "/webhooks", params={"page": 1})
        for hook in hooks:
            call(f"deliveries {hook['description']}", "GET", f"/webhooks/{hook['id']}/deliveries")
        call(
            "deliveries page 2",
            "GET",
            f"/webhooks/{hooks[2]['id']}/deliveries",
            params={"page": 2, "perPage": 4},
        )
        new = {"url": "https://example.com/hook", "events": ["vm.stopped"], "description": "t"}
        created = call("create webhook", "POST", "/webhooks", json=new).json()["data"]
        call("create webhook http", "POST", "/webhooks", json={**new, "url": "http://x.example"})
        call("create webhook bad event", "POST", "/webhooks", json={**new, "events": ["nope"]})
        for i in range(8):
            call(f"create webhook {i}", "POST", "/webhooks", json={**new, "description": str(i)})
        call("patch webhook", "PATCH", f"/webhooks/{created['id']}", json={"description": "u"})
        call("re-enable over cap", "PATCH", f"/webhooks/{hooks[2]['id']}", json={"isActive": True})
        call("webhooks after", "GET", "/webhooks")

        key = {**admin, "idempotency-key": "k-1"}
        again = f"/webhooks/{created['id']}"
        call("idempotent first", "PATCH", again, headers=key, json={"description": "v"})
        call("idempotent replay", "PATCH", again, headers=key, json={"description": "v"})
        call("idempotent other body", "PATCH", again, headers=key, json={"description": "w"})
        call(
            "idempotent cap",
            "POST",
            "/webhooks",
            headers={**admin, "idempotency-key": "k-2"},
            json=new,
        )

        made = control.post(
            "/tokens", json={"name": "gone", "scopes": ["vms:read"], "rateLimit": 2}
        ).json()["data"]
        limited = {"x-api-key": made["secret"]}
        call("limited 1", "GET", f"/vms/{vms[0]['id']}", headers=limited)
        call("limited 2", "GET", f"/vms/{vms[0]['id']}", headers=limited)
        call("limited 3", "GET", f"/vms/{vms[0]['id']}", headers=limited)
        old = control.post(
            "/tokens",
            json={"name": "old", "scopes": ["vms:read"], "expiresAt": "2026-10-01T00:00:00Z"},
        ).json()["data"]
        call("expired token", "GET", "/vms", headers={"x-api-key": old["secret"]})
        revoked = control.post("/tokens", json={"name": "rev", "scopes": ["vms:read"]}).json()
        control.post(f"/tokens/{revoked['data']['id']}/revoke")
        call("revoked token", "GET", "/vms", headers={"x-api-key": revoked["data"]["secret"]})
        control.post("/clock/advance", json={"seconds": 3600})
        call("vms after an hour", "GET", "/vms", params={"perPage": 100})
        call("wallet after an hour", "GET", "/wallet")
        control.put("/faults", json={"upstreamSyncFail": True})
        call("patch rule 502", "PATCH", f"/firewalls/{fw}/rules/{rule}", json={"port": "23"})
        control.put("/faults", json={})
        out.append(_record("openapi", http.get("/openapi.json")))
    finally:
        http.close()
        control.close()
    return out


def test_default_dialect_answers_are_unchanged() -> None:
    with serve(vms=40, seed=7, time_scale=0.0) as sb:
        got = run_script(sb.base_url, sb.tokens)
    if os.environ.get("SVCNB_WRITE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
        pytest.skip("golden file written")
    want = json.loads(GOLDEN.read_text())
    assert [r["name"] for r in got] == [r["name"] for r in want]
    for mine, theirs in zip(got, want, strict=True):
        assert mine == theirs, mine["name"]
