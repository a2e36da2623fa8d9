"""Twins of the blind peers: servers written from the spec alone, choosing what the spec leaves
open in ways none of the sandbox's dialects do (``tests/peers/``).

``svcnb doctor --record`` on a peer, a snapshot of it into a store, and a twin from both
(``svcnb sandbox --from-store STORE --dialect-file FILE``). What the peer chose that the dialect
machinery cannot say must be in the file as not expressible (or not observed) and listed by the
twin at start; every doctor finding that differs between the peer and its twin must depend on a
point the twin listed, so the twin never speaks something else unsaid. What it does say as proven
(words, field names, base path, limit) is the peer's.
"""

from __future__ import annotations

import pytest
from peers import ledger, quill  # tests/ is on sys.path (pytest rootdir insertion)

from .roundtrip import accounted, peer_round_trip

# each peer's choices (its module docstring) the sandbox has no form for
CANNOT = {
    "quill": {
        "base_paths.other",  # /api/public/v1 answers 308 (the sandbox: 404)
        "paging",  # Graph-style keyset paging: paging.cursors, summary.totalCount
        "money",  # {"currency_code", "value"}
        "timestamps",  # at offset -03:30
        "ram_unit",  # bytes
        "list_keys",  # full VM objects without sshKeys
        "vm_words.unknown_class",  # "Powering Down", "Decommissioned"
        "delivery_fields.keys",  # one record per attempt, with webhookId, durationMs, ...
    },
    "ledger": {
        "base_paths.other",  # /api/v1/... answers 410
        "paging",  # Stripe-style {object: "list", data, has_more, url}
        "money",  # "€14.90", a balance in cents with no unit
        "timestamps",  # ISO 8601 basic format
        "ram_unit",  # KiB
        "list_keys",  # without sshKeys and privateNetworks
        "vm_words.unknown_class",  # French words
        "billing_words.unknown_class",
        "delivery_fields.success",  # outcome "delivered" | "failed": a text, not a flag
        "delivery_fields.keys",
    },
}
# what each peer says that the sandbox can say too, as the file must state it
STATED = {
    "quill": {
        ("dialect", "base_paths"): "prefixed",
        ("dialect", "vm_words"): {
            "running": "Online",
            "stopped": "Powered Off",
            "transitional": ["Building"],
            "suspended": "Locked",
        },
        ("dialect", "billing_words"): {
            "paid": "Current",
            "owing": "Past Due",
            "suspended": "On Hold",
        },
        ("service", "rate_limit"): 600,
    },
    "ledger": {
        ("dialect", "base_paths"): "public",
        ("service", "rate_limit"): 600,
    },
}
PEERS = {"quill": quill, "ledger": ledger}
# the words a peer says that providers use for different states: its user pins them (the
# doctor names them, with the VMs carrying them, and asks)
PINS = {
    "quill": {
        "vm_status": {"Locked": "suspended"},
        "billing_status": {"Current": "paid", "On Hold": "suspended"},
    },
}


@pytest.mark.parametrize("name", sorted(PEERS))
def test_a_peers_twin_says_what_it_cannot_speak_and_speaks_the_rest(name, tmp_path):
    with PEERS[name].serve() as peer:
        trip = peer_round_trip(peer, tmp_path, PINS.get(name))
    cannot = set(trip.file.get("not_expressible", {}))
    assert CANNOT[name] <= cannot, CANNOT[name] - cannot
    assert accounted(trip.file) == []
    for (table, point), value in STATED[name].items():
        assert trip.file[table][point] == value, point
    # each point not spoken as the peer speaks it is listed when the twin starts
    for table in ("not_observed", "not_expressible", "inferred"):
        for key in trip.file.get(table, {}):
            assert any(line.split(": ", 2)[1] == key for line in trip.listed), key
    assert trip.differing, "a peer's twin that differs in nothing: the check would prove nothing"
    assert trip.unexplained() == [], {
        p: (trip.findings.get(p), trip.twin_findings.get(p)) for p in trip.unexplained()
    }
    # nothing of the account's own is in the file
    text = (tmp_path / "peer.toml").read_text()
    assert peer.token not in text and "127.0.0.1" not in text
