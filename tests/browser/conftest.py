"""JupyterLab in headless Chromium, against a sandbox, for the panels' end-to-end tests.

Chromium is Debian's: its headless shell (``/usr/bin/chromium-headless-shell``, installed by
``scripts/install-browser.sh``), else the full ``/usr/bin/chromium``; a browser downloaded by
Playwright is never used. Without it the tests skip, except under
``CI=true``, where a missing browser is a failure: CI must prove the panels in a real browser.
Everything listens on 127.0.0.1 only; JupyterLab runs without a token on a free loopback port.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _labpage import LabPage  # tests/browser is on sys.path (pytest rootdir-relative import)
from _loopback import wait_for_http

from svcnb.jupyter.lab import SandboxProcess, kernel_environment, lab_command
from svcnb.webhooks import free_port

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
OUT = REPO / "out"
# The headless shell is the browser without its windowing half: the same Blink, and a JupyterLab
# page costs about a quarter less CPU to load (3.3 s against 4.3 s, the kernel's start included;
# the browser tests 70 s against 79 s of the machine's CPU, measured from /proc/stat, twice each).
_SHELL, _FULL = Path("/usr/bin/chromium-headless-shell"), Path("/usr/bin/chromium")
CHROMIUM = Path(os.environ.get("SVCNB_CHROMIUM") or (_SHELL if _SHELL.exists() else _FULL))
# Flags that keep Chromium from reaching for Google's servers, which this network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The browser tests' fleet: small, seeded, and a clock fast enough that a stop completes quickly.
SANDBOX_VMS = 12
SANDBOX_SEED = 7
SANDBOX_TIME_SCALE = 60.0


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    # Keep each phase's report on the item so the page fixture knows whether to take a screenshot.
    report = yield
    setattr(item, f"_report_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def chromium_executable() -> Path:
    """The system Chromium; skip without it locally, fail without it in CI."""
    problem = None
    if not CHROMIUM.exists():
        problem = (
            f"{CHROMIUM} is missing: run scripts/install-browser.sh "
            "(apt-get install chromium) to run the browser tests"
        )
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "playwright is not installed: pip install -e '.[dev]'"
    if problem:
        if _in_ci():
            pytest.fail(f"CI=true and the browser tests cannot run: {problem}", pytrace=False)
        pytest.skip(problem)
    return CHROMIUM


class _SharedPage:
    """One Chromium and one page on JupyterLab for every browser test: JupyterLab loads once,
    and each test opens its notebook in it (``LabPage.open``).

    Not a session fixture: Playwright's sync API keeps an asyncio loop running in the main thread
    while it is open, which would make every later asyncio.run() on this worker fail. It is
    closed as soon as the next test is not a browser test (the browser tests run together on one
    worker, tests/conftest.py), after a test that failed, and at the end of the session."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self._lab: LabPage | None = None

    def browser(self, chromium: Path) -> Any:
        """The one Chromium, started if none is: a test that opens pages of its own (no
        JupyterLab) opens them here, as a second Playwright would find this one's loop running."""
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS
            )
        return self._browser

    def lab(self, chromium: Path, base_url: str, width: int, height: int) -> LabPage:
        if self._lab is None:
            self._lab = LabPage(self.browser(chromium).new_page(), base_url)
        self._lab.page.set_viewport_size({"width": width, "height": height})
        return self._lab

    def close(self) -> None:
        if self._playwright is not None:
            try:
                if self._browser is not None:  # None when Chromium failed to launch
                    self._browser.close()
            finally:
                self._playwright.stop()
        self._playwright = self._browser = self._lab = None


_SHARED = _SharedPage()
_HERE = Path(__file__).parent


@pytest.hookimpl(trylast=True)  # after the test's fixtures are torn down: they use the page
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if nextitem is None or _HERE not in nextitem.path.parents:
        _SHARED.close()


def pytest_sessionfinish() -> None:
    _SHARED.close()


