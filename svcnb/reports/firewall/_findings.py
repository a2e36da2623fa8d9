"""The firewall audit: one findings frame, each finding naming its check (the table in
``svcnb.reports.firewall``), and the plot of findings per check."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pandas as pd

from svcnb.reports._classes import vm_classes
from svcnb.reports._replay import report
from svcnb.reports.firewall._parsed import _cells, _context, _not_terminated, _Rule, _rules

SEVERITIES = ["high", "medium", "low", "info"]
IP_LIST_CAP = 50
IP_LIST_WARN = 45

SENSITIVE_PORTS: dict[int, str] = {
    22: "SSH",
    23: "Telnet",
    1433: "MS SQL Server",
    1521: "Oracle DB",
    2375: "Docker API",
    2376: "Docker API (TLS)",
    2379: "etcd",
    3306: "MySQL",
    3389: "RDP",
    5432: "PostgreSQL",
    5900: "VNC",
    5984: "CouchDB",
    6379: "Redis",
    9042: "Cassandra",
    9200: "Elasticsearch",
    9300: "Elasticsearch transport",
    11211: "Memcached",
    27017: "MongoDB",
    27018: "MongoDB",
    27019: "MongoDB",
}
# Only these protocols carry the ports above.
PORTED_PROTOCOLS = frozenset({"TCP", "UDP", "ANY"})

FINDING_COLUMNS = [
    "severity",
    "check",
    "firewall_id",
    "firewall_name",
    "rule_id",
    "position",
    "direction",
    "action",
    "protocol",
    "port",
    "vm_id",
    "affected_vms",
    "affected_vm_count",
    "related_rule_id",
    "reason",
    "finding_id",
]
FINDING_STATES = ["new", "open", "accepted", "resolved"]
FINDING_CHANGE_COLUMNS = [
    "finding_id",
    "state",
    *[c for c in FINDING_COLUMNS if c != "finding_id"],
    "accepted_by",
    "accepted_reason",
    "accepted_until",
    "accepted_at",
    "from_snapshot",
    "to_snapshot",
]


def shadowing(rules: pd.DataFrame) -> pd.DataFrame:
    """Rules that never match first: an earlier position in the same firewall covers them.

    Reads ``firewall_rules``: id, firewall_id, position, direction, action, protocol, port,
    source_ips, dest_ips. Returns rule_id, firewall_id, position, kind ("duplicate" when the
    earlier rule has the same match and action, else "shadowed"), by_rule_id, by_position,
    same_action. Rules at the same position are not ordered by the spec, so neither shadows the
    other (but identical ones are still duplicates).
    """
    return _shadowing(_rules(rules))


def _shadowing(parsed: list[_Rule]) -> pd.DataFrame:
    """:func:`shadowing` of rules already parsed (:func:`audit` parses each rule once)."""
    found = []
    by_fw: dict[str, list[_Rule]] = {}
    for r in parsed:
        if r.position is None:
            continue
        by_fw.setdefault(r.firewall_id, []).append(r)
    for fw_rules in by_fw.values():
        fw_rules.sort(key=lambda r: (r.position, r.id))
        for i, later in enumerate(fw_rules):
            for earlier in fw_rules[:i]:
                duplicate = earlier.action == later.action and earlier.same_match(later)
                if earlier.position == later.position and not duplicate:
                    continue
                if duplicate or earlier.covers(later):
                    found.append(
                        {
                            "rule_id": later.id,
                            "firewall_id": later.firewall_id,
                            "position": later.position,
                            "kind": "duplicate" if duplicate else "shadowed",
                            "by_rule_id": earlier.id,
                            "by_position": earlier.position,
                            "same_action": earlier.action == later.action,
                        }
                    )
                    break
    cols = [
        "rule_id",
        "firewall_id",
        "position",
        "kind",
        "by_rule_id",
        "by_position",
        "same_action",
    ]
    out = pd.DataFrame(found, columns=cols)
    return out.astype(
        {
            "rule_id": "string",
            "firewall_id": "string",
            "position": "Int64",
            "kind": "string",
            "by_rule_id": "string",
            "by_position": "Int64",
            "same_action": "boolean",
        }
    )


def _finding_id(check: str, severity: str, fw: Any, rule: _Rule | None, subject: str) -> str:
    """A finding's identity: what it is about, never where it sits (no position, no row)."""
    what = [check, severity, fw, subject]
    if rule is not None:
        # the rule's identity: its id and what kind of rule it is; an exposure through a rule
        # that turns from TCP to ANY is a new risk, not the one someone accepted
        what += [rule.id, rule.direction, rule.action, rule.protocol]
    digest = hashlib.sha256(json.dumps(what, default=str).encode()).hexdigest()
    return f"{check}-{digest[:12]}"


