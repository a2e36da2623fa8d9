"""Report frames as people read them: human column labels and formatted cells.

One helper for every place that shows a frame (panel grids, ``svcnb report`` text tables, the
demo pages): money with its currency and thousands separators, bytes in GiB, shares in percent,
days as whole days, times in UTC, yes/no for flags, blanks for missing values. The frames users
get from the reports keep their snake_case columns and exact values; only the copy shown changes.
"""

from __future__ import annotations

import functools
import math
import textwrap
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from svcnb.money import money_text
from svcnb.reports._columns import VALUES, currency_of, value_label
from svcnb.reports._columns import column as column_info

GIB = 1024**3


def label(column: str) -> str:
    """The header shown for ``column`` (``region_slug`` -> ``Region``), from the column table."""
    return column_info(str(column)).label


def kind(column: str) -> str:
    """The kind of ``column`` in the column table (``svcnb.reports._columns``)."""
    return column_info(str(column)).kind


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def cell_text(column: str, value: Any, currency: Any = None) -> str:
    """One cell of ``column`` as text, by the column's kind (see module docstring)."""
    if isinstance(value, list | tuple | np.ndarray):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        # fields of a record (a rule's before and after): "name: value", never Python's repr
        return "; ".join(f"{k}: {cell_text(str(k), v)}" for k, v in value.items())
    if _missing(value):
        return ""
    return kind_text(kind(column), value, currency)


def kind_text(kind: str, value: Any, currency: Any = None) -> str:
    """A value of ``kind`` (a kind of ``svcnb.reports._columns``) as text; ``""`` when missing.

    The one formatter of every cell and every headline figure.
    """
    if isinstance(value, list | tuple | np.ndarray):
        return ", ".join(str(v) for v in value)
    if _missing(value):
        return ""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if kind == "money":
        return money_text(value, currency)
    if isinstance(value, pd.Timestamp):
        value = value.tz_convert("UTC") if value.tzinfo else value
        return f"{value:{_time_format(kind)}}"
    if isinstance(value, pd.Timedelta):
        return f"{value / pd.Timedelta(days=1):,.1f} days"
    integer = isinstance(value, int | np.integer)
    if kind in _SCALED or integer or isinstance(value, float | np.floating):
        return _figure_text(kind, integer)(value)
    return str(value)


# kinds whose figures are scaled or cut whatever their type: bytes in GiB, shares in percent
_SCALED = ("bytes", "bytes_per_day", "share", "days")


def _figure_text(kind: str, integer: bool) -> Callable[[Any], str]:
    """How :func:`kind_text` writes a figure of ``kind`` (neither money, a flag nor missing):
    ``integer`` when it is an int. Chosen once per column by :func:`_column_text`, which
    writes a column of numbers with it, cell by cell, with no test of each cell's type."""
    if kind == "bytes" or kind == "bytes_per_day":
        return lambda value: f"{float(value) / GIB:,.1f}"
    if kind == "share":
        return lambda value: f"{float(value) * 100:,.0f} %"
    if kind == "days":
        # whole days: a runway of 1.9 days is "1" day left in full, not a rounded-up 2
        return lambda value: f"{math.floor(float(value)):,d}"
    if integer:
        return lambda value: f"{int(value):,d}"
    return functools.partial(_float_text, kind == "count")


def _float_text(count: bool, value: Any) -> str:
    if count and float(value).is_integer():
        return f"{int(value):,d}"
    return f"{float(value):,.2f}" if abs(float(value)) < 1e15 else f"{value:.3g}"


def day_text(value: pd.Timestamp) -> str:
    """A ``date`` value as every surface writes it, text, CSV and JSON alike: its UTC day
    (``2026-11-17``), never a midnight that reads as a time."""
    return f"{value.tz_convert('UTC') if value.tzinfo else value:{_time_format('date')}}"


def _time_format(kind: str) -> str:
    """How a time of ``kind`` is written, in UTC: a month, a day, else to the minute."""
    return {"month": "%Y-%m", "date": "%Y-%m-%d"}.get(kind, "%Y-%m-%d %H:%M")


