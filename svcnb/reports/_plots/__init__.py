"""The reports' plots, one module per report, apart from the models they draw.

Each ``plot_*(frame, ..., ax=None) -> Axes`` draws a frame its report computed and returns the
Axes; the report module hands it on under the same name (``svcnb.reports.billing.plot_balance``).
matplotlib is imported when a plot is drawn (``svcnb.reports._timeaxis``), never with a module.
"""