@report(
    frames={
        "rules": "firewall_rules",
        "vm_firewalls": "vm_firewalls",
        "firewalls": "firewalls",
        "vms": "vms",
    }
)
def audit(
    rules: pd.DataFrame,
    vm_firewalls: pd.DataFrame | None = None,
    firewalls: pd.DataFrame | None = None,
    vms: pd.DataFrame | None = None,
    now: Any = None,
) -> pd.DataFrame:
    """Findings on the rules, the firewalls and the VMs they protect, worst first.

    Reads ``firewall_rules``: id, firewall_id, position, direction, action, protocol, port,
    source_ips, dest_ips; ``vm_firewalls``: vm_id, firewall_id; ``firewalls``: id, name;
    ``vms``: id, name, status. Returns the columns of ``FINDING_COLUMNS`` (see module docstring
    for the checks). ``now`` is accepted for the common report convention and not used.

    ``finding_id`` names what a finding is about and stays the same across snapshots while that
    holds: the check, its severity, the firewall, the rule (id, direction, action, protocol) and
    the subject (the sensitive ports exposed, the side of an IP list and the bad entry, the VM).
    It never depends on positions, row order or other rules, so moving a rule keeps its
    findings' ids; a rule that newly exposes another port, or a shadowed rule that now never
    takes effect, is a new finding.
    """
    ctx = _context(rules, vm_firewalls, firewalls, vms)
    attached, names, parsed, by_id = ctx.attached, ctx.names, ctx.parsed, ctx.by_id
    findings: list[dict[str, Any]] = []
    seen: dict[str, int] = {}

    def add(check: str, severity: str, reason: str, rule: _Rule | None = None, **extra: Any):
        fw = rule.firewall_id if rule else extra.pop("firewall_id", None)
        vms_hit = attached.get(fw, []) if fw else []
        fid = _finding_id(
            check, severity, fw, rule, str(extra.get("subject", extra.get("vm_id") or ""))
        )
        # two identical findings (the same bad entry listed twice) stay two ids
        seen[fid] = seen.get(fid, 0) + 1
        if seen[fid] > 1:
            fid = f"{fid}-{seen[fid]}"
        findings.append(
            {
                "severity": severity,
                "check": check,
                "firewall_id": fw,
                "firewall_name": names.get(fw) if fw else None,
                "rule_id": rule.id if rule else None,
                "position": rule.position if rule else None,
                "direction": rule.direction if rule else None,
                "action": rule.action if rule else None,
                "protocol": rule.protocol if rule else None,
                "port": rule.port_text if rule else None,
                "vm_id": extra.get("vm_id"),
                "affected_vms": extra.get("affected_vms", vms_hit),
                "affected_vm_count": len(extra.get("affected_vms", vms_hit)),
                "related_rule_id": extra.get("related_rule_id"),
                "reason": reason,
                "finding_id": fid,
            }
        )

    for r in parsed:
        _check_rule(r, add)

    for row in _shadowing(parsed).itertuples(index=False):
        rule, by = by_id[str(row.rule_id)], by_id[str(row.by_rule_id)]
        if row.kind == "duplicate":
            add(
                "duplicate",
                "low",
                f"same match and action as rule {by.id} at position {by.position}",
                rule,
                related_rule_id=by.id,
            )
        elif row.same_action:
            add(
                "shadowed",
                "low",
                f"redundant: rule {by.id} at position {by.position} already {by.action}s "
                "everything this rule matches",
                rule,
                related_rule_id=by.id,
            )
        else:
            add(
                "shadowed",
                "medium",
                f"never takes effect: rule {by.id} at position {by.position} {by.action}s "
                f"everything this rule would {rule.action}",
                rule,
                related_rule_id=by.id,
            )

    if vms is not None and not vms.empty:
        live = vms[_not_terminated(vms)]
        protected = {vm for ids in attached.values() for vm in ids}
        # the columns read, not every column of every VM (itertuples makes each cell)
        read = [c for c in ("id", "name") if c in live.columns]
        for row in _cells(live[read]).itertuples(index=False):
            if str(row.id) not in protected:
                add(
                    "vm_without_firewall",
                    "medium",
                    f"VM {row.name} has no firewall attached",
                    vm_id=str(row.id),
                    affected_vms=[str(row.id)],
                )
    if firewalls is not None and not firewalls.empty:
        for fw in firewalls["id"].astype(str):
            if not attached.get(fw):
                add(
                    "firewall_unattached",
                    "info",
                    "firewall is attached to no VM",
                    firewall_id=fw,
                    affected_vms=[],
                )

    out = pd.DataFrame(findings, columns=FINDING_COLUMNS)
    out["severity"] = pd.Categorical(out["severity"], categories=SEVERITIES, ordered=True)
    out = out.astype(
        {
            "check": "string",
            "firewall_id": "string",
            "firewall_name": "string",
            "rule_id": "string",
            "position": "Int64",
            "direction": "string",
            "action": "string",
            "protocol": "string",
            "port": "string",
            "vm_id": "string",
            "affected_vm_count": "Int64",
            "related_rule_id": "string",
            "reason": "string",
            "finding_id": "string",
        }
    )
    out = out.sort_values(
        ["severity", "check", "firewall_id", "position", "rule_id", "vm_id"], kind="stable"
    ).reset_index(drop=True)
    unread = {r.id: r.port_text for r in parsed if not r.ports.ok}
    if unread:
        # named where the eye is: each such rule may be open to every port
        out.attrs["unread_ports"] = unread
    if vms is not None and len(vms):
        # VMs whose status word is unknown are audited as live, so no finding is hidden; the
        # answer says it counted them: a terminated VM may be among them
        doubt = set(vms.loc[(vm_classes(vms) == "unknown").to_numpy(dtype=bool), "id"])
        named = {str(v) for vs in out["affected_vms"] for v in vs} | set(
            out["vm_id"].dropna().astype(str)
        )
        kept = sorted(named & {str(v) for v in doubt})
        if kept:
            out.attrs["unknown_status"] = len(kept)
            out.attrs["complete"] = False
            out.attrs["note"] = (
                f"{len(kept):,} VM(s) of unknown status word are counted as live "
                f"({', '.join(kept[:5])}): they may be terminated"
            )
    return out


