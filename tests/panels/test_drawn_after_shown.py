"""A panel made in a notebook cell is shown before its plots are drawn: the page builds the
panel while the kernel draws them, and every plot is drawn by the time the cell ends."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from svcnb.panels import BandwidthPanel, FirewallAuditPanel


@pytest.fixture
def shell(tmp_path, monkeypatch):
    """An IPython shell running cells as a notebook's kernel does (no history file)."""
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    config = Config()
    config.HistoryManager.enabled = False
    made = InteractiveShell.instance(config=config)
    yield made
    InteractiveShell.clear_instance()


# Each plot as the cell finds it once the panel is made, and each plot drawn after that
_CELL = """\
panel = {panel}(store)
for name, plot in panel.plots.items():
    events.append(("made", name, plot.svg, plot.value))
    plot.observe(lambda change, name=name: events.append(("drawn", name)), names="value")
panel
"""


def _run(shell, monkeypatch, panel_class, store) -> tuple[object, list[tuple]]:
    events: list[tuple] = []
    shown = shell.displayhook.write_format_data

    def write(format_dict, md_dict=None):
        events.append(("shown", format_dict.get("text/plain")))
        return shown(format_dict, md_dict)

    monkeypatch.setattr(shell.displayhook, "write_format_data", write)
    shell.user_ns.update(store=store, events=events, **{panel_class.__name__: panel_class})
    result = shell.run_cell(_CELL.format(panel=panel_class.__name__))
    result.raise_error()
    return shell.user_ns["panel"], events


def test_a_panel_made_in_a_cell_is_shown_first_and_its_plots_drawn_before_the_cell_ends(
    shell, monkeypatch, three_days
) -> None:
    panel, events = _run(shell, monkeypatch, BandwidthPanel, three_days)
    names = list(panel.plots)
    assert len(names) == 3

    # made: no plot drawn yet, each holding its room and saying it is being drawn
    made = [e for e in events if e[0] == "made"]
    assert [e[1] for e in made] == names
    assert all(svg == "" and "drawing the plot" in value for _, _, svg, value in made)
    # shown, then every plot drawn, all before the cell ended
    order = [e[0] for e in events if e[0] != "made"]
    assert order[0] == "shown" and events[len(made)] == (
        "shown",
        "<BandwidthPanel: svcnb widget panel>",
    )
    assert {e[1] for e in events if e[0] == "drawn"} == set(names)
    for plot in panel.plots.values():
        assert plot.svg.startswith("<svg") and "drawing the plot" not in plot.value
    assert panel.busy.value == ""
    assert "As of the snapshot of" in panel.status.value

    # once shown, a move draws its plots at once
    times = panel.snapshot_times()
    before = {name: plot.svg for name, plot in panel.plots.items()}
    panel.date_slider.value = times[0]
    assert all(plot.svg.startswith("<svg") for plot in panel.plots.values())
    assert {name: plot.svg for name, plot in panel.plots.items()} != before


def test_a_panel_never_shown_has_its_plots_drawn_when_its_cell_ends(
    shell, monkeypatch, three_days
) -> None:
    events: list[tuple] = []
    shell.user_ns.update(store=three_days, events=events, FirewallAuditPanel=FirewallAuditPanel)
    shell.run_cell(
        "panel = FirewallAuditPanel(store)\nevents.append(panel.plot.svg)\nNone"
    ).raise_error()
    assert events == [""]  # in the cell, not yet
    assert shell.user_ns["panel"].plot.svg.startswith("<svg")


def test_outside_a_notebook_a_panel_is_drawn_whole_when_made(three_days) -> None:
    panel = BandwidthPanel(three_days)
    assert all(plot.svg.startswith("<svg") for plot in panel.plots.values())


def test_a_panel_made_outside_a_cell_is_drawn_whole_when_made(shell, three_days) -> None:
    # as in a widget's callback (a button making a panel): no cell end would draw its plots
    panel = FirewallAuditPanel(three_days)
    assert panel.plot.svg.startswith("<svg")


def test_a_move_runs_with_the_cyclic_collector_paused_and_leaves_it_as_it_was(
    three_days, monkeypatch
):
    # a full collection of the kernel (0.1 s) set off inside a move by the figures earlier
    # moves left behind is time the user waits for; paused, a move's cycles are collected young
    import gc

    from svcnb.panels import PlotView

    seen: list[tuple[str, bool]] = []
    compute, render = BandwidthPanel.compute, PlotView.render

    def spy_compute(self, at):
        seen.append(("compute", gc.isenabled()))
        return compute(self, at)

    def spy_render(self, *args, **kwargs):
        seen.append(("plot", gc.isenabled()))
        return render(self, *args, **kwargs)

    monkeypatch.setattr(BandwidthPanel, "compute", spy_compute)
    monkeypatch.setattr(PlotView, "render", spy_render)
    assert gc.isenabled()
    panel = BandwidthPanel(three_days)
    first = [a for a, _ in panel.date_slider.options][0]
    panel.date_slider.value = dict(panel.date_slider.options)[first]
    assert {"compute", "plot"} <= {what for what, _ in seen}
    assert not any(enabled for _, enabled in seen)
    assert gc.isenabled()  # as it was

    # a user who turned the collector off keeps it off
    gc.disable()
    try:
        panel.refresh()
        assert not gc.isenabled()
    finally:
        gc.enable()

    # a move that fails (said in the status line) gives the collector back
    def broken(self, at):
        raise RuntimeError("the report failed")

    monkeypatch.setattr(BandwidthPanel, "compute", broken)
    panel.show_at(panel.at)
    assert "the report failed" in panel.status.value
    assert gc.isenabled()
