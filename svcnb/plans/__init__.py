"""Guarded bulk actions: a stop plan names the VMs a bulk stop touches, why, and which are held
back, and is applied only while the fleet still matches it (docs/contracts.md §7).
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
