"""The reachability engine behind :func:`svcnb.reports.firewall.reach` and ``reach_diff``.

It works on rules already parsed by the firewall audit (objects with ``id``, ``firewall_id``,
``position``, ``direction``, ``action``, ``protocol``, ``ports``, ``sources``, ``dests``), so the
audit and reachability read ports and IP lists the same way.

Each rule meets a flow with one of four answers: it matches, it does not, it matches only part
of a network source (``partial``), or it cannot be told (``unknown``: a port or IP entry that does
not parse, a protocol or action the spec does not list). A component that plainly does not match
settles "does not match" even when another component is unreadable: a rule for UDP with port
"ssh" can never match a TCP flow.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from svcnb.reports._ports import PORTLESS_PROTOCOLS, IpSet

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

PROTOCOLS = frozenset({"TCP", "UDP", "ICMP", "ESP", "GRE"})
RULE_PROTOCOLS = PROTOCOLS | {"ANY"}
ACTIONS = {"ACCEPT": True, "DROP": False, "REJECT": False}
DIRECTIONS = frozenset({"IN", "OUT"})
WORLD_WORDS = frozenset({"", "any", "*", "anywhere", "internet"})
WORLD = "0.0.0.0/0"

YES, NO, PARTIAL, UNKNOWN = "yes", "no", "partial", "unknown"


@dataclass(frozen=True)
class Flow:
    """One probe: traffic of ``protocol`` to ``port`` between the VM and ``remote``.

    ``remote`` is the sender for inbound flows and the receiver for outbound ones.
    """

    direction: str
    protocol: str
    port: int | None
    remote: Network

    @property
    def source_text(self) -> str:
        return str(self.remote)

    def words(self) -> str:
        what = f"{self.protocol}" if self.port is None else f"{self.port}/{self.protocol}"
        where = "anywhere" if self.remote.prefixlen == 0 else str(self.remote)
        return f"{what} {'from' if self.direction == 'IN' else 'to'} {where}"


def make_flow(source: Any, port: Any, protocol: Any = "TCP", direction: Any = "IN") -> Flow:
    """A :class:`Flow` from user input; ValueError in words for what cannot be a flow."""
    d = str(direction).strip().upper()
    if d not in DIRECTIONS:
        raise ValueError(f"direction must be IN or OUT, got {direction!r}")
    p = str(protocol).strip().upper()
    if p not in PROTOCOLS:
        raise ValueError(
            f"protocol must be one of {', '.join(sorted(PROTOCOLS))} (a flow has one), "
            f"got {protocol!r}"
        )
    text = "" if source is None else str(source).strip()
    try:
        remote = ipaddress.ip_network(WORLD if text.lower() in WORLD_WORDS else text, strict=False)
    except ValueError:
        raise ValueError(f"source {source!r} is not an address or CIDR") from None
    number: int | None = None
    if p not in PORTLESS_PROTOCOLS:
        digits = str(port).strip() if port is not None else ""
        if not (digits.isascii() and digits.isdecimal() and 0 <= int(digits) <= 65535):
            raise ValueError(f"{p} flows need a port 0-65535, got {port!r}")
        number = int(digits)
    return Flow(d, p, number, remote)


def _remote_match(ips: IpSet, net: Network) -> tuple[str, str]:
    """How a rule's remote-side list meets the flow's remote network."""
    if ips.any:
        return YES, ""
    # subnet_of takes a network of its own version only: one branch per version
    if isinstance(net, ipaddress.IPv4Network):
        inside = any(net.subnet_of(n) for n in ips.v4)
    else:
        inside = any(net.subnet_of(n) for n in ips.v6)
    if inside:
        return YES, ""
    if any(n.overlaps(net) for n in ips.networks if n.version == net.version):
        return PARTIAL, ""
    if ips.errors:
        return UNKNOWN, "; ".join(ips.errors)
    return NO, ""


def _local_match(ips: IpSet, address: Any) -> tuple[str, str]:
    """How a rule's VM-side list meets the VM's own address (None when not known)."""
    if ips.any:
        return YES, ""
    if address is None:
        return UNKNOWN, "the rule names VM-side addresses and the VM's address is not known"
    if any(address in n for n in ips.networks if n.version == address.version):
        return YES, ""
    if ips.errors:
        return UNKNOWN, "; ".join(ips.errors)
    return NO, ""


def _port_match(rule: Any, flow: Flow) -> tuple[str, str]:
    if flow.port is None:
        if rule.protocol == flow.protocol:
            return YES, ""  # a port filter on a portless protocol has nothing to filter
        if rule.ports.ok and rule.ports.any:
            return YES, ""
        # as in the audit's coverage model: an ANY rule with ports says nothing clear on ICMP
        return UNKNOWN, f"protocol ANY with port {rule.port_text!r}: unclear for {flow.protocol}"
    if not rule.ports.ok:
        return UNKNOWN, str(rule.ports.error)
    return (YES, "") if rule.ports.intersects([flow.port]) else (NO, "")


def match(rule: Any, flow: Flow, address: Any) -> tuple[str, str]:
    """(yes/no/partial/unknown, why) for ``rule`` against ``flow`` to a VM at ``address``."""
    if rule.direction != flow.direction:
        return (NO, "") if rule.direction in DIRECTIONS else (UNKNOWN, "direction not IN/OUT")
    if rule.protocol not in RULE_PROTOCOLS:
        return UNKNOWN, f"protocol {rule.protocol!r} is not one the spec lists"
    if rule.protocol not in ("ANY", flow.protocol):
        return NO, ""
    remote, local = (
        (rule.sources, rule.dests) if flow.direction == "IN" else (rule.dests, rule.sources)
    )
    parts = [
        _port_match(rule, flow),
        _remote_match(remote, flow.remote),
        _local_match(local, address),
    ]
    kinds = [k for k, _ in parts]
    if NO in kinds:
        return NO, ""
    if UNKNOWN in kinds:
        return UNKNOWN, "; ".join(w for k, w in parts if k == UNKNOWN)
    return (PARTIAL, "") if PARTIAL in kinds else (YES, "")


@dataclass
class Decision:
    """What decides one flow for one VM: a rule, a tie, an unreadable rule, or the default."""

    kind: str  # "rule", "unknown", "default"
    rule: Any = None
    reason: str = ""
    partial: tuple[str, ...] = ()


def decide(rules: Iterable[Any], flow: Flow, address: Any) -> Decision:
    """First match by position over ``rules`` (all firewalls of one VM, pooled).

    Rules at the same position are not ordered by the spec: when several match there with
    different allow/deny outcomes, the answer is unknown rather than a pick.
    """
    placed: list[Any] = []
    unplaced: list[Any] = []
    for r in rules:
        (unplaced if r.position is None else placed).append(r)
    for r in unplaced:
        kind, why = match(r, flow, address)
        if kind != NO:
            return Decision("unknown", r, f"rule {r.id} has no position, so its turn is unknown")
    placed.sort(key=lambda r: (r.position, r.firewall_id, r.id))
    partial: list[str] = []
    for position, group in groupby(placed, key=lambda r: r.position):
        hits = []
        for r in group:
            kind, why = match(r, flow, address)
            if kind == UNKNOWN:
                return Decision(
                    "unknown",
                    r,
                    f"rule {r.id} at position {position} of firewall {r.firewall_id} "
                    f"cannot be evaluated ({why}) and comes before any decision",
                    tuple(partial),
                )
            if kind == PARTIAL:
                partial.append(r.id)
            elif kind == YES:
                hits.append(r)
        if not hits:
            continue
        outcomes = {ACTIONS.get(r.action) for r in hits}
        if None in outcomes:
            bad = next(r for r in hits if r.action not in ACTIONS)
            return Decision(
                "unknown", bad, f"rule {bad.id} has action {bad.action!r}", tuple(partial)
            )
        if len(outcomes) > 1:
            names = ", ".join(f"{r.id} ({r.action})" for r in hits)
            return Decision(
                "unknown",
                hits[0],
                f"rules {names} all match at position {position}; the spec does not order them",
                tuple(partial),
            )
        return Decision("rule", hits[0], "", tuple(partial))
    return Decision("default", None, "", tuple(partial))


def vm_address(value: Any) -> Any:
    """The VM's address as an ``ipaddress`` object, None when missing or unreadable."""
    if value is None or not isinstance(value, str) or not value.strip():
        return None
    try:
        return ipaddress.ip_address(value.strip())
    except ValueError:
        return None


