"""How a panel shows itself when it is the last expression of a notebook cell."""

from __future__ import annotations

import base64
import html
import os
import weakref
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from svcnb.panels._messages import redact, shown_in
from svcnb.panels._render import STATIC_ENV, THEME_STYLE, Grid, PlotView, frame_html

__all__ = ["STATIC_ENV", "Displayed", "static_html"]

# Rows of a grid a static page shows; the live grid pages through the rest.
STATIC_ROWS = 25
# A panel's name as a page says it ("the what-if panel, as it stands after this cell").
_NAMES = {
    "AccountTabs": "account tabs",
    "BandwidthPanel": "bandwidth panel",
    "BillingPanel": "billing panel",
    "FirewallAuditPanel": "firewall audit panel",
    "RuleEditor": "rule editor",
    "VmPanel": "VM panel",
    "WebhooksPanel": "webhooks panel",
    "WhatIfPanel": "what-if panel",
}


class Displayed:
    """Mixin: display ``self.widget``, with a short, stable ``text/plain``.

    A widget's own ``text/plain`` repeats every child's value (times, action ids), which would
    make nbval's output comparison fail for no reason; the panel's name is all it needs to say.
    With ``SVCNB_STATIC_HTML=1`` the bundle also holds ``text/html``: the panel's text, tables
    and plots (PNG as data URIs) as displayed, for an offline page; and a later cell that
    changes the panel (a choice made from code, a button clicked) shows the panel again under
    its own output, as it then stands, so each block on the page agrees with the cell beside it.
    """

    widget: widgets.Widget
    # work held for the end of the cell that made the panel (see ``wait_for_display``)
    _later: dict[str, Callable[[], Any]] | None = None

    def wait_for_display(self) -> None:
        """Hold the work :meth:`after_display` is given until the notebook cell making the
        panel ends (IPython's ``post_execute``), after the cell has shown it. The page then
        builds the panel's views while the kernel draws its plots: at 10,000 VMs the billing
        panel's page spent a second making its views after the kernel had drawn every plot.
        Outside a cell (a panel made in a widget's callback: no cell end would come), outside
        IPython, and for pages rendered without a kernel, nothing is held."""
        shell = _shell()
        if shell is None or os.environ.get(STATIC_ENV) == "1":
            return
        if getattr(getattr(shell, "displayhook", None), "exec_result", None) is None:
            return  # IPython sets it while it runs a cell, and only then
        self._later = {}
        _WAITING.add(self)
        if shell not in _WAIT_HOOKED:
            shell.events.register("post_execute", _end_waiting)
            _WAIT_HOOKED.append(shell)

    def after_display(
        self, name: str, work: Callable[[], Any], later: Callable[[], Any] | None = None
    ) -> bool:
        """Run ``work`` now, or, while the panel waits to be shown, hold ``later`` (default
        ``work``) for the end of its cell: the one held last under ``name`` then runs, so it
        draws the panel as it stands. Whether it was held."""
        if self._later is None:
            work()
            return False
        self._later[name] = later or work
        return True

    def end_waiting(self) -> None:
        """Run the work held for the end of the cell, now; later work runs when given."""
        held, self._later = self._later or {}, None
        _WAITING.discard(self)
        status = getattr(self, "status", None)
        for work in held.values():
            if isinstance(status, widgets.HTML):
                with shown_in(status, "drawing the plots"):
                    work()
            else:
                work()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = f"<{type(self).__name__}: svcnb widget panel>"
        if os.environ.get(STATIC_ENV) == "1":
            page = static_html(self.widget)
            bundle["text/html"] = page
            _follow(self, page)
        return bundle


# Panels holding work until the end of the cell that made them, and the shell whose cells end
# it (once per kernel).
_WAITING: weakref.WeakSet[Displayed] = weakref.WeakSet()
_WAIT_HOOKED: list[Any] = []


def _shell() -> Any:
    """The running IPython shell, or None."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipywidgets needs IPython
        return None
    return get_ipython()


def _end_waiting(*_args: Any) -> None:
    for panel in list(_WAITING):
        panel.end_waiting()


# Panels shown on a static page, with the HTML the page last shows of each.
_SHOWN: weakref.WeakKeyDictionary[Displayed, str] = weakref.WeakKeyDictionary()
_HOOKED: list[Any] = []  # the IPython shell whose cells are followed (once per kernel)


def _follow(panel: Displayed, page: str) -> None:
    """Remember what the page shows of ``panel``; after each cell, show it again if it changed."""
    _SHOWN[panel] = page
    if _HOOKED:
        return
    shell = _shell()
    if shell is None:
        return
    shell.events.register("post_run_cell", _show_changed)
    _HOOKED.append(shell)


def _show_changed(*_args: Any) -> None:
    from IPython.display import display

    for panel, shown in list(_SHOWN.items()):
        page = static_html(panel.widget)
        if page == shown:
            continue
        _SHOWN[panel] = page
        name = _NAMES.get(type(panel).__name__, type(panel).__name__)
        note = (
            f'<p class="svcnb-static-note"><i>The {html.escape(name)}, as it stands after '
            "this cell:</i></p>"
        )
        display(
            {"text/html": note + page, "text/plain": f"<{type(panel).__name__}: as it now stands>"},
            raw=True,
        )


def static_html(widget: widgets.Widget) -> str:
    """What ``widget`` shows to a reader, as self-contained HTML (no scripts, no links).

    Controls (buttons, pickers, sliders) are left out: without a kernel they do nothing.
    """
    parts: list[str] = []
    _collect(widget, parts)
    # the panel's style once (its own widget for it is hidden, and left out below)
    return f'<div class="svcnb-static">{THEME_STYLE}' + "".join(parts) + "</div>"


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
                parts.append(frame_html(frame, limit=STATIC_ROWS, selected=w.selected_rows))
    elif isinstance(w, widgets.Label) and w.value.strip():
        parts.append(f"<p>{html.escape(redact(w.value))}</p>")
