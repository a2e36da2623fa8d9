"""svcnb against blind peers: servers written from the spec alone by someone who had not read
svcnb's code, each choosing what the spec leaves open in ways none of the sandbox's dialects do.
Every value svcnb shows equals the peer's truth, or svcnb said it could not read it."""

from __future__ import annotations

import pytest

from . import ledger, quill
from .check import run

PEERS = {"quill": quill, "ledger": ledger}


@pytest.mark.parametrize("name", sorted(PEERS))
def test_svcnb_reads_a_blind_peer_right_or_says_it_could_not(name):
    with PEERS[name].serve() as peer:
        out = run(peer)
    assert out.silent_wrong == [], f"{name}: {out}\n" + "\n".join(out.silent_wrong[:20])
    # the lists a user reads are read whole, whatever style the peer pages in
    unread = [f for f in out.flagged if f.split(":")[0] in ("vm ids", "rule ids", "delivery ids")]
    assert unread == [], f"{name}: {unread}"
