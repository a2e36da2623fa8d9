"""VmPanel: filter, select, confirm and stop VMs through the widgets; errors shown in words."""

from __future__ import annotations

import ipywidgets as widgets
import pytest
from _widgets import descendants

import svcnb
from svcnb.panels import VmPanel


@pytest.fixture(autouse=True)
def _audit_store(monkeypatch, tmp_path):
    """The panel audits applied stop plans in the default store: a fresh one per test."""
    monkeypatch.setenv("SVCNB_STORE", str(tmp_path / "store"))


def _running(panel: VmPanel, *, protected: bool) -> list[str]:
    vms = panel.vms
    hit = vms[(vms["status"] == "running") & (vms["is_protected"] == protected)]
    return [str(v) for v in hit["id"]]


def _new_stops(sandbox, before: set[str]) -> list[dict]:
    """Stop actions the sandbox holds that were not there at ``before`` (its seed has some)."""
    return [a for a in sandbox.control.actions() if a["type"] == "stop" and a["id"] not in before]


def _action_ids(sandbox) -> set[str]:
    return {a["id"] for a in sandbox.control.actions()}


def _status_of(sandbox, vm_id: str) -> str:
    return sandbox.control.vm(vm_id)["status"]


def test_stopping_two_vms_through_the_panel_leaves_them_stopped(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None, approver="omar")
    before = _action_ids(sandbox)
    first, second = _running(panel, protected=False)[:2]
    panel.status_filter.value = "running"
    panel.select((first, second))
    assert not panel.stop_button.disabled

    panel.stop_button.click()
    names = {vm_id: panel.vms.set_index("id").loc[vm_id, "name"] for vm_id in (first, second)}
    for vm_id, name in names.items():
        assert vm_id in panel.confirmation.value and name in panel.confirmation.value
    assert "will be stopped" in panel.confirmation.value
    assert not panel.confirm_button.disabled

    panel.confirm_button.click()
    actions = _new_stops(sandbox, before)
    assert sorted(a["vmId"] for a in actions) == sorted([first, second])
    for action in actions:
        assert action["id"] in panel.actions.value
    assert panel.poll() is True  # the sandbox clock has not moved: still stopping

    sandbox.control.advance(60)
    assert panel.poll() is False
    assert _status_of(sandbox, first) == "stopped"
    assert _status_of(sandbox, second) == "stopped"
    assert "All stops finished" in panel.status.value
    assert panel.actions.value.count("stopped") >= 2
    # a second Confirm click sends nothing: the confirmation was used up
    panel.confirm_button.click()
    assert len(_new_stops(sandbox, before)) == 2


def test_confirmation_lists_exactly_the_running_selection_and_skips_the_rest(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None)
    before = _action_ids(sandbox)
    running = _running(panel, protected=False)[0]
    sandbox.control.vm_action(running, "suspend")
    other = _running(panel, protected=False)[1]
    panel.refresh()
    panel.select((running, other))
    panel.stop_button.click()
    assert panel.pending == [other]
    assert "only running VMs can be stopped" in panel.confirmation.value
    panel.cancel_button.click()
    assert "nothing was sent" in panel.status.value
    assert _new_stops(sandbox, before) == []


def test_a_protected_vm_is_stopped_only_after_an_explicit_tick(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None, approver="omar")
    guarded = _running(panel, protected=True)[0]
    panel.select((guarded,))
    panel.stop_button.click()
    assert "Protected" in panel.confirmation.value
    assert panel.confirm_button.disabled
    before = _action_ids(sandbox)
    assert panel.confirm_stop() == []  # even called from code, nothing goes without the tick
    assert _new_stops(sandbox, before) == []
    assert "protected" in panel.status.value
    panel.allow_protected.value = True
    assert not panel.confirm_button.disabled
    panel.confirm_button.click()
    sandbox.control.advance(60)
    panel.poll()
    assert _status_of(sandbox, guarded) == "stopped"


def test_filters_narrow_the_table_and_the_choices(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None)
    total = len(panel.table.df)
    region = panel.region_filter.options[1][1]
    panel.region_filter.value = region
    ids = list(panel.table.df["VM id"])
    assert 0 < len(ids) < total
    assert set(panel.vms.set_index("id").loc[ids, "region_slug"]) == {region}

    plan = panel.plan_filter.options[1][1]
    panel.plan_filter.value = plan
    ids = list(panel.table.df["VM id"])
    chosen = panel.vms.set_index("id").loc[ids] if ids else panel.vms.iloc[0:0]
    assert set(chosen["plan_slug"]) <= {plan}

    panel.region_filter.value = ""
    panel.plan_filter.value = ""
    name = str(panel.vms["name"].iloc[3])
    panel.search.value = name.upper()
    labels = list(panel.table.df["Name"])
    assert labels and all(name.lower() in label.lower() for label in labels)
    assert name in set(panel.table.df["Name"])


