"""Discoverable in a notebook: ``svcnb.<Tab>`` lists the reports and panels without importing
them up front, resource names are one ``Literal`` vocabulary, panels and stores are typed."""

from __future__ import annotations

import subprocess
import sys
import typing

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
    seen = 0
    for name in panels.__all__:
        hints = typing.get_type_hints(getattr(panels, name).__init__)
        for param in ("client", "store"):
            if param in hints:
                assert hints[param] in (Client, Store, Client | None, Store | None), (name, hints)
                seen += 1
    assert seen >= len(panels.__all__)  # every panel takes a client or a store


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
