"""The firewall view (``svcnb.reports._view``): the audit's figures, findings and rules changed
since the snapshot before, as every surface shows them."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import pandas as pd

from svcnb.reports._plots.firewall import plot_findings
from svcnb.reports._replay import StoreLike, as_of
from svcnb.reports._reuse import sharing
from svcnb.reports._view import (
    Figure,
    FigureSpec,
    PlotSpec,
    TableSpec,
    View,
    ViewSpec,
    view_notes,
    view_of,
)
from svcnb.reports.firewall._changes import changes
from svcnb.reports.firewall._findings import SEVERITIES, audit

# Each figure's spec sits right above the function computing it from the view's ground: the
# audit's findings (and the rules changed, when the store holds a snapshot before).


@dataclass(frozen=True)
class _Ground:
    found: pd.DataFrame
    changed: pd.DataFrame | None  # None: a single snapshot, nothing to compare with


FINDINGS = FigureSpec("findings", "Findings", "count", "Every finding of the audit, any severity.")


def _findings(g: _Ground) -> Figure:
    return Figure(FINDINGS, len(g.found))


# (severity, spec) per severity
FINDINGS_OF = tuple(
    (
        s,
        FigureSpec(
            f"findings_{s}", f"Findings of {s} severity", "count", f"Findings the audit rates {s}."
        ),
    )
    for s in SEVERITIES
)


def _findings_of(g: _Ground, severity: str, spec: FigureSpec) -> Figure:
    return Figure(spec, int((g.found["severity"] == severity).sum()))


VMS_AFFECTED = FigureSpec(
    "vms_affected",
    "VMs affected by a high-severity finding",
    "count",
    "Distinct VMs (not terminated) behind a firewall with a high-severity finding.",
)


def _vms_affected(g: _Ground) -> Figure:
    high = g.found[(g.found["severity"] == "high").to_numpy(dtype=bool)]
    affected = {v for vms in high["affected_vms"] for v in (vms if vms is not None else [])}
    return Figure(VMS_AFFECTED, len(affected))


RULES_CHANGED = FigureSpec(
    "rules_changed",
    "Rules changed since the previous snapshot",
    "count",
    "Rules added, removed or edited between the snapshot before and this one; unknown "
    "with a single snapshot.",
)


def _rules_changed(g: _Ground) -> Figure:
    return Figure(
        RULES_CHANGED,
        len(g.changed) if g.changed is not None else None,
        empty="unknown (a single snapshot)",
    )


FINDINGS_TABLE = TableSpec(
    "findings",
    "Findings, worst first",
    ("severity", "check", "firewall_name", "port", "affected_vm_count", "reason"),
    "One row per finding.",
)
CHANGES_TABLE = TableSpec(
    "changes",
    "Rules changed since the previous snapshot",
    None,
    "One row per rule changed.",
)
FINDINGS_PLOT = PlotSpec("findings", "Findings per check and severity")

VIEW = ViewSpec(
    report="firewall",
    title="Firewall audit",
    figures=(FINDINGS, *(spec for _, spec in FINDINGS_OF), VMS_AFFECTED, RULES_CHANGED),
    tables=(FINDINGS_TABLE, CHANGES_TABLE),
    plots=(FINDINGS_PLOT,),
)


@sharing
def view(store: StoreLike, at: Any = None, *, account: str | None = None) -> View:
    """The firewall view as of the latest snapshot at or before ``at`` (see ``VIEW``)."""
    snap = as_of(store, at, account)
    inputs = audit.inputs(snap)
    found = audit.from_store(snap)
    tables = {FINDINGS_TABLE: found}
    with contextlib.suppress(ValueError):  # a single snapshot: nothing to compare with
        tables[CHANGES_TABLE] = changes(snap.store, at=snap.server_time)
    g = _Ground(found, tables.get(CHANGES_TABLE))
    figures = [
        _findings(g),
        *(_findings_of(g, s, spec) for s, spec in FINDINGS_OF),
        _vms_affected(g),
        _rules_changed(g),
    ]
    notes = view_notes(inputs, tables.values())
    return view_of(
        VIEW,
        inputs["now"],
        figures,
        tables,
        {FINDINGS_PLOT: lambda ax: plot_findings(found, ax=ax)},
        notes=notes,
        complete=not any("may be incomplete" in n for n in notes),
    )
