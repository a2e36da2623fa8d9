"""An underscore module is its package's own: imported only inside that package.

Every module under ``svcnb/`` is parsed (not imported) and each import in it, at any depth
(functions, ``TYPE_CHECKING`` blocks, ``from svcnb.pkg import _module``, relative imports), is
checked: ``svcnb.<pkg>._<module>`` may be imported only by modules of ``svcnb.<pkg>``; what another
package needs, ``svcnb.<pkg>`` exports. The top-level ``svcnb/_*.py`` modules are the root's own in
the same way: its subpackages do not import them, but for the command line (``svcnb.cli``), the
top floor that drives them, and the two rooms that grew out of the root (``svcnb.learn``,
``svcnb.jupyter``), which start or name a sandbox through ``svcnb._connect``.
"""

from __future__ import annotations

import ast

from _imports import ROOT, imported, is_package, module_name

# Who may import the root's top-level private modules: the root itself, the command line, and
# the rooms that join a sandbox to the client side as connect() does (the lab's kernels find
# their sandbox by its connection file, a rehearsal's client takes the sandbox's pins). Every
# layer below is held to the rule.
ROOT_ROOMS = ("svcnb", "svcnb.cli", "svcnb.jupyter", "svcnb.learn")


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


# --- the tests' own reach into svcnb's private modules -------------------------------------------
# A test reads svcnb through its public names, as a user would; the few that reach an underscore
# module (or an underscore name) say why here, by the private module they reach. A new reach needs
# a reason below and fits under the ceiling; the ceiling only comes down.
TESTS = ROOT.parent / "tests"
# 179 before the public-name pass, 154 after it; 161 with the tests merged beside it (the grace
# pin against the sandbox's own GRACE, the lab's session store, the grid rows ITables would send,
# the themed legend), each under a reason below; 132 once the root's doctor, recorder, rehearsal,
# lab, demo and notebooks became the public modules of svcnb.learn and svcnb.jupyter; 135 with the
# grid tests beside them (a grid's rows and options updated in place, read without a browser);
# 112 once the client, sandbox, webhooks, alerts and store tests read what those packages export;
# 83 once svcnb.client exported its paging loop, governor, budgets and wires; 70 once
# svcnb.panels exported the pieces its panels are built of (grid, PlotView, shown_in); 47 once
# svcnb.sandbox exported its state builder, life rules, tables and a dialect file's points; 34
# once svcnb.store (pull, scrub, differs, Location) and svcnb.reports (COLUMNS, cell_text,
# reusable, STATUS_COLOURS, legend_outside; svcnb.reports.firewall parse_ips, ANY_WORDS) exported
# what their tests read; 30 with the event log's columns exported (svcnb.store.EVENT_COLUMNS) and
# the doctor tests replacing svcnb.configured_client, the client every command connects with; 28
# with the rehearsal's foreign-currency wallet read through state_from_store on a written store
CEILING = 28
REASONS = {
    "svcnb._connect": "where connect() finds a background sandbox (patched); lazy-name identity",
    "svcnb.alerts._deliver": "the CA bundle check of an alert endpoint, fuzzed with no receiver",
    "svcnb.cli.sandbox._speak_dialect_file": "what the command does with a dialect file, unserved",
    "svcnb.client._progressive": "its progress display interval stretched (no user setting)",
    "svcnb.client._records": "the client's record keys against the frames' (no public table)",
    "svcnb.client._shared_budget": "its lock and grant waits shortened; its first schema",
    "svcnb.client._vms": "shortens the stop poll's real-time waits",
    "svcnb.client._wire": "a TLS failure urllib3 raises mapped to retryable or not, with no server",
    "svcnb.panels._audit": "the accept form's check at a fixed now (the panel reads the clock)",
    "svcnb.sandbox._deliveries": "its delivery timeout shortened; its couriers replaced or read",
    "svcnb.sandbox._serve": "the lazy svcnb.sandbox.serve is the function its module defines",
    "svcnb.sandbox._speak": "how the sandbox speaks ram in each unit (a bare `ram` is no API)",
    "svcnb.store._catalog": "the store's file sequence, against what a pull wrote",
    "svcnb.store._legacy": "the legacy store's reader, the migration's ground truth",
    "svcnb.store._old_audit": "the old audit log's schema, migrated into the journal",
    "svcnb.store._segments": "a store's segments read directly, to damage and check them",
    "svcnb.store._snapshots": "a snapshot's expected files and state, to damage and check them",
}


def _test_reaches() -> list[tuple[str, int, str, str]]:
    """Each private name a test file imports: (file, line, dotted name, the private module)."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                dotted = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                dotted = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in dotted:
                owner = _private_reach(name)
                if owner is not None:
                    found.append((str(path.relative_to(TESTS)), node.lineno, name, owner))
    return found


def _private_reach(dotted: str) -> str | None:
    """The underscore module (or underscore name of a public module) ``dotted`` reaches."""
    parts = dotted.split(".")
    if parts[0] != "svcnb":
        return None
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[: i + 1])
    return None


def test_the_tests_walk_sees_private_reaches():
    assert _private_reach("svcnb.sandbox._twin.POINTS") == "svcnb.sandbox._twin"
    assert _private_reach("svcnb.cli.sandbox._speak_dialect_file") == (
        "svcnb.cli.sandbox._speak_dialect_file"
    )
    assert _private_reach("svcnb.sandbox.read_dialect_file") is None
    assert any(owner == "svcnb.sandbox._serve" for *_, owner in _test_reaches())


def test_tests_reach_few_private_names_each_for_a_reason():
    reaches = _test_reaches()
    unexplained = sorted({owner for *_, owner in reaches} - set(REASONS))
    assert not unexplained, (
        "tests import these private modules with no reason in REASONS (import the public name "
        f"from the package instead, or say why a test needs it): {unexplained}"
    )
    stale = sorted(set(REASONS) - {owner for *_, owner in reaches})
    assert not stale, f"no test imports these any more: drop their reasons: {stale}"
    assert len(reaches) <= CEILING, (
        f"{len(reaches)} private imports in tests, over the ceiling of {CEILING}: import the "
        "public name (svcnb, or the subpackage's __init__) instead"
    )
