"""A report's view, declared once: its headline figures, its tables and its plots.

Each report module declares a :class:`ViewSpec` (what it shows: every figure with its label,
kind and one sentence of what it counts; every table with its title and the columns shown; every
plot) and a ``view(store, at=..., **options)`` that fills it as of a snapshot into a
:class:`View` (:func:`view_of`). Each figure's spec is a module constant right above the small
function that computes its :class:`Figure`, and the view joins figures, tables and plots to
their specs by the spec objects themselves, never by a name written twice: a misspelt spec is a
NameError at import. The names (``FigureSpec.name``, ``TableSpec.name``) are what the exports and
``--table`` say. The CLI (``svcnb report``), the panels, a notebook cell (a ``View`` displays
itself) and the demo pages are generic renderers of a View: none of them chooses a table, a
column, a label or a figure of its own, so a figure reads the same on every surface.

A figure's text comes from its kind (``svcnb.reports._columns`` kinds, one formatter:
``svcnb.reports._display.kind_text``); money through ``svcnb.money``. A figure that is only a
bound says so in its text ("at least 12.00 EUR", "by 2026-12-01"); an unknown one says
"unknown", never a number, and never the "none" a figure says when nothing is due: a figure
whose ground is not whole (``complete=False``) and has no value is unknown. Every figure carries
its completeness (``complete`` and ``reason``) into every export: the figures table (CSV,
JSON), the text lines and the HTML (``data-complete``, the reason as a tooltip).
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from svcnb.reports._columns import KINDS
from svcnb.reports._display import day_text, display_frame, kind_text, text_table

# How a figure holds: exactly, or only as a bound in the direction named.
QUALIFIERS = {"": "", "at least": "at least ", "at most": "at most ", "by": "by "}


@dataclass(frozen=True)
class FigureSpec:
    """A headline figure: ``name`` (stable key), ``label`` (shown), ``kind`` (how its value is
    written: a kind of the column table) and ``means`` (one sentence of what it counts).

    ``left_out``: what the figure becomes when the view left VMs out for a status word svcnb
    does not know: "at least" for a sum or count over the VMs it knows, "by" for the first time
    something happens to one of them; "" for a figure those VMs cannot change."""

    name: str
    label: str
    kind: str
    means: str
    left_out: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"figure {self.name}: unknown kind {self.kind!r}")
        if self.left_out not in ("", "at least", "by"):
            raise ValueError(f"figure {self.name}: left_out is 'at least', 'by' or ''")


# Every view's ``unknown_status`` figure: one meaning, one name, declared once.
UNKNOWN_STATUS = FigureSpec(
    "unknown_status",
    "VMs left out (status word unknown)",
    "count",
    "VMs whose status or billing word svcnb does not know: left out of every sum, forecast "
    "and projection (map their words with svcnb.vocab.extend).",
)


@dataclass(frozen=True)
class TableSpec:
    """A table: ``name`` (for ``--table`` and export), ``title`` (a format string filled with
    the view's options, e.g. ``"Renewals within {within}"``), ``columns`` shown (all when None)
    and ``means`` (one sentence of what a row is)."""

    name: str
    title: str
    columns: tuple[str, ...] | None
    means: str = ""


@dataclass(frozen=True)
class PlotSpec:
    """A plot: ``name``, ``title`` and its size in inches (width, height)."""

    name: str
    title: str
    size: tuple[float, float] = (7.0, 3.2)


@dataclass(frozen=True)
class ViewSpec:
    """What a report shows, in order: figures, tables (the first is its main one), plots."""

    report: str
    title: str
    figures: tuple[FigureSpec, ...]
    tables: tuple[TableSpec, ...]
    plots: tuple[PlotSpec, ...] = ()

    def table(self, name: str) -> TableSpec:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"{self.report} view has no table {name!r}")


@dataclass(frozen=True)
class Figure:
    """A figure's value as of a snapshot: ``value`` (Decimal for money, int for counts, a UTC
    Timestamp for times; None or NaT when unknown), its ``currency`` (money), ``qualifier``
    ("", "at least", "at most" or "by": how far it holds), ``empty`` (what to say when it
    has no value, e.g. "none within the horizon"; "unknown" by default), ``complete`` (False
    when what it rests on is not whole or not known; None: complete unless unknown or a bound)
    and ``reason`` (why not complete)."""

    spec: FigureSpec
    value: Any
    currency: str | None = None
    qualifier: str = ""
    empty: str = "unknown"
    detail: str = ""
    # the spec's label with the view's options filled in (set by View)
    label: str = ""
    complete: bool | None = None
    reason: str = ""

    @property
    def name(self) -> str:
        return self.spec.name

    def _missing(self) -> bool:
        return kind_text(self.spec.kind, self.value, self.currency) == ""

    @property
    def is_complete(self) -> bool:
        """Whether the figure is the whole truth: exact, and resting on nothing unknown."""
        if self.complete is not None:
            return self.complete
        return not self.qualifier and not (self._missing() and self.empty == "unknown")

    def why(self) -> str:
        """Why the figure is not complete ("" when it is)."""
        if self.is_complete:
            return ""
        if self.reason:
            return self.reason
        if self._missing():
            return "unknown"
        return f"only a bound ({self.qualifier})"

    def text(self) -> str:
        """The figure as every surface shows it."""
        written = kind_text(self.spec.kind, self.value, self.currency)
        if written == "":
            # "none within the horizon" holds only when the ground it was looked for is whole
            return self.empty if self.complete is not False else "unknown"
        text = QUALIFIERS[self.qualifier] + written
        return f"{text} ({self.detail})" if self.detail else text

    def plain(self) -> Any:
        """The value for CSV and JSON: exact money as a Decimal, times in ISO 8601, None when
        unknown."""
        from svcnb.money import to_decimal

        value = self.value
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            return None
        if self.spec.kind == "money":
            return to_decimal(value, self.currency)
        if isinstance(value, pd.Timestamp):
            return day_text(value) if self.spec.kind == "date" else value.isoformat()
        if hasattr(value, "item"):
            return value.item()
        return value


@dataclass
class View:
    """A report as of one snapshot (see module docstring).

    ``figures`` (name -> :class:`Figure`, in the spec's order), ``tables`` (name -> frame, in
    the spec's order; a table the report could not make this time is absent), ``plots`` (name ->
    a function drawing it on the Axes it is given), ``options`` (what the view was asked with,
    filling the titles), ``notes`` (sentences on what is left out or uncertain) and
    ``complete`` (False when something was left out: then the notes say what).
    """

    spec: ViewSpec
    as_of: pd.Timestamp
    figures: dict[str, Figure]
    tables: dict[str, pd.DataFrame]
    plots: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    complete: bool = True
    # VMs left out for a status word svcnb does not know (None: the unknown_status figure's)
    left_out: int | None = None

    def __post_init__(self) -> None:
        declared = [f.name for f in self.spec.figures]
        if list(self.figures) != declared:
            raise ValueError(
                f"{self.spec.report} view: figures {list(self.figures)} are not those declared "
                f"({declared})"
            )
        if self.left_out is None and "unknown_status" in self.figures:
            self.left_out = int(self.figures["unknown_status"].value or 0)
        if self.left_out:
            for name, f in self.figures.items():
                self.figures[name] = _bounded_by_left_out(f, self.left_out)
        for name, f in self.figures.items():
            if not f.label:
                self.figures[name] = dataclasses.replace(
                    f, label=f.spec.label.format(**self.options)
                )
        unknown = set(self.tables) - {t.name for t in self.spec.tables}
        if unknown:
            raise ValueError(f"{self.spec.report} view: undeclared tables {sorted(unknown)}")
        # a view is complete only when each of its figures is
        self.complete = self.complete and all(f.is_complete for f in self.figures.values())

    # --- what renderers read ----------------------------------------------------------------

    def title(self, name: str) -> str:
        """The title of table ``name`` with the view's options filled in."""
        return self.spec.table(name).title.format(**self.options)

    def shown_tables(self) -> list[tuple[TableSpec, pd.DataFrame]]:
        """The tables this view holds, in the declared order, each with its spec."""
        return [(t, self.tables[t.name]) for t in self.spec.tables if t.name in self.tables]

    def values(self) -> dict[str, Any]:
        """Figure name -> value (what code compares; the text is :meth:`Figure.text`)."""
        return {name: f.value for name, f in self.figures.items()}

    def figures_frame(self) -> pd.DataFrame:
        """The figures as a table (``--table figures``): figure, label, value (exact, as
        :meth:`Figure.plain`; null when unknown), currency, text (as shown), complete (the
        figure is exact and rests on nothing unknown), reason (why not) and means."""
        rows = [
            {
                "figure": f.name,
                "label": f.label,
                "value": f.plain(),
                "currency": f.currency,
                "text": f.text(),
                "complete": f.is_complete,
                "reason": f.why() or None,
                "means": f.spec.means,
            }
            for f in self.figures.values()
        ]
        columns = ["figure", "label", "value", "currency", "text", "complete", "reason", "means"]
        return pd.DataFrame(rows, columns=columns).astype(
            {
                "figure": "string",
                "label": "string",
                "text": "string",
                "complete": "boolean",
                "reason": "string",
                "means": "string",
            }
        )

    def heading(self) -> str:
        return f"{self.spec.title} as of {self.as_of:%Y-%m-%d %H:%M} UTC"

    # --- renderers --------------------------------------------------------------------------

    def figures_text(self) -> str:
        """The figures as "label: text" lines (the CLI's text format)."""
        pad = max((len(f.label) for f in self.figures.values()), default=0)
        lines = [f"{f.label.ljust(pad)}  {f.text()}" for f in self.figures.values()]
        lines += [f"Note: {n}" for n in self.notes]
        lines.append(self.completeness())
        return "\n".join(lines)

    def completeness(self) -> str:
        """One line: "Complete: yes", or "Complete: no" and the figures that are not."""
        partial = [f.label for f in self.figures.values() if not f.is_complete]
        if self.complete and not partial:
            return "Complete: yes"
        said = f" (not exact or unknown: {'; '.join(partial)})" if partial else " (see the notes)"
        return "Complete: no" + said

    def figures_html(self, *, style: str = "") -> str:
        """The figures as an HTML table (panels, notebook cells, demo pages): each label
        carries its sentence of what it counts as a tooltip."""
        rows = "".join(
            f"<tr><th title='{html.escape(f.spec.means, quote=True)}'>{html.escape(f.label)}"
            f"</th><td class='svcnb-figure' title='{html.escape(f.why(), quote=True)}' "
            f"data-complete='{str(f.is_complete).lower()}' "
            f"data-figure='{html.escape(f.name, quote=True)}'>"
            f"{html.escape(f.text())}</td></tr>"
            for f in self.figures.values()
        )
        notes = "".join(
            f"<p class='svcnb-note'>{html.escape(n)}</p>"
            for n in [*self.notes, self.completeness()]
        )
        return (
            f"<b>{html.escape(self.heading())}</b>{style}"
            f'<table class="svcnb-table svcnb-figures">{rows}</table>{notes}'
        )

    def text(self, width: int = 100, tables: Iterable[str] | None = None) -> str:
        """The view as plain text: heading, figures, then each table (those named, or all)."""
        wanted = None if tables is None else set(tables)
        parts = [self.heading(), self.figures_text()]
        for spec, frame in self.shown_tables():
            if wanted is not None and spec.name not in wanted:
                continue
            cols = list(spec.columns) if spec.columns else None
            title = self.title(spec.name)
            parts.append(f"{title}  [--table {spec.name}]\n{text_table(frame, width, cols)}")
        return "\n\n".join(parts) + "\n"

    def _repr_html_(self) -> str:
        parts = [self.figures_html()]
        for spec, frame in self.shown_tables():
            cols = list(spec.columns) if spec.columns else None
            shown = display_frame(frame, cols)
            parts.append(
                f"<h4>{html.escape(self.title(spec.name))}</h4>"
                + shown.to_html(index=False, classes="svcnb-table", border=0)
            )
        return "".join(parts)


