"""Firewall audit: which rules expose which VMs, which rules never apply, what changed.

:func:`audit` returns one findings frame; each finding names its ``check``:

==========================  ========  ==========================================================
check                       severity  meaning
==========================  ========  ==========================================================
exposed_sensitive_port      high      inbound ACCEPT from any source to SSH, RDP, a database,
                                      a cache, a search engine or the Docker API
accept_any_protocol         high/med  ACCEPT with protocol ANY (high when inbound from anywhere)
shadowed                    med/low   an earlier rule matches everything this one does (medium
                                      when its action differs: this rule never takes effect)
duplicate                   low       the same match and action as an earlier rule
unparsed_port               medium    the port string is in no known form: cannot be audited
unparsed_ip                 medium    an IP entry is not an address or CIDR
ip_list_near_cap            low       an IP list holds 45 or more of the 50 entries allowed
vm_without_firewall         medium    a VM (status class not terminated) has no firewall attached
firewall_unattached         info      a firewall protects no VM
==========================  ========  ==========================================================

"From any source" means an empty source list (the contract: ``[]`` is any), ``0.0.0.0/0``,
``::/0`` or ``any``. A missing (NA) port is read as no port restriction. Rules whose port or IPs do
not parse are never called shadowed nor said to shadow others: their match is unknown.

:func:`reach` answers one flow ("22/TCP from 203.0.113.5") per VM with the rule that decides it,
on the same parsed rules and first-match model; :func:`reach_diff` lists the flows an edit
opens, closes or makes unknown over the VMs of the changed firewalls.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import warnings
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes

from svcnb.reports._classes import vm_classes
from svcnb.reports._columns import value_label
from svcnb.reports._ports import (
    IpSet,
    PortSet,
    match_covers,
    parse_ips,
    parse_port,
)
from svcnb.reports._reach import (
    decide,
    flows_from,
    make_flow,
    probe_flows,
    rule_signature,
    vm_address,
)
from svcnb.reports._replay import StoreLike, report, snapshot_at, to_utc
from svcnb.reports._timeaxis import fit_rows
from svcnb.reports._view import FigureSpec, PlotSpec, TableSpec, View, ViewSpec, figure, view_notes
from svcnb.store import StoreError

__all__ = [
    "FINDING_CHANGE_COLUMNS",
    "FINDING_COLUMNS",
    "FINDING_STATES",
    "IP_LIST_CAP",
    "DEFAULT_ACTION",
    "IP_LIST_WARN",
    "NO_FIREWALL_ACTION",
    "PROBE_PORTS",
    "REACH_COLUMNS",
    "REACH_DIFF_COLUMNS",
    "SENSITIVE_PORTS",
    "SEVERITIES",
    "VIEW",
    "audit",
    "changes",
    "finding_changes",
    "plot_findings",
    "reach",
    "reach_diff",
    "reach_diff_words",
    "rule_changes",
    "shadowing",
    "view",
]

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


class _Rule:
    """One rule with its parsed match."""

    def __init__(self, row: Any) -> None:
        self.id = str(row.id)
        self.firewall_id = str(row.firewall_id)
        self.position = None if pd.isna(row.position) else int(row.position)
        self.direction = _upper(row.direction)
        self.action = _upper(row.action)
        self.protocol = _upper(row.protocol)
        self.port_text = None if _isna(row.port) else str(row.port)
        self.ports: PortSet = parse_port(row.port)
        self.sources: IpSet = parse_ips(row.source_ips)
        self.dests: IpSet = parse_ips(row.dest_ips)

    @property
    def parsed(self) -> bool:
        return self.ports.ok and self.sources.ok and self.dests.ok

    def covers(self, other: _Rule) -> bool:
        """Every packet ``other`` matches, this rule matches too (same direction)."""
        return (
            self.direction == other.direction
            and self.parsed
            and other.parsed
            and match_covers(self.protocol, self.ports, other.protocol, other.ports)
            and self.sources.covers(other.sources)
            and self.dests.covers(other.dests)
        )

    def same_match(self, other: _Rule) -> bool:
        return self.covers(other) and other.covers(self)


def _isna(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _upper(value: Any) -> str:
    return "" if _isna(value) else str(value).strip().upper()


def _rules(rules: pd.DataFrame) -> list[_Rule]:
    return [_Rule(row) for row in rules.itertuples(index=False)]


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


def _not_terminated(vms: pd.DataFrame) -> Any:
    """VMs whose status class is not terminated; an unknown status is kept (audited), because
    leaving a live VM out of the audit would hide a finding."""
    return (vm_classes(vms) != "terminated").to_numpy(dtype=bool)


def _attached(vm_firewalls: pd.DataFrame | None, vms: pd.DataFrame | None) -> dict[str, list[str]]:
    """firewall_id -> sorted ids of the live VMs it is attached to."""
    if vm_firewalls is None or vm_firewalls.empty:
        return {}
    links = vm_firewalls
    if vms is not None and "status" in vms:
        live = vms.loc[_not_terminated(vms), "id"]
        links = links[links["vm_id"].isin(set(live.astype(str)))]
    out: dict[str, list[str]] = {}
    for fw, vm in zip(links["firewall_id"].astype(str), links["vm_id"].astype(str), strict=True):
        out.setdefault(fw, []).append(vm)
    return {fw: sorted(set(v)) for fw, v in out.items()}


@dataclass
class _Context:
    """What :func:`audit` and :func:`reach` both start from: the rules parsed once, who is
    attached to what, and the firewalls' names."""

    parsed: list[_Rule]
    by_id: dict[str, _Rule]
    links: dict[str, list[str]]  # vm_id -> firewall ids (every link, as listed)
    attached: dict[str, list[str]]  # firewall_id -> sorted ids of its live VMs
    names: dict[str, str]  # firewall_id -> name