def test_a_vm_that_changed_behind_the_panels_back_is_refused_in_words(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None, approver="omar")
    before = _action_ids(sandbox)
    vm_id = _running(panel, protected=False)[0]
    panel.select((vm_id,))
    panel.stop_button.click()
    sandbox.control.vm_action(vm_id, "suspend")  # changed behind the panel's back
    panel.confirm_button.click()
    # the plan re-reads the VM before stopping it: refused by its rules as the VM is now (not
    # running any more), no 409
    assert "Not sent for" in panel.status.value and vm_id in panel.status.value
    assert (
        "status &#x27;suspended&#x27; (class suspended): only running VMs can be stopped"
        in panel.status.value
    )
    assert "Traceback" not in panel.status.value
    assert panel.actions_by_vm == {}
    assert _new_stops(sandbox, before) == []


def test_a_token_without_vms_write_gives_a_403_in_words(sandbox, reader):
    panel = VmPanel(reader, watch_interval=None, approver="omar")
    vm_id = _running(panel, protected=False)[0]
    panel.select((vm_id,))
    panel.stop_button.click()
    panel.confirm_button.click()
    assert "vms:write" in panel.status.value
    assert "Not allowed" in panel.status.value
    assert _status_of(sandbox, vm_id) == "running"
    assert sandbox.tokens["read"] not in panel.status.value


def test_the_background_watcher_follows_the_stop_to_the_end(sandbox, admin):
    panel = VmPanel(admin, watch_interval=0.05, watch_timeout=30, approver="omar")
    vm_id = _running(panel, protected=False)[0]
    panel.select((vm_id,))
    panel.stop_button.click()
    panel.confirm_button.click()
    sandbox.control.advance(60)
    panel._watcher.join(timeout=30)
    assert not panel._watcher.is_alive()
    assert panel.actions_by_vm[vm_id].status == "stopped"
    assert "All stops finished" in panel.status.value


def test_a_rate_limit_wait_is_reported_in_words(sandbox):
    sandbox.control.settings(rateWindowSeconds=1)
    token = sandbox.control.create_token("slow", ["vms:read", "vms:write"], rate_limit=2)
    with svcnb.Client(api_key=token["secret"], base_url=sandbox.base_url, progress=False) as slow:
        panel = VmPanel(slow, watch_interval=None, approver="omar")
        chosen = tuple(_running(panel, protected=False)[:3])
        panel.select(chosen)
        panel.stop_button.click()
        panel.confirm_button.click()
        assert "Stop queued for 3 VMs" in panel.status.value
        assert "for the API rate limit" in panel.status.value
    assert token["secret"] not in panel.status.value


def test_the_panel_displays_as_its_widget(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None)
    bundle = panel._repr_mimebundle_()
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == panel.widget.model_id
    # short and stable, so nbval can compare the cell that shows the panel
    assert bundle["text/plain"] == "<VmPanel: svcnb widget panel>"
    assert "svcnb-stop" in panel.stop_button._dom_classes
    assert "svcnb-confirm" in panel.confirm_button._dom_classes
    assert "svcnb-status" in panel.status._dom_classes


def test_changing_the_selection_voids_the_confirmation(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None)
    before = _action_ids(sandbox)
    first, second = _running(panel, protected=False)[:2]
    panel.select((first,))
    panel.stop_button.click()
    panel.select((first, second))
    assert panel.confirm_button.disabled and panel.pending == []
    assert "press Stop to review it again" in panel.status.value
    panel.confirm_button.click()
    assert _new_stops(sandbox, before) == []


def test_the_stop_button_turns_off_once_the_watch_sees_the_vm_stopped(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None, approver="omar")
    vm_id = _running(panel, protected=False)[0]
    panel.select((vm_id,))
    assert not panel.stop_button.disabled and panel.stop_button.description == "Stop 1 VM…"
    panel.stop_button.click()
    panel.confirm_button.click()
    assert panel.stop_button.disabled  # the poll at once reads it as stopping
    sandbox.control.advance(60)
    assert panel.poll() is False
    assert panel.selected_ids == [vm_id]
    row = panel.table.df[panel.table.df["VM id"] == vm_id].iloc[0]
    assert row["Status"] == "stopped"
    assert panel.stop_button.disabled
    assert panel.stop_button.description == "Stop…"
    assert "(stopped: only running VMs can be stopped)" in panel.stop_button.tooltip


def test_the_stop_button_counts_only_the_running_vms_after_a_refresh(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None)
    before = _action_ids(sandbox)
    first, second = _running(panel, protected=False)[:2]
    panel.select((first, second))
    assert panel.stop_button.description == "Stop 2 VMs…"
    sandbox.control.vm_action(first, "suspend")  # stopped elsewhere
    panel.refresh()
    assert set(panel.selected_ids) == {first, second}
    assert not panel.stop_button.disabled and panel.stop_button.description == "Stop 1 VM…"
    name = panel._name(first)
    assert f"{name} (suspended: only running VMs can be stopped)" in panel.stop_button.tooltip
    sandbox.control.vm_action(second, "suspend")
    panel.refresh_button.click()
    assert panel.stop_button.disabled
    assert _new_stops(sandbox, before) == []


