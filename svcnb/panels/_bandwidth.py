"""BandwidthPanel: the bandwidth report as it stood at any snapshot, chosen with a date slider."""

from __future__ import annotations

from typing import Any

import pandas as pd

from svcnb.panels._asof import AsOfPanel
from svcnb.reports import View, bandwidth, duration
from svcnb.store import Store


class BandwidthPanel(AsOfPanel):
    """Analysts' view: the bandwidth report's view (``svcnb.reports.bandwidth.VIEW``) as of the
    chosen snapshot, the same figures, tables and plots ``svcnb report bandwidth`` prints.

    ``top``: how many top consumers; ``lookback``: the span growth rates are read over.
    ``figures``: each figure of the view by name (fleet_used_bytes, fleet_pack_bytes,
    vms_over, vms_will_exceed, first_exceeds_on, unknown_status), plus as_of and complete.
    """

    name = "bandwidth"
    spec = bandwidth.VIEW

    def __init__(self, store: Store, *, top: int = 10, lookback: str = "7d", **kw: Any) -> None:
        self.top = top
        # read as every duration is (svcnb.reports.duration: a bare number is days)
        self.lookback = duration(lookback, name="lookback")
        super().__init__(store, **kw)

    def compute(self, at: pd.Timestamp) -> View:
        return bandwidth.view(self.store, at, top=self.top, lookback=self.lookback)
