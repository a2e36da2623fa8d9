"""GET /vms, GET /vms/{id}, POST /vms/{id}/stop."""

from __future__ import annotations

from ._routes import Call, Route, find, page_of
from ._state import State
from ._vmops import request_stop
from ._wire import ok, public

# served by GET /vms/{id} only; GET /vms items leave them out (DESIGN section 3)
DETAIL_KEYS = frozenset({"sshKeys", "firewalls", "privateNetworks"})
# the spec's VM keys in their order, less the detail keys
SUMMARY_KEYS = (
    "id",
    "name",
    "hostname",
    "status",
    "vcpu",
    "ram",
    "disk",
    "bandwidth",
    "networkSpeed",
    "network10gEnabled",
    "dailyBackupEnabled",
    "isProtected",
    "ipAddress",
    "region",
    "plan",
    "osTemplate",
    "billing",
    "createdAt",
    "bandwidthUsedBytes",
    "bandwidthPackBytes",
    "updatedAt",
)


def vm_summary(vm: dict) -> dict:
    return {k: vm[k] for k in SUMMARY_KEYS}


def list_vms(state: State, call: Call) -> tuple[int, dict]:
    envelope = page_of(state.vms.values(), call.query)
    envelope["data"] = [vm_summary(vm) for vm in envelope["data"]]
    return 200, envelope


def get_vm(state: State, call: Call) -> tuple[int, dict]:
    return 200, ok(public(find(state.vms, call.params["id"], "VM")))


def stop_vm(state: State, call: Call) -> tuple[int, dict]:
    action = request_stop(state, find(state.vms, call.params["id"], "VM"))
    return 202, ok({"actionId": action["id"]})


ROUTES = [
    Route(
        "GET",
        "/vms",
        "vms:read",
        list_vms,
        200,
        "List VMs (summaries)",
        "VMSummary",
        listing=True,
        failures=(403, 422),
    ),
    Route("GET", "/vms/{id}", "vms:read", get_vm, 200, "Get one VM", "VM", failures=(403,)),
    Route(
        "POST",
        "/vms/{id}/stop",
        "vms:write",
        stop_vm,
        202,
        "Queue a graceful stop",
        "ActionRef",
        failures=(400, 403, 409, 413, 422),
    ),
]
