"""The layers import downwards only, and the sandbox and the client side meet only over HTTP.

Every module under ``svcnb/`` is parsed (not imported) and each import in it, at any depth, is
held to the floors below: a room imports only rooms on lower floors (or itself). ``client`` and
``frames`` share a floor, so neither imports the other; so do ``reports`` and ``webhooks``, and
``plans`` and ``alerts``. The sandbox imports nothing of svcnb, and only the rooms that join the
two sides (``connect()``, the command line, the demo in ``jupyter``, the copy of a store and the
dialect recorder in ``learn``) import it: ``webhooks`` takes any clock, so it shares nothing with
the sandbox.
"""

from __future__ import annotations

from _imports import ROOT, imported, module_name

# room (a package or a top-level module of svcnb) -> its floor
FLOORS = {
    "errors": 0,
    "files": 0.5,  # between the errors it raises and the leaves that write files through it
    "assumptions": 0,
    "config": 1,
    "extras": 1,
    "money": 1,
    "times": 1,
    "vocab": 2,
    "client": 3,
    "frames": 3,
    "_connect": 4,
    "store": 4,
    "reports": 5,
    "webhooks": 5,
    "plans": 6,
    "alerts": 6,
    "learn": 6,
    "panels": 7,
    "jupyter": 8,
    "cli": 9,
    "__main__": 10,
}
# who may import the sandbox: the rooms that start or speak to one on purpose
JOIN_BOTH_SIDES = {"_connect", "cli", "jupyter", "learn"}
# what the sandbox may import of svcnb: the one writer and reader of files that hold a secret or
# come from elsewhere (standard library only, and of svcnb the errors, a leaf)
SHARED_WITH_SANDBOX = {"files"}


def _room(dotted: str) -> str | None:
    parts = dotted.split(".")
    return parts[1] if parts[0] == "svcnb" and len(parts) > 1 else None


def _arrows() -> set[tuple[str, str, str]]:
    """(importing module, its room, the room it imports) for every import between two rooms;
    the package face ``svcnb/__init__.py`` hands every public name on and is no room."""
    found = set()
    for path in sorted(ROOT.rglob("*.py")):
        importer = module_name(path)
        here = _room(importer)
        if here is None:
            continue
        for dotted in imported(path):
            there = _room(dotted)
            # `from svcnb import frames` reaches the room svcnb.frames; `from svcnb import
            # Client` names no room (the face hands it on) and is not an arrow here
            if there is None or there == here:
                continue
            if (ROOT / there / "__init__.py").is_file() or (ROOT / f"{there}.py").is_file():
                found.add((importer, here, there))
    return found


def test_every_room_has_a_floor():
    rooms = {p.stem for p in ROOT.glob("*.py") if p.stem != "__init__"}
    rooms |= {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert rooms == set(FLOORS) | {"sandbox"}, "name the new room's floor in FLOORS"


def test_imports_run_down_the_floors_only():
    upward = sorted(
        f"  {importer} ({here}, floor {FLOORS[here]}) imports {there} (floor {FLOORS[there]})"
        for importer, here, there in _arrows()
        if there != "sandbox" and here != "sandbox" and FLOORS[there] >= FLOORS[here]
    )
    assert not upward, "imports that do not run down the floors:\n" + "\n".join(upward)


def test_the_sandbox_and_the_client_side_meet_only_over_http():
    arrows = _arrows()
    out_of_sandbox = sorted(
        f"  {i} imports {t}"
        for i, h, t in arrows
        if h == "sandbox" and t not in SHARED_WITH_SANDBOX
    )
    assert not out_of_sandbox, "the sandbox imports svcnb:\n" + "\n".join(out_of_sandbox)
    into_sandbox = sorted(
        f"  {i} imports the sandbox"
        for i, h, t in arrows
        if t == "sandbox" and h not in JOIN_BOTH_SIDES
    )
    assert not into_sandbox, "\n".join(into_sandbox)


def test_what_the_sandbox_shares_imports_only_the_errors():
    leaving = sorted(
        f"  {i} imports {t}" for i, h, t in _arrows() if h in SHARED_WITH_SANDBOX and t != "errors"
    )
    assert not leaving, "\n".join(leaving)


def test_the_walk_sees_an_upward_import():
    # what the floors test reads: a function-level import is an arrow too
    arrows = _arrows()
    assert ("svcnb.cli.listen", "cli", "sandbox") in arrows
    assert ("svcnb.panels._vms", "panels", "plans") in arrows
