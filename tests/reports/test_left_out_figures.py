"""A figure summed or counted over the VMs svcnb knows is a bound, never an exact number, while
VMs of a status word it does not know were left out of it: the overdue table showed what 12
suspended VMs owe while "Owed now" said an exact amount without them."""

from __future__ import annotations

import warnings

import pytest

from svcnb.client import Client
from svcnb.reports import bandwidth, billing, whatif
from svcnb.sandbox import serve
from svcnb.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One snapshot of a fleet whose 12 VMs say 'suspended', a word svcnb does not know until
    its user pins it (here nobody has)."""
    path = tmp_path_factory.mktemp("left-out") / "store"
    with (
        serve(vms=200, seed=3, time_scale=0.0) as sb,
        Client(sb.tokens["admin"], sb.base_url, progress=False) as client,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        Store(path).take(client)
    return Store(path)


def _figures(view):
    return {f.name: f for f in view.figures.values()}


def test_owed_and_the_run_rate_are_at_least_what_the_known_vms_owe(store):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = billing.view(store)
    f = _figures(view)
    assert f["unknown_status"].value == 12
    # the VMs left out owe: the overdue table lists them with their amounts
    owing = view.tables["overdue"]
    assert (owing["status"] == "suspended").sum() == 12
    for name in ("owed", "monthly_run_rate", "vms_overdue", "vms_suspended"):
        assert f[name].text().startswith("at least "), (name, f[name].text())
        assert not f[name].is_complete
        assert "12 VM(s) of unknown status" in f[name].why()
    assert f["vms_total"].text() == "200" and f["vms_total"].is_complete
    frame = view.figures_frame().set_index("figure")
    assert not frame.loc["owed", "complete"]
    assert frame.loc["owed", "text"].startswith("at least ")


def test_what_if_and_bandwidth_say_the_same_of_what_they_left_out(store):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wif = _figures(whatif.view(store))
        band = _figures(bandwidth.view(store))
    assert wif["owed"].text().startswith("at least ")
    # none of the VMs svcnb knows is suspended; the 12 it left out say 'suspended'
    assert wif["already_suspended"].text() == "unknown"
    assert band["vms_over"].text().startswith("at least ")
    for f in (wif["owed"], wif["already_suspended"], band["vms_over"], band["first_exceeds_on"]):
        assert not f.is_complete, f.name
