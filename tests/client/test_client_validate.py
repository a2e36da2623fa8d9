"""Rule updates are checked against the spec's bounds before anything is sent."""

from __future__ import annotations

import json

import pytest
from _fakeapi import FakeApi, envelope

from svcnb.errors import ServerError, UpstreamSyncError

RULE = {
    "id": "r_1",
    "firewallId": "fw_1",
    "position": 10,
    "direction": "IN",
    "action": "ACCEPT",
    "protocol": "TCP",
    "port": "22",
    "sourceIps": [],
    "destIps": [],
    "description": "",
    "createdAt": "x",
    "updatedAt": "y",
}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"position": 1001}, "position must be from 0 to 1000, got 1001"),
        ({"position": -1}, "position must be from 0 to 1000"),
        ({"position": True}, "position must be an integer"),
        ({"position": "5"}, "position must be an integer"),
        ({"port": "x" * 65}, "port is at most 64 characters, got 65"),
        ({"port": "ssh"}, "port 'ssh' is not a port list"),
        ({"port": "70000"}, "is not a port list"),
        ({"port": "100-20"}, "runs backwards"),
        ({"port": 22}, "port must be a string"),
        ({"source_ips": "10.0.0.1"}, "source_ips must be a list"),
        ({"source_ips": ["10.0.0.1"] * 51}, "source_ips holds at most 50 items, got 51"),
        ({"dest_ips": ["10.0.0.300"]}, "dest_ips[0] '10.0.0.300' is not an IP address"),
        ({"destIps": ["1" * 65]}, "destIps[0] is at most 64 characters"),
        ({"description": "d" * 256}, "description is at most 255 characters, got 256"),
        ({"protocol": "UDP"}, "does not take 'protocol'"),
        ({"direction": "OUT"}, "does not take 'direction'"),
        ({"action": "DROP"}, "does not take 'action'"),
        ({"source_ips": [], "sourceIps": []}, "given twice"),
        ({}, "at least one field"),
    ],
)
def test_bad_fields_raise_before_anything_is_sent(make_client, fields, message):
    api = FakeApi()
    client = make_client(api)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        client.firewalls.update_rule("fw_1", "r_1", **fields)
    assert api.requests == []


def test_good_fields_are_sent_in_the_api_spelling(make_client):
    api = FakeApi()
    sent = []

    def patch(request):
        sent.append(json.loads(request.content))
        return envelope({**RULE, **sent[-1]})

    api.extra[("PATCH", "/firewalls/fw_1/rules/r_1")] = patch
    client = make_client(api)
    rule = client.firewalls.update_rule(
        "fw_1",
        "r_1",
        position=0,
        port="80,443,8000-8100",
        source_ips=["10.0.0.0/8", "::1"],
        dest_ips=[],
        description="web",
    )
    assert sent == [
        {
            "position": 0,
            "port": "80,443,8000-8100",
            "sourceIps": ["10.0.0.0/8", "::1"],
            "destIps": [],
            "description": "web",
        }
    ]
    assert rule["port"] == "80,443,8000-8100"
    client.firewalls.update_rule("fw_1", "r_1", port="any")
    client.firewalls.update_rule("fw_1", "r_1", port="")
    assert sent[1:] == [{"port": "any"}, {"port": ""}]


def test_a_502_carries_the_rule_as_re_read(make_client, leak_scan):
    api = FakeApi()
    stored = dict(RULE)

    def patch(request):
        stored.update(json.loads(request.content))
        return envelope("upstream security group sync failed", 502)

    api.extra[("PATCH", "/firewalls/fw_1/rules/r_1")] = patch
    api.extra[("GET", "/firewalls/fw_1/rules")] = lambda r: envelope(
        [stored], meta={"page": 1, "perPage": 100, "total": 1, "totalPages": 1}
    )
    client = make_client(api)
    with pytest.raises(UpstreamSyncError) as info:
        client.firewalls.update_rule("fw_1", "r_1", port="443")
    leak_scan.add(info.value)
    assert isinstance(info.value, ServerError) and info.value.status == 502
    assert info.value.rule["port"] == "443"
    assert "rule was saved" in str(info.value) and "'port': '443'" in str(info.value)
    assert [r.method for r in api.requests] == ["PATCH", "GET"]  # never re-sent
