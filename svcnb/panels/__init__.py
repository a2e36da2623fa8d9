"""ipywidgets panels over svcnb's client, store and reports (the only package importing widgets).

They need the lab extra (``pip install 'svcnb[lab]'``); without it importing them says so.

Each panel is a plain class whose methods its widgets call, so tests and notebooks drive it by
setting ``.value`` and calling ``.click()``; ``panel.widget`` is what is displayed, and a panel
displays itself when it is the last expression of a cell.

The pieces the panels are built of serve a panel of one's own: ``grid(shown(frame))`` a
paging, sortable :class:`Grid` of a report frame, :class:`PlotView` a themed plot,
``shown_in(status, doing)`` an error turned into a sentence in a status line (``describe``
its wording), and ``static_html(widget)`` what a widget shows as a page without a kernel.
"""

from __future__ import annotations

from svcnb.extras import lab_needed

if _missing := lab_needed("svcnb.panels"):  # a plain `pip install svcnb`: say which extra
    raise ImportError(_missing)

from svcnb.panels._accounts import AccountTabs
from svcnb.panels._audit import FirewallAuditPanel
from svcnb.panels._bandwidth import BandwidthPanel
from svcnb.panels._billing import BillingPanel
from svcnb.panels._display import STATIC_ENV, static_html
from svcnb.panels._messages import describe, shown_in
from svcnb.panels._render import PAGED_OVER, Grid, PlotView, grid, shown, themed
from svcnb.panels._rule_editor import RuleEditor
from svcnb.panels._vms import VmPanel
from svcnb.panels._webhooks import WebhooksPanel
from svcnb.panels._whatif import WhatIfPanel

__all__ = [
    "PAGED_OVER",
    "STATIC_ENV",
    "AccountTabs",
    "BandwidthPanel",
    "BillingPanel",
    "FirewallAuditPanel",
    "Grid",
    "PlotView",
    "RuleEditor",
    "VmPanel",
    "WebhooksPanel",
    "WhatIfPanel",
    "describe",
    "grid",
    "shown",
    "shown_in",
    "static_html",
    "themed",
]