def rule_signature(rule: Any) -> tuple:
    """What of a rule decides matches, to tell which firewalls an edit changed."""
    return (
        rule.id,
        rule.position,
        rule.direction,
        rule.action,
        rule.protocol,
        rule.port_text,
        rule.sources,
        rule.dests,
    )


def probe_flows(changed_rules: Iterable[Any], ports: Iterable[int]) -> list[Flow]:
    """The default probes: ``ports`` over TCP from anywhere, plus what the changed rules name.

    From each changed rule: its protocol (ANY probes TCP), each single port and the first port
    of each range, and its remote networks as sources besides anywhere, so that moving an
    office range shows the old range closing and the new one opening.
    """
    probe_ports = [int(p) for p in ports]
    flows: dict[Flow, None] = {}
    world = ipaddress.ip_network(WORLD)
    for port in probe_ports:
        flows[Flow("IN", "TCP", port, world)] = None
    for r in changed_rules:
        if r.direction not in DIRECTIONS:
            continue
        protocol = "TCP" if r.protocol == "ANY" else r.protocol
        if protocol not in PROTOCOLS:
            continue
        remote = r.sources if r.direction == "IN" else r.dests
        nets: list[Network] = [world]
        if remote.ok and not remote.any:
            nets += [n for n in (*remote.v4, *remote.v6) if n.prefixlen][:4]
        if protocol in PORTLESS_PROTOCOLS:
            numbers: list[int | None] = [None]
        elif r.ports.ok and not r.ports.any:
            numbers = sorted({lo for lo, _ in r.ports.ranges})[:8]
        else:
            # every port, or an unreadable port: one probe shows what the rule does
            numbers = [probe_ports[0] if probe_ports else 22]
        for net in nets:
            for number in numbers:
                flows[Flow(r.direction, protocol, number, net)] = None
    return list(flows)


def flows_from(given: Any) -> list[Flow]:
    """Flows from a frame or an iterable of mappings (source, port, protocol, direction)."""
    if hasattr(given, "to_dict"):
        given = given.to_dict("records")
    out = []
    for item in given:
        if isinstance(item, Flow):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ValueError(f"a flow is a mapping of source, port, protocol, direction: {item!r}")
        out.append(
            make_flow(
                item.get("source", WORLD),
                item.get("port"),
                item.get("protocol", "TCP"),
                item.get("direction", "IN"),
            )
        )
    return out
