"""The notebooks svcnb ships, and their copies in a user's working folder.

:func:`shipped` is ``svcnb/notebooks/`` in a wheel (the build copies the repository's
``notebooks/`` there, see setup.py), else the repository's ``notebooks/``: one copy in the
repository. :func:`copy_into` never overwrites a notebook the user changed: it records each
notebook's SHA-256 as written (``.svcnb-notebooks.json`` in the folder), so a copy nobody touched
since may be replaced by a newer svcnb's version; a file without a record that differs from the
shipped one counts as the user's.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from svcnb import files as _files

DEFAULT_FOLDER = "svcnb-notebooks"
RECORD = ".svcnb-notebooks.json"


class NotebooksMissing(RuntimeError):
    """This installation holds no notebooks (a wheel built without them)."""


def shipped() -> Path:
    """The folder of the notebooks this svcnb ships."""
    package = Path(__file__).resolve().parent.parent  # svcnb/, above svcnb/jupyter/
    inside = package / "notebooks"
    if any(inside.glob("*.ipynb")):
        return inside
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file() and any((checkout / "notebooks").glob("*.ipynb")):
        return checkout / "notebooks"
    raise NotebooksMissing(
        f"no notebooks in {inside}: this svcnb was installed from a build without them; "
        "reinstall it from a wheel (pip install --force-reinstall 'svcnb[lab]')"
    )


def names() -> list[str]:
    """The shipped notebooks' names without ``.ipynb``, in order."""
    return sorted(p.stem for p in shipped().glob("*.ipynb"))


@dataclass
class Copies:
    """What :func:`copy_into` did, by notebook file name."""

    folder: Path
    source: Path
    copied: list[str] = field(default_factory=list)  # were not in the folder
    updated: list[str] = field(default_factory=list)  # svcnb's untouched copy, now the new version
    kept: list[str] = field(default_factory=list)  # the user's changes: left as they are
    current: list[str] = field(default_factory=list)  # already the shipped version

    def lines(self) -> list[str]:
        """Plain sentences saying what was copied where and what was left alone."""
        out = []
        if self.copied:
            out.append(f"copied {_count(self.copied)} into {self.folder}: {', '.join(self.copied)}")
        if self.updated:
            out.append(
                f"updated {_count(self.updated)} in {self.folder} to the version this svcnb "
                f"ships (nobody had changed them): {', '.join(self.updated)}"
            )
        if self.current:
            out.append(
                f"{_count(self.current)} already in {self.folder}, unchanged: "
                f"{', '.join(self.current)}"
            )
        if self.kept:
            out.append(
                f"kept {_count(self.kept)} you changed in {self.folder}, as they are: "
                f"{', '.join(self.kept)} (svcnb's versions are in {self.source})"
            )
        return out


def _count(items: list[str]) -> str:
    return f"{len(items)} notebook{'' if len(items) == 1 else 's'}"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copy_into(folder: str | os.PathLike[str]) -> Copies:
    """Copy every shipped notebook into ``folder`` (made when missing); see the module doc for
    which existing files are replaced (only svcnb's own, unchanged since it wrote them)."""
    source = shipped()
    target = Path(folder).resolve()
    target.mkdir(parents=True, exist_ok=True)
    record_path = target / RECORD
    record = _read_record(record_path)
    result = Copies(folder=target, source=source)
    wrote = False
    for notebook in sorted(source.glob("*.ipynb")):
        data = notebook.read_bytes()
        digest = _digest(data)
        dest = target / notebook.name
        if dest.resolve() == notebook.resolve():  # the working folder is the source itself
            result.current.append(notebook.name)
            continue
        if not dest.exists() and not dest.is_symlink():
            try:
                with open(dest, "xb") as handle:  # never over a file made meanwhile
                    handle.write(data)
            except FileExistsError:
                result.kept.append(notebook.name)
                continue
            result.copied.append(notebook.name)
        elif not dest.is_file() or dest.is_symlink():
            result.kept.append(notebook.name)  # a folder or a link: not svcnb's to replace
            continue
        else:
            now = _digest(dest.read_bytes())
            if now == digest:
                result.current.append(notebook.name)
                continue
            if record.get(notebook.name) != now:
                result.kept.append(notebook.name)
                continue
            _replace(dest, data)
            result.updated.append(notebook.name)
        record[notebook.name] = digest
        wrote = True
    if wrote:
        _replace(record_path, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode())
    return result


def _read_record(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items()}


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (:func:`svcnb.files.write`): a notebook
    keeps the mode it had, a new one gets the umask's."""
    _files.write(path, data, secret=False, keep_mode=True)
