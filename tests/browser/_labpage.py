"""A Playwright page on JupyterLab: open a notebook, run it, find widgets, spot widget errors.

JupyterLab runs with ``--LabApp.expose_app_in_browser``, so ``window.jupyterapp`` gives the
application: commands run cells and the notebook model tells which cells ran and what they put
out, which is sturdier than reading prompts off the screen.
"""

from __future__ import annotations

import re
import time
from typing import Any

# Console messages that mean a widget could not be built in the front end (a kernel/front-end
# version mismatch or a model that was never registered).
WIDGET_CONSOLE_ERRORS = re.compile(
    r"Failed to load model class|is registered|is not registered|Could not create a model"
    r"|Could not create view|Error displaying widget",
    re.IGNORECASE,
)
WIDGET_ERROR_TEXT = "Error displaying widget"
WIDGET_ERROR_SELECTOR = ".jupyter-widgets-error-widget"

_KERNEL_READY_JS = """
(name) => {
  const app = window.jupyterapp;
  const w = app && app.shell.currentWidget;
  if (!w || !w.context || !w.context.path.endsWith(name)) return false;
  const s = w.sessionContext && w.sessionContext.session;
  const k = s && s.kernel;
  return !!(k && k.connectionStatus === 'connected' && k.status === 'idle'
            && w.content && w.content.widgets.length > 0);
}
"""

_SWITCH_JS = """
async (name) => {
  const app = window.jupyterapp;
  for (const w of Array.from(app.shell.widgets('main'))) {
    if (w.context && w.context.model) w.context.model.dirty = false;
    // its kernel too: a panel's timers must not run on beside the next test
    if (w.sessionContext) await w.sessionContext.shutdown();
    w.dispose();
  }
  app.shell.expandLeft();
  await app.commands.execute('docmanager:open', {path: name});
}
"""

_THEME_JS = """
async (name) => {
  await window.jupyterapp.commands.execute('apputils:change-theme', {theme: name});
}
"""

_THEME_APPLIED_JS = """
(name) => document.body.dataset.jpThemeName === name
  && document.body.dataset.jpThemeLight === String(name.includes('Light'))
"""

_RUN_ALL_JS = """
async (ms) => {
  const app = window.jupyterapp;
  const run = app.commands.execute('notebook:run-all-cells');
  const timer = new Promise((_, reject) =>
    setTimeout(() => reject(new Error('cells still running after ' + ms + ' ms')), ms));
  return await Promise.race([run, timer]);
}
"""

_CELLS_JS = """
() => {
  const m = window.jupyterapp.shell.currentWidget.content.model;
  const cells = [];
  for (let i = 0; i < m.cells.length; i++) cells.push(m.cells.get(i).toJSON());
  return cells;
}
"""

_KERNEL_IDLE_JS = """
() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!(k && k.status === 'idle');
}
"""


