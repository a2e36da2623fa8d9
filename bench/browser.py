"""Benchmark of the panels as a user meets them: JupyterLab in headless Chromium, click to the
panel standing still (run by ``make bench``).

Setup per size N: the store of ``bench/panels.py`` (N VMs, 30 daily snapshots, cached under
``$SVCNB_BENCH_CACHE``), a notebook written to a temporary folder with one cell per store panel
(billing, what-if, bandwidth, firewall audit, webhooks), JupyterLab on a free loopback port and
Debian's Chromium (``scripts/install-browser.sh``) driven by Playwright, as tests/browser does.
The VM panel is not here: it reads a live service, not a store.

What is timed: from the user's input event in the page (pointerdown, keydown, input, change,
caught before any handler of the page's own) to the last change of the panel's DOM (a
MutationObserver on the notebook and every shadow root in it, the grids' included; not the
slider's own mark of a click on its track, which noUiSlider takes off 300 ms later whatever the
panel does), once that DOM has been still for ``QUIET`` s and the kernel is idle. A first
render runs the panel's cell and times from the run command to the same stillness. Each control
is used several times (slider: three snapshots, then back and forth between the two the panel
keeps; dropdowns: each other option; rows: three; ...): median and worst.
Beside each figure: the kernel's messages to the page in that time (count and kB), which is
where a slow control's time goes when it is not the kernel's computing. After each as-of
slider: the same three moves made in the bench's own process without a browser, each right
after the browser's (the kernel alone, at the machine's pace of that moment), and how many
times that the browser's figure is.

Targets (the issue's): every control's median <= 0.5 s at 1,000 VMs and <= 1.5 s at 10,000;
the first render <= 2 s at 10,000. PASS/FAIL per figure; exit 1 on any FAIL. Timing is printed,
never asserted in tests. ``python bench/browser.py`` runs 1,000 and 10,000 VMs;
``python bench/browser.py 1000 --panels billing`` runs a part.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests"), str(ROOT / "tests" / "browser")]
import httpx  # noqa: E402
from _labpage import LabPage  # noqa: E402
from _loopback import wait_for_http  # noqa: E402
from panels import Took as KernelTook  # noqa: E402
from panels import store_for, timed  # noqa: E402

from svcnb.jupyter.lab import lab_command  # noqa: E402
from svcnb.webhooks import free_port  # noqa: E402

PANELS = ("billing", "whatif", "bandwidth", "audit", "webhooks")
TARGET = {1000: 0.5, 10000: 1.5}  # a control's median, s
FIRST_TARGET = {10000: 2.0}  # a first render, s
QUIET = 0.6  # s of a still DOM (and an idle kernel) that mean the panel has settled
_SHELL, _FULL = Path("/usr/bin/chromium-headless-shell"), Path("/usr/bin/chromium")
CHROMIUM = Path(os.environ.get("SVCNB_CHROMIUM") or (_SHELL if _SHELL.exists() else _FULL))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

_SETUP = """\
import json, warnings
warnings.simplefilter("ignore")
from svcnb.store import Store
from svcnb.panels import {classes}
store = Store({store!r})
OUT = {out!r}
"""
# each panel's class in svcnb.panels; the as-of panels (a slider over the store's snapshots)
# also write CSV to OUT
_CLASSES = {
    "billing": "BillingPanel",
    "whatif": "WhatIfPanel",
    "bandwidth": "BandwidthPanel",
    "audit": "FirewallAuditPanel",
    "webhooks": "WebhooksPanel",
}
_AS_OF = ("billing", "whatif", "bandwidth")
_CELLS = {
    name: f"{name} = {cls}(store{', export_dir=OUT' if name in _AS_OF else ''})\n{name}"
    for name, cls in _CLASSES.items()
}
# each panel's root element: svcnb names it after the panel (CSS svcnb-NAME-panel)
_ROOTS = {name: f".svcnb-{name}-panel" for name in _CLASSES}

# Installs the recorder: the first input event after arming is t0 (capture phase on window, so
# before the page's handlers); every DOM change in the notebook or a shadow root under it moves
# `last`; the kernel's status changes are kept. `start` (a number) arms with t0 set already.
_ARM_JS = """
(start) => {
  const app = window.jupyterapp, w = app.shell.currentWidget;
  const old = window.__bench;
  if (old) { old.obs.disconnect(); old.unhook(); }
  const b = {t0: start ? performance.now() : null, last: null, muts: 0, seen: new WeakSet(),
             kchange: null, kernel: w.sessionContext.session.kernel};
  // the slider's own track marks a click on it for 300 ms (noUiSlider's tap class), whatever
  // the panel does: a change of the page, not of the panel's answer
  const tap = (r) => r.type === 'attributes' && r.attributeName === 'class'
    && r.target.classList && r.target.classList.contains('noUi-target');
  b.obs = new MutationObserver((records) => {
    if (b.t0 === null) return;
    const answer = records.filter((r) => !tap(r));
    if (!answer.length) return;
    b.muts += answer.length; b.last = performance.now();
  });
  b.scan = (root) => {
    if (!b.seen.has(root)) { b.seen.add(root);
      b.obs.observe(root,
        {subtree: true, childList: true, attributes: true, characterData: true}); }
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) b.scan(el.shadowRoot);
  };
  b.root = w.content.node;
  b.scan(b.root);
  const onInput = () => { if (b.t0 === null) b.t0 = performance.now(); };
  const kinds = ['pointerdown', 'mousedown', 'keydown', 'input', 'change'];
  for (const k of kinds) window.addEventListener(k, onInput, true);
  const onStatus = () => { b.kchange = performance.now(); };
  b.kernel.statusChanged.connect(onStatus);
  b.unhook = () => {
    for (const k of kinds) window.removeEventListener(k, onInput, true);
    b.kernel.statusChanged.disconnect(onStatus);
  };
  window.__bench = b;
}
"""

# Resolves once the panel has settled: input seen, DOM still for `quiet` ms, kernel idle and
# its last status change `quiet` ms ago. Gives ms from t0 to the last DOM change.
_SETTLED_JS = """
async ([quiet, timeout]) => {
  const b = window.__bench, begun = performance.now();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // new shadow roots are looked for every 500 ms: a walk of the notebook's every element each
  // 50 ms would itself cost the page CPU time
  for (let polls = 1; ; polls++) {
    await sleep(50);
    if (polls % 10 === 0) b.scan(b.root);
    const now = performance.now();
    if (now - begun > timeout) return {timeout: true, ms: null, muts: b.muts};
    if (b.t0 === null) continue;
    const still = Math.max(b.last ?? b.t0, b.kchange ?? 0, b.t0);
    if (b.kernel.status === 'idle' && now - still >= quiet) {
      // an answer that changed nothing (the same message again) ends when the kernel is idle
      const ms = b.muts ? b.last - b.t0 : (b.kchange ?? b.t0) - b.t0;
      b.obs.disconnect(); b.unhook();
      return {timeout: false, ms, muts: b.muts, kernel: b.kchange !== null};
    }
  }
}
"""

_RUN_CELL_JS = """
(index) => {
  const w = window.jupyterapp.shell.currentWidget;
  w.content.activeCellIndex = index;
  window.__bench.t0 = performance.now();
  return window.jupyterapp.commands.execute('notebook:run-cell');
}
"""


class Figure:
    """One control's timings (s) and the kernel messages (count, bytes) each use brought."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.messages: list[int] = []
        self.kb: list[float] = []
        self.page_cpu: list[float] = []
        self.kernel_cpu: list[float] = []

    def add(self, took: Took) -> None:
        self.seconds.append(took.seconds)
        self.messages.append(took.messages)
        self.kb.append(took.nbytes / 1024)
        self.page_cpu.append(took.page_cpu)
        self.kernel_cpu.append(took.kernel_cpu)

    def text(self) -> str:
        med, worst = statistics.median(self.seconds), max(self.seconds)
        return (
            f"median {med:5.2f} s  worst {worst:5.2f} s  (n={len(self.seconds)}; "
            f"{statistics.median(self.messages):.0f} msgs, {statistics.median(self.kb):,.0f} kB; "
            f"cpu page {statistics.median(self.page_cpu):.2f} s "
            f"kernel {statistics.median(self.kernel_cpu):.2f} s)"
        )


