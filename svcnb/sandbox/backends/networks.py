"""Private networks and the attachments of VMs to them (the rules: docs/contracts.md §1 and the
README's table of what the sandbox does).

Detach always removes the record; with ``detachFail`` the upstream detach "fails" silently, as
the spec says it is best effort.
"""

from __future__ import annotations

import copy
import ipaddress

from .. import _validate as v
from .._envelopes import ApiFailure
from ._account import Account
from ._base import Records, Table, find
from .vms import VmBackend, vm_brief


class NetworkBackend:
    """``networks`` and ``attachments`` by id (a network's ``_taken`` holds its used IPs)."""

    def __init__(self, state: Account, vms: VmBackend) -> None:
        self.state = state
        # an attachment names a VM of the same account: the one VM backend, handed in
        self.vms = vms
        self.networks = Table()
        self.attachments = Table()
        # each network's attachments in the order they were made: a page of one network's
        # list is a slice, not a walk over every attachment of the account
        self._by_network: dict[str, Table] = {}

    def get(self, network_id: str) -> dict:
        return find(self.networks, network_id, "network")

    def add(self, network: dict) -> dict:
        self.networks[network["id"]] = network
        self._by_network.setdefault(network["id"], Table())
        return network

    def attachments_of(self, network_id: str) -> Records:
        net = self.get(network_id)
        return self._by_network.setdefault(net["id"], Table()).records()

    def _attached(self, network_id: str, vm_id: str) -> dict | None:
        return next(
            (a for a in self._by_network.get(network_id, {}).values() if a["vmId"] == vm_id),
            None,
        )

    def attach_checked(self, network_id: str, body: object) -> dict:
        """The public attach: every rule of docs/contracts.md §1, then the record with the VM's
        brief."""
        net = self.get(network_id)
        body = v.fields(body, {"vmId": v.string(200, 1), "privateIp": v.ipv4}, required=("vmId",))
        vm = self.vms.get(body["vmId"])
        if vm["status"] == "terminated":
            raise ApiFailure(
                409, f"VM {vm['id']} is terminated; it cannot be attached", terse="VM is terminated"
            )
        vm_region = (vm["region"] or {}).get("slug")
        if vm_region != net["region"]["slug"]:
            raise ApiFailure(
                409,
                f"region mismatch: VM {vm['id']} is in {vm_region or 'no region'} "
                f"but network {net['id']} is in {net['region']['slug']}; the VM "
                "and the network must be in the same region",
                terse="Region mismatch",
            )
        if self._attached(net["id"], vm["id"]) is not None:
            raise ApiFailure(
                409,
                f"VM {vm['id']} is already attached to network {net['id']}",
                terse="VM is already attached",
            )
        private_ip = None
        if "privateIp" in body:
            address = body["privateIp"]
            network = ipaddress.IPv4Network(net["ipRange"])
            if address not in network or address in (
                network.network_address,
                network.broadcast_address,
            ):
                raise ApiFailure(
                    422,
                    f"privateIp: {address} is not a usable address in the "
                    f"network range {net['ipRange']}",
                )
            private_ip = str(address)
            if private_ip in net["_taken"]:
                raise ApiFailure(
                    409,
                    f"privateIp: {private_ip} is already in use on network {net['id']}",
                    terse="IP address in use",
                )
        record = self.attach(net, vm, private_ip, at=self.state.stamp())
        self.state.touch(vm)
        return {**record, "vm": vm_brief(vm)}

    def attach(self, network: dict, vm: dict, private_ip: str | None, at: str) -> dict:
        """Record an attachment of ``vm`` to ``network`` (checks are the caller's)."""
        if private_ip is None:
            private_ip = self.next_free_ip(network)
        used = self._interfaces_of(vm)
        interface = next(f"eth{i}" for i in range(1, 1000) if f"eth{i}" not in used)
        att_id = self.state.new_id("att")
        record = {
            "id": att_id,
            "vmId": vm["id"],
            "networkId": network["id"],
            "privateIp": private_ip,
            "netInterface": interface,
            "attachedAt": at,
        }
        self.attachments[att_id] = record
        self._by_network.setdefault(network["id"], Table())[att_id] = record
        network["_taken"].add(private_ip)
        vm["privateNetworks"].append({"id": network["id"], "name": network["name"]})
        return record

    def detach(self, network_id: str, vm_id: str) -> dict:
        net = self.get(network_id)
        record = self._attached(net["id"], vm_id)
        if record is None:
            raise ApiFailure(404, f"VM {vm_id[:80]!r} is not attached to network {net['id']}")
        # the upstream detach is best effort: with detachFail set it "fails", and the record is
        # removed all the same, as the spec requires
        del self.attachments[record["id"]]
        del self._by_network[net["id"]][record["id"]]
        net["_taken"].discard(record["privateIp"])
        vm = self.vms.vms.get(vm_id)
        if vm is not None:
            vm["privateNetworks"] = [p for p in vm["privateNetworks"] if p["id"] != net["id"]]
            self.state.touch(vm)
        state = self.state
        if state.faults.detachFail:
            state.stats["detachFailures"] = state.stats.get("detachFailures", 0) + 1
        return {"vmId": vm_id, "networkId": net["id"]}

    def _interfaces_of(self, vm: dict) -> set[str]:
        """The ``netInterface`` of every attachment ``vm`` has (one per ``privateNetworks``)."""
        # newest first, stopping once all are found: seeding attaches each VM right after its
        # records were added, so a full scan per attach would make seeding quadratic in fleet size
        wanted = len(vm["privateNetworks"])
        used: set[str] = set()
        for record in self.attachments.newest_first():
            if len(used) >= wanted:
                break
            if record["vmId"] == vm["id"]:
                used.add(record["netInterface"])
        return used

    def next_free_ip(self, network: dict) -> str:
        """The next DHCP address of ``network`` not held by any attachment."""
        taken = network["_taken"]
        base = network["ipRange"].split("/")[0].split(".")
        while True:
            host = network["_nextHost"]
            network["_nextHost"] = host + 1
            ip = f"{base[0]}.{base[1]}.{host // 254}.{host % 254 + 1}"
            if ip not in taken:
                return ip

    # -- saved state (``_saved``) --
    def export(self) -> dict:
        """Networks (``_nextHost`` kept; ``_taken`` left out, it is the attachments' addresses)
        and attachments in the order they were made."""
        networks = []
        for network in self.networks.values():
            record = copy.deepcopy({k: v for k, v in network.items() if k != "_taken"})
            networks.append(record)
        return {"networks": networks, "attachments": copy.deepcopy(list(self.attachments.values()))}

    def restore(self, saved: dict) -> None:
        """Add what :meth:`export` gave; the VMs' ``privateNetworks`` are in their own records."""
        for record in saved.get("networks", []):
            network = copy.deepcopy(record)
            network.setdefault("_nextHost", 10)
            network["_taken"] = set()
            self.add(network)
        for record in saved.get("attachments", []):
            attachment = copy.deepcopy(record)
            network = self.get(attachment["networkId"])
            self.attachments[attachment["id"]] = attachment
            self._by_network.setdefault(network["id"], Table())[attachment["id"]] = attachment
            network["_taken"].add(attachment["privateIp"])
