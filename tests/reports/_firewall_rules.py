"""A firewall rule as the frames give it (the columns the audit and reachability read)."""

from __future__ import annotations


def rule(rid, pos, *, fw="fw1", d="IN", a="ACCEPT", p="TCP", port="22", src=(), dst=()):
    return {
        "id": rid,
        "firewall_id": fw,
        "position": pos,
        "direction": d,
        "action": a,
        "protocol": p,
        "port": port,
        "source_ips": list(src),
        "dest_ips": list(dst),
    }
