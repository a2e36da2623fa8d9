"""A panel's widgets as a user meets them: every widget in its tree."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def descendants(widget: Any) -> Iterator[Any]:
    """``widget`` and every widget inside it, depth first."""
    yield widget
    for child in getattr(widget, "children", ()):
        yield from descendants(child)
