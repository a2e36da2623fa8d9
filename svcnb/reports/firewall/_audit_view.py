"""The firewall view (``svcnb.reports._view``): the audit's figures, findings and rules changed
since the snapshot before, as every surface shows them."""

from __future__ import annotations

import contextlib
from typing import Any

from svcnb.reports._plots.firewall import plot_findings
from svcnb.reports._replay import StoreLike, as_of
from svcnb.reports._reuse import sharing
from svcnb.reports._view import FigureSpec, PlotSpec, TableSpec, View, ViewSpec, figure, view_notes
from svcnb.reports.firewall._changes import changes
from svcnb.reports.firewall._findings import SEVERITIES, audit

VIEW = ViewSpec(
    report="firewall",
    title="Firewall audit",
    figures=(
        FigureSpec("findings", "Findings", "count", "Every finding of the audit, any severity."),
        *(
            FigureSpec(
                f"findings_{s}",
                f"Findings of {s} severity",
                "count",
                f"Findings the audit rates {s}.",
            )
            for s in SEVERITIES
        ),
        FigureSpec(
            "vms_affected",
            "VMs affected by a high-severity finding",
            "count",
            "Distinct VMs (not terminated) behind a firewall with a high-severity finding.",
        ),
        FigureSpec(
            "rules_changed",
            "Rules changed since the previous snapshot",
            "count",
            "Rules added, removed or edited between the snapshot before and this one; unknown "
            "with a single snapshot.",
        ),
    ),
    tables=(
        TableSpec(
            "findings",
            "Findings, worst first",
            ("severity", "check", "firewall_name", "port", "affected_vm_count", "reason"),
            "One row per finding.",
        ),
        TableSpec(
            "changes",
            "Rules changed since the previous snapshot",
            None,
            "One row per rule changed.",
        ),
    ),
    plots=(PlotSpec("findings", "Findings per check and severity"),),
)


@sharing
def view(store: StoreLike, at: Any = None, *, account: str | None = None) -> View:
    """The firewall view as of the latest snapshot at or before ``at`` (see ``VIEW``)."""
    snap = as_of(store, at, account)
    inputs = audit.inputs(snap)
    found = audit.from_store(snap)
    tables = {"findings": found}
    with contextlib.suppress(ValueError):  # a single snapshot: nothing to compare with
        tables["changes"] = changes(snap.store, at=snap.server_time)
    high = found[(found["severity"] == "high").to_numpy(dtype=bool)]
    affected = {v for vms in high["affected_vms"] for v in (vms if vms is not None else [])}
    figures = dict(
        [
            figure(VIEW, "findings", len(found)),
            *(
                figure(VIEW, f"findings_{s}", int((found["severity"] == s).sum()))
                for s in SEVERITIES
            ),
            figure(VIEW, "vms_affected", len(affected)),
            figure(
                VIEW,
                "rules_changed",
                len(tables["changes"]) if "changes" in tables else None,
                empty="unknown (a single snapshot)",
            ),
        ]
    )
    notes = view_notes(inputs, tables.values())
    return View(
        VIEW,
        inputs["now"],
        figures,
        tables,
        plots={"findings": lambda ax: plot_findings(found, ax=ax)},
        notes=notes,
        complete=not any("may be incomplete" in n for n in notes),
    )
