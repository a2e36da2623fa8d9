"""Reachability on small hand-built firewalls, and against the audit on a sandbox fleet."""

from __future__ import annotations

import pandas as pd
import pytest
from _firewall_rules import rule

import svcnb
from svcnb import frames
from svcnb.reports import firewall

# the fleet fixture holds a status word no vocabulary knows, on purpose
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture
def fleet(frame):
    """v1, v2 behind fw1 (v2 also behind fw2), v3 bare, v4 terminated, v5 of unknown status."""
    vms = frame(
        "vms",
        [
            {"id": "v1", "name": "web-1", "status": "running"},
            {"id": "v2", "name": "web-2", "status": "stopped"},
            {"id": "v3", "name": "bare", "status": "running"},
            {"id": "v4", "name": "gone", "status": "terminated"},
            {"id": "v5", "name": "odd", "status": "frobnicated"},
        ],
    )
    links = frame(
        "vm_firewalls",
        [
            {"vm_id": "v1", "firewall_id": "fw1", "name": "web"},
            {"vm_id": "v2", "firewall_id": "fw1", "name": "web"},
            {"vm_id": "v2", "firewall_id": "fw2", "name": "extra"},
            {"vm_id": "v4", "firewall_id": "fw1", "name": "web"},
            {"vm_id": "v5", "firewall_id": "fw1", "name": "web"},
        ],
    )
    return vms, links


def one(frame, rules, source, port=22, protocol="TCP", **kw):
    """reach() for a lone VM v1 behind fw1, as one row."""
    vms = frame("vms", [{"id": "v1", "name": "web-1", "status": "running"}])
    links = frame("vm_firewalls", [{"vm_id": "v1", "firewall_id": "fw1", "name": "web"}])
    got = firewall.reach(
        frame("firewall_rules", rules),
        links,
        vms,
        source=source,
        port=port,
        protocol=protocol,
        **kw,
    )
    assert len(got) == 1
    return got.iloc[0]


def test_first_match_by_position_decides(frame):
    rules = [
        rule("late-accept", 20, port="22"),
        rule("early-drop", 10, a="DROP", port="22", src=["203.0.113.0/24"]),
    ]
    row = one(frame, rules, "203.0.113.5")
    assert (row["verdict"], row["rule_id"], row["position"], row["action"]) == (
        "denied",
        "early-drop",
        10,
        "DROP",
    )
    assert not row["allowed"]
    assert row["firewall_id"] == "fw1" and row["firewall_name"] == "web"
    assert pd.isna(row["default_assumed"])
    # outside the dropped range the later ACCEPT decides
    row = one(frame, rules, "198.51.100.9")
    assert (bool(row["allowed"]), row["rule_id"]) == (True, "late-accept")


def test_cidr_containment_and_partial_sources(frame):
    rules = [rule("office", 10, port="22", src=["10.0.0.0/16"])]
    assert one(frame, rules, "10.0.42.7")["allowed"]
    assert one(frame, rules, "10.0.5.0/24")["allowed"]  # a network inside the range
    outside = one(frame, rules, "10.1.0.1")
    assert outside["verdict"] == "no rule matches: default DROP"
    assert outside["default_assumed"] == "DROP" and not outside["allowed"]
    # from anywhere: the office rule covers only part of it, and the answer says so
    world = one(frame, rules, "0.0.0.0/0")
    assert world["verdict"] == "no rule matches: default DROP"
    assert world["partial_rule_ids"] == ["office"]
    assert "part of 0.0.0.0/0" in world["reason"]


@pytest.mark.parametrize(
    ("port_text", "port", "allowed"),
    [
        ("8000-8100", 8050, True),
        ("8000-8100", 8101, False),
        ("80,443", 443, True),
        ("80,443", 8080, False),
        ("any", 5, True),
        # an empty port on TCP: every port at some services, none at others; unread
        ("", 6379, None),
        ("0", 6379, None),  # DigitalOcean's every port, port 0 elsewhere
    ],
)
def test_port_ranges_lists_and_any(frame, port_text, port, allowed):
    row = one(frame, [rule("r", 1, port=port_text)], "192.0.2.1", port=port)
    if allowed is None:
        assert row["verdict"] == "unknown" and pd.isna(row["allowed"]), row
    else:
        assert bool(row["allowed"]) is allowed


