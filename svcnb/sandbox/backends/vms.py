"""VMs, their SSH keys and actions, and how their status moves on the sandbox clock.

Beyond the README's transitions: stopped or suspended -> running (start); running -> running
(restart); any -> suspended; any -> terminated (kept and served). Event data carries the status
after the change.
"""

from __future__ import annotations

import copy
import itertools
from datetime import datetime, timedelta
from decimal import Decimal

from .._envelopes import ApiFailure, iso, parse_iso
from .._plans_regions import public_ip
from ._account import Account
from ._base import Table, find

STOP_SECONDS = 30
PROVISION_SECONDS = 60


def vm_brief(vm: dict) -> dict:
    return {"id": vm["id"], "name": vm["name"], "hostname": vm["hostname"], "status": vm["status"]}


class VmBackend:
    """The fleet: ``vms``, ``ssh_keys`` and ``actions`` by id, in the order they were made
    (ordered tables: any page of the fleet is a slice)."""

    def __init__(self, state: Account) -> None:
        self.state = state
        self.vms = Table()
        self.ssh_keys = Table()
        self.actions = Table()
        # what the clock will still do to VMs, by job number: (vm id, kind, due, action id); a
        # saved state keeps it, since the jobs themselves are closures
        self.pending: dict[int, tuple[str, str, datetime, str | None]] = {}
        self._job_numbers = itertools.count()

    def get(self, vm_id: str) -> dict:
        return find(self.vms, vm_id, "VM")

    def add(self, vm: dict) -> dict:
        self.vms[vm["id"]] = vm
        return vm

    def add_ssh_key(self, key: dict) -> dict:
        self.ssh_keys[key["id"]] = key
        return key

    def add_action(self, action: dict) -> dict:
        self.actions[action["id"]] = action
        return action

    # -- billing --
    def renew(self, vm: dict, next_at: datetime) -> None:
        """A paid renewal: the next one at ``next_at``, billing active, a fresh bandwidth
        cycle."""
        billing = vm["billing"]
        billing["nextRenewalAt"] = iso(next_at)
        billing["status"] = "active"
        vm["bandwidthUsedBytes"] = 0
        self.state.touch(vm)

    def mark_overdue(self, vm: dict) -> None:
        """A renewal left unpaid: ``billing.status`` ``overdue`` (the VM keeps running)."""
        vm["billing"]["status"] = "overdue"
        self.state.touch(vm)

    def owe(self, vm: dict, amount: Decimal, since: datetime) -> None:
        """Note on the internal record what ``vm`` owes and since when (shown by control)."""
        vm["_amountDue"] = f"{amount:.2f}"
        vm["_overdueSince"] = iso(since)

    def forgive(self, vm: dict) -> None:
        vm.pop("_amountDue", None)
        vm.pop("_overdueSince", None)

    def suspend_for_nonpayment(self, vm: dict) -> bool:
        """Suspend ``vm`` for an unpaid renewal; False when control had already suspended it
        (only its billing status changes then, and no event is emitted)."""
        vm["billing"]["status"] = "suspended"
        if vm["status"] == "suspended":
            return False
        vm["status"] = "suspended"
        self.state.touch(vm)
        return True

    # -- status changes --
    def _set_status(self, vm: dict, status: str, event: str | None) -> None:
        vm["status"] = status
        self.state.touch(vm)
        if event is not None:
            self.state.emit(event, {"vm": vm_brief(vm)})

    def new_action(self, vm: dict, kind: str, status: str = "in-progress") -> dict:
        state = self.state
        action_id = state.new_id("act")
        action = {
            "id": action_id,
            "vmId": vm["id"],
            "type": kind,
            "status": status,
            "startedAt": state.stamp(),
            "completedAt": state.stamp() if status == "completed" else None,
        }
        return self.add_action(action)

    def request_stop(self, vm_id: str) -> dict:
        """The public stop: queue a graceful shutdown of a running VM; 409 for any other
        status."""
        vm = self.get(vm_id)
        if vm["status"] != "running":
            raise ApiFailure(
                409,
                f"VM {vm['id']} is {vm['status']}; only a running VM can be stopped",
                terse="VM is not running",
            )
        self._set_status(vm, "stopping", None)
        return self.schedule_stop(vm, self.state.now() + timedelta(seconds=STOP_SECONDS))

    def schedule_stop(self, vm: dict, at: datetime) -> dict:
        """Queue a stop action that completes at ``at`` with status ``stopped`` and
        ``vm.stopped``."""
        action = self.new_action(vm, "stop")
        self._schedule_stop_job(vm["id"], action, at)
        return action

    def _schedule_stop_job(self, vm_id: str, action: dict, at: datetime) -> None:
        state = self.state
        number = self._remember(vm_id, "stop", at, action["id"])

        def finish() -> None:
            with state.lock:
                self.pending.pop(number, None)
                current = self.vms.get(vm_id)
                if current is not None and current["status"] == "stopping":
                    self._set_status(current, "stopped", "vm.stopped")
                action["status"] = "completed"
                action["completedAt"] = state.stamp()

        state.clock.schedule(at, finish)

    def _remember(self, vm_id: str, kind: str, at: datetime, action_id: str | None) -> int:
        number = next(self._job_numbers)
        self.pending[number] = (vm_id, kind, at, action_id)
        return number

    def schedule_provisioning(self, vm: dict, at: datetime) -> None:
        """A provisioning VM becomes running at ``at`` and ``vm.created`` is emitted."""
        state = self.state
        number = self._remember(vm["id"], "provision", at, None)

        def finish() -> None:
            with state.lock:
                self.pending.pop(number, None)
                current = self.vms.get(vm["id"])
                if current is None or current["status"] != "provisioning":
                    return
                current["ipAddress"] = public_ip(current.get("_index", len(self.vms)))
                billing = current["billing"]
                if billing is not None and billing["nextRenewalAt"] is None:
                    billing["nextRenewalAt"] = iso(state.now() + timedelta(days=30))
                self._set_status(current, "running", "vm.created")

        state.clock.schedule(at, finish)

    def provision(self, vm: dict) -> dict:
        """Add a new ``provisioning`` VM that comes up after ``PROVISION_SECONDS``."""
        self.add(vm)
        self.schedule_provisioning(vm, self.state.now() + timedelta(seconds=PROVISION_SECONDS))
        return vm

    def control_action(self, vm_id: str, kind: str) -> dict:
        """start, restart, terminate, suspend or touch, as the control API asks (no status
        checks beyond what makes no sense: nothing revives a terminated VM)."""
        vm = self.get(vm_id)
        if vm["status"] == "terminated" and kind != "touch":
            raise ApiFailure(409, f"VM {vm['id']} is terminated; it cannot be {kind}ed")
        if kind == "start":
            self._set_status(vm, "running", "vm.started")
            if vm["billing"] is not None and vm["billing"]["status"] == "suspended":
                vm["billing"]["status"] = "active"
        elif kind == "restart":
            self._set_status(vm, "running", "vm.restarted")
        elif kind == "suspend":
            self._set_status(vm, "suspended", "vm.suspended")
            if vm["billing"] is not None:
                vm["billing"]["status"] = "suspended"
        elif kind == "terminate":
            vm["ipAddress"] = None
            vm["billing"] = None
            self._set_status(vm, "terminated", "vm.terminated")
        elif kind == "touch":
            base = vm["name"].rsplit("~", 1)[0]
            suffix = vm["name"].rsplit("~", 1)[1] if "~" in vm["name"] else "0"
            vm["name"] = f"{base}~{int(suffix) + 1 if suffix.isdigit() else 1}"
            self.state.touch(vm)
        else:
            raise ApiFailure(
                404, f"unknown VM action {kind!r}; use start, restart, terminate, suspend or touch"
            )
        if kind != "touch":
            self.new_action(vm, kind, status="completed")
        return vm

    # -- saved state (``_saved``) --
    def export(self) -> dict:
        """VMs (internal keys kept, the catalog price as a decimal string), SSH keys, actions
        and the stops and provisionings the clock has yet to finish, as JSON-ready lists."""
        vms = []
        for vm in self.vms.values():
            record = copy.deepcopy(vm)
            if isinstance(record.get("_price"), Decimal):
                record["_price"] = str(record["_price"])
            vms.append(record)
        pending = [
            {"vmId": vm_id, "kind": kind, "at": iso(at), "actionId": action_id}
            for vm_id, kind, at, action_id in self.pending.values()
        ]
        return {
            "vms": vms,
            "sshKeys": copy.deepcopy(list(self.ssh_keys.values())),
            "actions": copy.deepcopy(list(self.actions.values())),
            "pending": pending,
        }

    def restore(self, saved: dict) -> None:
        """Add what :meth:`export` gave (into an empty backend) and schedule its pending jobs."""
        for key in saved.get("sshKeys", []):
            self.add_ssh_key(copy.deepcopy(key))
        for action in saved.get("actions", []):
            self.add_action(copy.deepcopy(action))
        for record in saved.get("vms", []):
            vm = copy.deepcopy(record)
            if isinstance(vm.get("_price"), str):
                vm["_price"] = Decimal(vm["_price"])
            self.add(vm)
        for job in saved.get("pending", []):
            vm = self.get(job["vmId"])
            at = parse_iso(job["at"])
            if job["kind"] == "stop":
                action = self.actions.get(job.get("actionId") or "")
                if action is None:
                    action = self.new_action(vm, "stop")
                self._schedule_stop_job(vm["id"], action, at)
            elif job["kind"] == "provision":
                self.schedule_provisioning(vm, at)
            else:
                raise ValueError(f"pending job of VM {vm['id']}: unknown kind {job['kind']!r}")
