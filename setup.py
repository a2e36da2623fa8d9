"""Puts the notebooks in the wheel. Everything else about the build is in pyproject.toml.

The repository keeps one copy of the notebooks, in notebooks/ (nbval checks them there and
``make demo`` renders them from there). Building a wheel copies notebooks/*.ipynb into
svcnb/notebooks/ inside it, where ``svcnb demo`` and ``svcnb lab`` find them
(``svcnb.jupyter.notebooks``); an editable install reads notebooks/ where it is. The sdist carries
notebooks/ (MANIFEST.in), so a wheel built from it has them too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SOURCE = Path(__file__).resolve().parent / "notebooks"


class BuildWithNotebooks(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        notebooks = sorted(SOURCE.glob("*.ipynb"))
        if not notebooks:
            raise SystemExit(f"no notebooks in {SOURCE}: a wheel without them cannot run the demo")
        target = Path(self.build_lib) / "svcnb" / "notebooks"
        shutil.rmtree(target, ignore_errors=True)  # no notebook left over from an earlier build
        target.mkdir(parents=True)
        for notebook in notebooks:
            shutil.copyfile(notebook, target / notebook.name)


setup(cmdclass={"build_py": BuildWithNotebooks})
