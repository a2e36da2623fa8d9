"""Firewall audit on small hand-built firewalls."""

from __future__ import annotations

import pandas as pd
import pytest
from _firewall_rules import rule

from svcnb.reports import firewall


def checks(findings, rule_id=None):
    hit = findings if rule_id is None else findings[findings["rule_id"] == rule_id]
    return sorted(hit["check"])


def test_shadowed_rule_is_named_with_the_rule_that_covers_it(frame):
    rules = frame(
        "firewall_rules",
        [
            rule("allow-office", 10, port="20-30", src=["10.0.0.0/16"]),
            # Entirely inside allow-office (port 22 in 20-30, /24 in /16), opposite action.
            rule("drop-one", 20, a="DROP", port="22", src=["10.0.5.0/24"]),
        ],
    )
    got = firewall.shadowing(rules)
    assert got.to_dict("records") == [
        {
            "rule_id": "drop-one",
            "firewall_id": "fw1",
            "position": 20,
            "kind": "shadowed",
            "by_rule_id": "allow-office",
            "by_position": 10,
            "same_action": False,
        }
    ]
    found = firewall.audit(rules)
    row = found[found["check"] == "shadowed"].iloc[0]
    assert row["severity"] == "medium"
    assert row["related_rule_id"] == "allow-office"


def test_rules_that_only_look_shadowed_are_not_flagged(frame):
    rules = frame(
        "firewall_rules",
        [
            rule("a", 10, port="22", src=["10.0.0.0/24"]),
            # wider source than a: 10.0.0.0/16 is not inside 10.0.0.0/24
            rule("b", 20, port="22", src=["10.0.0.0/16"]),
            # same port and source but UDP
            rule("c", 30, p="UDP", port="22", src=["10.0.0.0/24"]),
            # same match but outbound
            rule("d", 40, d="OUT", port="22", src=["10.0.0.0/24"]),
            # one port outside a's
            rule("e", 50, port="22,23", src=["10.0.0.0/24"]),
            # same match but in another firewall
            rule("f", 60, fw="fw2", port="22", src=["10.0.0.0/24"]),
            # a port that does not parse is never called shadowed
            rule("g", 70, port="ssh", src=["10.0.0.0/24"]),
        ],
    )
    assert firewall.shadowing(rules).empty


def test_union_of_earlier_sources_covers(frame):
    rules = frame(
        "firewall_rules",
        [
            rule("halves", 1, port="any", src=["10.0.0.0/25", "10.0.0.128/25"]),
            rule("whole", 2, port="443", src=["10.0.0.0/24"]),
        ],
    )
    got = firewall.shadowing(rules)
    assert list(got["rule_id"]) == ["whole"]
    assert list(got["same_action"]) == [True]


def test_exact_duplicate_and_same_position(frame):
    rules = frame(
        "firewall_rules",
        [
            rule("first", 5, port="80,443", src=["192.0.2.0/24"]),
            rule("again", 9, port="443,80", src=["192.0.2.7/24"]),  # same set, host bits set
            rule("tie", 5, a="DROP", port="80", src=["192.0.2.0/24"]),  # same position: unordered
        ],
    )
    got = firewall.shadowing(rules)
    assert got[["rule_id", "kind", "by_rule_id"]].values.tolist() == [
        ["again", "duplicate", "first"]
    ]


def test_exposed_sensitive_ports_and_any_protocol(frame):
    rules = frame(
        "firewall_rules",
        [
            rule("ssh-world", 1, port="22", src=[]),
            rule("db-world", 2, port="5000-6000", src=["0.0.0.0/0"]),  # 5432 PostgreSQL in range
            rule("ssh-office", 3, port="22", src=["203.0.113.0/24"]),
            rule("ssh-out", 4, d="OUT", port="22", src=[]),
            rule("ssh-drop", 5, a="DROP", port="22", src=[]),
            rule("web", 6, port="80,443", src=["::/0"]),
            rule("any-proto", 7, p="ANY", port="any", src=["198.51.100.0/24"]),
            rule("icmp", 8, p="ICMP", port="", src=[]),
        ],
    )
    found = firewall.audit(rules)
    exposed = found[found["check"] == "exposed_sensitive_port"]
    assert sorted(exposed["rule_id"]) == ["db-world", "ssh-world"]
    assert set(exposed["severity"]) == {"high"}
    assert "PostgreSQL (5432)" in exposed.set_index("rule_id").loc["db-world", "reason"]
    anyp = found[found["check"] == "accept_any_protocol"]
    assert anyp[["rule_id", "severity"]].values.tolist() == [["any-proto", "medium"]]
    assert checks(found, "web") == []
    assert checks(found, "icmp") == []