class LabPage:
    """One browser page on a JupyterLab server."""

    def __init__(self, page: Any, base_url: str) -> None:
        self.page = page
        self.base_url = base_url.rstrip("/")
        self.console: list[str] = []
        page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}"))
        page.on("pageerror", lambda exc: self.console.append(f"pageerror: {exc}"))

    def open(self, name: str, timeout: float = 120.0) -> None:
        """Open ``name`` (relative to the server's root) alone and wait for its kernel to be idle.

        The first open loads JupyterLab; later ones close what is open (its changes unsaved, its
        kernel shut down, the file browser shown again, as after a load) and open ``name`` in the
        same application: a load costs the browser a few seconds of CPU, the switch a fraction of
        one (the browser tests took 51 s of the machine's CPU, against 70 s with a load each)."""
        self.console.clear()
        if self.page.url.startswith(f"{self.base_url}/lab"):
            self.page.evaluate(_SWITCH_JS, name)
        else:
            self.page.goto(f"{self.base_url}/lab/tree/{name}?reset", wait_until="domcontentloaded")
        self.page.wait_for_function(_KERNEL_READY_JS, arg=name, timeout=timeout * 1000, polling=250)

    def set_theme(self, name: str) -> None:
        """Switch JupyterLab to theme ``name`` ("JupyterLab Dark") and wait until the page
        wears it. The theme is a user setting saved on the server: the tests that change it
        put the light one back, which the next test (sharing this page) expects."""
        self.page.evaluate(_THEME_JS, name)
        self.page.wait_for_function(_THEME_APPLIED_JS, arg=name, timeout=30_000)

    def run_all(self, timeout: float = 300.0) -> None:
        """Run every cell, wait until the last has finished, and fail on any error output."""
        finished = self.page.evaluate(_RUN_ALL_JS, int(timeout * 1000))
        self.wait_idle(timeout)
        errors = self.cell_errors()
        assert not errors, "cells failed in the browser:\n" + "\n\n".join(errors)
        assert finished is not False, "JupyterLab stopped running cells before the end"
        unrun = [
            i
            for i, c in enumerate(self.cells())
            if c["cell_type"] == "code" and c["source"].strip() and c.get("execution_count") is None
        ]
        assert not unrun, f"code cells {unrun} never ran"

    def wait_idle(self, timeout: float = 60.0) -> None:
        self.page.wait_for_function(_KERNEL_IDLE_JS, timeout=timeout * 1000, polling=250)

    def cells(self) -> list[dict[str, Any]]:
        """The open notebook's cells as nbformat dicts, outputs included."""
        return self.page.evaluate(_CELLS_JS)

    def cell_errors(self) -> list[str]:
        """Each error output (and each stderr traceback) of the open notebook, as text."""
        found = []
        for index, cell in enumerate(self.cells()):
            for out in cell.get("outputs") or []:
                if out.get("output_type") == "error":
                    tb = "\n".join(out.get("traceback") or [])
                    tb = re.sub(r"\x1b\[[0-9;]*m", "", tb)
                    found.append(f"cell {index}: {out.get('ename')}: {out.get('evalue')}\n{tb}")
                elif out.get("name") == "stderr" and "Traceback" in "".join(out.get("text", "")):
                    found.append(f"cell {index} stderr:\n{''.join(out.get('text', ''))}")
        return found

    def widget_errors(self) -> list[str]:
        """Signs that a widget failed to display: error views, their text, console messages."""
        found = []
        views = self.page.locator(WIDGET_ERROR_SELECTOR).count()
        if views:
            found.append(f"{views} widget error view(s) ({WIDGET_ERROR_SELECTOR})")
        if self.page.get_by_text(WIDGET_ERROR_TEXT).count():
            found.append(f"the page shows {WIDGET_ERROR_TEXT!r}")
        found += [line for line in self.console if WIDGET_CONSOLE_ERRORS.search(line)]
        return found

    def assert_no_widget_errors(self) -> None:
        errors = self.widget_errors()
        assert not errors, "widget errors in the browser:\n" + "\n".join(errors)

    def button(self, text: str, scope: Any = None) -> Any:
        """The one visible widget button labelled ``text`` (within ``scope`` when given)."""
        root = scope if scope is not None else self.page
        pattern = re.compile(rf"^\s*{re.escape(text)}\s*$")
        return root.locator("button.widget-button").filter(has_text=pattern)

    def wait_for_text(self, pattern: str | re.Pattern[str], timeout: float = 60.0) -> str:
        """Wait until some widget HTML or label shows ``pattern``; return that element's text."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while time.monotonic() < deadline:
            seen = self.page.locator(
                ".widget-html-content, .widget-label, .jp-OutputArea-output pre"
            ).all_inner_texts()
            for text in seen:
                if regex.search(text):
                    return text
            self.page.wait_for_timeout(250)
        shown = "\n---\n".join(t for t in seen if t.strip())[-3000:]
        raise AssertionError(
            f"no widget text matched {regex.pattern!r} in {timeout:.0f} s; "
            f"the page showed:\n{shown}"
        )
