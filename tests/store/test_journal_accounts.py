"""The journal keeps the records; ``Store`` keeps the snapshots and names the account."""

from __future__ import annotations

import pytest

from svcnb.store import Journal, RuleEdit, Store, StoreError


def test_records_are_kept_by_the_journal_only():
    for verb in ("append_audit", "accept_finding", "revoke_acceptance", "acceptances", "audit_log"):
        assert not hasattr(Store, verb), verb
        assert hasattr(Journal, {"append_audit": "append", "audit_log": "log"}.get(verb, verb))


def test_a_journal_without_a_store_keeps_records_but_no_acceptances(tmp_path):
    journal = Journal(Store(tmp_path).journal.loc)  # the same tables, no store's accounts
    journal.append(RuleEdit(firewall_id="fw-1", rule_id="r-1", outcome="ok"))
    assert Store(tmp_path).journal.log()["rule_id"].tolist() == ["r-1"]
    with pytest.raises(StoreError, match=r"knows no accounts.*Store\(\.\.\.\)\.journal"):
        journal.accept_finding("f-1", reason="r", owner="o", until="2099-01-01")
    with pytest.raises(StoreError, match="knows no accounts"):
        journal.acceptances()
    assert len(Store(tmp_path).journal.log()) == 1  # nothing else was written
