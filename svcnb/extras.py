"""Which optional extra a feature needs, and the one line a command says when it is missing
(README, "Install"). pyproject.toml lists the extra's packages; :data:`LAB_MODULES` names the
modules each feature imports from them, so a command names what is missing instead of failing
on an import.
"""

from __future__ import annotations

import importlib.util
import sys

LAB_INSTALL = "pip install 'svcnb[lab]'"

# The modules each command needs from the lab extra. The notebooks import the panels
# (ipywidgets, itables) and the webhooks notebook trustme; their kernel is ipykernel.
_NOTEBOOKS = ("ipykernel", "ipywidgets", "itables", "anywidget", "trustme")
LAB_MODULES = {
    "svcnb lab": ("jupyterlab", *_NOTEBOOKS),
    "svcnb demo": ("nbformat", "nbclient", "nbconvert", *_NOTEBOOKS),
    "svcnb.panels": ("ipywidgets", "itables", "anywidget"),
}


def missing(modules: tuple[str, ...]) -> list[str]:
    """The top-level modules of ``modules`` that cannot be imported here (not installed, or
    blocked with ``sys.modules[name] = None``)."""
    return [name for name in modules if not _importable(name)]


def _importable(name: str) -> bool:
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def lab_needed(what: str) -> str | None:
    """One line saying ``what`` needs the lab extra and how to install it; None when every
    module it needs is installed."""
    gone = missing(LAB_MODULES[what])
    if not gone:
        return None
    return (
        f"{what} needs the lab extra: {LAB_INSTALL} "
        f"({', '.join(gone)} {'is' if len(gone) == 1 else 'are'} not installed)"
    )
