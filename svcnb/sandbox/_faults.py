"""Seeded fault injection: latency, errors per route, dropped connections, upstream failures.

Every random choice comes from one ``random.Random`` seeded by the ``seed`` of the last
``PUT /_sandbox/faults``, so a test that sets the same faults sees the same failures.
"""

from __future__ import annotations

import random
from dataclasses import asdict, fields

from ._envelopes import ApiFailure
from ._state import Faults, State


def set_faults(state: State, body: dict) -> Faults:
    """Replace the faults with ``body`` (missing keys fall back to "off"); 422 on a bad value."""
    known = {f.name for f in fields(Faults)}
    unknown = sorted(set(body) - known)
    if unknown:
        raise ApiFailure(422, f"{unknown[0]}: unknown fault setting; known: {sorted(known)}")
    values = asdict(Faults())
    for name, value in body.items():
        default = values[name]
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ApiFailure(422, f"{name}: must be true or false")
        elif isinstance(default, list):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ApiFailure(
                    422,
                    f"{name}: must be a list of route strings such as 'GET /vms/{{id}}' or '/vms'",
                )
        elif isinstance(default, int | float):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ApiFailure(422, f"{name}: must be a number")
            if name in ("errorRate", "dropRate") and not 0 <= value <= 1:
                raise ApiFailure(422, f"{name}: must be between 0 and 1")
            if value < 0:
                raise ApiFailure(422, f"{name}: must be >= 0")
            if name == "seed":
                value = int(value)
        values[name] = value
    with state.lock:
        state.faults = Faults(**values)
        state.fault_rng = random.Random(state.faults.seed)
        return state.faults


def route_selected(faults: Faults, method: str, template: str) -> bool:
    """Whether ``errorRoutes`` names this route ('GET /vms/{id}', '/vms/{id}', or empty: all)."""
    if not faults.errorRoutes:
        return True
    return any(r == template or r == f"{method} {template}" for r in faults.errorRoutes)


def injects_error(state: State, method: str, template: str) -> bool:
    faults = state.faults
    if faults.errorRate <= 0 or not route_selected(faults, method, template):
        return False
    with state.lock:
        return state.fault_rng.random() < faults.errorRate


def drops_connection(state: State) -> bool:
    faults = state.faults
    if faults.dropRate <= 0:
        return False
    with state.lock:
        return state.fault_rng.random() < faults.dropRate
