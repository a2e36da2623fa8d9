"""The firewall rules parsed once, for the audit and the reachability reports: each rule's match
(ports, sources, destinations; ``svcnb.reports._ports``), which VMs each firewall protects and the
firewalls' names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from svcnb.reports._classes import vm_classes
from svcnb.reports._ports import (
    IpSet,
    PortSet,
    match_covers,
    parse_ips,
    parse_port,
    sentinel_pins,
)


class _Rule:
    """One rule with its parsed match."""

    def __init__(self, row: Any, pins: dict[str, str] | None = None) -> None:
        self.id = str(row.id)
        self.firewall_id = str(row.firewall_id)
        self.position = None if pd.isna(row.position) else int(row.position)
        self.direction = _upper(row.direction)
        self.action = _upper(row.action)
        self.protocol = _upper(row.protocol)
        self.port_text = None if _isna(row.port) else str(row.port)
        self.ports: PortSet = parse_port(row.port, self.protocol, pins)
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
    if isinstance(value, str):  # most cells: pd.isna costs ten times as much per text
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _upper(value: Any) -> str:
    return "" if _isna(value) else str(value).strip().upper()


def _rules(rules: pd.DataFrame) -> list[_Rule]:
    pins = sentinel_pins()  # the user's reading of "0" and "" ports, if pinned
    return [_Rule(row, pins) for row in _cells(rules).itertuples(index=False)]


def _cells(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its text columns as arrays of Python objects: the same cells (a text, or
    ``pd.NA``), but walking them row by row no longer asks the Arrow array for each one."""
    text = [c for c, t in frame.dtypes.items() if isinstance(t, pd.StringDtype)]
    if not text:
        return frame
    # astype, not assign: pandas reads an array of texts assigned to a column as text again
    return frame.astype({c: object for c in text})


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
        # membership in a set of Python texts: Arrow's isin builds a scalar of each value
        alive = set(live.astype(str).to_numpy(dtype=object))
        ids = links["vm_id"].astype(str).to_numpy(dtype=object)
        links = links[[vm in alive for vm in ids]]
    out: dict[str, list[str]] = {}
    fws = links["firewall_id"].astype(str).to_numpy(dtype=object)
    for fw, vm in zip(fws, links["vm_id"].astype(str).to_numpy(dtype=object), strict=True):
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


def _links(vm_firewalls: pd.DataFrame | None) -> tuple[dict[str, list[str]], dict[str, str]]:
    """vm_id -> firewall ids, and firewall_id -> name (the VM objects carry the names)."""
    by_vm: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    if vm_firewalls is None or vm_firewalls.empty:
        return by_vm, names
    has_name = "name" in vm_firewalls
    for row in _cells(vm_firewalls).itertuples(index=False):
        by_vm.setdefault(str(row.vm_id), []).append(str(row.firewall_id))
        if has_name and not _isna(row.name):
            names[str(row.firewall_id)] = str(row.name)
    return by_vm, names
