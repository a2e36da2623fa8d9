"""What a panel says is said beside the control that caused it and replaces what it said
before; counts on buttons follow the selection; nothing typed for one action is carried into
the next; a disabled button says why. Driven through the widgets, without a browser."""

from __future__ import annotations

import pandas as pd
import pytest

import svcnb
from svcnb.panels import BillingPanel, FirewallAuditPanel, RuleEditor, VmPanel
from svcnb.sandbox import serve
from svcnb.store import Store


@pytest.fixture(scope="module")
def fresh():
    """A sandbox of its own, its clock frozen at its start (2026-11-01), far from this
    machine's clock; one snapshot of it in a store."""
    with serve(vms=12, seed=7, time_scale=0.0) as sandbox:
        yield sandbox


@pytest.fixture
def fresh_store(fresh, tmp_path):
    store = Store(tmp_path / "store")
    with svcnb.Client(fresh.tokens["admin"], fresh.base_url, progress=False) as admin:
        store.take(admin)
    return store


def test_a_failed_export_replaces_the_success_under_the_button(fresh_store, tmp_path):
    panel = BillingPanel(fresh_store, export_dir=tmp_path / "exports")
    panel.export_choice.value = "figures"
    panel.export_button.click()
    assert "Wrote" in panel.export_message.value
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    panel.export_dir.value = str(blocker)
    panel.export_button.click()
    # the failure is where the eye is (under the button), and the old success is gone
    assert "Wrote" not in panel.export_message.value
    assert "is a file, not a folder" in panel.export_message.value
    assert "svcnb-msg-error" in panel.export_message.value


def _one_plain_and_one_protected(panel: VmPanel) -> tuple[str, str]:
    vms = panel.vms
    running = vms["status"] == "running"
    plain = vms[running & (vms["is_protected"] == False)]["id"].iloc[0]  # noqa: E712
    guarded = vms[running & (vms["is_protected"] == True)]["id"].iloc[0]  # noqa: E712
    return str(plain), str(guarded)


def test_the_stop_button_counts_what_the_plan_under_review_stops(sandbox, admin, tmp_path):
    panel = VmPanel(admin, watch_interval=None, store=Store(tmp_path / "store"))
    plain, guarded = _one_plain_and_one_protected(panel)
    panel.select((plain, guarded))
    assert panel.stop_button.description == "Stop 1 VM…"
    panel.stop_button.click()
    panel.allow_protected.value = True
    # the tick lets the protected VM through: the plan stops 2, and so says every button
    assert len(panel.plan.to_stop) == 2
    assert panel.confirm_button.description == "Confirm: stop 2 VMs"
    assert panel.stop_button.description == "Stop 2 VMs…"
    assert "2 VMs to stop" in panel.selection_hint.value
    panel.allow_protected.value = False
    assert panel.stop_button.description == "Stop 1 VM…"


def test_the_approver_of_one_stop_is_not_carried_into_the_next(sandbox, admin, tmp_path):
    panel = VmPanel(admin, watch_interval=None, store=Store(tmp_path / "store"))
    vms = panel.vms
    running = vms[(vms["status"] == "running") & (vms["is_protected"] == False)]  # noqa: E712
    first, second = (str(v) for v in running["id"].iloc[:2])
    panel.select((first,))
    panel.stop_button.click()
    panel.approver.value = "omar"
    panel.confirm_button.click()
    assert "approved by omar" in panel.status.value
    panel.select((second,))
    panel.stop_button.click()
    assert panel.approver.value == ""
    assert panel.confirm_button.disabled
    assert "approver" in panel.confirm_button.tooltip
    # a cancelled review forgets the name typed in it too
    panel.approver.value = "sam"
    panel.cancel_button.click()
    panel.stop_button.click()
    assert panel.approver.value == "" and panel.confirm_button.disabled


def test_a_disabled_stop_button_says_why(sandbox, admin, tmp_path):
    panel = VmPanel(admin, watch_interval=None, store=Store(tmp_path / "store"))
    assert panel.stop_button.disabled
    assert panel.stop_button.tooltip
    assert "Select the VMs to stop" in panel.selection_hint.value


