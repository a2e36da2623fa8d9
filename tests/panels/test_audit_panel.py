"""FirewallAuditPanel: findings filtered by severity; a finding opens its rule in the editor."""

from __future__ import annotations

import pandas as pd
import pytest

from svcnb.panels import FirewallAuditPanel


@pytest.fixture
def snapshot(admin, panel_store):
    panel_store.take(admin)
    return panel_store


def test_findings_filter_by_severity(snapshot):
    panel = FirewallAuditPanel(snapshot)
    assert len(panel.findings) > 0
    assert "<svg" in panel.plot.svg and "audit findings" in panel.plot.svg
    for severity in ("high", "medium", "low", "info"):
        panel.severity_filter.value = severity
        shown = panel.shown()
        assert set(shown["severity"]) <= {severity}
        assert len(panel.table.df) == len(shown)
    panel.severity_filter.value = ""
    assert len(panel.table.df) == len(panel.findings)
    assert list(panel.table.df.columns)[:3] == ["State", "Severity", "Check"]


def test_without_a_client_rules_cannot_be_opened(snapshot):
    panel = FirewallAuditPanel(snapshot)
    with_rule = panel.findings[panel.findings["rule_id"].notna()].index[0]
    panel.select_finding(int(with_rule))
    assert panel.open_button.disabled
    assert panel.open_selected() is None


def test_choosing_a_finding_opens_that_rule_in_the_editor(snapshot, admin):
    panel = FirewallAuditPanel(snapshot, admin)
    panel.severity_filter.value = "high"
    index = next(i for i in panel.shown().index if not pd.isna(panel.findings.loc[i, "rule_id"]))
    finding = panel.findings.loc[index]
    panel.select_finding(index)
    assert not panel.open_button.disabled
    panel.open_button.click()
    assert panel.editor is not None
    assert panel.editor_box.children == (panel.editor.widget,)
    assert panel.editor.firewall_picker.value == finding["firewall_id"]
    assert panel.editor.rule["id"] == finding["rule_id"]
    assert panel.editor.port.value == (panel.editor.rule["port"] or "")


def test_fixing_the_rule_from_a_finding_clears_it_after_a_new_snapshot(snapshot, admin):
    panel = FirewallAuditPanel(snapshot, admin)
    panel.check_filter.value = "exposed_sensitive_port"
    index = panel.shown().index[0]
    rule_id = panel.findings.loc[index, "rule_id"]
    panel.select_finding(index)
    panel.open_button.click()

    panel.editor.source_ips.value = "10.0.0.0/8"
    panel.editor.save_button.click()
    assert "Saved rule" in panel.editor.status.value
    panel.retake_button.click()
    assert "Snapshot" in panel.status.value
    exposed = panel.findings[panel.findings["check"] == "exposed_sensitive_port"]
    assert rule_id not in set(exposed["rule_id"])
    assert len(snapshot.snapshots()) == 2


def test_an_empty_store_says_so_and_a_snapshot_fills_the_audit(panel_store, admin):
    panel = FirewallAuditPanel(panel_store, admin)
    assert panel.findings.empty
    assert "no snapshot" in panel.status.value
    panel.retake_button.click()
    assert len(panel.findings) > 0
    assert len(panel.table.df) == len(panel.findings)


def test_a_saved_rule_shows_its_finding_fixed_until_the_next_snapshot(snapshot, admin, sandbox):
    panel = FirewallAuditPanel(snapshot, admin)
    panel.check_filter.value = "exposed_sensitive_port"
    index = panel.shown().index[0]
    rule_id = panel.findings.loc[index, "rule_id"]
    panel.select_finding(index)
    panel.open_button.click()
    panel.editor.source_ips.value = "10.0.0.0/8"
    panel.editor.save_button.click()

    # fixed at once, by the server's clock, and the audit itself waits for a snapshot
    saved_at = pd.Timestamp(admin.server_time)
    state = panel.shown().loc[index, "state"]
    assert state == f"fixed (saved {saved_at:%H:%M} UTC), re-audit at next snapshot"
    assert state in set(panel.table.df["State"])
    assert "marked fixed" in panel.status.value
    assert panel.editor.audit_log().iloc[-1]["time"] == saved_at
    shown = panel.shown()
    others = shown[(shown["rule_id"] != rule_id).fillna(True).astype(bool)]
    # the only snapshot: every finding is new (nothing before it to compare with)
    assert set(others["state"]) == {"new"}

    # snapshots are told apart by server time: the sandbox's clock stands still unless moved
    sandbox.control.advance(60)
    panel.retake_button.click()
    assert panel.fixed == {}
    assert set(panel.shown()["state"]) == {"open"}
    assert rule_id not in set(panel.shown()["rule_id"].dropna())