def test_icmp_with_empty_port_and_protocols(frame):
    rules = [rule("tcp", 1, port="any"), rule("ping", 2, p="ICMP", port="")]
    row = one(frame, rules, "192.0.2.1", port=None, protocol="ICMP")
    assert (row["rule_id"], row["verdict"]) == ("ping", "allowed")
    assert pd.isna(row["port"])
    # UDP matches neither rule
    assert one(frame, rules, "192.0.2.1", port=53, protocol="UDP")["rule_id"] is pd.NA
    with pytest.raises(ValueError, match="need a port"):
        one(frame, rules, "192.0.2.1", port=None, protocol="TCP")


@pytest.mark.parametrize(
    "bad",
    [
        rule("bad", 5, port="ssh"),
        rule("bad", 5, src=["10.0.0.300"]),
    ],
)
def test_an_unreadable_rule_before_a_decision_is_unknown(frame, bad):
    row = one(frame, [bad, rule("ok", 10, port="22")], "192.0.2.1")
    assert row["verdict"] == "unknown" and pd.isna(row["allowed"])
    assert row["rule_id"] == "bad"
    assert "cannot be evaluated" in row["reason"]
    assert ("ssh" in row["reason"]) or ("10.0.0.300" in row["reason"])


def test_an_unreadable_rule_that_cannot_match_or_comes_later_does_not_matter(frame):
    rules = [
        rule("udp-bad", 1, p="UDP", port="ssh"),  # never TCP, whatever its port says
        rule("ok", 10, port="22"),
        rule("late-bad", 20, port="ssh"),
    ]
    row = one(frame, rules, "192.0.2.1")
    assert (row["verdict"], row["rule_id"]) == ("allowed", "ok")


def test_same_position_with_different_actions_is_unknown(frame):
    rules = [rule("a", 5, port="22"), rule("b", 5, a="DROP", port="22")]
    row = one(frame, rules, "192.0.2.1")
    assert row["verdict"] == "unknown" and "does not order them" in row["reason"]


def test_the_whole_fleet_several_firewalls_terminated_unknown_and_bare(frame, fleet):
    vms, links = fleet
    rules = frame(
        "firewall_rules",
        [
            rule("web-ssh", 20, fw="fw1", port="22"),
            rule("extra-drop", 10, fw="fw2", a="DROP", port="22"),  # earlier, other firewall
        ],
    )
    got = firewall.reach(rules, links, vms, source="0.0.0.0/0", port=22).set_index("vm_id")
    assert sorted(got.index) == ["v1", "v2", "v3", "v5"]  # v4 is terminated
    assert got.loc["v1", "verdict"] == "allowed" and got.loc["v1", "rule_id"] == "web-ssh"
    # v2's firewalls are pooled by position: fw2's DROP at 10 comes first
    assert got.loc["v2", "verdict"] == "denied"
    assert (got.loc["v2", "firewall_id"], got.loc["v2", "firewall_name"]) == ("fw2", "extra")
    assert got.loc["v3", "verdict"] == "no rule matches: default ACCEPT"
    assert got.loc["v3", "default_assumed"] == "ACCEPT"
    assert "no firewall attached" in got.loc["v3", "reason"]
    assert bool(got.loc["v5", "unknown_status"]) and not bool(got.loc["v1", "unknown_status"])

    by_name = firewall.reach(rules, links, vms, source="any", port=22, vm="web-2")
    assert list(by_name["vm_id"]) == ["v2"]
    with pytest.raises(ValueError, match="terminated"):
        firewall.reach(rules, links, vms, source="any", port=22, vm="v4")
    with pytest.raises(ValueError, match="no VM"):
        firewall.reach(rules, links, vms, source="any", port=22, vm="nope")


def test_vm_side_addresses_use_the_vm_address(frame):
    vms = pd.DataFrame(
        {
            "id": ["v1", "v2", "v3"],
            "name": ["a", "b", "c"],
            "status": ["running"] * 3,
            "ip_address": pd.array(["192.0.2.10", "192.0.2.20", None], dtype="string"),
        }
    )
    links = frame("vm_firewalls", [{"vm_id": v, "firewall_id": "fw1"} for v in ("v1", "v2", "v3")])
    rules = frame("firewall_rules", [rule("only-a", 1, port="22", dst=["192.0.2.10/32"])])
    got = firewall.reach(rules, links, vms, source="any", port=22).set_index("vm_id")
    assert got["verdict"].to_dict() == {
        "v1": "allowed",
        "v2": "no rule matches: default DROP",
        "v3": "unknown",
    }