def display_frame(frame: pd.DataFrame, columns: list[str] | None = None) -> pd.DataFrame:
    """A copy of ``frame`` for reading: ``columns`` (those present) as text under human labels.

    A ``currency`` column is left out when every money column beside it shows its currency.
    Codes read as words (``VALUES`` of the column table: a firewall check). The copy's
    ``attrs["kinds"]`` maps each label to its column's kind, so a table can align figures.
    """
    # without its attrs (a report's notes, lists of ids): pandas deep-copies them into every
    # column and frame taken from it, a fifth of the grids' time at a slider move
    frame = frame.copy(deep=False)
    frame.attrs = {}
    money = {c: currency_of(frame, c) for c in frame.columns if kind(str(c)) == "money"}
    # a figure with a ``<column>_bound`` beside it reads "≥ 10", "≤ 40" or "unknown"
    bounds = {str(c): frame[f"{c}_bound"].tolist() for c in frame.columns if f"{c}_bound" in frame}
    # the columns shown, named rather than taken as a new frame (pandas' selecting and
    # dropping cost as much as writing the cells of a small table)
    names = list(frame.columns) if columns is None else [c for c in columns if c in frame]
    if "currency" in names and any(c in money for c in names):
        names = [c for c in names if c != "currency"]
    unstated = pd.Series(None, index=frame.index)  # the currency beside a column of no money
    out = {}
    for column in names:
        if str(column) in bounds:
            values = frame[column].tolist()
            units = money.get(column, unstated).tolist()
            out[label(str(column))] = [
                _bounded(str(column), v, b, c)
                for v, b, c in zip(values, bounds[str(column)], units, strict=True)
            ]
            continue
        currencies = money.get(column, unstated)
        texts = _column_text(str(column), frame[column], currencies)
        if str(column) in VALUES:
            texts = [value_label(str(column), t) for t in texts]
        out[label(str(column))] = texts
    shown = pd.DataFrame(out, index=range(len(frame)), columns=list(out) or None)
    shown.attrs["kinds"] = {label(str(c)): kind(str(c)) for c in names}
    return shown


def _plain(column: str) -> bool:
    """Whether :func:`cell_text` shows a text value of ``column`` as it is."""
    return kind(column) in ("text", "count", "number")


def _column_text(column: str, values: pd.Series, currencies: pd.Series) -> list[str]:
    """:func:`cell_text` of every cell of a column; each distinct (value, currency) formatted
    once (ids and names are text shown as they are; statuses, plans, prices and dates repeat)."""
    if isinstance(values.dtype, pd.StringDtype) and _plain(column):
        return [v if isinstance(v, str) else "" for v in values.tolist()]
    if pd.api.types.is_datetime64_any_dtype(values.dtype) and kind(column) != "money":
        # times as cell_text writes a Timestamp: UTC, to the minute, day or month of its
        # kind; NaT blank
        utc = values.dt.tz_convert("UTC") if values.dt.tz is not None else values
        return utc.dt.strftime(_time_format(kind(column))).fillna("").tolist()
    if values.dtype.kind in "iuf" and kind(column) != "money":
        # a column of numbers (no flags): each cell a Python int or float, or missing (None,
        # NA, NaN); the bandwidth tables' bytes are almost all distinct, so the memo below
        # only added its keys to cell_text's per-cell tests (0.3 s of a slider move)
        write = _figure_text(kind(column), values.dtype.kind in "iu")
        return [
            "" if v is None or v is pd.NA or v != v else write(v)  # v != v: NaN
            for v in values.tolist()
        ]
    done: dict[tuple[Any, ...], str] = {}
    out = []
    for v, c in zip(values.tolist(), currencies.tolist(), strict=True):
        key = _cell_key(v, c)
        if key is None:
            out.append(cell_text(column, v, c))
            continue
        text = done.get(key)
        if text is None:
            text = done[key] = cell_text(column, v, c)
        out.append(text)
    return out


_KEYED = (str, int, float, bool, np.bool_, np.integer, np.floating, pd.Timestamp, pd.Timedelta)


def _cell_key(value: Any, currency: Any) -> tuple[Any, ...] | None:
    """A key equal only for cells :func:`cell_text` shows alike, or None (format it alone)."""
    if not (isinstance(currency, str) or currency is None or currency is pd.NA):
        return None
    if isinstance(value, Decimal):
        return (Decimal, str(value), type(currency), currency)  # 1.0 and 1.00 print apart
    if not isinstance(value, _KEYED) or (isinstance(value, float | np.floating) and value == 0):
        return None  # lists, signed zeros, NA
    return (type(value), value, type(currency), currency)