def test_a_vm_seen_stopped_after_the_review_is_not_sent(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None, approver="omar")
    before = _action_ids(sandbox)
    first, second = _running(panel, protected=False)[:2]
    panel.select((first, second))
    panel.stop_button.click()
    assert panel.pending == [first, second]
    sandbox.control.vm_action(first, "suspend")
    panel.refresh()  # the panel now knows: no 409 needed to find out
    panel.confirm_button.click()
    assert [a["vmId"] for a in _new_stops(sandbox, before)] == [second]
    assert "409" not in panel.status.value
    assert "Not sent for" in panel.status.value and first in panel.status.value
    assert "Stop queued for 1 VM," in panel.status.value


def test_the_fleet_is_one_grid_whose_selection_stop_acts_on(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None)
    assert not any(isinstance(w, widgets.SelectMultiple) for w in descendants(panel.widget))
    grid = panel.table
    assert "svcnb-vm-grid" in grid._dom_classes
    assert list(grid.df.columns) == [
        "Name", "VM id", "Status", "Region", "Plan", "IP address", "Protected"
    ]  # fmt: skip
    first, second = _running(panel, protected=False)[:2]
    rows = list(grid.df["VM id"])
    grid.selected_rows = [rows.index(first), rows.index(second)]  # what a click in the grid sets
    assert set(panel.selected_ids) == {first, second}
    assert panel.stop_button.description == "Stop 2 VMs…"
    panel.stop_button.click()
    assert set(panel.pending) == {first, second}
    # a filter keeps the selected rows that it still shows
    panel.search.value = first
    assert panel.selected_ids == [first] and grid.selected_rows == [0]


def _one_of(panel: VmPanel, status: str) -> str:
    return str(panel.vms.loc[panel.vms["status"] == status, "id"].iloc[0])


def test_the_button_the_plan_and_confirm_count_the_same_vms(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None, approver="omar")
    plain, guarded = _running(panel, protected=False)[0], _running(panel, protected=True)[0]
    idle = _one_of(panel, "stopped")
    panel.select((plain, guarded, idle))
    # the count is the VMs the plan stops: the protected and the stopped one are named apart
    assert panel.stop_button.description == "Stop 1 VM…"
    hint = panel.selection_hint.value
    assert "3 selected; 1 VM to stop; held back: " in hint
    assert f"{panel._name(guarded)} (protected: tick the box in the review" in hint
    assert f"{panel._name(idle)} (stopped: only running VMs can be stopped)" in hint
    panel.stop_button.click()
    shown = panel.confirmation.value
    assert "<b>1 VM will be stopped:</b>" in shown and "VM(s)" not in shown
    assert panel.confirm_button.description == "Confirm: stop 1 VM"
    # the label is never cut at the count: the buttons grow with their text
    for button in (panel.confirm_button, panel.stop_button):
        assert button.layout.width == "auto" and button.layout.min_width == "max-content"
    assert "Protected, not stopped unless you tick the box below" in shown
    panel.allow_protected.value = True
    shown = panel.confirmation.value
    assert "<b>2 VMs will be stopped:</b>" in shown
    assert "not stopped unless you tick" not in shown
    assert "stopped because the box below is ticked: " + panel._name(guarded) in shown
    assert panel.confirm_button.description == "Confirm: stop 2 VMs"
    panel.allow_protected.value = False
    assert "Protected, not stopped unless you tick the box below" in panel.confirmation.value
    assert panel.confirm_button.description == "Confirm: stop 1 VM"


def test_the_approver_is_empty_until_someone_types_a_name(sandbox, admin, monkeypatch):
    import getpass

    monkeypatch.setattr(getpass, "getuser", lambda: "jovyan")  # the notebook server's login
    panel = VmPanel(admin, watch_interval=None)
    assert panel.approver.value == "" and "required" in panel.approver.placeholder
    before = _action_ids(sandbox)
    vm_id = _running(panel, protected=False)[0]
    panel.select((vm_id,))
    panel.stop_button.click()
    assert panel.confirm_button.disabled
    assert "Type the approver&#x27;s name to enable Confirm" in panel.approver_note.value
    assert panel.confirm_stop() == []  # clicked from code: still nothing without a name
    assert "needs an approver" in panel.status.value
    assert _new_stops(sandbox, before) == []
    panel.approver.value = "omar"
    assert not panel.confirm_button.disabled and panel.approver_note.value == ""
    panel.confirm_button.click()
    assert "approved by omar" in panel.status.value
    assert list(panel.store.journal.log()["approver"]) == ["omar"]


def test_a_hint_says_how_to_add_rows_to_the_selection(sandbox, admin):
    panel = VmPanel(admin, watch_interval=None)
    assert "svcnb-selection-hint" in panel.selection_hint._dom_classes
    assert panel.selection_hint in list(descendants(panel.widget))
    for hint in (panel.selection_hint.value,):
        assert "Ctrl-click" in hint and "Shift-click" in hint
    first, second = _running(panel, protected=False)[:2]
    panel.select((first, second))
    hint = panel.selection_hint.value
    assert "2 selected; 2 VMs to stop" in hint and "Ctrl-click" in hint
