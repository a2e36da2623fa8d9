"""The part every "as of a snapshot" report panel shares: date slider, tables, plots, CSV export.

A subclass names its report's view in ``spec`` (``svcnb.reports.<report>.VIEW``) and implements
``compute(at)``: the report's view as of snapshot time ``at`` (``<report>.view(...)`` with the
panel's options). The base is a generic renderer of that view, like ``svcnb report`` and a
notebook cell: the slider over the store's snapshots, the view's figures (each label's tooltip
says what it counts), its plots and one grid per declared table, in the view's order and with
its titles, labels and formats; and CSV export of any table.

What a control changes is all that is done again: ``compute`` runs inside a
``svcnb.reports._reuse.Reuse`` kept per as-of time (the last ``KEEP_AS_OF``, and the latest
snapshot's), so each snapshot's frames are read once and a report asked again with the same
frames and options answers from what it gave; a table or plot is drawn again only when what it
shows may have changed (``view_key``: the as-of time, and any option of a subclass it depends
on). What a table or plot drew (its rows as shown, its SVG) is kept for the same as-of times,
so moving back to a snapshot just shown, or to the latest, draws nothing again: comparing two
dates costs the first visit of each.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import html
import os
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd

from svcnb.panels._accounts import PerAccount
from svcnb.panels._display import Displayed
from svcnb.panels._messages import banner, folder_problem, show, shown_in
from svcnb.panels._quiet import quietly
from svcnb.panels._render import PlotView, grid, shown, theme_style
from svcnb.reports import Histories, Reuse, View, ViewSpec, reading
from svcnb.reports.billing import export_csv
from svcnb.store import EVERY_ACCOUNT, Store, account_names

_NO_SNAPSHOT = "no snapshot"  # the slider's only option (value "") while the store is empty
# as-of times whose frames and answers a panel keeps besides the latest snapshot's (moving
# back to the last one is instant)
KEEP_AS_OF = 2


class AsOfPanel(PerAccount, Displayed):
    """Base of BillingPanel and BandwidthPanel (see module docstring).

    Widgets (stable attribute names): ``date_slider`` (values are snapshot server times, CSS
    ``svcnb-date-slider``), ``refresh_button``, ``summary`` (CSS ``svcnb-summary``), ``tables``
    (name -> grid), ``plots`` (name -> PlotView: inline SVG in the theme's colours),
    ``export_choice`` (which table), ``export_dir``, ``export_button`` (CSS ``svcnb-export``),
    ``export_message`` (a link to the file written) and ``status`` (CSS ``svcnb-status``).
    """

    name = "report"
    spec: ViewSpec  # the report's declared view (figures, tables, plots)

    def __init__(
        self,
        store: Store,
        *,
        export_dir: str | os.PathLike[str] = "out",
        account: str | list[str] | None = None,
    ) -> None:
        self.store = one_account(store, account)
        self.at: pd.Timestamp | None = None
        self.view: View | None = None
        self.results: dict[str, pd.DataFrame] = {}
        self.figures: dict[str, Any] = {}
        self._reuses: dict[pd.Timestamp, Reuse] = {}
        self._histories = Histories()  # each history read once, sliced per as-of time
        self._shown: dict[str, Hashable] = {}  # table or plot name -> view_key it shows
        # ("table NAME" | "plot NAME", (as-of time, view_key)) -> what it drew then
        self._drawn: dict[tuple[str, tuple[pd.Timestamp | None, Hashable]], Any] = {}
        self._read_as: Hashable = None  # svcnb.reports.reading of the store when it was read
        self._latest: pd.Timestamp | None = None  # the latest snapshot's time, when read

        self.date_slider = widgets.SelectionSlider(
            description="As of",
            options=[(_NO_SNAPSHOT, "")],
            continuous_update=False,
            layout=widgets.Layout(width="95%"),
        ).add_class("svcnb-date-slider")
        self.refresh_button = widgets.Button(description="Reload snapshots", icon="refresh")
        self.summary = widgets.HTML().add_class("svcnb-summary")
        # one sortable, searchable, paged grid per table (labels and formats for reading)
        self.tables = {t.name: grid() for t in self.spec.tables}
        self.titles = {
            t.name: widgets.HTML("<h4 class='svcnb-title'></h4>") for t in self.spec.tables
        }
        self.busy = widgets.HTML().add_class("svcnb-busy")
        self.plots = {p.name: PlotView() for p in self.spec.plots}
        self.export_choice = widgets.Dropdown(
            description="Export",
            options=[("Figures", "figures"), *((t.name, t.name) for t in self.spec.tables)],
        )
        self.export_dir = widgets.Text(description="to folder", value=str(export_dir))
        self.export_button = widgets.Button(description="Write CSV", icon="download").add_class(
            "svcnb-export"
        )
        self.export_message = widgets.HTML()
        self.status = widgets.HTML().add_class("svcnb-status")

        self.date_slider.observe(self._on_slide, names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.export_button.on_click(lambda _b: self.export())

        sections: list[widgets.Widget] = []
        for name, box in self.tables.items():
            sections += [self.titles[name], box]
        self.widget = widgets.VBox(
            [
                theme_style(),
                widgets.HBox([self.date_slider, self.refresh_button]),
                self.busy,
                self.status,
                self.summary,
                *self.plots.values(),
                *sections,
                widgets.HBox([self.export_choice, self.export_dir, self.export_button]),
                self.export_message,
            ]
        ).add_class(f"svcnb-{self.name}-panel")
        self.widget.add_class("svcnb-panel")
        self.wait_for_display()
        self.refresh()

    # --- what a subclass provides -------------------------------------------------------------

    def compute(self, at: pd.Timestamp) -> View:
        """The report's view as of snapshot server time ``at``, with the panel's options."""
        raise NotImplementedError

    def summary_html(self) -> str:
        """The view's figures as HTML (the one renderer of figures: ``View.figures_html``)."""
        return "" if self.view is None else self.view.figures_html()

    def draw(self) -> dict[str, Callable[[Any], Any]]:
        """Per plot name, the view's function drawing it on the Axes it is given."""
        return {} if self.view is None else dict(self.view.plots)

    def view_key(self, name: str) -> Hashable:
        """What table or plot ``name`` depends on besides the store: it is drawn again only when
        this changes. The base's tables and plots depend on the as-of time alone."""
        return self.at

    # --- slider -----------------------------------------------------------------------------

    def snapshot_times(self) -> list[pd.Timestamp]:
        """Server times of the store's snapshots, oldest first."""
        return _times_of(self.store.snapshots())

    def refresh(self) -> None:
        """Read the snapshot list again; the slider moves to the latest snapshot. What was kept
        is forgotten unless the store's snapshots, the config file and the vocabulary are as
        they were (``svcnb.reports.reading``): then every answer kept is the one it would
        compute again."""
        with shown_in(self.status, "reading the snapshot list"):
            snaps = self.store.snapshots()  # read once: for the reading and the slider
            now_read = reading(self.store, snaps)
            same = now_read == self._read_as
            if not same:
                self.forget()
            self._read_as = now_read
            times = _times_of(snaps)
            if not times:
                with quietly(self.date_slider, self._on_slide):
                    self.date_slider.options = [(_NO_SNAPSHOT, "")]
                    self.date_slider.disabled = True
                show(
                    self.status,
                    "warn",
                    "The store holds no snapshot yet. Take one with `svcnb snapshot` or "
                    "store.take(client), then press Reload snapshots.",
                )
                return
            self._latest = times[-1]
            fmt = "%Y-%m-%d" if len({t.date() for t in times}) == len(times) else "%Y-%m-%d %H:%M"
            with quietly(self.date_slider, self._on_slide):
                self.date_slider.options = [(t.strftime(fmt), t) for t in times]
                self.date_slider.disabled = False
                self.date_slider.value = times[-1]
            self.show_at(times[-1])
            if same:
                show(
                    self.status,
                    "info",
                    f"No snapshot, pin or mapped word is new since the last reading: as of the "
                    f"snapshot of {times[-1]:%Y-%m-%d %H:%M} UTC.",
                )

    def _on_slide(self, change: dict) -> None:
        if isinstance(change["new"], pd.Timestamp):
            self.show_at(change["new"])

    def show_at(self, at: pd.Timestamp) -> None:
        """Replay the report as of snapshot time ``at`` and redraw tables, plots and figures."""
        doing = f"computing the {self.name} report as of {at:%Y-%m-%d %H:%M}"
        with shown_in(self.status, doing), self._busy(doing), collector_paused():
            with self.reuse(at):
                self.view = self.compute(at)
            self.results = dict(self.view.tables)
            self.figures = figure_values(self.view)
            self.at = at
            for t in self.spec.tables:
                frame = self.results.get(t.name)
                if frame is None:
                    frame = pd.DataFrame(columns=list(t.columns or ()))
                columns = list(t.columns) if t.columns else None
                title = html.escape(self.view.title(t.name))
                self.titles[t.name].value = (
                    f"<h4 class='svcnb-title' title='"
                    f"{html.escape(t.means, quote=True)}'>{title}</h4>"
                )
                self._redraw(
                    f"table {t.name}",
                    functools.partial(shown, frame, columns),
                    self.tables[t.name].update,
                )
            # the figures before the plots: the page shows them while the plots are drawn
            self.summary.value = self.summary_html()
            if self.after_display("plots", self._draw_plots, self._plots_drawn_later):
                for spec in self.spec.plots:
                    self.plots[spec.name].wait(spec.size)
            self.export_message.value = ""
            show(self.status, "info", f"As of the snapshot of {at:%Y-%m-%d %H:%M} UTC.")

    def _draw_plots(self) -> None:
        sizes = {p.name: p.size for p in self.spec.plots}
        for name, drawing in self.draw().items():
            size = sizes.get(name, (7.0, 3.2))
            plot = self.plots[name]
            self._redraw(
                f"plot {name}", functools.partial(plot.render, drawing, size=size), plot.put
            )

    def _plots_drawn_later(self) -> None:
        try:
            if self.at is not None:
                doing = f"drawing the plots as of {self.at:%Y-%m-%d %H:%M}"
                with self._busy(doing), collector_paused():
                    self._draw_plots()
        finally:
            for plot in self.plots.values():
                plot.stop_waiting()

    def reuse(self, at: pd.Timestamp) -> Reuse:
        """The frames and answers kept for as-of time ``at`` (a ``Reuse`` to compute inside)."""
        kept = self._reuses.pop(at, None) or Reuse(histories=self._histories)
        self._reuses[at] = kept
        # the latest snapshot is kept besides them: the panel opens there, and Reload with
        # nothing new returns there
        others = [t for t in self._reuses if t != self._latest]
        while len(others) > KEEP_AS_OF:
            self._reuses.pop(others.pop(0))
        # what the tables and plots drew is kept for the same as-of times
        self._drawn = {k: v for k, v in self._drawn.items() if k[1][0] in self._reuses}
        return kept

    def forget(self) -> None:
        """Drop every frame and answer kept, and draw every table and plot again next time."""
        self._read_as = None
        self._reuses.clear()
        self._histories = Histories()
        self._shown.clear()
        self._drawn.clear()
        # a reading computed anew is drawn as a panel opened now draws it
        for plot in self.plots.values():
            plot.forget()

    def _redraw(self, view: str, make: Callable[[], Any], put: Callable[[Any], Any]) -> None:
        """Show table or plot ``view`` ("table NAME", "plot NAME"): ``put(make())``, unless
        what it shows is what it would show again (same as-of time and ``view_key``); what
        ``make`` gave for a kept as-of time and key is put again without making it."""
        key = (self.at, self.view_key(view.partition(" ")[2]))
        if view in self._shown and self._shown[view] == key:
            return
        self._shown.pop(view, None)
        if (view, key) not in self._drawn:
            self._drawn[(view, key)] = make()
        put(self._drawn[(view, key)])
        self._shown[view] = key

    @contextlib.contextmanager
    def _busy(self, doing: str) -> Iterator[None]:
        """Show a spinner and what is being done while the block runs; the slider waits."""
        self.busy.value = (
            f"<span class='svcnb-spinner' role='status'>&#8987; {html.escape(doing)}…</span>"
        )
        self.date_slider.disabled = True
        try:
            yield
        finally:
            self.busy.value = ""
            self.date_slider.disabled = False

    # --- export -----------------------------------------------------------------------------

    def export(self, which: str | None = None) -> Path | None:
        """Write table ``which`` (default: the one chosen) as CSV, ISO 8601 UTC times; its path."""
        which = which or self.export_choice.value
        frame = self.results.get(which)
        if which == "figures" and self.view is not None:
            frame = self.view.figures_frame()
        # what the export did, or why not, is said under its button and replaces what the
        # last export said there: a failure never sits beside the previous success
        if frame is None or self.at is None:
            show(self.export_message, "warn", "Nothing to export yet: no snapshot is shown.")
            return None
        folder = Path(self.export_dir.value or ".").expanduser()
        path = folder / f"{self.name}_{which}_{self.at:%Y%m%d}.csv"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            show(
                self.export_message, "error", folder_problem(folder, exc, "to folder", "Write CSV")
            )
            return None
        with shown_in(self.export_message, f"writing {path}"):
            export_csv(frame, path)
            href = html.escape(path.as_posix(), quote=True)
            self.export_message.value = banner(
                "ok",
                f"Wrote {len(frame)} rows to <a href='{href}' target='_blank' download>"
                f"{html.escape(str(path))}</a> (absolute: {html.escape(str(path.resolve()))}).",
                raw_html=True,
            )
            return path
        return None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the block runs (as it was after it).

    A move makes thousands of objects in reference cycles (each matplotlib figure is one) and
    drops them at its end. With the collector running, the collections during the move find
    them still in use and promote them, and every few moves that set off a full collection
    of the whole process (about 200,000 objects with the panels open: 0.10 to 0.14 s, 7 times
    in 36 cold moves at 1,000 VMs), inside whichever move came next. Paused, the cycles a move
    left are collected young by the first collection after it, at a few milliseconds: in the
    same 36 moves, no full collection and the slowest move 0.34 s instead of 0.45 to 0.48.
    Nothing is freed later than it would be otherwise but the move's own cycles, until it ends.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _times_of(snaps: pd.DataFrame) -> list[pd.Timestamp]:
    """The server times of ``store.snapshots()``'s rows, oldest first, each once."""
    if snaps.empty:
        return []
    return sorted(pd.to_datetime(snaps["server_time"], utc=True).drop_duplicates())


def figure_values(view: View) -> dict[str, Any]:
    """``panel.figures``: each figure's value by name, with ``as_of``, ``complete`` and the
    ``currency`` of the view's money figures (None when they state none)."""
    money = [f.currency for f in view.figures.values() if f.spec.kind == "money"]
    return {
        **view.values(),
        "as_of": view.as_of,
        "complete": view.complete,
        "currency": next((c for c in money if c is not None), None),
    }


def one_account(store: Store, account: Any) -> Store:
    """The store a panel shows: bound to ``account`` when one is named. Several accounts never
    reach a panel's own constructor (``PerAccount`` makes one panel per account instead)."""
    if account is None:
        return store
    if isinstance(account, str) and account != EVERY_ACCOUNT:
        return store.for_account(account_names(account, store.accounts(), store.path)[0])
    raise ValueError(f"account={account!r}: one panel shows one account (see AccountTabs)")
