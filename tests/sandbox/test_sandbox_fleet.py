"""The seeded fleet: variety, the exact VM shape, and determinism (same seed, same bytes)."""

from __future__ import annotations

import re
from datetime import datetime

from _loopback import loopback_client

VM_KEYS = [
    "id",
    "name",
    "hostname",
    "status",
    "vcpu",
    "ram",
    "disk",
    "bandwidth",
    "networkSpeed",
    "network10gEnabled",
    "dailyBackupEnabled",
    "isProtected",
    "ipAddress",
    "region",
    "plan",
    "osTemplate",
    "billing",
    "createdAt",
    "bandwidthUsedBytes",
    "bandwidthPackBytes",
    "sshKeys",
    "firewalls",
    "privateNetworks",
    "updatedAt",
]
DETAIL_KEYS = {"sshKeys", "firewalls", "privateNetworks"}


def _is_time(value: object) -> bool:
    return isinstance(value, str) and datetime.fromisoformat(value.replace("Z", "+00:00"))


def _price_form(value: object) -> str:
    if isinstance(value, float | int) and not isinstance(value, bool):
        return "number"
    if isinstance(value, str):
        assert re.fullmatch(r"\d+\.\d{2}", value), value
        return "string"
    assert set(value) == {"amount", "currency"} and value["currency"] == "EUR", value
    return "object"


def check_vm_shape(vm: dict) -> None:
    assert list(vm) == VM_KEYS
    for key in ("id", "name", "hostname", "status", "bandwidthPackBytes"):
        assert isinstance(vm[key], str)
    for key in ("vcpu", "ram", "disk", "bandwidth", "networkSpeed"):
        assert isinstance(vm[key], int) and not isinstance(vm[key], bool)
    for key in ("network10gEnabled", "dailyBackupEnabled", "isProtected"):
        assert isinstance(vm[key], bool)
    assert vm["ipAddress"] is None or isinstance(vm["ipAddress"], str)
    assert vm["region"] is None or set(vm["region"]) == {"slug", "name"}
    if vm["plan"] is not None:
        assert {"slug", "name"} <= set(vm["plan"]) <= {"slug", "name", "priceMonthly"}
    if vm["osTemplate"] is not None:
        assert set(vm["osTemplate"]) == {"slug", "name", "version"}
    if vm["billing"] is not None:
        assert {"nextRenewalAt", "status"} <= set(vm["billing"])
        assert set(vm["billing"]) <= {"nextRenewalAt", "status", "priceMonthly"}
        assert vm["billing"]["nextRenewalAt"] is None or _is_time(vm["billing"]["nextRenewalAt"])
    assert _is_time(vm["createdAt"]) and _is_time(vm["updatedAt"])
    assert isinstance(vm["bandwidthUsedBytes"], int | float)
    assert int(vm["bandwidthPackBytes"]) > 0
    for key in vm["sshKeys"]:
        assert list(key) == ["id", "name", "fingerprint"]
    for ref in vm["firewalls"] + vm["privateNetworks"]:
        assert list(ref) == ["id", "name"]


def test_every_vm_has_exactly_the_spec_keys_and_types(api):
    summaries = api.all("/vms")
    assert len(summaries) == 40
    for summary in summaries:
        assert not DETAIL_KEYS & set(summary)
        full = api.data(f"/vms/{summary['id']}")
        check_vm_shape(full)
        assert {k: v for k, v in full.items() if k not in DETAIL_KEYS} == summary


def test_fleet_varies_every_field_the_reports_use(api):
    vms = [api.data(f"/vms/{s['id']}") for s in api.all("/vms")]
    assert len({vm["region"]["slug"] for vm in vms}) >= 3
    assert len({vm["plan"]["slug"] for vm in vms}) >= 3
    assert len({vm["osTemplate"]["slug"] for vm in vms}) >= 3
    assert {"running", "stopped"} <= {vm["status"] for vm in vms}
    assert len({vm["status"] for vm in vms}) >= 4
    for flag in ("isProtected", "dailyBackupEnabled", "network10gEnabled"):
        assert {vm[flag] for vm in vms} == {True, False}, flag
    prices = [
        vm["billing"]["priceMonthly"]
        for vm in vms
        if vm["billing"] and "priceMonthly" in vm["billing"]
    ]
    prices += [vm["plan"]["priceMonthly"] for vm in vms if "priceMonthly" in vm["plan"]]
    assert {_price_form(p) for p in prices} == {"number", "string", "object"}
    assert any(vm["sshKeys"] for vm in vms)
    assert any(vm["firewalls"] for vm in vms)
    assert any(vm["privateNetworks"] for vm in vms)
    assert any(vm["ipAddress"] is None for vm in vms)


