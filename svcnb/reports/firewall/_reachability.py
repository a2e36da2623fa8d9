"""Reachability: for one flow ("22/TCP from 203.0.113.5"), per VM, the rule that decides it, on
the audit's parsed rules and first-match model (:func:`reach`); the flows an edit opens, closes
or makes unknown (:func:`reach_diff`, :func:`reach_diff_words`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from svcnb.reports._classes import vm_classes
from svcnb.reports._reach import (
    decide,
    flows_from,
    make_flow,
    probe_flows,
    rule_signature,
    vm_address,
)
from svcnb.reports._replay import report
from svcnb.reports.firewall._parsed import _context, _isna, _links, _Rule, _rules

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
    ``attrs["unread_rules"]`` names each rule that could not be read (a port sentinel such as
    ``"0"`` not pinned, an IP that does not parse) and what was assumed for it: nothing.
    """
    flow = make_flow(source, port, protocol, direction)
    ctx = _context(rules, vm_firewalls, vms=vms)
    rows = _answer(ctx.parsed, _fleet(vm_firewalls, vms, vm), ctx.links, ctx.names, flow)
    return _with_unread(_reach_frame(rows), ctx.parsed)


def _unread(parsed: list[_Rule]) -> dict[str, str]:
    """rule id -> what could not be read in it and what was assumed for it (nothing)."""
    out = {}
    for r in parsed:
        why = [e for e in (r.ports.error, *r.sources.errors, *r.dests.errors) if e]
        if why:
            opens = r.action == "ACCEPT" and not r.ports.ok
            out[r.id] = (
                f"rule {r.id} of firewall {r.firewall_id}: {'; '.join(why)}; assumed nothing: "
                "a flow it meets before a decision is answered unknown"
                + (" (it may be open to every port)" if opens else "")
            )
    return out


def _with_unread(frame: pd.DataFrame, parsed: list[_Rule]) -> pd.DataFrame:
    """``frame`` naming the rules it could not read (``attrs["unread_rules"]``)."""
    unread = _unread(parsed)
    if unread:
        frame.attrs["unread_rules"] = unread
    return frame


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
    ``attrs["unread_rules"]`` names the changed firewalls' rules that could not be read, as
    :func:`reach` does; :func:`reach_diff_words` says each.
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
    # the rules of the changed firewalls that could not be read, as the edit leaves them
    unread = _unread([r for r in after if r.firewall_id in changed_fws])
    return _named(out, unread) if unread else _diff_types(out)


def _named(out: pd.DataFrame, unread: dict[str, str]) -> pd.DataFrame:
    out = _diff_types(out)
    out.attrs["unread_rules"] = unread
    return out


def _diff_types(out: pd.DataFrame) -> pd.DataFrame:
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
        verb = verbs.get(str(change), str(change))
        where = "anywhere" if str(source) in ("0.0.0.0/0", "::/0") else str(source)
        labels = [
            str(n) if not _isna(n) else str(i)
            for n, i in zip(part["vm_name"], part["vm_id"], strict=True)
        ]
        shown = ", ".join(labels[:limit]) + (
            f" and {len(labels) - limit:,} more" if len(labels) > limit else ""
        )
        count = f"{len(labels):,} VM" + ("" if len(labels) == 1 else "s")
        if direction == "IN":
            lines.append(f"{verb} {what} from {where} to {count}: {shown}")
        else:
            lines.append(f"{verb} {what} to {where} from {count}: {shown}")
    for why in diff.attrs.get("unread_rules", {}).values():
        lines.append(f"could not read {why}")
    return lines
