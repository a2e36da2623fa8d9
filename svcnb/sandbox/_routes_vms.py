"""GET /vms, GET /vms/{id}, POST /vms/{id}/stop."""

from __future__ import annotations

from ._envelopes import ok, public
from ._routes import Call, Route
from ._speak import Listing
from ._state import State


def list_vms(state: State, call: Call) -> tuple[int, Listing]:
    # whole records: the dialect's list_keys pick what an item shows
    return 200, Listing(state.backends.vms.vms.records())


def get_vm(state: State, call: Call) -> tuple[int, dict]:
    return 200, ok(public(state.backends.vms.get(call.params["id"])))


def stop_vm(state: State, call: Call) -> tuple[int, dict]:
    action = state.backends.vms.request_stop(call.params["id"])
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
