"""How a panel shows itself when it is the last expression of a notebook cell."""

from __future__ import annotations

import base64
import html
import os
from typing import Any

import ipywidgets as widgets

from svcnb.panels._messages import redact
from svcnb.panels._render import STATIC_ENV, THEME_STYLE, Grid, PlotView

__all__ = ["STATIC_ENV", "Displayed", "static_html"]


class Displayed:
    """Mixin: display ``self.widget``, with a short, stable ``text/plain``.

    A widget's own ``text/plain`` repeats every child's value (times, action ids), which would
    make nbval's output comparison fail for no reason; the panel's name is all it needs to say.
    With ``SVCNB_STATIC_HTML=1`` the bundle also holds ``text/html``: the panel's text, tables
    and plots (PNG as data URIs) as displayed, for an offline page.
    """

    widget: widgets.Widget

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = f"<{type(self).__name__}: svcnb widget panel>"
        if os.environ.get(STATIC_ENV) == "1":
            bundle["text/html"] = static_html(self.widget)
        return bundle


def static_html(widget: widgets.Widget) -> str:
    """What ``widget`` shows to a reader, as self-contained HTML (no scripts, no links).

    Controls (buttons, pickers, sliders) are left out: without a kernel they do nothing.
    """
    parts: list[str] = []
    _collect(widget, parts)
    return '<div class="svcnb-static">' + "".join(parts) + "</div>"


def _collect(w: widgets.Widget, parts: list[str]) -> None:
    layout = getattr(w, "layout", None)
    if layout is not None and getattr(layout, "display", None) == "none":
        return
    if isinstance(w, widgets.Tab):
        # one panel per account: each under its account's name, never merged
        for index, child in enumerate(w.children):
            title = w.titles[index] if index < len(w.titles) else str(index + 1)
            parts.append(f"<h3>{html.escape(str(title))}</h3>")
            _collect(child, parts)
    elif isinstance(w, widgets.Box):
        for child in w.children:
            _collect(child, parts)
    elif isinstance(w, PlotView):
        # a page without a kernel may be mailed: PNG, which every reader shows
        if w.png:
            data = base64.b64encode(w.png).decode("ascii")
            parts.append(f'<p><img alt="plot" src="data:image/png;base64,{data}"></p>')
        elif w.svg:
            parts.append(f"<div>{w.svg}</div>")
    elif isinstance(w, widgets.HTML):
        if w.value.strip():
            parts.append(f"<div>{redact(w.value)}</div>")
    elif isinstance(w, widgets.Image):
        if w.value:
            data = base64.b64encode(bytes(w.value)).decode("ascii")
            parts.append(f'<p><img alt="plot" src="data:image/{w.format};base64,{data}"></p>')
    elif isinstance(w, Grid):
        frame = getattr(w, "_df", None)
        if frame is not None and len(frame.columns):
            if frame.empty:
                parts.append("<p><i>Nothing to show.</i></p>")
            else:
                # the grid's frame already holds labels and formatted text
                table = frame.to_html(index=False, escape=True, classes="svcnb-table")
                # the panels' table style: text flush left, as in the live grid
                parts.append(THEME_STYLE + table)
    elif isinstance(w, widgets.Label) and w.value.strip():
        parts.append(f"<p>{html.escape(redact(w.value))}</p>")