class Took:
    """One timed use: wall seconds, kernel messages to the page (count, bytes), and the CPU
    seconds the page's main thread (Chromium's TaskDuration) and the kernel process spent,
    which a loaded machine does not inflate as it does the wall time."""

    def __init__(
        self, seconds: float, messages: int, nbytes: int, page_cpu: float, kernel_cpu: float
    ) -> None:
        self.seconds, self.messages, self.nbytes = seconds, messages, nbytes
        self.page_cpu, self.kernel_cpu = page_cpu, kernel_cpu


class Bench:
    """The page, the socket traffic it receives, and the timed uses of its controls."""

    def __init__(self, lab: LabPage, folder: Path, profile: bool = False) -> None:
        self.lab = lab
        self.profile = profile
        self.hot: dict[tuple[str, str], float] = {}  # (function, script) -> self ms, summed
        self.spent: dict[str, float] = {}  # the page's metric -> its growth, summed
        self.page = lab.page
        self.frames: list[int] = []
        self.page.on("websocket", self._on_socket)
        self.cdp = self.page.context.new_cdp_session(self.page)
        self.cdp.send("Performance.enable")
        if profile:
            self.cdp.send("Profiler.enable")
            self.cdp.send("Profiler.setSamplingInterval", {"interval": 500})
        self.folder = str(folder)
        self.kernel: Any = None

    def _cpu(self) -> tuple[float, float]:
        """CPU seconds so far of the page's main thread and of the bench's kernel."""
        import psutil

        metrics = self.cdp.send("Performance.getMetrics")["metrics"]
        page = next(m["value"] for m in metrics if m["name"] == "TaskDuration")
        if self.kernel is None:  # the kernel started for this bench's notebook
            for proc in psutil.process_iter(["cmdline"]):
                line = " ".join(proc.info["cmdline"] or [])
                if "ipykernel" in line and self.folder in line:
                    self.kernel = proc
        kernel = 0.0
        if self.kernel is not None:
            times = self.kernel.cpu_times()
            kernel = times.user + times.system
        return page, kernel

    def _on_socket(self, ws: Any) -> None:
        def got(payload: Any) -> None:
            self.frames.append(len(payload))

        ws.on("framereceived", got)

    def timed(self, act: Callable[[], Any], *, started: bool = False) -> Took:
        """Arm the recorder, ``act()`` (a user's input), wait until the panel is still."""
        self.page.evaluate(_ARM_JS, started)
        mark = len(self.frames)
        cpu = self._cpu()
        if self.profile:
            self.cdp.send("Profiler.start")
            before = self._metrics()
        act()
        done = self.page.evaluate(_SETTLED_JS, [QUIET * 1000, 180_000])
        if self.profile:
            self._add_profile(self.cdp.send("Profiler.stop")["profile"])
            for name, value in self._metrics().items():
                self.spent[name] = self.spent.get(name, 0.0) + value - before.get(name, 0.0)
        after = self._cpu()
        if done["timeout"]:
            raise TimeoutError("the panel was still changing (or the kernel busy) after 180 s")
        if not done["muts"] and not done["kernel"]:
            raise RuntimeError(f"{act}: the input changed nothing on the page")
        got = self.frames[mark:]
        return Took(done["ms"] / 1000, len(got), sum(got), after[0] - cpu[0], after[1] - cpu[1])

    # where the page's time goes besides its scripts, and how much it had to lay out
    _SPENT = (
        "ScriptDuration",
        "RecalcStyleDuration",
        "LayoutDuration",
        "TaskDuration",
        "RecalcStyleCount",
        "LayoutCount",
        "Nodes",
    )

    def _metrics(self) -> dict[str, float]:
        metrics = self.cdp.send("Performance.getMetrics")["metrics"]
        return {m["name"]: m["value"] for m in metrics if m["name"] in self._SPENT}

    def _add_profile(self, profile: dict[str, Any]) -> None:
        """Sum the page's self time per function and script from a CDP CPU profile."""
        nodes = profile.get("nodes", [])
        deltas = profile.get("timeDeltas", [])
        ms = (sum(deltas) / 1000 / max(len(deltas), 1)) if deltas else 0.5
        for node in nodes:
            frame = node["callFrame"]
            script = frame.get("url", "").rsplit("/", 1)[-1][:40]
            where = f"{script}:{frame.get('lineNumber')}"
            key = (frame.get("functionName") or "(anonymous)", where)
            self.hot[key] = self.hot.get(key, 0.0) + node.get("hitCount", 0) * ms

    def hottest(self, top: int = 15) -> list[str]:
        """The ``top`` functions by self time since the last call, and start again."""
        ranked = sorted(self.hot.items(), key=lambda kv: -kv[1])[:top]
        spent = ", ".join(
            f"{k.removesuffix('Duration')} {v:.2f} s" if k.endswith("Duration") else f"{k} {v:+.0f}"
            for k, v in self.spent.items()
        )
        self.hot, self.spent = {}, {}
        lines = [f"      {ms:8.0f} ms  {fn[:50]:50s} {where}" for (fn, where), ms in ranked]
        return [f"      page: {spent}", *lines]

    def run_cell(self, index: int) -> Took:
        self.page.evaluate(_ARM_JS, False)
        mark = len(self.frames)
        cpu = self._cpu()
        if self.profile:
            self.cdp.send("Profiler.start")
            before = self._metrics()
        self.page.evaluate(_RUN_CELL_JS, index)
        done = self.page.evaluate(_SETTLED_JS, [QUIET * 1000, 300_000])
        if self.profile:
            self._add_profile(self.cdp.send("Profiler.stop")["profile"])
            for name, value in self._metrics().items():
                self.spent[name] = self.spent.get(name, 0.0) + value - before.get(name, 0.0)
        if done["timeout"]:
            raise TimeoutError(f"cell {index} still running after 300 s")
        after = self._cpu()
        got = self.frames[mark:]
        return Took(done["ms"] / 1000, len(got), sum(got), after[0] - cpu[0], after[1] - cpu[1])


