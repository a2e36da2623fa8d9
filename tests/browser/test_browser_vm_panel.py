"""02_stop_vms in JupyterLab: stop one VM through the panel's buttons, as a user would."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from svcnb import Client

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "out"
NOTEBOOK = "02_stop_vms.ipynb"
SCREENSHOT = "vm-panel.png"


def _pick_running_vm(sb) -> dict:
    """A running, unprotected VM (the notebook's own cells stop two others first)."""
    with Client(sb.tokens()["admin"], sb.base_url, progress=False) as client:
        running = [
            vm
            for vm in client.vms.list()
            if vm["status"] == "running" and not vm.get("isProtected")
        ]
    assert running, "the sandbox has no running unprotected VM left to stop"
    return running[-1]


def _wait_for_status(sb, vm_id: str, wanted: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    status = ""
    while time.monotonic() < deadline:
        status = sb.control("GET", f"/vms/{vm_id}")["status"]
        if status == wanted:
            return status
        time.sleep(0.5)
    return status


def test_stop_a_vm_by_clicking_stop_and_confirm(lab, lab_sandbox) -> None:
    lab.open(NOTEBOOK)
    lab.run_all(timeout=300)
    panel = lab.page.locator(".svcnb-vm-panel").first
    panel.wait_for(state="visible", timeout=60_000)
    lab.assert_no_widget_errors()

    vm = _pick_running_vm(lab_sandbox)
    # The notebook left its filters on one region and "running"; widen them, then search.
    for label, everything in (("Status", "all statuses"), ("Region", "all regions")):
        dropdown = panel.locator(".widget-dropdown").filter(has_text=label).locator("select")
        dropdown.select_option(label=everything)
    panel.locator(".widget-text").filter(has_text="Search").locator("input").fill(vm["id"])
    # the fleet is one grid; the VM is chosen by clicking its row there
    grid = panel.locator(".svcnb-vm-grid")
    row = grid.locator("tbody tr").filter(has_text=vm["id"])
    lab.page.wait_for_function(
        "(el) => el.querySelectorAll('tbody tr').length === 1",
        arg=grid.element_handle(),
        timeout=30_000,
    )
    row.first.click()

    lab.button("Stop 1 VM…", panel).click()
    # the notebook's own cell left a plan of two VMs in this panel: wait for the review of this
    # click to replace it
    confirmation = (
        panel.locator(".widget-html-content")
        .filter(has_text="will be stopped")
        .filter(has_text=vm["name"])
    )
    confirmation.wait_for(timeout=30_000)
    assert "1 VM will be stopped" in confirmation.inner_text()
    assert _wait_for_status(lab_sandbox, vm["id"], "running", timeout=1) == "running", (
        "the review step must not send anything"
    )

    # nobody is presumed to approve: Confirm waits for a name in the Approver box (the
    # notebook's own cell typed one into this panel: it is cleared first)
    confirm = lab.button("Confirm: stop 1 VM", panel)
    approver = panel.locator(".svcnb-approver input")
    approver.fill("")
    approver.press("Enter")
    lab.page.wait_for_function("(el) => el.disabled", arg=confirm.element_handle(), timeout=30_000)
    assert confirm.is_disabled()
    approver.fill("omar")
    confirm.click()
    assert _wait_for_status(lab_sandbox, vm["id"], "stopped") == "stopped"

    actions = [
        a
        for a in lab_sandbox.control("GET", "/actions")
        if a.get("vmId") == vm["id"] and a.get("type") == "stop"
    ]
    assert len(actions) == 1, f"expected one stop action for {vm['id']}, got {actions}"
    shown = panel.locator(".svcnb-actions")
    lab.page.wait_for_function(
        "([el, id]) => el.innerText.includes(id)",
        arg=[shown.element_handle(), str(actions[0]["id"])],
        timeout=30_000,
    )
    status_line = lab.wait_for_text(re.compile(r"All stops finished \(.*stopped"), timeout=60)
    assert vm["name"] in status_line
    lab.assert_no_widget_errors()

    OUT.mkdir(exist_ok=True)
    panel.screenshot(path=str(OUT / SCREENSHOT))
    if os.environ.get("SVCNB_UPDATE_DOCS") == "1":
        # The documentation picture is refreshed only on request, so test runs leave git clean.
        panel.screenshot(path=str(Path(REPO, "docs", SCREENSHOT)))
