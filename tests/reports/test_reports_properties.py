"""Properties: the port/IP parser never raises; a rule called shadowed really is covered."""

from __future__ import annotations

import functools
import ipaddress
import itertools

import pandas as pd
from _fuzz import fuzz
from hypothesis import given
from hypothesis import strategies as st

from svcnb.reports import firewall
from svcnb.reports.firewall import parse_ips, parse_port


@given(st.text())
def test_port_parser_never_raises_on_any_string(text):
    got = parse_port(text)
    assert got.ok != bool(got.error)
    if got.ok and not got.any:
        assert all(0 <= lo <= hi <= 65535 for lo, hi in got.ranges)


@given(st.one_of(st.none(), st.integers(), st.floats(), st.binary(), st.lists(st.integers())))
def test_port_parser_never_raises_on_other_values(value):
    parse_port(value)


@given(
    st.one_of(
        st.lists(
            st.one_of(st.text(), st.none(), st.integers(), st.from_regex(r"[0-9./:a-f]{1,20}"))
        ),
        st.text(),
        st.none(),
        st.integers(),
    )
)
def test_ip_parser_never_raises(values):
    got = parse_ips(values)
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        assert got.size == len(values)


# --- shadowing soundness, checked against a brute-force packet model --------------------------

PORT_WORDS = st.one_of(
    st.just("any"),
    st.just(""),
    st.builds(str, st.integers(20, 25)),
    st.builds(lambda a, b: f"{min(a, b)}-{max(a, b)}", st.integers(20, 25), st.integers(20, 25)),
    st.builds(lambda a, b: f"{a},{b}", st.integers(20, 25), st.integers(20, 25)),
)
NETS = st.one_of(
    st.builds(lambda i, p: f"10.0.0.{i}/{p}", st.integers(0, 7), st.integers(29, 32)),
    st.just("0.0.0.0/0"),
    st.just("::/0"),
    st.just("2001:db8::/126"),
    st.just("2001:db8::4/127"),
)
# A few common lists drawn often, so that earlier rules often do cover later ones.
COMMON_LISTS = st.sampled_from(
    [
        [],
        ["0.0.0.0/0"],
        ["0.0.0.0/0", "::/0"],
        ["10.0.0.0/29"],
        ["10.0.0.0/30"],
        ["10.0.0.4/30", "10.0.0.0/30"],
        ["10.0.0.1/32"],
        ["2001:db8::/126"],
    ]
)
IP_LISTS = st.one_of(COMMON_LISTS, st.lists(NETS, max_size=3))
RULES = st.fixed_dictionaries(
    {
        "position": st.integers(0, 5),
        "direction": st.sampled_from(["IN", "OUT"]),
        "action": st.sampled_from(["ACCEPT", "DROP"]),
        "protocol": st.sampled_from(["TCP", "UDP", "ICMP", "ANY"]),
        "port": PORT_WORDS,
        "source_ips": IP_LISTS,
        "dest_ips": st.one_of(st.just([]), COMMON_LISTS),
    }
)

PACKET_PORTS = [0, 19, 20, 21, 22, 23, 24, 25, 26, 65535]
PACKET_IPS = [ipaddress.ip_address(f"10.0.0.{i}") for i in range(9)] + [
    ipaddress.ip_address(a) for a in ("192.0.2.1", "2001:db8::1", "2001:db8::5", "2001:db8::9")
]


def _ports_of(text):
    if text in ("", "any"):
        return None  # every port
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


@functools.cache
def _net(text):
    return ipaddress.ip_network(text, strict=False)


def _ip_in(ip, nets):
    return not nets or any(ip in _net(n) for n in nets)


def matches(r, proto, port, src, dst, direction, ported_any_matches_portless):
    """Does rule ``r`` match this packet, under one reading of what the spec leaves open?

    The open point: whether an ANY rule with a port filter matches portless (ICMP) traffic.
    A rule is really covered when it is covered under each reading, applied to both rules alike.
    """
    if r["direction"] != direction or r["protocol"] not in ("ANY", proto):
        return False
    ports = _ports_of(r["port"])
    if port is None:
        if r["protocol"] == "ANY" and ports is not None and not ported_any_matches_portless:
            return False
    elif ports is not None and port not in ports:
        return False
    return _ip_in(src, r["source_ips"]) and _ip_in(dst, r["dest_ips"])


def packets():
    for direction, proto in itertools.product(["IN", "OUT"], ["TCP", "UDP", "ICMP"]):
        for port in [None] if proto == "ICMP" else PACKET_PORTS:
            for src, dst in itertools.product(PACKET_IPS, PACKET_IPS[::4]):
                yield proto, port, src, dst, direction


@fuzz(200)
@given(st.lists(RULES, min_size=2, max_size=5))
def test_a_rule_flagged_as_shadowed_is_really_covered(rules):
    for i, r in enumerate(rules):
        r["id"] = f"r{i}"
        r["firewall_id"] = "fw"
    frame = pd.DataFrame(rules)
    by_id = {r["id"]: r for r in rules}
    for row in firewall.shadowing(frame).itertuples():
        later, earlier = by_id[row.rule_id], by_id[row.by_rule_id]
        assert earlier["position"] <= later["position"]
        for reading, pkt in itertools.product([True, False], packets()):
            if matches(later, *pkt, reading):
                assert matches(earlier, *pkt, reading), (earlier, later, pkt, reading)
