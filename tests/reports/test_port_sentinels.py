"""Port sentinels: ``"0"`` (every port at DigitalOcean, port 0 elsewhere) and an empty or
missing port on a TCP/UDP rule mean different things at different services. Unpinned, such a
rule is "could not read; may be open to every port", named by the audit and the reachability
answers, never read as port 0 nor silently as every port."""

from __future__ import annotations

import pytest
from _firewall_rules import rule

from svcnb.reports import firewall
from svcnb.reports.firewall import parse_port


def _pin(text: str, reading: str) -> None:
    import os
    from pathlib import Path

    Path(os.environ["SVCNB_CONFIG"]).write_text(
        f'[firewall.port_sentinels]\n"{text}" = "{reading}"\n'
    )


@pytest.mark.parametrize(("port", "protocol"), [("0", "TCP"), ("", "TCP"), (None, "UDP")])
def test_a_sentinel_is_unread_not_port_zero_nor_every_port(port, protocol):
    got = parse_port(port, protocol)
    assert not got.ok and not got.any and got.ranges == ()
    assert got.sentinel == ("" if port is None else port)
    assert "could not be read" in str(got.error) and "port_sentinels" in str(got.error)


@pytest.mark.parametrize("port", ["any", "ALL", "*", "0-65535"])
def test_words_and_ranges_that_mean_every_port_everywhere(port):
    assert parse_port(port, "TCP").any


def test_one_to_65535_is_every_usable_port_by_arithmetic():
    got = parse_port("1-65535", "TCP")
    assert got.ok and got.intersects([1, 22, 65535]) == [1, 22, 65535]


def test_an_empty_port_on_a_portless_protocol_is_no_filter():
    assert parse_port("", "ICMP").any and parse_port(None, "ESP").any


def test_the_audit_flags_a_world_open_port_zero_rule_as_maybe_every_port(frame):
    rules = frame(
        "firewall_rules",
        [
            rule("do-all", 10, port="0", src=["0.0.0.0/0"]),
            rule("blank", 20, p="UDP", port="", src=["10.0.0.0/8"]),
            rule("ping", 30, p="ICMP", port="", src=["0.0.0.0/0"]),
        ],
    )
    found = firewall.audit(rules)
    hit = found[found["rule_id"] == "do-all"]
    assert list(hit["check"]) == ["unparsed_port"]
    assert hit["severity"].iloc[0] == "high"
    assert "may be open to every port from any source" in hit["reason"].iloc[0]
    assert "port 0" in hit["reason"].iloc[0]  # says what it may mean, both readings
    blank = found[found["rule_id"] == "blank"]
    assert list(blank["check"]) == ["unparsed_port"] and blank["severity"].iloc[0] == "medium"
    assert found[found["rule_id"] == "ping"].empty or "unparsed_port" not in set(
        found.loc[found["rule_id"] == "ping", "check"]
    )
    assert found.attrs["unread_ports"] == {"do-all": "0", "blank": ""}


def test_a_pinned_sentinel_is_read_as_pinned(frame):
    rules = frame("firewall_rules", [rule("do-all", 10, port="0", src=["0.0.0.0/0"])])
    _pin("0", "every")
    found = firewall.audit(rules)
    exposed = found[found["check"] == "exposed_sensitive_port"]
    assert len(exposed) == 1 and "SSH (22)" in exposed["reason"].iloc[0]
    assert "unread_ports" not in found.attrs
    _pin("0", "zero")
    assert firewall.audit(rules).empty


def test_reach_names_the_rule_it_could_not_read_and_assumes_nothing(frame):
    vms = frame("vms", [{"id": "v1", "name": "web-1", "status": "running"}])
    links = frame("vm_firewalls", [{"vm_id": "v1", "firewall_id": "fw1", "name": "web"}])
    rules = frame("firewall_rules", [rule("do-all", 10, port="0", src=["0.0.0.0/0"])])
    got = firewall.reach(rules, links, vms, source="0.0.0.0/0", port=22)
    assert got["verdict"].tolist() == ["unknown"]
    assert got["rule_id"].tolist() == ["do-all"]
    said = got.attrs["unread_rules"]["do-all"]
    assert "assumed nothing" in said and "may be open to every port" in said


def test_reach_diff_words_name_an_edit_to_an_unread_port(frame):
    vms = frame("vms", [{"id": "v1", "name": "web-1", "status": "running"}])
    links = frame("vm_firewalls", [{"vm_id": "v1", "firewall_id": "fw1", "name": "web"}])
    before = frame("firewall_rules", [rule("r", 10, port="443", src=["0.0.0.0/0"])])
    after = frame("firewall_rules", [rule("r", 10, port="0", src=["0.0.0.0/0"])])
    lines = firewall.reach_diff_words(firewall.reach_diff(before, after, links, vms))
    assert any(line.startswith("could not read rule r") for line in lines), lines
    assert any("makes unknown 443/TCP" in line for line in lines), lines
