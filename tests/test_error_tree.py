"""``SvcnbError`` is the root of everything svcnb raises on purpose.

Every module of the package is imported and every exception class defined in svcnb is found;
each must subclass ``SvcnbError``, or be listed below as internal with the reason it never
reaches a user. The tree drawn in the ``svcnb.errors`` docstring must name every public one.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import svcnb
import svcnb.errors
from svcnb.errors import SvcnbError

# Internal exceptions: raised and caught inside one layer, never seen by a user.
INTERNAL = {
    "svcnb.sandbox._envelopes.ApiFailure": "the sandbox turns it into a failure envelope it "
    "answers",
    "svcnb.sandbox._http.DroppedConnection": "the sandbox raises it to cut a connection on purpose",
    "svcnb.sandbox._http._Refused": "the sandbox's body parser answers it as a 400 envelope",
    "svcnb.store._snapshots.Unreadable": "the store catches it and warns or raises StoreError",
    "svcnb.assumptions.UnregisteredAssumptionError": "a reader names an assumption the registry "
    "lacks: a programming error tests/test_assumptions.py catches, never a user's",
    "svcnb.cli.report.UserError": "`svcnb report` catches it and prints one line (exit 2)",
    "svcnb.client._wire.WireError": "the request path retries it or raises TransportError",
    "svcnb.client._wire.BadEncoding": "the request path raises ApiError naming the encoding",
    "svcnb.jupyter.notebooks.NotebooksMissing": "svcnb demo and lab print it in one line (exit 2)",
    "svcnb.reports._reuse._Unkeyable": "the reuse cache catches it and computes the answer anew",
}
# Public, but outside the tree because the sandbox may import nothing of svcnb; the errors
# docstring names it all the same.
SANDBOX_OWN = {
    "svcnb.sandbox._saved.StateError": "a saved state the sandbox cannot start from",
}


def _modules() -> list[str]:
    names = ["svcnb"]
    for info in pkgutil.walk_packages(svcnb.__path__, "svcnb."):
        names.append(info.name)
    return sorted(names)


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        if name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            defined_here = value.__module__ == name
            if defined_here and issubclass(value, BaseException):
                found[f"{name}.{value.__qualname__}"] = value
    return found


CLASSES = _exception_classes()
ERRORS = {k: v for k, v in CLASSES.items() if not issubclass(v, Warning)}


def test_the_walk_finds_the_errors_of_every_layer():
    short = {cls.__name__ for cls in ERRORS.values()}
    assert {"ApiError", "StoreError", "RecordError", "ConfigError", "VocabularyError"} <= short
    assert {"SignatureError", "PayloadError", "TransportError", "ApiFailure"} <= short


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_every_error_svcnb_defines_is_an_svcnb_error_or_internal(name):
    cls = ERRORS[name]
    if name in INTERNAL:
        return  # listed with the reason it never reaches a user
    if name in SANDBOX_OWN:
        assert issubclass(cls, ValueError), f"{name}: the sandbox's own errors are ValueErrors"
        return
    assert issubclass(cls, SvcnbError), (
        f"{name} does not subclass SvcnbError: give it SvcnbError as its first base (keeping "
        "its builtin, e.g. (SvcnbError, ValueError)), or list it in INTERNAL with the reason it "
        "never reaches a user"
    )


def test_the_internal_list_holds_only_classes_that_exist():
    assert set(INTERNAL) | set(SANDBOX_OWN) <= set(ERRORS), sorted(
        (set(INTERNAL) | set(SANDBOX_OWN)) - set(ERRORS)
    )


def test_the_tree_in_the_errors_docstring_names_every_public_error():
    doc = svcnb.errors.__doc__ or ""
    public = {cls.__name__ for name, cls in ERRORS.items() if name not in INTERNAL}
    missing = sorted(n for n in public if n not in doc)
    assert not missing, f"svcnb.errors' docstring tree lacks {missing}"


def test_every_public_error_is_exported_by_its_package():
    for name, cls in ERRORS.items():
        if name in INTERNAL:
            continue
        package = importlib.import_module(cls.__module__.split("._")[0])
        assert getattr(package, cls.__name__, None) is cls, (
            f"{cls.__name__} is not exported by {package.__name__}"
        )