def test_revoke_says_what_it_waits_for(fresh, fresh_store):
    with svcnb.Client(fresh.tokens["admin"], fresh.base_url, progress=False) as admin:
        panel = FirewallAuditPanel(fresh_store, admin)
        index = int(panel.findings.index[panel.findings["severity"] == "high"][0])
        panel.select_finding(index)
        assert panel.revoke_button.disabled
        assert "choose an accepted finding" not in panel.button_hint.value
        panel.accept_reason.value = "bastion"
        panel.accept_owner.value = "sam"
        panel.accept_until.value = f"{panel.now() + pd.Timedelta(days=3):%Y-%m-%d}"
        assert panel.accept_selected()
        panel.select_finding(index)
        assert panel.revoke_button.disabled
        # nothing on the page said why Revoke stayed grey: now the line beside it does
        assert "Reason and Owner" in panel.button_hint.value
        assert "Reason and Owner" in panel.revoke_button.tooltip
        panel.accept_reason.value = "moved behind the VPN"
        assert "Owner" in panel.button_hint.value and "Reason" not in panel.button_hint.value
        panel.accept_owner.value = "sam"
        assert not panel.revoke_button.disabled and "Revoke" not in panel.button_hint.value
        assert panel.revoke_button.tooltip == ""


def test_until_is_judged_by_the_services_clock(fresh, fresh_store):
    served = pd.Timestamp(fresh_store.snapshots()["server_time"].max())
    assert served < pd.Timestamp.now(tz="UTC") - pd.Timedelta(days=2)
    panel = FirewallAuditPanel(fresh_store)  # the store alone: its snapshot's server time
    assert panel.now() == served
    index = int(panel.findings.index[panel.findings["severity"] == "high"][0])
    panel.select_finding(index)
    panel.accept_reason.value = "bastion"
    panel.accept_owner.value = "sam"
    # a day after the service's now: in the future for the service, whatever this machine says
    panel.accept_until.value = f"{served + pd.Timedelta(days=1):%Y-%m-%d %H:%M}"
    assert panel.accept_form().ok, panel.accept_hint.value
    assert not panel.accept_button.disabled
    with svcnb.Client(fresh.tokens["admin"], fresh.base_url, progress=False) as admin:
        admin.wallet.get()  # an answer: the client now knows the service's clock
        live = FirewallAuditPanel(fresh_store, admin)
        assert abs(live.now() - served) < pd.Timedelta(hours=1)


def test_a_saved_banner_goes_when_another_firewall_is_chosen(sandbox, admin, tmp_path):
    editor = RuleEditor(admin, Store(tmp_path / "store"))
    first = editor.firewall_picker.value
    editor.description.value = (editor.description.value or "") + " (checked)"
    assert editor.save() == "saved"
    assert "Saved rule" in editor.status.value
    other = next(v for _, v in editor.firewall_picker.options if v != first)
    editor.firewall_picker.value = other
    assert "Saved rule" not in editor.status.value


def test_a_disabled_enable_button_says_why(sandbox, admin):
    from svcnb.panels import WebhooksPanel

    panel = WebhooksPanel(admin)
    active = next(str(h["id"]) for h in admin.webhooks.list() if h["isActive"])
    panel.select(active)
    assert panel.enable_button.disabled
    assert "only a disabled one can be enabled" in panel.enable_hint.value
    assert panel.enable_button.tooltip
    hooks = panel.webhooks
    panel.select(str(hooks[~hooks["is_active"].fillna(True)]["id"].iloc[0]))
    assert not panel.enable_button.disabled and panel.enable_hint.value == ""


def test_what_accept_did_is_said_under_it(fresh, fresh_store):
    panel = FirewallAuditPanel(fresh_store)
    top = panel.status.value
    index = int(panel.findings.index[panel.findings["severity"] == "high"][0])
    panel.select_finding(index)
    panel.accept_reason.value = "bastion"
    panel.accept_owner.value = "sam"
    panel.accept_until.value = f"{panel.now() + pd.Timedelta(days=3):%Y-%m-%d}"
    panel.accept_button.click()
    assert "Accepted" in panel.form_status.value
    assert panel.status.value == top  # the line far above the form is not where it is said
    children = panel.widget.children
    buttons = next(
        i for i, w in enumerate(children) if panel.accept_button in getattr(w, "children", ())
    )
    assert children[buttons + 1] is panel.form_status