_BOUND_SIGNS = {"at least": "≥ ", "at most": "≤ "}


def _bounded(column: str, value: Any, bound: Any, currency: Any = None) -> str:
    """A figure whose ``_bound`` column says how far it holds: ``≥ 10``, ``≤ 40``, ``unknown``
    (money with its ``currency``)."""
    word = "" if _missing(bound) else str(bound)
    if word == "unknown" or (_missing(value) and word):
        return "unknown"
    return _BOUND_SIGNS.get(word, "") + cell_text(column, value, currency)


# Columns whose text wraps first when a table is too wide (free text, then lists of names).
_WRAP_FIRST = ("detail", "reason", "why", "message", "description", "unpaid_then", "fix")
_GAP = "  "
_WRAPS = ("text", "list")
_MIN_WRAP = 6


def text_table(
    frame: pd.DataFrame, width: int = 100, columns: list[str] | None = None, missing: str = ""
) -> str:
    """``frame`` as a plain-text table no wider than ``width``; nothing is ever cut.

    ``missing``: what a cell with no value says (blank by default; a notebook names what is
    missing, "unknown" or "not seen", where a blank would be read as nothing).

    Cells are formatted as :func:`display_frame` does (``columns``: those shown, all when None;
    a figure's ``*_bound`` column still marks it when not shown). When the table is too wide
    the free-text columns wrap first (reason, detail, ...), then the other wide text columns;
    a figure, a date or a time never wraps (its second half on another line reads as another
    value); when it still does not fit, each row is printed as a block of "label: value" lines.
    """
    if frame.empty:
        return "(none)"
    shown = display_frame(frame, columns)
    if columns is not None:
        frame = frame[[c for c in columns if c in frame.columns]]
    headers = list(shown.columns)
    # the columns shown, in the order shown (display_frame may leave a currency column out)
    frame = frame[[c for c in frame.columns if label(str(c)) in set(headers)]]
    cells = [[str(v) or missing for v in shown[h]] for h in headers]
    widths = [max([len(h)] + [len(c) for c in col]) for h, col in zip(headers, cells, strict=True)]
    # by label: the shown frame may have left the currency column out
    order = [headers.index(label(name)) for name in _WRAP_FIRST if label(name) in headers]
    order += sorted((i for i in range(len(headers)) if i not in order), key=lambda i: -widths[i])
    # only text wraps: money, counts, bytes, shares, days, times, dates and flags stay whole
    kinds = shown.attrs.get("kinds", {})
    order = [i for i in order if kinds.get(headers[i], "text") in _WRAPS]

    def total() -> int:
        return sum(widths) + len(_GAP) * (len(widths) - 1)

    for i in order:
        if total() <= width:
            break
        words = [w for c in [headers[i], *cells[i]] for w in c.split()]
        floor = max(_MIN_WRAP, min(max((len(w) for w in words), default=0), 24))
        widths[i] = max(floor, widths[i] - (total() - width))
    if total() > width:
        return _records(headers, cells, width)

    def row(texts: list[str]) -> list[str]:
        wrapped = [
            textwrap.wrap(t, widths[i], break_on_hyphens=False) or [""] for i, t in enumerate(texts)
        ]
        return [
            _GAP.join(
                (w[k] if k < len(w) else "").ljust(widths[i]) for i, w in enumerate(wrapped)
            ).rstrip()
            for k in range(max(len(w) for w in wrapped))
        ]

    lines = row(headers)
    lines.append(_GAP.join("-" * w for w in widths))
    for r in range(len(shown)):
        lines.extend(row([cells[i][r] for i in range(len(headers))]))
    return "\n".join(lines)


def _records(headers: list[str], cells: list[list[str]], width: int) -> str:
    pad = max(len(h) for h in headers)
    blocks = []
    for r in range(len(cells[0])):
        lines = []
        for h, col in zip(headers, cells, strict=True):
            body = textwrap.wrap(col[r], max(20, width - pad - 2)) or [""]
            lines.append(f"{h.ljust(pad)}  {body[0]}")
            lines.extend(" " * (pad + 2) + more for more in body[1:])
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
