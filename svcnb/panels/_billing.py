"""BillingPanel: the billing report as it stood at any snapshot, chosen with a date slider."""

from __future__ import annotations

from typing import Any

import pandas as pd

from svcnb.panels._asof import AsOfPanel
from svcnb.reports import View, billing, duration
from svcnb.store import Store


class BillingPanel(AsOfPanel):
    """Finance's view: the billing report's view (``svcnb.reports.billing.VIEW``) as of the
    chosen snapshot, the same figures, tables and plots ``svcnb report billing`` prints.

    ``within`` (default 30 days) is the renewals table's span and ``horizon`` (a year) how far
    the runway walks, both read by ``svcnb.reports.duration`` (a bare number is days).
    ``figures``: each figure of the view by name (balance, renewals_7d, renewals_30d,
    renewals_90d, owed, monthly_run_rate, runway_at, low_balance_at, vms_overdue,
    vms_suspended, vms_total, unknown_status; money as ``Decimal``), plus as_of, currency and
    complete (False when VMs were left out: the runway may come sooner).
    """

    name = "billing"
    spec = billing.VIEW

    def __init__(self, store: Store, *, within: str = "30d", horizon: str = "365d", **kw: Any):
        # read as every duration is (svcnb.reports.duration: a bare number is days)
        self.within = duration(within, name="within")
        self.horizon = duration(horizon, name="horizon")
        super().__init__(store, **kw)

    def compute(self, at: pd.Timestamp) -> View:
        return billing.view(self.store, at, within=self.within, horizon=self.horizon)