def _check_rule(r: _Rule, add: Any) -> None:
    inbound_world = r.direction == "IN" and r.sources.is_world
    if not r.ports.ok:
        # never port 0 nor silently every port: what the rule lets through is unknown, and for
        # an ACCEPT it may be every port (DigitalOcean's "0")
        opens = r.action == "ACCEPT" and r.protocol in PORTED_PROTOCOLS
        add(
            "unparsed_port",
            "high" if opens and inbound_world else "medium",
            f"{r.ports.error}; could not read"
            + (
                "; may be open to every port" + (" from any source" if inbound_world else "")
                if opens
                else ": the rule cannot be audited"
            ),
            r,
        )
    for side, ips in (("source", r.sources), ("destination", r.dests)):
        for error in ips.errors:
            add("unparsed_ip", "medium", f"{side} {error}", r, subject=f"{side}: {error}")
        if ips.size >= IP_LIST_WARN:
            add(
                "ip_list_near_cap",
                "low",
                f"{side} list holds {ips.size} of the {IP_LIST_CAP} entries allowed",
                r,
                subject=side,
            )
    if r.action != "ACCEPT":
        return
    if r.protocol == "ANY":
        add(
            "accept_any_protocol",
            "high" if inbound_world else "medium",
            "accepts every protocol" + (" from any source" if inbound_world else ""),
            r,
        )
    if inbound_world and r.protocol in PORTED_PROTOCOLS:
        hit = r.ports.intersects(sorted(SENSITIVE_PORTS))
        if hit:
            services = ", ".join(f"{SENSITIVE_PORTS[p]} ({p})" for p in hit)
            add(
                "exposed_sensitive_port",
                "high",
                f"open to any source: {services}",
                r,
                subject=",".join(str(p) for p in hit),
            )
