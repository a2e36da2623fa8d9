"""The audit panel's finding states (new, open, accepted, resolved) and its accept form, driven
through the widgets and the functions behind them, without a browser."""

from __future__ import annotations

import pandas as pd
import pytest

from svcnb.panels import FirewallAuditPanel
from svcnb.panels._audit import check_acceptance, parse_until
from svcnb.reports import firewall

NOW = pd.Timestamp("2030-01-31T12:00Z")


def test_parse_until_reads_dates_and_times_as_utc():
    assert parse_until("2030-02-01") == pd.Timestamp("2030-02-01T00:00Z")
    assert parse_until(" 2030-02-01T12:30 ") == pd.Timestamp("2030-02-01T12:30Z")
    assert parse_until("2030-02-01T12:30+02:00") == pd.Timestamp("2030-02-01T10:30Z")
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        parse_until("next friday")


def test_the_accept_form_names_each_problem():
    finding = pd.Series({"finding_id": "x", "check": "duplicate"})
    good = check_acceptance(finding, "known", "sam", "2030-02-01", NOW)
    assert good.ok and good.until == pd.Timestamp("2030-02-01T00:00Z")

    empty = check_acceptance(None, " ", "", "", NOW)
    assert set(empty.problems) == {"finding", "reason", "owner", "until"}
    # the end must be after now: the very instant is already over
    assert (
        "not after now"
        in check_acceptance(finding, "a", "b", "2030-01-31T12:00", NOW).problems["until"]
    )
    assert check_acceptance(finding, "a", "b", "2030-01-31T12:01", NOW).ok
    assert "is not a date" in check_acceptance(finding, "a", "b", "soon", NOW).problems["until"]


@pytest.fixture
def two_snapshots(admin, panel_store, sandbox):
    """The session sandbox snapshotted, then an hour later after one SSH exposure was narrowed
    to 10.0.0.0/8: that finding is resolved, every other one open."""
    panel_store.take(admin)
    first = FirewallAuditPanel(panel_store).findings
    ssh = first[(first["check"] == "exposed_sensitive_port") & (first["port"] == "22")].iloc[0]
    admin.firewalls.update_rule(ssh["firewall_id"], ssh["rule_id"], sourceIps=["10.0.0.0/8"])
    sandbox.control.advance(3600)
    panel_store.take(admin)
    return panel_store, first, ssh


def test_states_and_resolved_findings_since_the_snapshot_before(two_snapshots):
    store, first, ssh = two_snapshots
    panel = FirewallAuditPanel(store)
    assert len(panel.findings) == len(first) - 1
    assert set(panel.shown()["state"]) == {"open"}
    assert set(panel.table.df["State"]) == {"open"}
    assert panel.summary() == (
        f"{len(first) - 1} findings in the latest snapshot: 0 new, {len(first) - 1} open, "
        "0 accepted; 1 resolved since the snapshot before."
    )
    assert panel.summary() in panel.status.value
    assert "Resolved since the snapshot before (1)" in panel.resolved_box.value
    assert ssh["rule_id"] in panel.resolved_box.value


def test_accepting_a_finding_through_the_form_then_revoking_it(two_snapshots):
    store, _, _ = two_snapshots
    panel = FirewallAuditPanel(store)
    index = int(panel.findings.index[panel.findings["severity"] == "high"][0])
    fid = panel.findings.loc[index, "finding_id"]
    panel.select_finding(index)
    assert panel.accept_button.disabled and panel.revoke_button.disabled

    panel.accept_reason.value = "bastion, replaced in March"
    assert panel.accept_button.disabled
    assert "owner: name who owns the risk" in panel.accept_hint.value
    panel.accept_owner.value = "sam@example.com"
    past = panel.now() - pd.Timedelta(days=1)
    panel.accept_until.value = f"{past:%Y-%m-%dT%H:%M}"
    assert panel.accept_button.disabled and "is not after now" in panel.accept_hint.value
    until = (panel.now() + pd.Timedelta(days=30)).floor("min")
    panel.accept_until.value = f"{until:%Y-%m-%dT%H:%M}"
    assert not panel.accept_button.disabled
    hint = panel.accept_hint.value
    assert f"until {until:%Y-%m-%d %H:%M} UTC ({until.day} {until:%B %Y})" in hint
    # the hint says who owns the risk and why, before anything is written
    assert "owned by sam@example.com" in hint and "bastion, replaced in March" in hint
    # the check reads as words, not as its code
    assert "exposed_sensitive_port" not in hint and "Sensitive port open" in hint

    panel.accept_button.click()
    status = panel.form_status.value  # under the button that did it
    assert "Accepted" in status and f"{until.day} {until:%B %Y}" in status
    assert "owner sam@example.com" in status and "bastion, replaced in March" in status
    row = panel.shown().loc[index]
    assert (row["state"], row["accepted_by"], row["accepted_until"]) == (
        "accepted",
        "sam@example.com",
        until,
    )
    assert list(panel.shown()["state"]).count("accepted") == 1
    register = store.journal.acceptances()
    assert list(register["finding_id"]) == [fid]
    assert list(register["reason"]) == ["bastion, replaced in March"]
    assert store.journal.log()["outcome"].tolist() == ["finding accepted"]
    # the form is cleared; a new panel on the store shows the same (nothing kept in memory)
    assert panel.accept_reason.value == "" and panel.accept_button.disabled
    assert FirewallAuditPanel(store).shown().loc[index, "state"] == "accepted"

    panel.select_finding(index)
    assert panel.revoke_button.disabled  # owner and reason first
    panel.accept_owner.value = "lee"
    panel.accept_reason.value = "fixed upstream"
    assert not panel.revoke_button.disabled
    panel.revoke_button.click()
    assert "revoked" in panel.form_status.value
    assert panel.shown().loc[index, "state"] == "open"
    assert store.journal.log()["outcome"].tolist() == ["finding accepted", "acceptance revoked"]


def test_each_snapshot_is_audited_once_and_accepting_audits_nothing_again(
    two_snapshots, monkeypatch
):
    """The latest snapshot's findings and their changes since the one before come from one
    audit of each snapshot; an acceptance changes the states alone."""
    store, _, _ = two_snapshots
    audited: list[str] = []
    run = firewall.audit.fn

    def counted(*args, **kwargs):
        audited.append(str(kwargs.get("now", args[-1] if args else "")))
        return run(*args, **kwargs)

    monkeypatch.setattr(firewall.audit, "fn", counted)
    panel = FirewallAuditPanel(store)
    times = sorted(pd.to_datetime(store.snapshots()["server_time"], utc=True))
    assert sorted(audited) == sorted(str(t) for t in times)  # each once
    index = int(panel.findings.index[0])
    panel.select_finding(index)
    panel.accept_reason.value, panel.accept_owner.value = "known", "sam"
    panel.accept_until.value = f"{panel.now() + pd.Timedelta(days=3):%Y-%m-%d}"
    assert panel.accept_selected()
    assert panel.shown().loc[index, "state"] == "accepted"
    assert len(audited) == len(times)
    # the states match a panel that audits everything anew
    assert FirewallAuditPanel(store).shown()["state"].tolist() == panel.shown()["state"].tolist()


def test_accepting_without_a_finding_chosen_writes_nothing(two_snapshots):
    store, _, _ = two_snapshots
    panel = FirewallAuditPanel(store)
    panel.accept_reason.value = "x"
    panel.accept_owner.value = "y"
    panel.accept_until.value = "2999-01-01"
    assert panel.accept_button.disabled
    assert panel.accept_selected() is False
    assert "choose a finding" in panel.form_status.value
    assert store.journal.acceptances().empty
