"""One list of assumptions (``svcnb.assumptions.ASSUMPTIONS``): every reader that decides or
warns on one names it through ``assumption()``/``decide()``, and docs/contracts.md section 0
lists exactly those, each with its evidence rule and its pin."""

from __future__ import annotations

import ast
import re

import pytest
from _imports import ROOT

from svcnb import config
from svcnb.assumptions import (
    ASSUMPTIONS,
    Decision,
    UnregisteredAssumptionError,
    assumption,
    decide,
)

DOC = ROOT.parent / "docs" / "contracts.md"
# every function a reader names an assumption through; the first argument is its name
_NAMING = {"assumption", "decide", "assume", "Decision"}


def _named_in_code() -> dict[str, list[str]]:
    """Every assumption name svcnb's code passes as a literal, with where."""
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "svcnb.assumptions import" not in text:
            continue  # a reader names assumptions through the registry, which it imports
        tree = ast.parse(text)
        # module constants a reader names an assumption by (NO_CONTINUATION = "paging....")
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for target in node.targets
            if isinstance(target, ast.Name) and isinstance(node.value.value, str)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if isinstance(first, ast.Name) and first.id in constants:
                first = ast.Constant(constants[first.id])
            if name in _NAMING and isinstance(first, ast.Constant) and isinstance(first.value, str):
                where = f"{path.relative_to(ROOT.parent)}:{node.lineno}"
                found.setdefault(first.value, []).append(where)
    return found


def _documented() -> dict[str, tuple[str, str]]:
    """The rows of the "Assumptions" table of contracts section 0: name -> (evidence, pin)."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### Assumptions", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\|\s*`([a-z_]+\.[a-z_]+)`\s*\|(.*)\|(.*)\|(.*)\|\s*$", line)
        if match:
            rows[match.group(1)] = (match.group(3).strip(), match.group(4).strip())
    return rows


def test_every_assumption_a_reader_names_is_registered():
    unregistered = {n: w for n, w in _named_in_code().items() if n not in ASSUMPTIONS}
    assert not unregistered, f"register these in svcnb.assumptions.ASSUMPTIONS: {unregistered}"
    assert set(_named_in_code()) == set(ASSUMPTIONS), "a registered assumption no reader uses"


def _choices_outside_the_registry() -> list[str]:
    """Places that read a pin table of the config file themselves (``read_config()``, or a
    key such as ``"paging"`` or ``"port_sentinels"`` looked up in a table) instead of asking
    ``svcnb.config.pins()``: a choice made there would be no registered assumption."""
    # the tables and keys no frame, record or report names otherwise ("deliveries" and
    # "vm_status" are frame names too: read_config() outside config.py finds those readers)
    keys = {"paging", "vocabulary", "firewall", "port_sentinels", "no_continuation_is_end"}
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if "sandbox" in path.parts:
            continue  # the sandbox's own config is its own
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = list(ast.walk(tree))
        if path == ROOT / "config.py":
            # the one reader of the file: only pins() (and its helpers) read the pin tables
            nodes = [
                n
                for f in tree.body
                if isinstance(f, ast.FunctionDef) and f.name not in {"pins", "_table"}
                for n in ast.walk(f)
                if not (isinstance(n, ast.Call) and getattr(n.func, "id", None) == "read_config")
            ]
        for node in nodes:
            looked = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "get" and node.args:
                    looked = node.args[0]
            elif isinstance(node, ast.Subscript):
                looked = node.slice
            if isinstance(looked, ast.Constant) and looked.value in keys:
                found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {looked.value!r}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "read_config":
                found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} read_config()")
    return found


# the alerts' own [alerts] table and the budget's [budget]: settings, not assumptions
_NOT_PINS = ("svcnb/alerts/_rules.py",)


def test_no_reader_makes_a_choice_the_registry_does_not_hold():
    """Every assumption is read through ``config.pins()`` (and decided by ``decide()``): a
    module reading ``[paging]``, ``[deliveries]``, ``[vocabulary]`` or ``[firewall]`` itself
    would pin and decide it a second way, outside the one registry."""
    found = [f for f in _choices_outside_the_registry() if not f.startswith(_NOT_PINS)]
    assert found == [], found


def test_an_unregistered_name_is_an_error_wherever_a_reader_uses_it():
    with pytest.raises(UnregisteredAssumptionError, match="paging.total"):
        assumption("paging.total")
    with pytest.raises(UnregisteredAssumptionError):
        decide("paging.total", {}, None, True)


def test_the_doc_lists_each_assumption_with_its_evidence_rule_and_its_pin():
    documented = _documented()
    assert set(documented) == set(ASSUMPTIONS)
    for name, (evidence, pin) in documented.items():
        found = ASSUMPTIONS[name]
        assert f"`{found.line()}`" in pin, (name, pin)
        if found.evidence:
            assert evidence.rstrip(".") in found.evidence or found.evidence in evidence, name
        else:
            assert evidence.startswith("none"), (name, evidence)


def test_a_pin_is_read_per_account_over_the_one_for_all(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(
        '[units]\nram = "gib"\n[money]\nscale = "major"\n'
        '[accounts.prod]\nbase_url = "https://api.example.com"\ntoken_env = "SVC_TOKEN_PROD"\n'
        '[accounts.prod.money]\nscale = "minor"\n[accounts.prod.times]\nzone = "Europe/Berlin"\n',
        encoding="utf-8",
    )
    everyone = config.pins(path=path)
    assert {n: p.value for n, p in everyone.items()} == {"units.ram": "GiB", "money.scale": "major"}
    prod = config.pins("prod", path=path)
    assert prod["money.scale"].value == "minor" and prod["units.ram"].value == "GiB"
    assert prod["times.zone"].value == "Europe/Berlin"
    assert prod["money.scale"].where == f"{path} [accounts.prod.money] scale"
    assert set(config.accounts(path)) == {"prod"}  # the pin tables are no unknown keys


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[times]\nzone = "Mars/Olympus"\n', "not a time zone"),
        ('[money]\nscale = "cents"\n', "'cents' is not a pin of money.scale"),
        ('[money]\nscal = "major"\n', "'scal' pins nothing; the keys are scale"),
    ],
)
def test_a_pin_svcnb_cannot_take_is_an_error_naming_the_file(tmp_path, text, problem):
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(config.ConfigError, match=problem) as raised:
        config.pins(path=path)
    assert str(path) in str(raised.value)


def test_a_decision_says_proven_pinned_or_assumed_never_proven_without_evidence():
    assert decide("money.scale", {}, None, False).state == "stated"
    proven = decide("money.scale", {}, ("major", "a point"), True)
    assert proven.text("cfg") == "money.scale = major proven: a point"
    unknown = decide("money.scale", {}, None, True)
    assert not unknown.ok and "assumed, not proven" in unknown.text("cfg")
    assert '[money] scale = "major"' in unknown.text("cfg")
    assert Decision("units.disk", "pinned", "GiB", where="x").text("c") == (
        "units.disk = GiB pinned by x"
    )
