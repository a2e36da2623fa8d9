"""FirewallAuditPanel: the firewall findings of a snapshot; a chosen finding opens its rule."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from svcnb.client import Client
from svcnb.panels._display import Displayed
from svcnb.panels._messages import RateWait, show, shown_in
from svcnb.panels._quiet import quietly
from svcnb.panels._render import grid, png, shown
from svcnb.panels._rules import RuleEditor
from svcnb.reports import firewall
from svcnb.store import Store

_COLUMNS = [
    "state",
    "severity",
    "check",
    "firewall_name",
    "rule_id",
    "position",
    "direction",
    "action",
    "protocol",
    "port",
    "affected_vm_count",
    "reason",
]


def _text(value: Any) -> str:
    return (
        ""
        if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value))
        else str(value)
    )


def fixed_text(saved_at: pd.Timestamp) -> str:
    """A finding's state once its rule was saved and before a snapshot shows the change."""
    return f"fixed (saved {saved_at:%H:%M} UTC), re-audit at next snapshot"


class FirewallAuditPanel(Displayed):
    """Firewall findings as of the latest snapshot, filterable by severity and check.

    Reads ``firewall.audit`` findings: severity, check, firewall_id, firewall_name, rule_id,
    position, direction, action, protocol, port, vm_id, affected_vm_count, reason.

    Widgets (stable attribute names): ``severity_filter``, ``check_filter``, ``table`` (the
    findings passing the filters in one grid, CSS ``svcnb-finding-grid``; the row selected there
    is the chosen finding: ``selected_finding()``, set by ``select_finding(index)`` with an index
    of ``findings``), ``plot`` (PNG), ``open_button`` (CSS ``svcnb-open-rule``),
    ``retake_button`` (snapshot now and audit again; needs a client), ``editor_box`` (holds
    ``editor``, a RuleEditor, once a rule was opened) and ``status`` (CSS ``svcnb-status``).
    Without a client the panel only reads the store and cannot open rules.

    A finding whose rule is saved in the editor is marked fixed at once (``fixed``: (firewall_id,
    rule_id) -> save time by the server's clock; ``shown()``'s ``state`` column says "fixed
    (saved HH:MM UTC), re-audit at next snapshot"); the audit itself changes only with the next
    snapshot, which drops the marks it covers.
    """

    def __init__(self, store: Store, client: Client | None = None) -> None:
        self.store = store
        self.client = client
        self.findings = pd.DataFrame(columns=firewall.FINDING_COLUMNS)
        self.editor: RuleEditor | None = None
        self.fixed: dict[tuple[str, str], pd.Timestamp] = {}

        self.severity_filter = widgets.Dropdown(
            description="Severity",
            options=[("all severities", "")] + [(s, s) for s in firewall.SEVERITIES],
        )
        self.check_filter = widgets.Dropdown(description="Check", options=[("all checks", "")])
        # one row chosen at a time: the finding whose rule "Edit this rule" opens
        self.table = grid(select=True, page=10).add_class("svcnb-finding-grid")
        self._shown_index: list[int] = []
        self.plot = widgets.Image(format="png", layout=widgets.Layout(max_width="720px"))
        self.open_button = widgets.Button(
            description="Edit this rule", icon="edit", disabled=True
        ).add_class("svcnb-open-rule")
        self.retake_button = widgets.Button(
            description="Snapshot now and audit again", icon="camera", disabled=client is None
        )
        self.editor_box = widgets.VBox()
        self.status = widgets.HTML().add_class("svcnb-status")

        self.severity_filter.observe(self._redraw, names="value")
        self.check_filter.observe(self._redraw, names="value")
        self.table.observe(self._on_select, names="selected_rows")
        self.open_button.on_click(lambda _b: self.open_selected())
        self.retake_button.on_click(lambda _b: self.retake())

        self.widget = widgets.VBox(
            [
                widgets.HBox([self.severity_filter, self.check_filter, self.retake_button]),
                self.status,
                self.plot,
                self.table,
                self.open_button,
                self.editor_box,
            ]
        ).add_class("svcnb-audit-panel")
        self.refresh()

    def refresh(self) -> None:
        """Run the audit on the store's latest snapshot and redraw."""
        with shown_in(self.status, "auditing the latest snapshot"):
            self.findings = firewall.audit.from_store(self.store).reset_index(drop=True)
            self._drop_covered_marks()
            checks = sorted(self.findings["check"].dropna().astype(str).unique())
            keep = self.check_filter.value
            with quietly(self.check_filter, self._redraw):
                self.check_filter.options = [("all checks", "")] + [(c, c) for c in checks]
                self.check_filter.value = keep if keep in checks else ""
            self.plot.value = png(lambda ax: firewall.plot_findings(self.findings, ax=ax))
            self._redraw()
            show(self.status, "info", f"{len(self.findings)} findings in the latest snapshot.")

    def retake(self) -> None:
        """Take a snapshot with the client, then audit it (e.g. after editing rules)."""
        if self.client is None:
            show(self.status, "warn", "No client was given, so no snapshot can be taken here.")
            return
        with shown_in(self.status, "taking a snapshot"), RateWait(self.client) as waited:
            snapshot_id = self.store.take(self.client)
            # taken after every save so far, whatever the clocks say: the audit covers them all
            self.fixed = {}
            self.refresh()
            show(
                self.status,
                "ok",
                f"Snapshot {snapshot_id} taken; {len(self.findings)} findings.{waited.words()}",
            )

    def _drop_covered_marks(self) -> None:
        # a snapshot taken after a save shows the rule as it is now: the audit speaks for it
        snaps = self.store.snapshots()
        if snaps.empty or not self.fixed:
            return
        latest = pd.Timestamp(snaps["server_time"].max())
        self.fixed = {key: at for key, at in self.fixed.items() if at > latest}

    def mark_fixed(self, firewall_id: str, rule_id: str, saved_at: pd.Timestamp) -> None:
        """Mark the findings of a rule just saved as fixed, until a snapshot re-audits it."""
        self.fixed[(str(firewall_id), str(rule_id))] = saved_at
        self._redraw()
        mine = self.states() != "open"
        show(
            self.status,
            "ok",
            f"Rule {rule_id} saved: {int(mine.sum())} finding(s) marked fixed. The audit shows "
            "the change after the next snapshot (Snapshot now and audit again).",
        )

    def states(self) -> pd.Series:
        """Per finding: "open", or "fixed (saved HH:MM UTC), re-audit at next snapshot"."""
        keys = zip(
            self.findings["firewall_id"].astype("string").fillna(""),
            self.findings["rule_id"].astype("string").fillna(""),
            strict=True,
        )
        return pd.Series(
            [fixed_text(self.fixed[k]) if k in self.fixed else "open" for k in keys],
            index=self.findings.index,
            dtype="string",
        )

    def shown(self) -> pd.DataFrame:
        """The findings passing the severity and check filters (the columns of ``findings``
        and ``state``)."""
        frame = self.findings.assign(state=self.states())
        if self.severity_filter.value:
            frame = frame[frame["severity"] == self.severity_filter.value]
        if self.check_filter.value:
            frame = frame[frame["check"] == self.check_filter.value]
        return frame

    def _redraw(self, _change: object = None) -> None:
        frame = self.shown()
        keep = self.selected_finding()
        with quietly(self.table, self._on_select, "selected_rows"):
            self._shown_index = [int(i) for i in frame.index]
            self.table.update(
                shown(frame, _COLUMNS),
                selected_rows=[self._shown_index.index(keep)] if keep in self._shown_index else [],
            )
        self._on_select()

    def selected_finding(self) -> int | None:
        """The index in ``findings`` of the finding selected in the grid (the first, if more)."""
        rows = [i for i in self.table.selected_rows if 0 <= i < len(self._shown_index)]
        return self._shown_index[min(rows)] if rows else None

    def select_finding(self, index: int) -> None:
        """Select finding ``index`` of ``findings`` in the grid, as a click there would."""
        rows = [p for p, i in enumerate(self._shown_index) if i == int(index)]
        if not rows:
            raise ValueError(f"finding {index} is not shown; clear the severity and check filters")
        self.table.selected_rows = rows

    def _selected(self) -> pd.Series | None:
        index = self.selected_finding()
        return None if index is None else self.findings.loc[index]

    def _on_select(self, _change: object = None) -> None:
        row = self._selected()
        has_rule = row is not None and bool(_text(row["rule_id"]))
        self.open_button.disabled = self.client is None or not has_rule
        if row is not None and not has_rule:
            self.open_button.tooltip = "This finding is not about one rule."
        elif self.client is None:
            self.open_button.tooltip = "Give the panel a client to edit rules."

    def open_selected(self) -> RuleEditor | None:
        """Open the chosen finding's rule in the RuleEditor (created on first use)."""
        row = self._selected()
        if row is None or self.client is None:
            show(self.status, "warn", "Choose a finding about a rule first (and give a client).")
            return None
        return self.open_rule(str(row["firewall_id"]), str(row["rule_id"]))

    def open_rule(self, firewall_id: str, rule_id: str) -> RuleEditor | None:
        """Show rule ``rule_id`` of ``firewall_id`` in the embedded RuleEditor."""
        if self.client is None:
            show(self.status, "warn", "Give the panel a client to edit rules.")
            return None
        if self.editor is None:
            self.editor = RuleEditor(self.client, self.store)
            self.editor.on_saved(self.mark_fixed)
            self.editor_box.children = (self.editor.widget,)
        self.editor.open(firewall_id, rule_id)
        return self.editor
