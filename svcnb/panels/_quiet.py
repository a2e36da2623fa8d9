"""Setting a widget from code without running the handler meant for the user's changes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import ipywidgets as widgets


@contextmanager
def quietly(
    widget: widgets.Widget, handler: Callable[..., Any], names: str = "value"
) -> Iterator[None]:
    """Detach ``handler`` from ``widget``'s trait ``names`` (``value``; a grid's
    ``selected_rows``) for the block, then attach it again.

    A panel refilling a picker's options moves its value; that is not the user choosing, so the
    handler must not run. It is attached again even when the block raises, so the widget never
    stays deaf after an error.
    """
    widget.unobserve(handler, names=names)
    try:
        yield
    finally:
        widget.observe(handler, names=names)
