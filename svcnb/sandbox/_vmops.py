"""VM status changes on the sandbox clock, and the events they emit.

Statuses (DESIGN section 3): provisioning -> running; running -> stopping -> stopped (stop takes
``STOP_SECONDS`` of sandbox time); stopped/suspended -> running (start); running -> running
(restart); any -> suspended; any -> terminated (kept and served with status ``terminated``).
Event data is ``{"vm": {id, name, hostname, status}}`` with the status after the change.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._catalog import public_ip
from ._state import State
from ._wire import ApiFailure, iso

STOP_SECONDS = 30
PROVISION_SECONDS = 60


def vm_brief(vm: dict) -> dict:
    return {"id": vm["id"], "name": vm["name"], "hostname": vm["hostname"], "status": vm["status"]}


def _set_status(state: State, vm: dict, status: str, event: str | None) -> None:
    vm["status"] = status
    state.touch(vm)
    if event is not None:
        state.emit(event, {"vm": vm_brief(vm)})


def new_action(state: State, vm: dict, kind: str, status: str = "in-progress") -> dict:
    action_id = state.new_id("act")
    action = {
        "id": action_id,
        "vmId": vm["id"],
        "type": kind,
        "status": status,
        "startedAt": state.stamp(),
        "completedAt": state.stamp() if status == "completed" else None,
    }
    state.actions[action_id] = action
    return action


def request_stop(state: State, vm: dict) -> dict:
    """The public stop: queue a graceful shutdown of a running VM; 409 for any other status."""
    if vm["status"] != "running":
        raise ApiFailure(
            409,
            f"VM {vm['id']} is {vm['status']}; only a running VM can be stopped",
            terse="VM is not running",
        )
    _set_status(state, vm, "stopping", None)
    return schedule_stop(state, vm, state.now() + timedelta(seconds=STOP_SECONDS))


def schedule_stop(state: State, vm: dict, at: datetime) -> dict:
    """Queue a stop action that completes at ``at`` with status ``stopped`` and ``vm.stopped``."""
    action = new_action(state, vm, "stop")

    def finish() -> None:
        with state.lock:
            current = state.vms.get(vm["id"])
            if current is not None and current["status"] == "stopping":
                _set_status(state, current, "stopped", "vm.stopped")
            action["status"] = "completed"
            action["completedAt"] = state.stamp()

    state.clock.schedule(at, finish)
    return action


def schedule_provisioning(state: State, vm: dict, at: datetime) -> None:
    """A provisioning VM becomes running at ``at`` and ``vm.created`` is emitted."""

    def finish() -> None:
        with state.lock:
            current = state.vms.get(vm["id"])
            if current is None or current["status"] != "provisioning":
                return
            current["ipAddress"] = public_ip(current.get("_index", len(state.vms)))
            if current["billing"] is not None and current["billing"]["nextRenewalAt"] is None:
                current["billing"]["nextRenewalAt"] = iso(state.now() + timedelta(days=30))
            _set_status(state, current, "running", "vm.created")

    state.clock.schedule(at, finish)


def control_action(state: State, vm: dict, kind: str) -> dict:
    """start, restart, terminate, suspend or touch, as the control API asks (no status checks
    beyond what makes no sense: nothing revives a terminated VM)."""
    if vm["status"] == "terminated" and kind != "touch":
        raise ApiFailure(409, f"VM {vm['id']} is terminated; it cannot be {kind}ed")
    if kind == "start":
        _set_status(state, vm, "running", "vm.started")
        if vm["billing"] is not None and vm["billing"]["status"] == "suspended":
            vm["billing"]["status"] = "active"
    elif kind == "restart":
        _set_status(state, vm, "running", "vm.restarted")
    elif kind == "suspend":
        _set_status(state, vm, "suspended", "vm.suspended")
        if vm["billing"] is not None:
            vm["billing"]["status"] = "suspended"
    elif kind == "terminate":
        vm["ipAddress"] = None
        vm["billing"] = None
        _set_status(state, vm, "terminated", "vm.terminated")
    elif kind == "touch":
        base = vm["name"].rsplit("~", 1)[0]
        suffix = vm["name"].rsplit("~", 1)[1] if "~" in vm["name"] else "0"
        vm["name"] = f"{base}~{int(suffix) + 1 if suffix.isdigit() else 1}"
        state.touch(vm)
    else:
        raise ApiFailure(
            404, f"unknown VM action {kind!r}; use start, restart, terminate, suspend or touch"
        )
    if kind != "touch":
        new_action(state, vm, kind, status="completed")
    return vm
