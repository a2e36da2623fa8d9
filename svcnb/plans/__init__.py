"""Guarded bulk actions: a stop plan names the VMs a bulk stop touches, why, and which are held
back, and is applied only while the fleet still matches it.

``build_stop_plan(client_or_vms, status=..., region=..., plan=..., name=..., ids=...,
include_protected=..., limit=10)`` builds one; ``plan.save(path)`` / ``StopPlan.load(path)``
keep it for review; ``apply_plan(plan, client, approver=..., store=...)`` refuses a plan whose
content no longer gives its digest, re-reads each VM, refuses those the plan's rules hold back as
they stand now or that changed, stops and waits for the rest and writes the audit log record.
"""

from __future__ import annotations

from svcnb.plans._stop import (
    DEFAULT_LIMIT,
    NOT_STOPPABLE,
    PROTECTED,
    SKIPPED,
    STOP,
    STOPPED,
    Filter,
    PlanChangedError,
    PlanError,
    PlanLimitError,
    StopPlan,
    StopRun,
    apply_plan,
    build_stop_plan,
    changes,
    held_back,
    vms_text,
)

__all__ = [
    "DEFAULT_LIMIT",
    "NOT_STOPPABLE",
    "PROTECTED",
    "SKIPPED",
    "STOP",
    "STOPPED",
    "Filter",
    "PlanChangedError",
    "PlanError",
    "PlanLimitError",
    "StopPlan",
    "StopRun",
    "apply_plan",
    "build_stop_plan",
    "changes",
    "held_back",
    "vms_text",
]