def test_reach_diff_opens_and_closes(frame, fleet):
    vms, links = fleet
    before = frame(
        "firewall_rules",
        [
            rule("ssh", 10, fw="fw1", port="22", src=["203.0.113.0/24"]),
            rule("web", 20, fw="fw1", port="80,443"),
            rule("other", 5, fw="fw3", port="3389"),
        ],
    )
    after = before.copy()
    after.at[0, "source_ips"] = []  # ssh from the office range -> from anywhere
    after.at[1, "port"] = "443"  # plain http closed
    diff = firewall.reach_diff(before, after, links, vms)
    got = {(c, p, s, v) for c, p, s, v in diff[["change", "port", "source", "vm_name"]].values}
    assert got == {
        (change, port, "0.0.0.0/0", vm)
        for change, port in (("opened", 22), ("closed", 80))
        for vm in ("web-1", "web-2", "odd")
    }  # the office flow stays allowed, and fw3 protects no VM
    words = firewall.reach_diff_words(diff)
    assert "opens 22/TCP from anywhere to 3 VMs: web-1, web-2, odd" in words
    assert "closes 80/TCP from anywhere to 3 VMs: web-1, web-2, odd" in words
    assert firewall.reach_diff(before, before, links, vms).empty


def test_reach_diff_on_given_flows_and_unknown(frame, fleet):
    vms, links = fleet
    before = frame("firewall_rules", [rule("ssh", 10, fw="fw1", port="22")])
    after = frame("firewall_rules", [rule("ssh", 10, fw="fw1", port="ssh")])
    diff = firewall.reach_diff(
        before, after, links, vms, flows=[{"source": "198.51.100.1", "port": 22}]
    )
    assert set(diff["change"]) == {"became unknown"}
    assert set(diff["vm_id"]) == {"v1", "v2", "v5"}
    assert (diff["source"] == "198.51.100.1/32").all()


def test_reach_over_the_sandbox_fleet_agrees_with_the_audit(sandbox):
    with svcnb.Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client:
        full = client.vms.all(details=True)
        fws = client.firewalls.list()
        raw = [r for fw in fws for r in client.firewalls.rules(fw["id"])]
    vms, links = frames.vms(full), frames.vm_firewalls(full)
    rules = frames.firewall_rules(raw)
    got = firewall.reach(rules, links, vms, source="0.0.0.0/0", port=22)
    findings = firewall.audit(rules, links, frames.firewalls(fws), vms)
    exposed = findings[
        (findings["check"] == "exposed_sensitive_port")
        & findings["reason"].str.contains("(22)", regex=False)
    ]
    assert not exposed.empty, "the seed exposes SSH somewhere"
    live = set(got["vm_id"])
    exposing: dict[str, list[tuple[int, str]]] = {}
    for f in exposed.itertuples():
        for vm in f.affected_vms:
            exposing.setdefault(vm, []).append((f.position, f.rule_id))
    assert set(exposing) <= live
    rows = got.set_index("vm_id")
    for vm_id, row in rows.iterrows():
        if row["verdict"] == "allowed" and row["rule_id"] is not pd.NA:
            # an ACCEPT of 22 from anywhere is exactly what the audit calls exposed
            assert (row["position"], row["rule_id"]) in exposing.get(vm_id, []), vm_id
        if vm_id in exposing:
            first = min(exposing[vm_id])
            if row["verdict"] == "allowed":
                assert row["position"] <= first[0]
            else:
                # an exposed VM that reach() calls closed: something earlier decided first
                assert row["verdict"] in ("denied", "unknown"), (vm_id, row["verdict"])
                assert row["position"] <= first[0]
    # VMs with no firewall are the audit's vm_without_firewall
    bare = set(findings.loc[findings["check"] == "vm_without_firewall", "vm_id"])
    assert bare == set(rows.index[rows["reason"].str.startswith("no firewall attached")])