def slider_click(page: Any, root: str, fraction: float) -> None:
    """Click the as-of slider's track at ``fraction`` of its length (a snapshot)."""
    track = page.locator(f"{root} .svcnb-date-slider .noUi-target").first
    track.scroll_into_view_if_needed()
    box = track.bounding_box()
    page.mouse.click(box["x"] + box["width"] * fraction, box["y"] + box["height"] / 2)


# The fractions of the slider's track the "as-of slider" control clicks: three snapshots not
# seen yet, then back and forth between the last two
SLIDES = (0.5, 0.07, 0.965)


class Alone:
    """The as-of slider's moves made again in this process, without a browser, each right
    after the browser's own (:meth:`move`): what a move costs the kernel at the machine's pace
    of that moment, so that a slow figure says whether the machine or the page made it slow
    (this machine's pace has varied by half within minutes, the same code's move with it)."""

    def __init__(self, panel: str, store: Path, out: Path) -> None:
        import svcnb.panels
        from svcnb.store import Store

        self.name = panel
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.panel = getattr(svcnb.panels, _CLASSES[panel])(Store(store), export_dir=out)
        self.times = [value for _, value in self.panel.date_slider.options]
        self.took: list[KernelTook] = []

    def move(self, fraction: float) -> None:
        """Move to the snapshot a click at ``fraction`` of the slider's track reaches."""
        at = self.times[round(fraction * (len(self.times) - 1))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.took.append(timed(lambda: setattr(self.panel.date_slider, "value", at))[0])

    def text(self, browser: Figure) -> str:
        """The line saying these moves' figures beside the browser's (``browser``)."""
        alone = statistics.median(self.took)
        return (
            f"  {self.name:10s} {'  the same, kernel alone':28s} median {alone:5.2f} s  "
            f"worst {max(self.took):5.2f} s  (cpu {statistics.median(t.cpu for t in self.took):.2f}"
            f" s, each right after the browser's, in this process; the browser's is "
            f"{statistics.median(browser.seconds) / alone:.1f}x)"
        )


def controls(panel: str, page: Any, needles: dict[str, str]) -> dict[str, list[Callable[[], Any]]]:
    """Per control of ``panel``, the uses timed (each a callable doing one user's input)."""
    root = _ROOTS[panel]

    def slide(f: float) -> Callable[[], Any]:
        return lambda: slider_click(page, root, f)

    def button(text: str) -> Callable[[], Any]:
        loc = page.locator(f"{root} button.widget-button").filter(has_text=text).first
        return lambda: loc.click()

    def pick(selector: str, index: int) -> Callable[[], Any]:
        return lambda: page.locator(f"{root} {selector} select").first.select_option(index=index)

    def row(grid: str, n: int) -> Callable[[], Any]:
        return lambda: page.locator(f"{root} {grid} table.dataTable tbody tr").nth(n).click()

    def search(grid: str, text: str) -> Callable[[], Any]:
        return lambda: page.locator(f"{root} {grid} .dt-search input").first.fill(text)

    slider = [slide(f) for f in SLIDES]
    # after those, the panel keeps the last two snapshots (KEEP_AS_OF): comparing two dates
    back = [slide(SLIDES[1]), slide(SLIDES[2]), slide(SLIDES[1])]
    grids = ".svcnb-grid-box"
    export = [button("Write CSV"), button("Write CSV")]
    if panel in ("billing", "bandwidth"):
        return {
            "as-of slider": slider,
            "as-of slider, back and forth": back,
            "grid search": [search(grids, needles[panel]), search(grids, "")],
            "Write CSV": export,
            "Reload snapshots": [button("Reload snapshots")],
        }
    if panel == "whatif":
        toggle = page.locator(f"{root} .widget-toggle-buttons button")
        return {
            "as-of slider": slider,
            "as-of slider, back and forth": back,
            "horizon": [pick(".widget-dropdown", 0), pick(".widget-dropdown", 2)],
            "stopped/terminated": [lambda: toggle.nth(1).click(), lambda: toggle.nth(0).click()],
            "choose a VM (row)": [row(".svcnb-whatif-vms", k) for k in (0, 3, 6)],
            "grid search": [search(".svcnb-whatif-vms", needles["whatif"])],
            "Write CSV": export,
        }
    if panel == "audit":
        return {
            "severity": [pick(".widget-dropdown", 1), pick(".widget-dropdown", 0)],
            "choose a finding (row)": [row(".svcnb-finding-grid", k) for k in (0, 2, 4)],
            "grid search": [search(".svcnb-finding-grid", needles["audit"])],
        }
    return {  # webhooks
        "choose a subscription (row)": [row(".svcnb-webhook-grid", k) for k in (1, 2, 0)],
        "Refresh": [button("Refresh")],
    }


_NEEDLES = """\
def _last(frame, col):
    return str(frame[col].dropna().astype(str).sort_values().iloc[-1]) if len(frame) else ""
print("NEEDLES=" + json.dumps({
    "billing": _last(billing.results.get("renewals", billing.results[next(iter(billing.results))]), "name") if "billing" in globals() else "",
    "whatif": whatif._vm_ids[-1] if "whatif" in globals() else "",
    "bandwidth": _last(next(iter(bandwidth.results.values())), "name") if "bandwidth" in globals() else "",
    "audit": _last(audit.findings, "firewall_id") if "audit" in globals() else "",
}))
"""  # noqa: E501


def notebook(folder: Path, store: Path, out: Path, panels: list[str]) -> Path:
    classes = ", ".join(sorted(set(_CLASSES.values())))
    cells = [_SETUP.format(store=str(store), out=str(out), classes=classes)]
    cells += [_CELLS[p] for p in panels]
    cells.append(_NEEDLES)
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": s, "outputs": []}
            | {"execution_count": None}
            for s in cells
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = folder / "bench_panels.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


@contextmanager
def jupyterlab(folder: Path) -> Iterator[str]:
    settings = folder / "settings"
    for rel, text in (  # every cell rendered (no windowing); no news toast over the page
        ("notebook-extension/tracker", '{"windowingMode": "none"}'),
        ("apputils-extension/notification", '{"fetchNews": "false"}'),
    ):
        rel = f"@jupyterlab/{rel}.jupyterlab-settings"
        (settings / rel).parent.mkdir(parents=True, exist_ok=True)
        (settings / rel).write_text(text, encoding="utf-8")
    env = dict(os.environ)
    env.update(
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(folder / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(folder / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
        IPYTHONDIR=str(folder / "ipython"),
        MPLBACKEND="module://matplotlib_inline.backend_inline",
    )
    port = free_port()
    argv = lab_command(
        folder / "nb",
        port=port,
        open_browser=False,
        without_token=True,
        extra=["--LabApp.expose_app_in_browser=True"],
    )
    with open(folder / "jupyterlab.log", "wb") as log:
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{base}/api", timeout=90, proc=proc)
            yield base
        finally:
            try:
                for kernel in httpx.get(f"{base}/api/kernels", timeout=5).json():
                    httpx.delete(f"{base}/api/kernels/{kernel['id']}", timeout=10)
            except (httpx.HTTPError, ValueError, TypeError):
                pass
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def needles_of(lab: LabPage) -> dict[str, str]:
    for cell in reversed(lab.cells()):
        for out in cell.get("outputs") or []:
            text = "".join(out.get("text", ""))
            if text.startswith("NEEDLES="):
                return json.loads(text.removeprefix("NEEDLES="))
    return {}


def screenshots(lab: LabPage, panels: list[str], folder: Path) -> None:
    """Each panel as first rendered, in JupyterLab Light and Dark, into ``folder``; and the row
    count each of its grids states (DataTables' "Showing 1 to 10 of N entries")."""
    folder.mkdir(parents=True, exist_ok=True)
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        lab.set_theme(theme)
        lab.page.wait_for_timeout(1000)
        for panel in panels:
            path = folder / f"{panel}-{theme.split()[-1].lower()}.png"
            box = lab.page.locator(_ROOTS[panel]).first
            # the notebook scrolls inside the page: a page as tall as the panel shows it whole
            height = int(box.evaluate("el => el.getBoundingClientRect().height"))
            lab.page.set_viewport_size({"width": 1400, "height": min(height + 400, 12000)})
            box.scroll_into_view_if_needed()
            lab.page.wait_for_timeout(500)
            box.screenshot(path=str(path))
            print(f"  screenshot {path}")
    lab.page.set_viewport_size({"width": 1400, "height": 1000})
    lab.set_theme("JupyterLab Light")
    for panel in panels:
        # the text the page holds: a grid out of view is not laid out (content-visibility),
        # and the rendered text of what is not laid out reads empty
        stated = lab.page.locator(f"{_ROOTS[panel]} .dt-info").all_text_contents()
        print(f"  {panel:10s} grids state: " + "; ".join(t.strip() for t in stated if t.strip()))


def run(
    n: int, panels: list[str], rebuild: bool, shots: Path | None = None, profile: bool = False
) -> list[str]:
    """Time every panel's first render and controls at ``n`` VMs; the lines that FAIL."""
    from playwright.sync_api import sync_playwright

    print(f"== {n:,} VMs, 30 daily snapshots (load {os.getloadavg()[0]:.2f})", flush=True)
    store = store_for(n, rebuild)
    folder = Path(tempfile.mkdtemp(prefix="svcnb-bench-browser-"))
    (folder / "nb").mkdir()
    failed: list[str] = []
    target = TARGET.get(n)
    try:
        notebook(folder / "nb", store, folder / "out", panels)
        with jupyterlab(folder) as base, sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(180_000)  # a click waits for a page busy with a grid
            lab = LabPage(page, base)
            bench = Bench(lab, folder, profile)
            lab.open("bench_panels.ipynb", timeout=180)
            bench.run_cell(0)
            for i, panel in enumerate(panels, start=1):
                first = Figure()
                first.add(bench.run_cell(i))
                took = first.seconds[0]
                verdict = ""
                if n in FIRST_TARGET:
                    ok = took <= FIRST_TARGET[n]
                    verdict = f"  {'PASS' if ok else 'FAIL'} (<= {FIRST_TARGET[n]} s)"
                    if not ok:
                        failed.append(f"{n} {panel} first render {took:.2f} s")
                print(f"  {panel:10s} {'first render':28s} {first.text()}{verdict}", flush=True)
                if profile:
                    print("\n".join(bench.hottest()), flush=True)
            bench.run_cell(len(panels) + 1)
            needles = needles_of(lab)
            errors = lab.cell_errors() + lab.widget_errors()
            if errors:
                raise RuntimeError("the panels failed in the browser:\n" + "\n".join(errors))
            if shots is not None:
                screenshots(lab, panels, shots / f"{n}")
            for panel in panels:
                for control, uses in controls(panel, page, needles).items():
                    fig = Figure()
                    alone = None
                    if control == "as-of slider" and panel in _AS_OF:
                        alone = Alone(panel, store, folder / "out")
                    try:
                        for i, use in enumerate(uses):
                            fig.add(bench.timed(use))
                            if alone is not None:
                                alone.move(SLIDES[i])
                    except Exception as exc:  # one control failing is its FAIL, not the run's
                        line = f"{panel} {control}: {type(exc).__name__}: {str(exc)[:200]}"
                        print(f"  {line}  FAIL", flush=True)
                        failed.append(f"{n} {line}")
                        continue
                    verdict = ""
                    if target is not None:
                        ok = statistics.median(fig.seconds) <= target
                        verdict = f"  {'PASS' if ok else 'FAIL'} (<= {target} s)"
                        if not ok:
                            failed.append(f"{n} {panel} {control} {fig.text()}")
                    print(f"  {panel:10s} {control:28s} {fig.text()}{verdict}", flush=True)
                    if alone is not None:
                        print(alone.text(fig), flush=True)
                    if profile:
                        print("\n".join(bench.hottest()), flush=True)
            browser.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10000], help="fleet sizes")
    parser.add_argument("--panels", default=",".join(PANELS), help="comma-separated panels")
    parser.add_argument("--rebuild", action="store_true", help="build the cached stores again")
    parser.add_argument(
        "--shots", type=Path, help="also write screenshots (Light, Dark) into this folder"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print where the page's CPU went for each control (its 15 hottest functions)",
    )
    args = parser.parse_args()
    panels = [p.strip() for p in args.panels.split(",") if p.strip()]
    unknown = sorted(set(panels) - set(PANELS))
    if unknown:
        parser.error(f"unknown panels {unknown}; choose from {', '.join(PANELS)}")
    if not CHROMIUM.exists():
        print(f"FAIL: {CHROMIUM} is missing: run scripts/install-browser.sh")
        sys.exit(1)
    warnings.simplefilter("ignore")  # incomplete-list warnings of the sandbox's seed
    failed: list[str] = []
    for n in args.sizes:
        failed += run(n, panels, args.rebuild, args.shots, args.profile)
    print("FAIL:\n  " + "\n  ".join(failed) if failed else "PASS: every figure within its target")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
