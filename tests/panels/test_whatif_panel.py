"""WhatIfPanel: choosing the horizon, stop or terminate and the VMs changes the figures to the
ones the what-if reports give for the same snapshot."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd

from svcnb.panels import WhatIfPanel
from svcnb.reports import whatif


def _inputs(store):
    return whatif.topup_needed.inputs(store)


def test_panel_figures_follow_horizon_and_chosen_vms(sandbox, admin, panel_store, tmp_path):
    sandbox.control.advance(600)  # every VM provisioned
    panel_store.take(admin)
    panel = WhatIfPanel(panel_store, export_dir=tmp_path)
    f = panel.figures
    inputs = _inputs(panel_store)
    top = whatif.topup_needed(**inputs).set_index("horizon_days")
    assert f["horizon_days"] == 90 and f["chosen"] == 0
    assert f["topup"] == top.loc[90, "topup"] and isinstance(f["topup"], Decimal)
    sus = whatif.suspensions(**inputs, horizon="90D")
    assert f["suspended"] == int((sus["suspended_by"] <= top.loc[90, "horizon_end"]).sum())

    panel.horizon.value = 30  # as the user picks it
    assert panel.figures["topup"] == top.loc[30, "topup"]
    assert "30 days" in panel.summary.value

    running = inputs["vms"][inputs["vms"]["status"] == "running"]
    ids = sorted(running["id"])[:3]
    panel.choose(how="terminate", vm_ids=ids)
    assert sorted(panel.selected_ids) == ids
    want = whatif.what_if_stop(**inputs, vm_ids=ids, how="terminate").set_index("horizon_days")
    assert panel.figures["topup_saved"] == want.loc[30, "topup_saved"]
    assert panel.figures["runway_after"] == want.loc[30, "runway_after"]
    assert "terminated" in panel.summary.value
    assert len(panel.results["what_if"]) == 3

    panel.how.value = "stop"  # stopped VMs still renew: nothing saved, and the panel says why
    assert panel.figures["topup_saved"] == 0
    assert "still renew" in panel.notes.value


def test_panel_says_what_it_left_out(sandbox, admin, panel_store, tmp_path):
    # right after seeding some VMs are still provisioning: no renewal date yet
    panel_store.take(admin)
    panel = WhatIfPanel(panel_store, export_dir=tmp_path)
    vms = _inputs(panel_store)["vms"]
    # seed 7 has VMs provisioning at the start (no renewal date besides the terminated ones)
    assert vms["next_renewal_at"].isna().sum() > (vms["status"] == "terminated").sum()
    assert panel.figures["complete"] is False
    assert "no renewal date yet" in panel.notes.value
    assert "at least" in panel.summary.value
    path = panel.export("topup")
    back = pd.read_csv(path, dtype={"topup": str})
    assert list(back["horizon_days"]) == [30, 60, 90]
