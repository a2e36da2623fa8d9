"""An underscore module is its package's own: imported only inside that package.

Every module under ``svcnb/`` is parsed (not imported) and each import in it, at any depth
(functions, ``TYPE_CHECKING`` blocks, ``from svcnb.pkg import _module``, relative imports), is
checked: ``svcnb.<pkg>._<module>`` may be imported only by modules of ``svcnb.<pkg>``; what another
package needs, ``svcnb.<pkg>`` exports. The top-level ``svcnb/_*.py`` modules are the root's own in
the same way: its subpackages do not import them, but for the command line (``svcnb.cli``), the
top floor that drives them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import svcnb

ROOT = Path(svcnb.__file__).parent

# Who may import the root's top-level private modules: the root itself, and the command line,
# whose doctor, demo, lab and sandbox --from-store commands drive the root's _doctor, _demo,
# _lab and _rehearse (they belong to no layer below). Every layer below is held to the rule.
ROOT_ROOMS = ("svcnb", "svcnb.cli")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _imported(path: Path) -> set[str]:
    """Every dotted name an import in ``path`` reaches: modules, and module.name for ``from``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module = _module_name(path).split(".")
    here = module if _is_package(path) else module[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = here[: len(here) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _private_module(dotted: str) -> str | None:
    """The underscore module of svcnb that ``dotted`` names or reaches into, if any."""
    parts = dotted.split(".")
    if parts[0] != "svcnb":
        return None
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            target = ROOT.parent.joinpath(*parts[: i + 1])
            if target.with_suffix(".py").is_file() or (target / "__init__.py").is_file():
                return ".".join(parts[: i + 1])
            return None  # a private name of a public module, not a module
    return None


def _crossings() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(ROOT.rglob("*.py")):
        importer = _module_name(path)
        package = importer if _is_package(path) else importer.rpartition(".")[0]
        for dotted in _imported(path):
            private = _private_module(dotted)
            if private is None:
                continue
            owner = private.rpartition(".")[0]
            inside = package == owner or package.startswith(owner + ".")
            if owner == "svcnb":  # the root's own: its top-level modules and the command line
                inside = package in ROOT_ROOMS
            if not inside:
                found.add((importer, private))
    return found


def test_the_walk_sees_imports_inside_a_package():
    names = _imported(ROOT / "sandbox" / "backends" / "vms.py")
    assert "svcnb.sandbox._envelopes.ApiFailure" in names  # `from .._envelopes import ...`
    assert _private_module("svcnb.sandbox._envelopes.ApiFailure") == "svcnb.sandbox._envelopes"
    assert _private_module("svcnb.config._replace") is None


def test_no_package_imports_another_packages_private_module():
    crossings = _crossings()
    shown = "\n".join(f"  {importer} imports {private}" for importer, private in sorted(crossings))
    assert not crossings, (
        "underscore modules imported from outside their package (export the name from the "
        f"owning package's __init__ and import that):\n{shown}"
    )
