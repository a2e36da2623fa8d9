"""GET /networks, and the attachments of a network: list, POST, DELETE.

Attach: the VM and the network must be in the same region (409 otherwise), a VM is attached to
a network at most once (409), ``privateIp`` when given must be a free IPv4 address inside the
network's range (422 outside or reserved, 409 taken); otherwise the next free one is assigned.
Detach always removes the record; with ``detachFail`` the upstream detach "fails" silently, as
the spec says it is best effort.
"""

from __future__ import annotations

import ipaddress

from . import _validate as v
from ._routes import Call, Route, find
from ._seed import attach
from ._speak import Listing
from ._state import State
from ._vmops import vm_brief
from ._wire import ApiFailure, ok


def list_networks(state: State, call: Call) -> tuple[int, Listing]:
    return 200, Listing(state.networks.values())


def list_attachments(state: State, call: Call) -> tuple[int, Listing]:
    net = find(state.networks, call.params["id"], "network")
    items = [a for a in state.attachments.values() if a["networkId"] == net["id"]]
    return 200, Listing(items)


def create_attachment(state: State, call: Call) -> tuple[int, dict]:
    net = find(state.networks, call.params["id"], "network")
    body = v.fields(call.body, {"vmId": v.string(200, 1), "privateIp": v.ipv4}, required=("vmId",))
    vm = find(state.vms, body["vmId"], "VM")
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
    if any(
        a["vmId"] == vm["id"] and a["networkId"] == net["id"] for a in state.attachments.values()
    ):
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
    record = attach(state, net, vm, private_ip, at=state.stamp())
    state.touch(vm)
    return 201, ok({**record, "vm": vm_brief(vm)})


def delete_attachment(state: State, call: Call) -> tuple[int, dict]:
    net = find(state.networks, call.params["id"], "network")
    vm_id = call.params["vmId"]
    record = next(
        (
            a
            for a in state.attachments.values()
            if a["networkId"] == net["id"] and a["vmId"] == vm_id
        ),
        None,
    )
    if record is None:
        raise ApiFailure(404, f"VM {vm_id[:80]!r} is not attached to network {net['id']}")
    # the upstream detach is best effort: with detachFail set it "fails", and the record is
    # removed all the same, as the spec requires
    del state.attachments[record["id"]]
    net["_taken"].discard(record["privateIp"])
    vm = state.vms.get(vm_id)
    if vm is not None:
        vm["privateNetworks"] = [p for p in vm["privateNetworks"] if p["id"] != net["id"]]
        state.touch(vm)
    if state.faults.detachFail:
        state.stats["detachFailures"] = state.stats.get("detachFailures", 0) + 1
    return 200, ok({"vmId": vm_id, "networkId": net["id"]})


ROUTES = [
    Route(
        "GET",
        "/networks",
        "networks:read",
        list_networks,
        200,
        "List private networks",
        "Network",
        listing=True,
        failures=(403, 422),
    ),
    Route(
        "GET",
        "/networks/{id}/attachments",
        "networks:read",
        list_attachments,
        200,
        "List the attachments of a network (sandbox extension)",
        "Attachment",
        listing=True,
        failures=(403, 422),
    ),
    Route(
        "POST",
        "/networks/{id}/attachments",
        "networks:write",
        create_attachment,
        201,
        "Attach a VM to a private network",
        "AttachmentCreated",
        body="AttachmentCreate",
        failures=(400, 403, 409, 413, 422),
    ),
    Route(
        "DELETE",
        "/networks/{id}/attachments/{vmId}",
        "networks:write",
        delete_attachment,
        200,
        "Detach a VM from a private network",
        "Detached",
        failures=(403, 409),
    ),
]