def _context(
    rules: pd.DataFrame,
    vm_firewalls: pd.DataFrame | None = None,
    firewalls: pd.DataFrame | None = None,
    vms: pd.DataFrame | None = None,
) -> _Context:
    parsed = _rules(rules)
    links, names = _links(vm_firewalls)
    # the firewalls list is the authority on names; the VM objects' copies fill in without it
    if firewalls is not None and not firewalls.empty:
        names.update(zip(firewalls["id"].astype(str), firewalls["name"].astype(str), strict=True))
    return _Context(
        parsed=parsed,
        by_id={r.id: r for r in parsed},
        links=links,
        attached=_attached(vm_firewalls, vms),
        names=names,
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
        rule, by = by_id[row.rule_id], by_id[row.by_rule_id]
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
        for row in live.itertuples(index=False):
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
                f"{len(kept)} VM(s) of unknown status word are counted as live "
                f"({', '.join(kept[:5])}): they may be terminated"
            )
    return out


def _check_rule(r: _Rule, add: Any) -> None:
    if not r.ports.ok:
        add("unparsed_port", "medium", f"{r.ports.error}; the rule cannot be audited", r)
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
    inbound_world = r.direction == "IN" and r.sources.is_world
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


def rule_changes(
    diff: pd.DataFrame,
    before: pd.DataFrame | None = None,
    after: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per rule added, removed or changed, from ``store.diff('firewall_rules', a, b)``.

    Reads the diff: id, change, column, before, after; ``before``/``after`` (the rules frames at
    the two snapshots, optional) give firewall_id and position. Returns rule_id, firewall_id,
    position, change, columns (list of changed columns), detail ("port: '22' -> '2222'; ...").
    """
    cols = ["rule_id", "firewall_id", "position", "change", "columns", "detail"]
    if diff.empty:
        return pd.DataFrame(columns=cols).astype(
            {"rule_id": "string", "firewall_id": "string", "position": "Int64", "change": "string"}
        )
    key = "id" if "id" in diff else diff.columns[0]
    where: dict[str, tuple[Any, Any]] = {}
    for frame in (before, after):
        if frame is not None and not frame.empty:
            for row in frame.itertuples(index=False):
                where[str(row.id)] = (row.firewall_id, row.position)
    rows = []
    for rule_id, part in diff.groupby(key, sort=True):
        change = part["change"].iloc[0]
        changed = part[part["column"].notna()] if "column" in part else part.iloc[0:0]
        columns = [str(c) for c in changed["column"]] if not changed.empty else []
        detail = "; ".join(
            f"{c}: {_show(b)} -> {_show(a)}"
            for c, b, a in zip(changed["column"], changed["before"], changed["after"], strict=True)
            if change == "changed"
        )
        fw, pos = where.get(str(rule_id), (pd.NA, pd.NA))
        rows.append(
            {
                "rule_id": str(rule_id),
                "firewall_id": fw,
                "position": pos,
                "change": change,
                "columns": columns,
                "detail": detail or change,
            }
        )
    out = pd.DataFrame(rows, columns=cols)
    return out.astype(
        {
            "rule_id": "string",
            "firewall_id": "string",
            "position": "Int64",
            "change": "string",
            "detail": "string",
        }
    )


def _show(value: Any) -> str:
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, str):
        return repr(value)
    if hasattr(value, "tolist"):
        value = value.tolist()
    return repr(value)


def changes(store: StoreLike, since: Any = None, at: Any = None) -> pd.DataFrame:
    """Rules changed between the snapshot as of ``since`` and the one as of ``at`` (latest).

    ``since`` None means the snapshot just before the one as of ``at``. Returns the columns of
    :func:`rule_changes` plus ``from_snapshot`` and ``to_snapshot``.
    """
    to_snap = snapshot_at(store, at)
    if since is None:
        snaps = store.snapshots().sort_values(["server_time", "snapshot_id"], kind="stable")
        earlier = snaps[snaps["server_time"] < to_snap["server_time"]]
        if earlier.empty:
            raise ValueError(
                "only one snapshot at or before that time; take another or give since="
            )
        from_snap = earlier.iloc[-1]
    else:
        from_snap = snapshot_at(store, since)
    a, b = from_snap["snapshot_id"], to_snap["snapshot_id"]
    diff = store.diff("firewall_rules", a, b)
    out = rule_changes(
        diff,
        store.load("firewall_rules", at=from_snap["server_time"]),
        store.load("firewall_rules", at=to_snap["server_time"]),
    )
    return out.assign(from_snapshot=a, to_snapshot=b)


def _snapshot(store: StoreLike, which: Any, snaps: pd.DataFrame) -> pd.Series:
    """The manifest row of snapshot id ``which``, else the latest at or before time ``which``."""
    if isinstance(which, str):
        hit = snaps[(snaps["snapshot_id"] == which).fillna(False).to_numpy(dtype=bool)]
        if not hit.empty:
            return hit.iloc[-1]
    return snapshot_at(store, which, snaps)


def _audit_at(store: StoreLike, snap: pd.Series | None) -> pd.DataFrame:
    if snap is None:
        return pd.DataFrame(columns=FINDING_COLUMNS)
    return audit.fn(**audit._inputs(store, snap))


def _standing(store: StoreLike, now: pd.Timestamp) -> tuple[dict[str, dict[str, Any]], str]:
    """finding_id -> the acceptance that counts at ``now`` (the latest one not revoked, if it
    ends after ``now``), and why none could be read ("" when they could)."""
    read = getattr(store, "acceptances", None)
    if read is None:
        return {}, "this store keeps no acceptances"
    try:
        table = read()
    except StoreError as exc:
        warnings.warn(f"accepted findings not read: {exc}", stacklevel=3)
        return {}, str(exc)
    live = table[table["revoked_at"].isna().to_numpy(dtype=bool)]
    latest: dict[str, dict[str, Any]] = {}
    for row in live.sort_values("accepted_at", kind="stable").to_dict("records"):
        latest[str(row["finding_id"])] = row  # a later acceptance replaces an earlier one
    # an acceptance ending exactly at ``now`` has ended
    return {fid: row for fid, row in latest.items() if row["until"] > now}, ""


def finding_changes(
    store: StoreLike, since: Any = None, at: Any = None, now: Any = None
) -> pd.DataFrame:
    """What is new, still open and resolved between two snapshots, and what is accepted.

    Audits the snapshot as of ``at`` (latest by default) and the one as of ``since`` (by default
    the snapshot just before it); both may be snapshot ids or times. One row per finding present
    in either, matched by ``finding_id`` (:func:`audit`): state "new" (only in the later one),
    "open" (in both), "resolved" (only in the earlier one) or "accepted" (in the later one, with
    an acceptance from ``store.acceptances()`` that stands: not revoked and ending after ``now``;
    ``now`` is the ``at`` snapshot's server time unless given). An acceptance ending at or before
    ``now`` counts no more: its finding is "new" or "open" again. With no snapshot before ``at``
    every finding is "new" and ``from_snapshot`` is NA.

    Reads ``firewall_rules``, ``vm_firewalls``, ``firewalls`` and ``vms`` of both snapshots, as
    :func:`audit`. Returns ``FINDING_CHANGE_COLUMNS``: finding_id, state, the columns of
    :func:`audit` (of the later snapshot; of the earlier one for resolved findings),
    accepted_by, accepted_reason, accepted_until, accepted_at (NA unless accepted),
    from_snapshot, to_snapshot. Rows: new, open, accepted, resolved, each worst first.
    ``attrs["acceptances"]`` says why acceptances could not be read ("" when they were);
    ``attrs["to_time"]`` is the ``at`` snapshot's server time.
    """
    snaps = store.snapshots()
    if snaps.empty:
        raise ValueError("the store holds no snapshot; take one first (svcnb snapshot)")
    snaps = snaps.sort_values(["server_time", "snapshot_id"], kind="stable")
    to_snap = _snapshot(store, at, snaps) if at is not None else snaps.iloc[-1]
    if since is None:
        earlier = snaps[(snaps["server_time"] < to_snap["server_time"]).to_numpy(dtype=bool)]
        from_snap = None if earlier.empty else earlier.iloc[-1]
    else:
        from_snap = _snapshot(store, since, snaps)
        if from_snap["server_time"] > to_snap["server_time"]:
            raise ValueError(
                f"since={since!r} is later than at={at!r}; give the earlier snapshot as since"
            )
    when = to_snap["server_time"] if now is None else to_utc(now, "now")
    before, after = _audit_at(store, from_snap), _audit_at(store, to_snap)
    accepted, trouble = _standing(store, when)

    old_ids = set(before["finding_id"].astype(str))
    new_ids = set(after["finding_id"].astype(str))
    rows = []
    for frame, is_after in ((after, True), (before, False)):
        for row in frame.to_dict("records"):
            fid = str(row["finding_id"])
            if not is_after and fid in new_ids:
                continue
            # a resolved finding is gone: an acceptance still on file for it says nothing
            acc = accepted.get(fid) if is_after else None
            if acc is not None:
                state = "accepted"
            else:
                state = ("open" if fid in old_ids else "new") if is_after else "resolved"
            row.update(
                state=state,
                accepted_by=acc["owner"] if acc else None,
                accepted_reason=acc["reason"] if acc else None,
                accepted_until=acc["until"] if acc else None,
                accepted_at=acc["accepted_at"] if acc else None,
            )
            rows.append(row)
    out = pd.DataFrame(rows, columns=FINDING_CHANGE_COLUMNS)
    out["from_snapshot"] = None if from_snap is None else from_snap["snapshot_id"]
    out["to_snapshot"] = to_snap["snapshot_id"]
    out["severity"] = pd.Categorical(out["severity"], categories=SEVERITIES, ordered=True)
    for column in ("accepted_until", "accepted_at"):
        out[column] = pd.to_datetime(out[column], utc=True).astype("datetime64[ns, UTC]")
    text = [
        c
        for c in FINDING_CHANGE_COLUMNS
        if c not in ("severity", "affected_vms", "accepted_until", "accepted_at")
    ]
    out = out.astype({**dict.fromkeys(text, "string"), "position": "Int64"})
    out["affected_vm_count"] = out["affected_vm_count"].astype("Int64")
    order = pd.Categorical(out["state"], categories=FINDING_STATES, ordered=True)
    out = (
        out.assign(_order=order)
        .sort_values(
            ["_order", "severity", "check", "firewall_id", "position", "rule_id", "vm_id"],
            kind="stable",
        )
        .drop(columns="_order")
        .reset_index(drop=True)
    )
    out.attrs["acceptances"] = trouble
    out.attrs["to_time"] = to_snap["server_time"]
    return out


def plot_findings(findings: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Horizontal bars: how many findings of each check, coloured by severity.

    ``findings`` from :func:`audit` (check, severity).
    """
    ax = ax if ax is not None else plt.figure().add_subplot()
    if findings.empty:
        ax.set_title("Firewall audit: no findings")
        return ax
    counts = (
        findings.groupby(["check", "severity"], observed=True)
        .size()
        .reset_index(name="findings")
        .sort_values(["severity", "findings"], ascending=[False, True])
    )
    colours = {"high": "tab:red", "medium": "tab:orange", "low": "tab:olive", "info": "tab:gray"}
    labels = [
        f"{value_label('check', c)} ({s})"
        for c, s in zip(counts["check"], counts["severity"], strict=True)
    ]
    ax.barh(
        labels,
        counts["findings"],
        color=[colours.get(str(s), "tab:blue") for s in counts["severity"]],
    )
    ax.set_xlabel("findings")
    ax.set_title("Firewall audit findings")
    fit_rows(ax, len(counts), per_row=0.4)
    return ax


# --- reachability ---------------------------------------------------------------------------

# The spec does not show what happens when no rule matches, nor to a VM with no firewall. These
# are the usual provider defaults; every answer that rests on one says so in ``default_assumed``.
DEFAULT_ACTION = {"IN": "DROP", "OUT": "ACCEPT"}
NO_FIREWALL_ACTION = "ACCEPT"
# Well-known ports probed by :func:`reach_diff` when no flows are given.
PROBE_PORTS = (22, 80, 443, 3389, 5432, 3306, 6379)

REACH_COLUMNS = [
    "vm_id",
    "vm_name",
    "status_class",
    "unknown_status",
    "direction",
    "protocol",
    "port",
    "source",
    "allowed",
    "verdict",
    "firewall_id",
    "firewall_name",
    "rule_id",
    "position",
    "action",
    "default_assumed",
    "partial_rule_ids",
    "reason",
]
REACH_DIFF_COLUMNS = [
    "change",
    "vm_id",
    "vm_name",
    "direction",
    "protocol",
    "port",
    "source",
    "allowed_before",
    "allowed_after",
    "verdict_before",
    "verdict_after",
    "rule_id_before",
    "rule_id_after",
    "reason",
]


def _fleet(
    vm_firewalls: pd.DataFrame | None, vms: pd.DataFrame | None, vm: Any = None
) -> pd.DataFrame:
    """The VMs to answer for: vm_id, vm_name, status_class, address (terminated ones dropped)."""
    if vms is not None:
        table = pd.DataFrame(
            {
                "vm_id": vms["id"].astype("string"),
                "vm_name": vms["name"].astype("string") if "name" in vms else pd.NA,
                "status_class": vm_classes(vms).to_numpy(),
                "address": list(vms["ip_address"]) if "ip_address" in vms else None,
            }
        )
    else:
        ids = [] if vm_firewalls is None else sorted(set(vm_firewalls["vm_id"].astype(str)))
        table = pd.DataFrame(
            {"vm_id": ids, "vm_name": pd.NA, "status_class": pd.NA, "address": None}
        )
    table = table.astype({"vm_id": "string", "vm_name": "string", "status_class": "string"})
    if vm is not None:
        wanted = str(vm)
        hit = table[
            (table["vm_id"] == wanted).fillna(False) | (table["vm_name"] == wanted).fillna(False)
        ]
        if hit.empty:
            raise ValueError(f"no VM has the id or name {wanted!r}")
        if (hit["status_class"] == "terminated").fillna(False).all():
            raise ValueError(f"VM {wanted!r} is terminated: nothing reaches it")
        table = hit
    return table[(table["status_class"] != "terminated").fillna(True).to_numpy(dtype=bool)]


def _links(vm_firewalls: pd.DataFrame | None) -> tuple[dict[str, list[str]], dict[str, str]]:
    """vm_id -> firewall ids, and firewall_id -> name (the VM objects carry the names)."""
    by_vm: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    if vm_firewalls is None or vm_firewalls.empty:
        return by_vm, names
    has_name = "name" in vm_firewalls
    for row in vm_firewalls.itertuples(index=False):
        by_vm.setdefault(str(row.vm_id), []).append(str(row.firewall_id))
        if has_name and not _isna(row.name):
            names[str(row.firewall_id)] = str(row.name)
    return by_vm, names


def _answer(
    parsed: list[_Rule],
    fleet: pd.DataFrame,
    links: dict[str, list[str]],
    names: dict[str, str],
    flow: Any,
) -> list[dict[str, Any]]:
    by_fw: dict[str, list[_Rule]] = {}
    for r in parsed:
        by_fw.setdefault(r.firewall_id, []).append(r)
    rows = []
    for vm in fleet.itertuples(index=False):
        fws = sorted(set(links.get(str(vm.vm_id), [])))
        pooled = [r for fw in fws for r in by_fw.get(fw, [])]
        status = None if _isna(vm.status_class) else str(vm.status_class)
        row: dict[str, Any] = {
            "vm_id": vm.vm_id,
            "vm_name": vm.vm_name,
            "status_class": status,
            "unknown_status": None if status is None else status == "unknown",
            "direction": flow.direction,
            "protocol": flow.protocol,
            "port": flow.port,
            "source": flow.source_text,
            "firewall_id": None,
            "firewall_name": None,
            "rule_id": None,
            "position": None,
            "action": None,
            "default_assumed": None,
            "partial_rule_ids": [],
        }
        if not fws:
            row.update(
                allowed=NO_FIREWALL_ACTION == "ACCEPT",
                verdict=f"no rule matches: default {NO_FIREWALL_ACTION}",
                default_assumed=NO_FIREWALL_ACTION,
                reason=f"no firewall attached; assumed {NO_FIREWALL_ACTION} (the spec does not "
                "say what an unprotected VM lets through)",
            )
            rows.append(row)
            continue
        got = decide(pooled, flow, vm_address(vm.address))
        row["partial_rule_ids"] = list(got.partial)
        if got.rule is not None:
            r = got.rule
            row.update(
                firewall_id=r.firewall_id,
                firewall_name=names.get(r.firewall_id),
                rule_id=r.id,
                position=r.position,
                action=r.action,
            )
        partial = (
            f"; rules {', '.join(got.partial)} decide for part of {flow.source_text} first and "
            "this answer is for the rest"
            if got.partial
            else ""
        )
        if got.kind == "unknown":
            row.update(allowed=None, verdict="unknown", reason=got.reason + partial)
        elif got.kind == "rule":
            r = got.rule
            allowed = r.action == "ACCEPT"
            fw_words = names.get(r.firewall_id, r.firewall_id)
            row.update(
                allowed=allowed,
                verdict="allowed" if allowed else "denied",
                reason=f"rule {r.id} at position {r.position} of firewall {fw_words} "
                f"{r.action}s {flow.words()}" + partial,
            )
        else:
            action = DEFAULT_ACTION[flow.direction]
            row.update(
                allowed=action == "ACCEPT",
                verdict=f"no rule matches: default {action}",
                default_assumed=action,
                reason=f"no rule of {', '.join(names.get(f, f) for f in fws)} matches; assumed "
                f"{action} (the spec does not show the default)" + partial,
            )
        rows.append(row)
    return rows


def _reach_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=REACH_COLUMNS)
    return out.astype(
        {
            "vm_id": "string",
            "vm_name": "string",
            "status_class": "string",
            "unknown_status": "boolean",
            "direction": "string",
            "protocol": "string",
            "port": "Int64",
            "source": "string",
            "allowed": "boolean",
            "verdict": "string",
            "firewall_id": "string",
            "firewall_name": "string",
            "rule_id": "string",
            "position": "Int64",
            "action": "string",
            "default_assumed": "string",
            "reason": "string",
        }
    )


@report(frames={"rules": "firewall_rules", "vm_firewalls": "vm_firewalls", "vms": "vms"})
def reach(
    rules: pd.DataFrame,
    vm_firewalls: pd.DataFrame | None,
    vms: pd.DataFrame | None = None,
    *,
    source: Any,
    port: Any = None,
    protocol: str = "TCP",
    vm: Any = None,
    direction: str = "IN",
    now: Any = None,
) -> pd.DataFrame:
    """Would this flow reach each VM (or VM ``vm``, an id or a name), and which rule decides.

    Reads ``firewall_rules``: id, firewall_id, position, direction, action, protocol, port,
    source_ips, dest_ips; ``vm_firewalls``: vm_id, firewall_id, name (the firewall's);
    ``vms``: id, name, status, ip_address (None: the VMs of ``vm_firewalls``, status unknown).

    ``source`` is an address or a CIDR (``"0.0.0.0/0"`` or ``"any"``: anywhere); for
    ``direction="OUT"`` it is the remote receiver. ``port`` is needed for TCP and UDP and ignored
    for ICMP, ESP and GRE. The VM side of a rule (dest_ips inbound, source_ips outbound) is
    matched against the VM's ``ip_address``.

    The model is the audit's: rules parsed the same way, first match by position. The rules of
    all firewalls attached to a VM are pooled and ordered by position (the spec gives one
    position space 0..1000 and no precedence between firewalls); equal positions are unordered,
    so two rules matching there with different outcomes make the answer unknown. A rule that
    cannot be evaluated (port or IPs that do not parse, a VM-side list and no VM address) met
    before a decision makes the answer unknown with the reason, never a guess. For a network
    source, a rule covering only part of it is listed in ``partial_rule_ids`` and the answer is
    for the rest of the source. When no rule matches, ``DEFAULT_ACTION`` (DROP in, ACCEPT out)
    is assumed, and a VM with no firewall is assumed open (``NO_FIREWALL_ACTION``): the spec
    shows neither, so such rows carry the assumed action in ``default_assumed``.

    VMs of the terminated class are left out; VMs of unknown status are kept with
    ``unknown_status`` True. Returns ``REACH_COLUMNS``: vm_id, vm_name, status_class,
    unknown_status, direction, protocol, port, source, allowed (True/False/NA), verdict
    ("allowed", "denied", "no rule matches: default DROP", "unknown"), firewall_id,
    firewall_name, rule_id, position, action (of the deciding or unreadable rule),
    default_assumed, partial_rule_ids, reason. ``now`` is accepted for the report convention.
    """
    flow = make_flow(source, port, protocol, direction)
    ctx = _context(rules, vm_firewalls, vms=vms)
    rows = _answer(ctx.parsed, _fleet(vm_firewalls, vms, vm), ctx.links, ctx.names, flow)
    return _reach_frame(rows)


def reach_diff(
    rules_before: pd.DataFrame,
    rules_after: pd.DataFrame,
    vm_firewalls: pd.DataFrame | None,
    vms: pd.DataFrame | None = None,
    *,
    flows: Any = None,
    ports: Any = PROBE_PORTS,
) -> pd.DataFrame:
    """The flows whose answer changes between two versions of the rules, per VM.

    Reads two ``firewall_rules`` frames (as :func:`reach`), ``vm_firewalls`` and ``vms``. Only
    the VMs protected by a firewall whose rules differ are probed. ``flows`` (a frame or mappings
    of source, port, protocol, direction) defaults to ``ports`` over TCP from anywhere plus what
    the changed rules name (their protocols, ports and source networks).

    Returns ``REACH_DIFF_COLUMNS``: change ("opened": now allowed, "closed": now denied,
    "became unknown"), vm_id, vm_name, direction, protocol, port, source, allowed_before,
    allowed_after, verdict_before, verdict_after, rule_id_before, rule_id_after, reason (why the
    new answer holds). Answers that stay the same, even by another rule, are not listed.
    """
    before, after = _rules(rules_before), _rules(rules_after)
    sig_before: dict[str, set] = {}
    sig_after: dict[str, set] = {}
    for parsed, sigs in ((before, sig_before), (after, sig_after)):
        for r in parsed:
            sigs.setdefault(r.firewall_id, set()).add(rule_signature(r))
    changed_fws = {
        fw for fw in set(sig_before) | set(sig_after) if sig_before.get(fw) != sig_after.get(fw)
    }
    changed_sigs = set().union(
        *(sig_before.get(fw, set()) ^ sig_after.get(fw, set()) for fw in changed_fws)
    )
    links, names = _links(vm_firewalls)
    fleet = _fleet(vm_firewalls, vms)
    touched = {vm for vm, fws in links.items() if changed_fws & set(fws)}
    fleet = fleet[fleet["vm_id"].isin(touched).to_numpy(dtype=bool)]
    if flows is None:
        changed_rules = [r for r in (*before, *after) if rule_signature(r) in changed_sigs]
        probes = probe_flows(changed_rules, ports)
    else:
        probes = flows_from(flows)
    rows = []
    if not fleet.empty:
        for flow in probes:
            old = _answer(before, fleet, links, names, flow)
            new = _answer(after, fleet, links, names, flow)
            for a, b in zip(old, new, strict=True):
                was, now_ = a["allowed"], b["allowed"]
                if was == now_:
                    continue
                change = "became unknown" if now_ is None else ("opened" if now_ else "closed")
                rows.append(
                    {
                        "change": change,
                        "vm_id": b["vm_id"],
                        "vm_name": b["vm_name"],
                        "direction": b["direction"],
                        "protocol": b["protocol"],
                        "port": b["port"],
                        "source": b["source"],
                        "allowed_before": was,
                        "allowed_after": now_,
                        "verdict_before": a["verdict"],
                        "verdict_after": b["verdict"],
                        "rule_id_before": a["rule_id"],
                        "rule_id_after": b["rule_id"],
                        "reason": b["reason"],
                    }
                )
    out = pd.DataFrame(rows, columns=REACH_DIFF_COLUMNS)
    return out.astype(
        {
            "change": "string",
            "vm_id": "string",
            "vm_name": "string",
            "direction": "string",
            "protocol": "string",
            "port": "Int64",
            "source": "string",
            "allowed_before": "boolean",
            "allowed_after": "boolean",
            "verdict_before": "string",
            "verdict_after": "string",
            "rule_id_before": "string",
            "rule_id_after": "string",
            "reason": "string",
        }
    )


def reach_diff_words(diff: pd.DataFrame, limit: int = 5) -> list[str]:
    """One sentence per changed flow of :func:`reach_diff`, e.g.
    "opens 22/TCP from anywhere to 3 VMs: web-fra-001, web-fra-002, db-1"."""
    verbs = {"opened": "opens", "closed": "closes", "became unknown": "makes unknown"}
    lines = []
    keys = ["change", "direction", "protocol", "port", "source"]
    for (change, direction, protocol, port, source), part in diff.groupby(
        keys, sort=False, dropna=False
    ):
        what = str(protocol) if _isna(port) else f"{port}/{protocol}"
        where = "anywhere" if str(source) in ("0.0.0.0/0", "::/0") else str(source)
        labels = [
            str(n) if not _isna(n) else str(i)
            for n, i in zip(part["vm_name"], part["vm_id"], strict=True)
        ]
        shown = ", ".join(labels[:limit]) + (
            f" and {len(labels) - limit} more" if len(labels) > limit else ""
        )
        count = f"{len(labels)} VM" + ("" if len(labels) == 1 else "s")
        if direction == "IN":
            lines.append(f"{verbs.get(change, change)} {what} from {where} to {count}: {shown}")
        else:
            lines.append(f"{verbs.get(change, change)} {what} to {where} from {count}: {shown}")
    return lines


# --- the firewall view: what every surface shows (svcnb.reports._view) ------------------------

VIEW = ViewSpec(
    report="firewall",
    title="Firewall audit",
    figures=(
        FigureSpec("findings", "Findings", "count", "Every finding of the audit, any severity."),
        *(
            FigureSpec(
                f"findings_{s}",
                f"Findings of {s} severity",
                "count",
                f"Findings the audit rates {s}.",
            )
            for s in SEVERITIES
        ),
        FigureSpec(
            "vms_affected",
            "VMs affected by a high-severity finding",
            "count",
            "Distinct VMs (not terminated) behind a firewall with a high-severity finding.",
        ),
        FigureSpec(
            "rules_changed",
            "Rules changed since the previous snapshot",
            "count",
            "Rules added, removed or edited between the snapshot before and this one; unknown "
            "with a single snapshot.",
        ),
    ),
    tables=(
        TableSpec(
            "findings",
            "Findings, worst first",
            ("severity", "check", "firewall_name", "port", "affected_vm_count", "reason"),
            "One row per finding.",
        ),
        TableSpec(
            "changes",
            "Rules changed since the previous snapshot",
            None,
            "One row per rule changed.",
        ),
    ),
    plots=(PlotSpec("findings", "Findings per check and severity"),),
)


def view(store: StoreLike, at: Any = None, *, account: str | None = None) -> View:
    """The firewall view as of the latest snapshot at or before ``at`` (see ``VIEW``)."""
    bound = store if account is None else store.for_account(account)
    inputs = audit.inputs(bound, at)
    found = audit.from_store(bound, at=at)
    tables = {"findings": found}
    with contextlib.suppress(ValueError):  # a single snapshot: nothing to compare with
        tables["changes"] = changes(bound, at=inputs["now"])
    high = found[(found["severity"] == "high").to_numpy(dtype=bool)]
    affected = {v for vms in high["affected_vms"] for v in (vms if vms is not None else [])}
    figures = dict(
        [
            figure(VIEW, "findings", len(found)),
            *(
                figure(VIEW, f"findings_{s}", int((found["severity"] == s).sum()))
                for s in SEVERITIES
            ),
            figure(VIEW, "vms_affected", len(affected)),
            figure(
                VIEW,
                "rules_changed",
                len(tables["changes"]) if "changes" in tables else None,
                empty="unknown (a single snapshot)",
            ),
        ]
    )
    notes = view_notes(inputs, tables.values())
    return View(
        VIEW,
        inputs["now"],
        figures,
        tables,
        plots={"findings": lambda ax: plot_findings(found, ax=ax)},
        notes=notes,
        complete=not any("may be incomplete" in n for n in notes),
    )