def test_unparsed_values_and_near_cap_lists_are_findings(frame):
    big = [f"10.1.{i}.0/24" for i in range(46)]
    rules = frame(
        "firewall_rules",
        [
            rule("bad-port", 1, port="ssh", src=["10.0.0.0/8"]),
            rule("bad-ip", 2, port="22", src=["10.0.0.300"]),
            rule("big", 3, a="DROP", port="25", src=big),
            rule("reversed", 4, port="90-80", src=["10.0.0.0/8"]),
        ],
    )
    found = firewall.audit(rules)
    assert checks(found, "bad-port") == ["unparsed_port"]
    assert checks(found, "bad-ip") == ["unparsed_ip"]
    assert "10.0.0.300" in found.set_index("rule_id").loc["bad-ip", "reason"]
    assert checks(found, "big") == ["ip_list_near_cap"]
    assert "46 of the 50" in found.set_index("rule_id").loc["big", "reason"]
    assert checks(found, "reversed") == ["unparsed_port"]


def test_affected_vms_and_unprotected(frame):
    rules = frame("firewall_rules", [rule("ssh-world", 1, fw="fw1", port="22", src=[])])
    firewalls = frame("firewalls", [{"id": "fw1", "name": "web"}, {"id": "fw2", "name": "spare"}])
    vms = frame(
        "vms",
        [
            {"id": "v1", "name": "one", "status": "running"},
            {"id": "v2", "name": "two", "status": "stopped"},
            {"id": "v3", "name": "three", "status": "running"},
            {"id": "v4", "name": "gone", "status": "terminated"},
        ],
    )
    links = frame(
        "vm_firewalls",
        [
            {"vm_id": "v2", "firewall_id": "fw1"},
            {"vm_id": "v1", "firewall_id": "fw1"},
            {"vm_id": "v4", "firewall_id": "fw2"},  # a terminated VM protects nothing
        ],
    )
    found = firewall.audit(rules, links, firewalls, vms)
    exposed = found[found["check"] == "exposed_sensitive_port"].iloc[0]
    assert exposed["affected_vms"] == ["v1", "v2"]
    assert exposed["affected_vm_count"] == 2
    assert exposed["firewall_name"] == "web"
    bare = found[found["check"] == "vm_without_firewall"]
    assert list(bare["vm_id"]) == ["v3"]
    lonely = found[found["check"] == "firewall_unattached"]
    assert list(lonely["firewall_id"]) == ["fw2"]
    # worst first
    assert found["severity"].iloc[0] == "high"


def test_rule_changes_from_a_diff(frame):
    diff = pd.DataFrame(
        {
            "id": ["r1", "r1", "r2", "r3"],
            "change": ["changed", "changed", "added", "removed"],
            "column": ["port", "source_ips", None, None],
            "before": ["22", ["10.0.0.0/8"], None, None],
            "after": ["2222", [], None, None],
        }
    )
    after = frame(
        "firewall_rules",
        [rule("r1", 10, port="2222"), rule("r2", 20, fw="fw2")],
    )
    got = firewall.rule_changes(diff, None, after)
    assert got["rule_id"].tolist() == ["r1", "r2", "r3"]
    assert got["change"].tolist() == ["changed", "added", "removed"]
    assert got["columns"].iloc[0] == ["port", "source_ips"]
    assert got["detail"].iloc[0] == "port: '22' -> '2222'; source_ips: ['10.0.0.0/8'] -> []"
    assert got["firewall_id"].tolist()[:2] == ["fw1", "fw2"]


def test_plot_findings_counts_per_check(frame):
    rules = frame(
        "firewall_rules",
        [
            rule("a", 1, port="22", src=[]),
            rule("b", 2, port="3389", src=[]),
            rule("c", 3, port="ssh"),
        ],
    )
    ax = firewall.plot_findings(firewall.audit(rules))
    bars = {
        t.get_text(): p.get_width() for t, p in zip(ax.get_yticklabels(), ax.patches, strict=True)
    }
    # each check in words, never its code
    # c accepts from any source (no list) on a port it cannot read: it may be open to every port
    assert bars == {"Sensitive port open to any source (high)": 2, "Port not readable (high)": 1}
    ax.figure.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks and all(t.isdigit() for t in ticks), ticks  # whole counts, never "0.5"
    assert firewall.plot_findings(firewall.audit(rules)).xaxis.get_major_formatter()(2000, 0) == (
        "2,000"
    )


@pytest.mark.parametrize("bad", ["ssh", "22-", "-1", "70000", "1,,2", "２２"])
def test_port_forms_that_do_not_parse(bad):
    from svcnb.reports.firewall import parse_port

    assert parse_port(bad).error
