"""Reports: pure functions from frames (and snapshot history) to result frames and plots.

Every report is called on frames, ``billing.runway(vms=vms, wallet=wallet, now=now)``, or on a
store as of a snapshot, ``billing.runway.from_store(store, at="2026-11-15")``;
``replay(billing.runway, store, every="1D")`` runs it over time. ``plot_*(frame, ax=None)``
draw a computed frame on an Axes and return it. ``duration(text)`` reads a duration the way
every report, panel and ``svcnb report`` option does (a bare number is days; months refused).

Each report module declares its view (``billing.VIEW``) and builds it as of a snapshot
(``billing.view(store)``): the headline figures, tables and plots every surface shows. A
:class:`View` displays itself in a notebook; ``text_table(frame)`` and ``display_frame(frame)``
write any report frame as the CLI and the panels do (money with its currency, bytes in GiB,
labels from the column table), and ``table(frame)`` shows one in a notebook cell (HTML, with
the text table as its plain text); ``svcnb.reports.static.page(view)`` writes a view as one
self-contained HTML page (``svcnb report KIND --format html``, ``svcnb pages``).

For reports of one's own: ``COLUMNS`` is every column a view may show (its kind and label),
``cell_text`` one cell as the tables write it, ``reusable`` marks a helper whose result a
:class:`Reuse` keeps, and ``STATUS_COLOURS`` and ``legend_outside`` draw as the reports'
plots do.
"""

from __future__ import annotations

from svcnb.reports import bandwidth, billing, firewall, webhooks, whatif
from svcnb.reports._classes import vm_classes
from svcnb.reports._columns import COLUMNS, MONEY_COLUMNS, VALUES, currency_of, value_label
from svcnb.reports._display import cell_text, display_frame, kind, kind_text, label, text_table
from svcnb.reports._duration import DurationError, duration
from svcnb.reports._replay import Histories, Report, reading, replay, snapshot_at
from svcnb.reports._reuse import Reuse, reusable, sharing
from svcnb.reports._timeaxis import STATUS_COLOURS, legend_outside
from svcnb.reports._view import Figure, View, ViewSpec
from svcnb.reports.static import Table, table
from svcnb.times import to_utc

__all__ = [
    "COLUMNS",
    "DurationError",
    "Figure",
    "Histories",
    "MONEY_COLUMNS",
    "STATUS_COLOURS",
    "Report",
    "Reuse",
    "Table",
    "VALUES",
    "View",
    "ViewSpec",
    "bandwidth",
    "billing",
    "cell_text",
    "currency_of",
    "display_frame",
    "duration",
    "firewall",
    "kind",
    "kind_text",
    "label",
    "legend_outside",
    "reading",
    "replay",
    "reusable",
    "sharing",
    "snapshot_at",
    "table",
    "text_table",
    "to_utc",
    "value_label",
    "vm_classes",
    "webhooks",
    "whatif",
]