def test_firewalls_include_risky_and_unparseable_rules(api):
    rules = [r for fw in api.all("/firewalls") for r in api.all(f"/firewalls/{fw['id']}/rules")]
    assert any(
        r["port"] == "22"
        and "0.0.0.0/0" in r["sourceIps"]
        and r["action"] == "ACCEPT"
        and r["direction"] == "IN"
        for r in rules
    )
    assert any(r["port"] == "ssh" for r in rules)
    assert any("10.0.0.300" in r["sourceIps"] for r in rules)
    for rule in rules:
        assert 0 <= rule["position"] <= 1000
        assert rule["direction"] in ("IN", "OUT")
        assert rule["action"] in ("ACCEPT", "DROP", "REJECT")
        assert rule["protocol"] in ("TCP", "UDP", "ICMP", "ESP", "GRE", "ANY")


def test_networks_attachments_wallet_and_webhooks_are_seeded(api):
    networks = api.all("/networks")
    assert networks and all(
        set(n) == {"id", "name", "region", "ipRange", "createdAt", "updatedAt"} for n in networks
    )
    attachments = [a for n in networks for a in api.all(f"/networks/{n['id']}/attachments")]
    assert attachments
    assert list(attachments[0]) == [
        "id",
        "vmId",
        "networkId",
        "privateIp",
        "netInterface",
        "attachedAt",
    ]
    wallet = api.data("/wallet")
    assert list(wallet) == ["id", "createdAt", "updatedAt", "balance"]
    webhooks = api.data("/webhooks")
    assert webhooks and all("secret" not in w for w in webhooks)
    assert all(w["url"].startswith("https://") and "127.0.0.1" not in w["url"] for w in webhooks)
    assert {w["isActive"] for w in webhooks} == {True, False}
    deliveries = [d for w in webhooks for d in api.all(f"/webhooks/{w['id']}/deliveries")]
    assert {d["success"] for d in deliveries} == {True, False}
    assert all(1 <= d["attempts"] <= 3 for d in deliveries)


def _pages(base_url: str, token: str) -> list[bytes]:
    with loopback_client(base_url) as http:
        return [
            http.get(
                "/api/public/v1/vms", params={"page": p, "perPage": 7}, headers={"x-api-key": token}
            ).content
            for p in (1, 2, 3)
        ]


def test_two_runs_with_the_same_seed_serve_byte_identical_vm_pages(make_sandbox):
    first = make_sandbox(vms=25, seed=11)
    second = make_sandbox(vms=25, seed=11)
    other = make_sandbox(vms=25, seed=12)
    assert _pages(first.base_url, first.tokens["read"]) == _pages(
        second.base_url, second.tokens["read"]
    )
    assert _pages(first.base_url, first.tokens["read"]) != _pages(
        other.base_url, other.tokens["read"]
    )


def test_reset_serves_the_same_bytes_again(api, sandbox):
    before = api.get("/vms", params={"perPage": 40}).content
    vm_id = api.data("/vms")[0]["id"]
    sandbox.control.vm_action(vm_id, "touch")
    assert api.get("/vms", params={"perPage": 40}).content != before
    sandbox.control.reset(seed=7, vms=40)
    assert api.get("/vms", params={"perPage": 40}).content == before


def test_both_base_paths_serve_the_same_resource(api):
    canonical = api.get("/vms", params={"perPage": 5}).content
    alternate = api.get("/vms", params={"perPage": 5}, prefix="/api/v1/api/public/v1").content
    assert canonical == alternate


def test_fleet_size_follows_the_setting(make_sandbox):
    sb = make_sandbox(vms=3, seed=1)
    with loopback_client(sb.api_root, headers={"x-api-key": sb.tokens["read"]}) as http:
        assert http.get("/vms").json()["meta"]["total"] == 3