def _bounded_by_left_out(f: Figure, count: int) -> Figure:
    """``f`` as far as it holds with ``count`` VMs left out (``FigureSpec.left_out``): a sum or
    count over the VMs svcnb knows is at least what it says, a first time is by when it says;
    one that counted nothing is unknown ("at least 0" says nothing). A figure already bounded
    or unknown keeps its words and gains the reason."""
    if not f.spec.left_out or f.complete is False:
        return f
    why = f"{count:,} VM(s) of unknown status or billing word left out"
    if f.qualifier or f._missing():
        return dataclasses.replace(f, complete=False, reason=f.reason or why)
    value = f.value
    if f.spec.left_out == "at least" and not isinstance(value, pd.Timestamp) and value == 0:
        return dataclasses.replace(f, value=None, detail="", complete=False, reason=why)
    return dataclasses.replace(f, qualifier=f.spec.left_out, complete=False, reason=why)


def view_of(
    spec: ViewSpec,
    as_of: pd.Timestamp,
    figures: Iterable[Figure],
    tables: Mapping[TableSpec, pd.DataFrame],
    plots: Mapping[PlotSpec, Callable[[Any], Any]] | None = None,
    *,
    options: dict[str, Any] | None = None,
    notes: list[str] | None = None,
    complete: bool = True,
    left_out: int | None = None,
) -> View:
    """The :class:`View` of ``spec``: its figures (in the spec's order), and its tables and plots
    keyed by their spec objects (a table or plot the report could not make this time is left
    out). A table or plot of another view is a ValueError."""
    for kind, given, declared in (
        ("table", tables, spec.tables),
        ("plot", plots or {}, spec.plots),
    ):
        stray = [s.name for s in given if not any(s is d for d in declared)]
        if stray:
            raise ValueError(f"{spec.report} view: undeclared {kind}s {stray}")
    return View(
        spec,
        as_of,
        {f.name: f for f in figures},
        {t.name: frame for t, frame in tables.items()},
        plots={p.name: draw for p, draw in (plots or {}).items()},
        options=options or {},
        notes=notes or [],
        complete=complete,
        left_out=left_out,
    )


def view_notes(inputs: Mapping[str, Any], results: Iterable[Any] = ()) -> list[str]:
    """The notes every view carries: each input frame the store holds as incomplete (a list
    nothing proved whole), named once; the values of each input svcnb could not read (what
    ``svcnb snapshot`` said of the same snapshot); and the ``note`` a result frame gives."""
    notes = []
    for name, frame in inputs.items():
        if isinstance(frame, pd.DataFrame) and frame.attrs.get("incomplete"):
            notes.append(
                f"{name} may be incomplete ({frame.attrs['incomplete']}): the figures count "
                "only what was read"
            )
    for name, frame in inputs.items():
        unread = frame.attrs.get("unreadable") if isinstance(frame, pd.DataFrame) else None
        if unread:
            counts = ", ".join(f"{column} {n:,}" for column, n in sorted(unread.items()))
            notes.append(f"{name}: values svcnb could not read (kept as NA): {counts}")
    for result in results:
        note = getattr(result, "attrs", {}).get("note")
        if note and note not in notes:
            notes.append(str(note))
    return notes
