"""An underscore module is its package's own: imported only inside that package.

Every module under ``svcnb/`` is parsed (not imported) and each import in it, at any depth
(functions, ``TYPE_CHECKING`` blocks, ``from svcnb.pkg import _module``, relative imports), is
checked: ``svcnb.<pkg>._<module>`` may be imported only by modules of ``svcnb.<pkg>``; what another
package needs, ``svcnb.<pkg>`` exports. The top-level ``svcnb/_*.py`` modules are the root's own in
the same way: its subpackages do not import them, but for the command line (``svcnb.cli``), the
top floor that drives them.
"""

from __future__ import annotations

from _imports import ROOT, imported, is_package, module_name

# Who may import the root's top-level private modules: the root itself, and the command line,
# whose doctor, demo, lab and sandbox --from-store commands drive the root's _doctor, _demo,
# _lab and _rehearse (they belong to no layer below). Every layer below is held to the rule.
ROOT_ROOMS = ("svcnb", "svcnb.cli")


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
        importer = module_name(path)
        package = importer if is_package(path) else importer.rpartition(".")[0]
        for dotted in imported(path):
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
    names = imported(ROOT / "sandbox" / "backends" / "vms.py")
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
