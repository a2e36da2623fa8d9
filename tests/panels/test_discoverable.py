"""Discoverable in a notebook: ``svcnb.<Tab>`` lists the reports and panels without importing
them up front, resource names are one ``Literal`` vocabulary, panels and stores are typed."""

from __future__ import annotations

import subprocess
import sys
import typing

import ipywidgets as widgets

import svcnb
from svcnb import panels, reports
from svcnb.client import Client
from svcnb.frames import SCHEMAS, ResourceName
from svcnb.store import Store


def test_resource_names_are_one_vocabulary():
    assert typing.get_args(ResourceName) == tuple(SCHEMAS)
    for method in (Store.load, Store.history, Store.diff):
        assert typing.get_type_hints(method)["resource"] == ResourceName, method.__name__
    assert typing.get_type_hints(Store.take)["client"] is Client


def test_panels_are_typed_with_client_and_store():
    # the panels: the classes exported that are no widget (the grid and plot pieces are)
    made = [getattr(panels, name) for name in panels.__all__]
    shown = [p for p in made if isinstance(p, type) and not issubclass(p, widgets.Widget)]
    assert len(shown) >= 8
    for panel in shown:
        hints = typing.get_type_hints(panel.__init__)
        takes = [param for param in ("client", "store", "source") if param in hints]
        assert takes, panel.__name__  # every panel takes a client or a store
        for param in takes:
            typed = (Client, Store, Client | None, Store | None, Client | Store)
            assert hints[param] in typed, (panel, hints)


def test_tab_lists_reports_and_panels_and_imports_neither_up_front():
    names = dir(svcnb)
    assert {"reports", "panels", "Store", "connect"} <= set(names)
    assert {"billing", "bandwidth", "firewall", "webhooks", "replay"} <= set(dir(reports))
    assert {"VmPanel", "BillingPanel", "RuleEditor"} <= set(dir(panels))
    code = (
        "import sys, svcnb; "
        "print(sorted(m for m in ('matplotlib', 'ipywidgets', 'svcnb.panels', 'svcnb.reports') "
        "if m in sys.modules)); "
        "svcnb.panels.VmPanel; print('svcnb.panels' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "[]", out
    assert out[1] == "True"
