"""The package metadata: Python versions, and which extra brings what (pyproject.toml)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from svcnb import extras as _extras

PROJECT = tomllib.loads(
    (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
)["project"]


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!;~ ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_python_311_to_313():
    assert PROJECT["requires-python"] == ">=3.11"
    versions = {
        c.rsplit(" :: ", 1)[1]
        for c in PROJECT["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    assert versions == {"3.11", "3.12", "3.13"}


def test_the_plain_install_has_no_jupyter_stack():
    base = _names(PROJECT["dependencies"])
    lab = _names(PROJECT["optional-dependencies"]["lab"])
    assert not base & lab, base & lab
    assert not base & {"ipywidgets", "itables", "jupyterlab", "ipykernel", "trustme", "nbclient"}
    assert {"httpx", "pandas", "pyarrow", "deltalake", "uvicorn", "starlette"} <= base


def test_the_lab_extra_brings_every_module_the_jupyter_commands_need():
    lab = _names(PROJECT["optional-dependencies"]["lab"])
    needed = {m for modules in _extras.LAB_MODULES.values() for m in modules}
    assert needed <= lab  # each named, anywidget too (the panels import it themselves)
    assert any(r.startswith("itables[widget]") for r in PROJECT["optional-dependencies"]["lab"])


def test_dev_includes_lab_and_redis_is_as_it_was():
    extras = PROJECT["optional-dependencies"]
    assert "svcnb[lab]" in extras["dev"]
    assert extras["redis"] == ["redis>=5"]
