"""Extras by persona: a command or package that needs the lab extra says so in one line.

Run in a child interpreter where the lab modules are blocked (``sys.modules[name] = None``), as
in a plain ``pip install svcnb``; the installed-wheel test (test_wheel.py) checks the same on a
real install without the extra.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from svcnb import extras as _extras

LAB_ONLY = ("nbformat", "nbclient", "nbconvert", "ipykernel", "ipywidgets", "itables", "jupyterlab")


def _without_lab(code: str) -> subprocess.CompletedProcess[str]:
    blocked = "; ".join(f"sys.modules[{name!r}] = None" for name in LAB_ONLY)
    return subprocess.run(
        [sys.executable, "-c", f"import sys; {blocked}\n{code}"],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("command", ["demo", "lab"])
def test_a_command_without_the_lab_extra_says_which_to_install(command):
    done = _without_lab(f"from svcnb.cli import main; sys.exit(main([{command!r}]))")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        f"svcnb {command} needs the lab extra: pip install 'svcnb[lab]' ("
    ), lines[0]
    assert "not installed)" in lines[0]
    assert done.stdout == ""


@pytest.mark.parametrize("command", ["demo", "lab"])
def test_help_works_without_the_lab_extra(command):
    done = _without_lab(f"from svcnb.cli import main; sys.exit(main([{command!r}, '--help']))")
    assert done.returncode == 0, done.stderr
    assert f"usage: svcnb {command}" in done.stdout


def test_importing_the_panels_without_the_lab_extra_names_it():
    done = _without_lab("import svcnb.panels")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "ImportError: svcnb.panels needs the lab extra: pip install 'svcnb[lab]' ("
    ), last


def test_nothing_missing_here():
    # the developers' install (.[dev]) includes the lab extra
    for what in _extras.LAB_MODULES:
        assert _extras.lab_needed(what) is None, what


def test_a_blocked_module_counts_as_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "nbclient", None)
    assert _extras.missing(("nbclient", "json")) == ["nbclient"]
    line = _extras.lab_needed("svcnb demo")
    assert line == (
        "svcnb demo needs the lab extra: pip install 'svcnb[lab]' (nbclient is not installed)"
    )
