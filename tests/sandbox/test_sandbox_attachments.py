"""Private network attachments: the region rule, duplicates, addresses, and removal even when
the upstream detach fails."""

from __future__ import annotations

import ipaddress

import pytest
from sandbox_support import failure


@pytest.fixture
def net(api) -> dict:
    return api.data("/networks")[0]


def _vms(api) -> list[dict]:
    return api.all("/vms")


def _free_vm(api, net: dict) -> dict:
    attached = {a["vmId"] for a in api.all(f"/networks/{net['id']}/attachments")}
    return next(
        vm
        for vm in _vms(api)
        if vm["region"]["slug"] == net["region"]["slug"]
        and vm["status"] != "terminated"
        and vm["id"] not in attached
    )


def test_attach_in_the_same_region_reserves_an_address_in_range(api, net):
    vm = _free_vm(api, net)
    response = api.post(f"/networks/{net['id']}/attachments", json={"vmId": vm["id"]})
    assert response.status_code == 201, response.text
    att = response.json()["data"]
    assert list(att) == ["id", "vmId", "networkId", "privateIp", "netInterface", "attachedAt", "vm"]
    assert att["vm"] == {k: vm[k] for k in ("id", "name", "hostname", "status")}
    assert ipaddress.IPv4Address(att["privateIp"]) in ipaddress.IPv4Network(net["ipRange"])
    assert att["netInterface"].startswith("eth")
    listed = api.all(f"/networks/{net['id']}/attachments")
    assert {k: v for k, v in att.items() if k != "vm"} in listed
    full = api.data(f"/vms/{vm['id']}")
    assert {"id": net["id"], "name": net["name"]} in full["privateNetworks"]
    assert full["updatedAt"] > vm["updatedAt"]


def test_attach_across_regions_is_409_and_changes_nothing(api, net):
    vm = next(v for v in _vms(api) if v["region"]["slug"] != net["region"]["slug"])
    before = api.all(f"/networks/{net['id']}/attachments")
    error = failure(api.post(f"/networks/{net['id']}/attachments", json={"vmId": vm["id"]}), 409)
    assert "same region" in error
    assert api.all(f"/networks/{net['id']}/attachments") == before


def test_attach_twice_is_409(api, net):
    vm = _free_vm(api, net)
    assert api.post(f"/networks/{net['id']}/attachments", json={"vmId": vm["id"]}).is_success
    assert "already attached" in failure(
        api.post(f"/networks/{net['id']}/attachments", json={"vmId": vm["id"]}), 409
    )


def test_chosen_private_ip_inside_range_is_kept_and_outside_or_taken_is_refused(api, net):
    first, second = [
        vm
        for vm in _vms(api)
        if vm["region"]["slug"] == net["region"]["slug"]
        and vm["status"] != "terminated"
        and vm["id"] not in {a["vmId"] for a in api.all(f"/networks/{net['id']}/attachments")}
    ][:2]
    inside = str(ipaddress.IPv4Network(net["ipRange"]).network_address + 777)
    path = f"/networks/{net['id']}/attachments"
    assert failure(
        api.post(path, json={"vmId": first["id"], "privateIp": "192.0.2.1"}), 422
    ).startswith("privateIp")
    assert failure(
        api.post(path, json={"vmId": first["id"], "privateIp": "10.0.0.300"}), 422
    ).startswith("privateIp")
    made = api.post(path, json={"vmId": first["id"], "privateIp": inside}).json()["data"]
    assert made["privateIp"] == inside
    assert "in use" in failure(
        api.post(path, json={"vmId": second["id"], "privateIp": inside}), 409
    )


@pytest.mark.parametrize(
    ("body", "status", "names"),
    [
        ({}, 422, "vmId"),
        ({"vmId": 5}, 422, "vmId"),
        ({"vmId": ""}, 422, "vmId"),
        ({"vmId": "vm_none"}, 404, "VM"),
        ({"vmId": "x", "extra": 1}, 422, "extra"),
    ],
)
def test_attach_bad_bodies(api, net, body, status, names):
    assert names in failure(api.post(f"/networks/{net['id']}/attachments", json=body), status)


def test_attach_to_unknown_network_is_404(api):
    vm = _vms(api)[0]
    failure(api.post("/networks/net_none/attachments", json={"vmId": vm["id"]}), 404)


def test_detach_removes_the_record(api, net):
    att = api.all(f"/networks/{net['id']}/attachments")[0]
    response = api.delete(f"/networks/{net['id']}/attachments/{att['vmId']}")
    assert response.status_code == 200
    assert response.json()["data"] == {"vmId": att["vmId"], "networkId": net["id"]}
    assert att not in api.all(f"/networks/{net['id']}/attachments")
    vm = api.data(f"/vms/{att['vmId']}")
    assert net["id"] not in {p["id"] for p in vm["privateNetworks"]}


def test_detach_removes_the_record_even_when_the_upstream_detach_fails(api, sandbox, net):
    sandbox.control.set_faults(detachFail=True)
    att = api.all(f"/networks/{net['id']}/attachments")[0]
    response = api.delete(f"/networks/{net['id']}/attachments/{att['vmId']}")
    assert response.status_code == 200
    assert att["vmId"] not in {a["vmId"] for a in api.all(f"/networks/{net['id']}/attachments")}
    assert net["id"] not in {p["id"] for p in api.data(f"/vms/{att['vmId']}")["privateNetworks"]}
    assert sandbox.control.stats()["detachFailures"] == 1
    # the address is free again: the VM can be attached anew
    assert (
        api.post(f"/networks/{net['id']}/attachments", json={"vmId": att["vmId"]}).status_code
        == 201
    )


def test_detach_of_a_vm_not_attached_is_404(api, net):
    failure(api.delete(f"/networks/{net['id']}/attachments/vm_not_there"), 404)
    failure(api.delete("/networks/net_none/attachments/vm_x"), 404)
