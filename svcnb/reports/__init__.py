"""Reports: pure functions from frames (and snapshot history) to result frames and plots.

Every report is called on frames, ``billing.runway(vms=vms, wallet=wallet, now=now)``, or on a
store as of a snapshot, ``billing.runway.from_store(store, at="2026-11-15")``;
``replay(billing.runway, store, every="1D")`` runs it over time. ``plot_*(frame, ax=None)``
draw a computed frame on an Axes and return it. ``duration(text)`` reads a duration the way
every report, panel and ``svcnb report`` option does (a bare number is days; months refused).
"""

from __future__ import annotations

from svcnb.reports import bandwidth, billing, firewall, webhooks, whatif
from svcnb.reports._duration import DurationError, duration
from svcnb.reports._replay import Report, replay

__all__ = [
    "DurationError",
    "Report",
    "bandwidth",
    "billing",
    "duration",
    "firewall",
    "replay",
    "webhooks",
    "whatif",
]