@pytest.fixture(scope="session")
def shared_browser(chromium_executable: Path) -> Callable[[], Any]:
    """``shared_browser()``: the browser tests' one Chromium, for pages without JupyterLab."""
    return lambda: _SHARED.browser(chromium_executable)


@pytest.fixture(scope="session")
def shared_lab(chromium_executable: Path, jupyterlab: str) -> Callable[[int, int], LabPage]:
    """``shared_lab(width, height)``: the browser tests' one page on JupyterLab, at that size."""
    return lambda width, height: _SHARED.lab(chromium_executable, jupyterlab, width, height)


@pytest.fixture(scope="session")
def lab_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lab")


@pytest.fixture(scope="session")
def lab_sandbox(lab_tmp: Path, chromium_executable: Path) -> Iterator[SandboxProcess]:
    """A ``svcnb sandbox`` child process shared by the browser tests."""
    private = lab_tmp / "private"
    private.mkdir(mode=0o700)
    with SandboxProcess(
        private / "sandbox.json",
        vms=SANDBOX_VMS,
        seed=SANDBOX_SEED,
        time_scale=SANDBOX_TIME_SCALE,
        log_file=lab_tmp / "sandbox.log",
    ) as sb:
        yield sb


@pytest.fixture(scope="session")
def lab_root(lab_tmp: Path) -> Path:
    """A copy of the notebooks: JupyterLab autosaves, and the committed outputs must not change."""
    root = lab_tmp / "notebooks"
    root.mkdir()
    for nb in NOTEBOOKS.glob("*.ipynb"):
        shutil.copy2(nb, root / nb.name)
    return root


@pytest.fixture(scope="session")
def jupyterlab(
    lab_tmp: Path, lab_root: Path, lab_sandbox: SandboxProcess, chromium_executable: Path
) -> Iterator[str]:
    """JupyterLab on a free loopback port with no token; yields its base URL."""
    port = free_port()
    settings = lab_tmp / "lab-settings"
    # Render every cell (no windowing), so the tests find widgets far down a notebook.
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text('{"windowingMode": "none"}', encoding="utf-8")
    # No "get notified about Jupyter news?" toast: it asks the network and covers screenshots.
    notices = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notices.parent.mkdir(parents=True)
    notices.write_text('{"fetchNews": "false"}', encoding="utf-8")
    env = kernel_environment(lab_sandbox.connection_file, store=lab_tmp / "store")
    env.update(
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(lab_tmp / "lab-workspaces"),
        JUPYTER_RUNTIME_DIR=str(lab_tmp / "runtime"),
        # the cells the tests run go into this IPython history, not the developer's own
        IPYTHONDIR=str(lab_tmp / "ipython"),
        # The panels' progress bars and matplotlib must not wait on anything interactive.
        MPLBACKEND="module://matplotlib_inline.backend_inline",
    )
    argv = lab_command(
        lab_root,
        port=port,
        open_browser=False,
        without_token=True,
        extra=["--LabApp.expose_app_in_browser=True"],
    )
    log = open(lab_tmp / "jupyterlab.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=lab_root)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{base}/api", timeout=90, proc=proc)
        yield base
    finally:
        # Shut kernels down through the API first so none outlives the test session.
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
        log.close()


@pytest.fixture
def lab(shared_lab, request: pytest.FixtureRequest) -> Iterator[LabPage]:
    """The shared page on JupyterLab; a screenshot goes to ``out/`` when the test fails."""
    lab = shared_lab(1400, 1000)
    yield lab
    failed = any(
        getattr(getattr(request.node, f"_report_{when}", None), "failed", False)
        for when in ("setup", "call")
    )
    if failed:
        OUT.mkdir(exist_ok=True)
        shot = OUT / f"browser-failure-{request.node.name}.png"
        try:
            lab.page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failure: {shot}")
        except Exception as exc:  # the page may be gone; the test's own error matters more
            print(f"no screenshot ({type(exc).__name__})")
        if lab.console:
            print("browser console:\n" + "\n".join(lab.console[-50:]))
        _SHARED.close()  # what the failure left on the page (a dialog, say) is not the next test's
