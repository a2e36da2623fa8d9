"""The wheel as a user gets it (slow: builds it, installs it twice, runs the demo and JupyterLab).

From a copy of this checkout (its tracked and new files, so the build is the repository's and
leaves nothing here): build the wheel; install it plain in a new virtual environment outside
the repository, where the Jupyter commands say which extra they need; add ``[lab]``; then, in an
empty folder, ``svcnb demo`` must find the notebooks in the wheel, copy them and render them,
and ``svcnb lab`` must copy nothing over them and serve JupyterLab until it is stopped.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from svcnb.jupyter import demo as _demo
from svcnb.webhooks import free_port

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
LAB_PACKAGES = ("ipywidgets", "itables", "jupyterlab", "nbclient", "nbconvert", "trustme")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


def _versions_script():
    """scripts/check_versions.py (make test-versions), whose build_wheel builds the wheel."""
    spec = importlib.util.spec_from_file_location(
        "check_versions", REPO / "scripts" / "check_versions.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _user_env() -> dict[str, str]:
    """This environment less what would point at the repository or at a real service."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "SVC_API_KEY", "SVC_BASE_URL", "SVCNB_SANDBOX", "SVCNB_STORE")
        and not k.startswith("PYTEST")
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(argv: list, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=_user_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("builds from a git checkout")
    return _versions_script().build_wheel(tmp_path_factory.mktemp("build"))


def test_the_wheel_holds_the_notebooks_and_no_test_files(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    assert sorted(n.split("/")[-1] for n in names if n.startswith("svcnb/notebooks/")) == NOTEBOOKS
    for name in NOTEBOOKS:
        assert archive.read(f"svcnb/notebooks/{name}") == (REPO / "notebooks" / name).read_bytes()
    assert not [n for n in names if n.endswith("conftest.py") or n.startswith("tests/")]
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    text = archive.read(metadata).decode()
    assert "Requires-Python: >=3.11" in text
    for version in ("3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {version}" in text
    assert {"lab", "redis", "dev"} <= set(re.findall(r"^Provides-Extra: (\S+)", text, re.M))


def test_install_plain_then_lab_demo_and_lab(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _ok(_run([sys.executable, "-m", "venv", venv], tmp_path))
    python, svcnb = venv / "bin" / "python", venv / "bin" / "svcnb"
    _ok(_run([python, "-m", "pip", "install", "-q", wheel], tmp_path))
    user = tmp_path / "user"  # an empty folder of the user's, outside the repository
    user.mkdir()

    # plain: no Jupyter stack, and the Jupyter commands say which extra to install
    installed = _ok(_run([python, "-m", "pip", "list", "--format=freeze"], user)).lower()
    assert not [p for p in LAB_PACKAGES if f"\n{p}==" in "\n" + installed], installed
    where = _ok(_run([python, "-c", "import svcnb; print(svcnb.__file__)"], user))
    assert where.startswith(str(venv)), where
    assert _ok(_run([svcnb, "--version"], user)).startswith("svcnb ")
    for command in ("demo", "lab"):
        done = _run([svcnb, command], user)
        assert done.returncode == 2, done
        assert done.stderr.startswith(
            f"svcnb {command} needs the lab extra: pip install 'svcnb[lab]' ("
        ), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    panels = _run([python, "-c", "import svcnb.panels"], user)
    assert "svcnb.panels needs the lab extra: pip install 'svcnb[lab]'" in panels.stderr
    assert not list(user.iterdir()), "a refused command left files behind"

    # with the lab extra
    _ok(_run([python, "-m", "pip", "install", "-q", f"{wheel}[lab]"], tmp_path))
    demo = _run([svcnb, "demo", "--days", "3", "--vms", "20"], user, timeout=1500)
    out = _ok(demo)
    work = user / "svcnb-notebooks"
    assert f"svcnb demo: copied {len(NOTEBOOKS)} notebooks into {work}: " in out
    assert sorted(p.name for p in work.glob("*.ipynb")) == NOTEBOOKS
    for name in _demo.REPORT_NOTEBOOKS:
        assert (user / "out" / f"{name}.html").stat().st_size > 10_000, name

    port = free_port()
    log = tmp_path / "lab.log"
    with open(log, "w", encoding="utf-8") as sink:
        lab = subprocess.Popen(
            [svcnb, "lab", "--no-browser", "--port", str(port), "--vms", "5"],
            cwd=user,
            env=_user_env(),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 180
        answer = None
        while time.monotonic() < deadline and lab.poll() is None:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/api", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.5)
        assert answer is not None and answer.status_code == 200, log.read_text()
        assert "version" in answer.json()
    finally:
        lab.send_signal(signal.SIGINT)
        code = lab.wait(timeout=60)
    text = log.read_text()
    assert code == 130, text
    assert f"svcnb lab: {len(NOTEBOOKS)} notebooks already in {work}, unchanged" in text
    assert f"notebooks in {work}" in text
