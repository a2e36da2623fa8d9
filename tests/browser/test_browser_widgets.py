"""The front end and the kernel agree on ipywidgets: a widget renders and its button reaches Python.

This is the failure users meet first ("Error displaying widget" after an upgrade of one side), and
it is checked apart from the panels so that a panel bug and a broken widget setup are told apart.
"""

from __future__ import annotations

import json
from pathlib import Path

SMOKE = "widgets_roundtrip.ipynb"

_CELLS = [
    "import ipywidgets as widgets\n"
    "clicks = widgets.IntText(value=0, description='clicks')\n"
    "button = widgets.Button(description='Count')\n"
    "shown = widgets.HTML('none yet')\n"
    "def on_click(_):\n"
    "    clicks.value += 1\n"
    "    shown.value = f'kernel saw {clicks.value} click(s)'\n"
    "button.on_click(on_click)\n"
    "widgets.VBox([button, clicks, shown])",
]


def _write_notebook(path: Path, cells: list[str]) -> None:
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"c{i}",
                "metadata": {},
                "outputs": [],
                "source": src,
            }
            for i, src in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")


def test_a_widget_button_round_trips_through_the_kernel(lab, lab_root: Path) -> None:
    _write_notebook(lab_root / SMOKE, _CELLS)
    lab.open(SMOKE)
    lab.run_all(timeout=120)

    button = lab.button("Count")
    button.wait_for(state="visible", timeout=30_000)
    lab.assert_no_widget_errors()

    button.click()
    button.click()
    assert "kernel saw 2 click(s)" in lab.wait_for_text(r"kernel saw 2 click", timeout=30)
    lab.assert_no_widget_errors()


BROKEN = "widgets_unregistered.ipynb"

_BROKEN_CELLS = [
    "import ipywidgets as widgets\n"
    "from traitlets import Unicode\n"
    "class Orphan(widgets.DOMWidget):\n"
    "    # a model the front end has never heard of: what a version mismatch looks like\n"
    "    _model_module = Unicode('svcnb-no-such-widgets').tag(sync=True)\n"
    "    _model_module_version = Unicode('^9.9.9').tag(sync=True)\n"
    "    _model_name = Unicode('OrphanModel').tag(sync=True)\n"
    "    _view_module = Unicode('svcnb-no-such-widgets').tag(sync=True)\n"
    "    _view_module_version = Unicode('^9.9.9').tag(sync=True)\n"
    "    _view_name = Unicode('OrphanView').tag(sync=True)\n"
    "Orphan()",
]


def test_the_harness_sees_a_widget_the_front_end_cannot_build(lab, lab_root: Path) -> None:
    # Proves the check the panel tests rely on: a broken widget is reported, not ignored.
    _write_notebook(lab_root / BROKEN, _BROKEN_CELLS)
    lab.open(BROKEN)
    lab.run_all(timeout=120)
    for _ in range(120):  # the front end gives up on the model asynchronously
        if lab.widget_errors():
            break
        lab.page.wait_for_timeout(250)
    assert lab.widget_errors(), "an unregistered widget model went unnoticed"
