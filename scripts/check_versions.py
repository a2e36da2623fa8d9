"""`make test-versions`: the wheel on every Python this machine has, as a user installs it.

Builds the wheel once from this checkout (its tracked and new files, copied out, so the build
leaves nothing here); then, for each of Python 3.11, 3.12 and 3.13 found (``python3.X`` on PATH,
one pyenv installed, or one ``uv python find`` finds; never a download), in a new virtual
environment and an empty folder outside the repository: ``pip install <wheel>``, the README's
quick start (a background sandbox, a frame, a snapshot, a report) and ``svcnb --help``. A
Python 3.10 found must be refused by (a current) pip naming the Python svcnb needs. Exit 0 when
every interpreter found passed and at least one was found; those not found are named.

Run from the repository root: ``python scripts/check_versions.py`` (any Python 3.11+ with pip).
``tests/install/test_wheel.py`` builds its wheel with :func:`build_wheel` too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUPPORTED = ("3.11", "3.12", "3.13")
REFUSED = ("3.10",)


def user_env() -> dict[str, str]:
    """This environment less what would point at the repository or at a service."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith(("SVC_", "SVCNB_"))
    }
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", SVCNB_BUDGET="off")
    return env


def run(argv: list, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    if done.returncode != 0:
        command = " ".join(done.args)
        raise RuntimeError(f"{command} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout


def build_wheel(work: Path, python: str = sys.executable) -> Path:
    """The wheel of this checkout's tracked and new (not ignored) files, built in ``work``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    source = work / "src"
    for name in filter(None, listed):
        path = REPO / os.fsdecode(name)
        if path.is_file():  # a file deleted but not yet committed is listed too
            (source / path.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / path.relative_to(REPO))
    ok(run([python, "-m", "pip", "wheel", "--no-deps", "-q", "-w", work / "dist", source], work))
    (built,) = (work / "dist").glob("svcnb-*.whl")
    return built


def quick_start() -> str:
    """The README's quick start, as written."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Quick start") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def interpreter(version: str) -> str | None:
    """A ``python{version}`` that runs: on PATH, else one pyenv installed (its shims on PATH run
    only the version pyenv has selected), else one uv found; never a download."""
    candidates = [shutil.which(f"python{version}")]
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    installed = Path(pyenv_root, "versions").glob(f"{version}.*/bin/python{version}")
    candidates += [str(p) for p in sorted(installed, key=lambda p: _release(p.parts[-3]))[::-1]]
    uv = shutil.which("uv")
    if uv:
        found = subprocess.run(
            [uv, "python", "find", "--no-python-downloads", version],
            capture_output=True,
            text=True,
        )
        candidates.append(found.stdout.strip() if found.returncode == 0 else None)
    for candidate in filter(None, candidates):
        said = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
        )
        if said.returncode == 0 and said.stdout.strip() == version:
            return candidate
    return None


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def check(python: str, wheel: Path, work: Path) -> str:
    """Install ``wheel`` for ``python`` and run the quick start and the help; what it saw."""
    venv = work / "venv"
    ok(run([python, "-m", "venv", venv], work))
    py, svcnb = venv / "bin" / "python", venv / "bin" / "svcnb"
    started = time.monotonic()
    # no bytecode compiled at install (Python compiles what it imports): a third of the time
    ok(run([py, "-m", "pip", "install", "-q", "--no-compile", wheel], work))
    installed = time.monotonic() - started
    user = work / "user"
    user.mkdir()
    version = ok(run([py, "-c", "import sys; print(sys.version.split()[0])"], user)).strip()
    out = ok(run([py, "-c", quick_start()], user, timeout=600))
    if "region_slug" not in out or not (user / "data" / "store" / "_snapshots").is_dir():
        raise RuntimeError(f"the quick start showed no fleet or stored no snapshot:\n{out}")
    helped = ok(run([svcnb, "--help"], user))
    if not helped.startswith("usage: svcnb"):
        raise RuntimeError(f"svcnb --help printed:\n{helped[:500]}")
    return f"Python {version}: installed in {installed:.0f} s; the quick start and svcnb --help ran"


def refused(python: str, wheel: Path, work: Path) -> str:
    venv = work / "venv"
    ok(run([python, "-m", "venv", venv], work))
    py = venv / "bin" / "python"
    # the pip that comes with 3.10.13 (23.0) does not read a wheel file's Requires-Python and
    # fails later, on pandas>=3.0; a current pip, as a user is told to have, names the Python
    ok(run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], work))
    done = run([py, "-m", "pip", "install", wheel], work)
    said = (done.stdout + done.stderr).strip().splitlines()
    line = next((s for s in said if "requires a different Python" in s), None)
    if done.returncode == 0 or line is None or ">=3.11" not in line:
        raise RuntimeError(f"pip did not refuse the wheel naming Python 3.11+:\n{said}")
    return f"refused by pip: {line.strip()}"


def main() -> int:
    failed = 0
    with tempfile.TemporaryDirectory(prefix="svcnb-versions-") as tmp:
        work = Path(tmp)
        wheel = build_wheel(work / "build")
        print(f"built {wheel.name} ({wheel.stat().st_size / 1e6:.2f} MB)", flush=True)
        missing, tested = [], 0
        for version in (*SUPPORTED, *REFUSED):
            python = interpreter(version)
            if python is None:
                missing.append(version)
                continue
            place = work / f"py{version}"
            place.mkdir()
            try:
                said = (refused if version in REFUSED else check)(python, wheel, place)
                tested += version in SUPPORTED
                print(f"  {version} ({python}): {said}", flush=True)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                failed += 1
                print(f"  {version} ({python}): FAILED {exc}", flush=True)
        if missing:
            print(f"  not on this machine: Python {', '.join(missing)}")
    if not tested:
        print("no supported Python found: nothing was checked", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
