"""FirewallAuditPanel: the firewall findings of a snapshot; a chosen finding opens its rule."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from svcnb.client import Client
from svcnb.panels._display import Displayed
from svcnb.panels._messages import RateWait, show, shown_in
from svcnb.panels._quiet import quietly
from svcnb.panels._render import png, table
from svcnb.panels._rules import RuleEditor
from svcnb.reports import firewall
from svcnb.store import Store

_COLUMNS = [
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


def _label(row: Any) -> str:
    where = _text(row.firewall_name) or _text(row.firewall_id)
    if _text(row.rule_id):
        where += f" rule {row.rule_id} (position {_text(row.position)})"
    elif _text(row.vm_id):
        where = f"VM {row.vm_id}"
    reason = _text(row.reason)
    reason = reason if len(reason) <= 90 else reason[:89] + "…"
    return f"[{row.severity}] {row.check} · {where} · {reason}"


class FirewallAuditPanel(Displayed):
    """Firewall findings as of the latest snapshot, filterable by severity and check.

    Reads ``firewall.audit`` findings: severity, check, firewall_id, firewall_name, rule_id,
    position, direction, action, protocol, port, vm_id, affected_vm_count, reason.

    Widgets (stable attribute names): ``severity_filter``, ``check_filter``, ``finding_select``
    (values are row positions in ``findings``; CSS ``svcnb-finding-select``), ``table``,
    ``plot`` (PNG), ``open_button`` (CSS ``svcnb-open-rule``), ``retake_button`` (snapshot now
    and audit again; needs a client), ``editor_box`` (holds ``editor``, a RuleEditor, once a
    rule was opened) and ``status`` (CSS ``svcnb-status``).
    Without a client the panel only reads the store and cannot open rules.
    """

    def __init__(self, store: Store, client: Client | None = None) -> None:
        self.store = store
        self.client = client
        self.findings = pd.DataFrame(columns=firewall.FINDING_COLUMNS)
        self.editor: RuleEditor | None = None

        self.severity_filter = widgets.Dropdown(
            description="Severity",
            options=[("all severities", "")] + [(s, s) for s in firewall.SEVERITIES],
        )
        self.check_filter = widgets.Dropdown(description="Check", options=[("all checks", "")])
        self.finding_select = widgets.Select(
            description="Finding", rows=8, layout=widgets.Layout(width="95%")
        ).add_class("svcnb-finding-select")
        self.table = widgets.HTML()
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
        self.finding_select.observe(self._on_select, names="value")
        self.open_button.on_click(lambda _b: self.open_selected())
        self.retake_button.on_click(lambda _b: self.retake())

        self.widget = widgets.VBox(
            [
                widgets.HBox([self.severity_filter, self.check_filter, self.retake_button]),
                self.status,
                self.plot,
                self.table,
                self.finding_select,
                self.open_button,
                self.editor_box,
            ]
        ).add_class("svcnb-audit-panel")
        self.refresh()

    def refresh(self) -> None:
        """Run the audit on the store's latest snapshot and redraw."""
        with shown_in(self.status, "auditing the latest snapshot"):
            self.findings = firewall.audit.from_store(self.store).reset_index(drop=True)
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
            self.refresh()
            show(
                self.status,
                "ok",
                f"Snapshot {snapshot_id} taken; {len(self.findings)} findings.{waited.words()}",
            )

    def shown(self) -> pd.DataFrame:
        """The findings passing the severity and check filters (same columns as ``findings``)."""
        frame = self.findings
        if self.severity_filter.value:
            frame = frame[frame["severity"] == self.severity_filter.value]
        if self.check_filter.value:
            frame = frame[frame["check"] == self.check_filter.value]
        return frame

    def _redraw(self, _change: object = None) -> None:
        frame = self.shown()
        self.table.value = table(frame, _COLUMNS, empty="No finding passes the filters.")
        with quietly(self.finding_select, self._on_select):
            self.finding_select.options = [
                (_label(r), int(i)) for i, r in zip(frame.index, frame.itertuples(), strict=True)
            ]
            self.finding_select.value = None
        self._on_select()

    def _selected(self) -> pd.Series | None:
        index = self.finding_select.value
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
            self.editor_box.children = (self.editor.widget,)
        self.editor.open(firewall_id, rule_id)
        return self.editor
