"""The notebooks ship with svcnb and are copied into a working folder, never over the user's.

``svcnb.jupyter.notebooks.copy_into`` backs ``svcnb demo`` and ``svcnb lab``; test_wheel.py runs
both from an installed wheel.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from svcnb.jupyter import demo as _demo
from svcnb.jupyter import notebooks as _notebooks

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def source(tmp_path, monkeypatch) -> Path:
    """A stand-in for the shipped notebooks, so a test can play a newer svcnb."""
    folder = tmp_path / "shipped"
    folder.mkdir()
    for name in ("01_a", "02_b"):
        (folder / f"{name}.ipynb").write_text(json.dumps({"cells": [], "v": 1, "n": name}))
    monkeypatch.setattr(_notebooks, "shipped", lambda: folder)
    return folder


def test_in_a_checkout_the_repositorys_notebooks_are_the_shipped_ones():
    assert _notebooks.shipped() == REPO / "notebooks"
    assert set(_demo.REPORT_NOTEBOOKS) == set(_notebooks.names())


def test_an_install_without_notebooks_says_so(tmp_path, monkeypatch):
    fake = tmp_path / "site-packages" / "svcnb" / "jupyter" / "notebooks.py"
    fake.parent.mkdir(parents=True)
    monkeypatch.setattr(_notebooks, "__file__", str(fake))
    with pytest.raises(_notebooks.NotebooksMissing, match="installed from a build without"):
        _notebooks.shipped()
    (fake.parent.parent / "notebooks").mkdir()
    (fake.parent.parent / "notebooks" / "01_x.ipynb").write_text("{}")
    assert _notebooks.shipped() == fake.parent.parent / "notebooks"


def test_first_copy_copies_all_and_says_where(source, tmp_path):
    work = tmp_path / "work"
    copies = _notebooks.copy_into(work)
    assert copies.copied == ["01_a.ipynb", "02_b.ipynb"]
    assert not (copies.updated or copies.kept or copies.current)
    for name in copies.copied:
        assert (work / name).read_bytes() == (source / name).read_bytes()
    assert copies.lines() == [f"copied 2 notebooks into {work}: 01_a.ipynb, 02_b.ipynb"]
    assert set(json.loads((work / _notebooks.RECORD).read_text())) == set(copies.copied)


def test_a_second_copy_changes_nothing(source, tmp_path):
    work = tmp_path / "work"
    _notebooks.copy_into(work)
    before = {p.name: p.stat().st_mtime_ns for p in work.iterdir()}
    again = _notebooks.copy_into(work)
    assert again.current == ["01_a.ipynb", "02_b.ipynb"]
    assert not (again.copied or again.updated or again.kept)
    assert {p.name: p.stat().st_mtime_ns for p in work.iterdir()} == before
    assert again.lines() == [f"2 notebooks already in {work}, unchanged: 01_a.ipynb, 02_b.ipynb"]


def test_a_notebook_the_user_changed_is_never_overwritten(source, tmp_path):
    work = tmp_path / "work"
    _notebooks.copy_into(work)
    (work / "01_a.ipynb").write_text('{"cells": ["mine"]}')
    # a newer svcnb ships other versions of both
    for p in source.glob("*.ipynb"):
        p.write_text(p.read_text().replace('"v": 1', '"v": 2'))
    copies = _notebooks.copy_into(work)
    assert copies.kept == ["01_a.ipynb"]
    assert copies.updated == ["02_b.ipynb"]  # nobody had touched it: now the newer one
    assert (work / "01_a.ipynb").read_text() == '{"cells": ["mine"]}'
    assert (work / "02_b.ipynb").read_bytes() == (source / "02_b.ipynb").read_bytes()
    assert copies.lines()[-1] == (
        f"kept 1 notebook you changed in {work}, as they are: 01_a.ipynb "
        f"(svcnb's versions are in {source})"
    )
    # and it stays the user's on every later run
    assert _notebooks.copy_into(work).kept == ["01_a.ipynb"]


def test_a_file_svcnb_did_not_write_is_the_users(source, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "02_b.ipynb").write_text("the user's own notebook of that name")
    copies = _notebooks.copy_into(work)
    assert copies.copied == ["01_a.ipynb"]
    assert copies.kept == ["02_b.ipynb"]
    assert (work / "02_b.ipynb").read_text() == "the user's own notebook of that name"


def test_copying_into_the_source_itself_writes_nothing(source):
    copies = _notebooks.copy_into(source)
    assert copies.current == ["01_a.ipynb", "02_b.ipynb"]
    assert not (source / _notebooks.RECORD).exists()


def test_an_updated_copy_keeps_its_mode(source, tmp_path):
    work = tmp_path / "work"
    _notebooks.copy_into(work)
    (work / "02_b.ipynb").chmod(0o640)
    (source / "02_b.ipynb").write_text("{}")
    assert _notebooks.copy_into(work).updated == ["02_b.ipynb"]
    assert (work / "02_b.ipynb").stat().st_mode & 0o777 == 0o640
    assert not [p for p in work.iterdir() if p.name.endswith(".tmp")]
