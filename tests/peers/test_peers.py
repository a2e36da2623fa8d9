"""svcnb against blind peers: servers written from the spec alone by someone who had not read
svcnb's code, each choosing what the spec leaves open in ways none of the sandbox's dialects do.
Every value svcnb shows equals the peer's truth, or svcnb said it could not read it."""

from __future__ import annotations

import pytest

from . import cobalt, ledger, quill, sable
from .check import run

PEERS = {"quill": quill, "ledger": ledger, "cobalt": cobalt, "sable": sable}
# svcnb still shows some of these peers' values wrong without a word (issue 40); the fixes are
# under way, so their runs may fail until then, and the others must pass
NOT_YET = {"cobalt", "sable"}


def _param(name: str):
    if name not in NOT_YET:
        return name
    reason = "issue 40: silent wrong values being fixed"
    return pytest.param(name, marks=pytest.mark.xfail(strict=False, reason=reason))


@pytest.mark.parametrize("name", [_param(n) for n in sorted(PEERS)])
def test_svcnb_reads_a_blind_peer_right_or_says_it_could_not(name):
    with PEERS[name].serve() as peer:
        out = run(peer)
    assert out.silent_wrong == [], f"{name}: {out}\n" + "\n".join(out.silent_wrong[:20])
    # the lists a user reads are read whole, whatever style the peer pages in
    unread = [f for f in out.flagged if f.split(":")[0] in ("vm ids", "rule ids", "delivery ids")]
    assert unread == [], f"{name}: {unread}"
