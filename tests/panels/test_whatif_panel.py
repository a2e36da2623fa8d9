"""WhatIfPanel: choosing the horizon, stop or terminate and the VMs changes the figures to the
ones the what-if reports give for the same snapshot."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
from _widgets import descendants

from svcnb.panels import PlotView, WhatIfPanel
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
    assert panel.view.options["horizon"] == 90 and f["chosen"] == 0
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
    assert "still renew" in panel.summary.value
    # said once in the panel: the notes sat under the chooser and again under the figures
    values = (getattr(w, "value", None) for w in descendants(panel.widget))
    shown = "".join(v for v in values if isinstance(v, str))
    assert shown.count("Stopped VMs still renew in the renewal model") == 1


def test_panel_says_what_it_left_out(sandbox, admin, panel_store, tmp_path):
    # right after seeding some VMs are still provisioning: no renewal date yet
    panel_store.take(admin)
    panel = WhatIfPanel(panel_store, export_dir=tmp_path)
    vms = _inputs(panel_store)["vms"]
    # seed 7 has VMs provisioning at the start (no renewal date besides the terminated ones)
    assert vms["next_renewal_at"].isna().sum() > (vms["status"] == "terminated").sum()
    assert panel.figures["complete"] is False
    assert "no renewal date yet" in panel.summary.value
    assert "at least" in panel.summary.value
    path = panel.export("topup")
    back = pd.read_csv(path, dtype={"topup": str})
    assert list(back["horizon_days"]) == [30, 60, 90]


def test_a_control_redraws_only_what_it_changed(sandbox, admin, panel_store, tmp_path, monkeypatch):
    sandbox.control.advance(600)
    panel_store.build_history(admin, 2, sandbox.control.advance)
    panel = WhatIfPanel(panel_store, export_dir=tmp_path)
    drawn: list[str] = []
    names = {id(view): name for name, view in panel.plots.items()}
    render = PlotView.render
    monkeypatch.setattr(
        PlotView,
        "render",
        lambda self, *a, **k: (drawn.append(names[id(self)]), render(self, *a, **k))[1],
    )
    grid = panel.vm_grid.df

    panel.horizon.value = 30  # the suspensions are the horizon's; top-up and what-if are not
    assert drawn == ["suspensions"] and panel.vm_grid.df is grid
    drawn.clear()
    panel.choose(how="terminate", vm_ids=panel._vm_ids[:2])
    assert drawn == ["what_if"] and panel.vm_grid.df is grid
    want = whatif.what_if_stop(
        **_inputs(panel_store), vm_ids=panel.selected_ids, how="terminate"
    ).set_index("horizon_days")
    assert panel.figures["topup_saved"] == want.loc[30, "topup_saved"]

    drawn.clear()
    times = [value for _, value in panel.date_slider.options]
    panel.date_slider.value = times[0]  # another snapshot: everything it shows changes
    assert sorted(drawn) == ["suspensions", "topup", "what_if"]
    assert panel.vm_grid.df is not grid
    drawn.clear()
    panel.refresh_button.click()  # nothing new in the store: what was kept still holds
    assert drawn == [] and "No snapshot, pin or mapped word is new" in panel.status.value
    sandbox.control.advance(600)
    panel_store.take(admin)
    panel.refresh_button.click()  # a new snapshot: the latest is drawn
    assert sorted(drawn) == ["suspensions", "topup", "what_if"]


def test_the_vm_chooser_prices_every_vm_in_one_format(sandbox, admin, panel_store, tmp_path):
    """The chooser's price column reads as the billing reports bill (billing.prices): an amount
    with its currency, and where it came from; a VM that states no currency of its own showed
    a bare "39.90" beside "119.00 EUR"."""
    import re

    from svcnb.reports import billing

    sandbox.control.advance(600)
    panel_store.take(admin)
    panel = WhatIfPanel(panel_store, export_dir=tmp_path)
    shown = panel.vm_grid._df
    inputs = _inputs(panel_store)
    priced = billing.prices(inputs["vms"], inputs["wallet"]).set_index("vm_id")
    assert inputs["vms"]["price_monthly_currency"].isna().any()  # the case this is about
    for vm_id, price, source in zip(
        shown["VM id"], shown["Monthly price"], shown["Price from"], strict=True
    ):
        if pd.isna(priced.loc[vm_id, "amount"]):
            assert price == "", (vm_id, price)
        else:
            assert re.fullmatch(r"[\d,]+\.\d\d [A-Z]{3}", price), (vm_id, price)
            assert source == priced.loc[vm_id, "price_source"]
