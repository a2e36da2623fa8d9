"""How a panel shows itself when it is the last expression of a notebook cell."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets


class Displayed:
    """Mixin: display ``self.widget``, with a short, stable ``text/plain``.

    A widget's own ``text/plain`` repeats every child's value (times, action ids), which would
    make nbval's output comparison fail for no reason; the panel's name is all it needs to say.
    """

    widget: widgets.Widget

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = f"<{type(self).__name__}: svcnb widget panel>"
        return bundle
