"""The public surface: ``svcnb.__all__`` is sorted and names every public name, and only those."""

from __future__ import annotations

import types

import svcnb
import svcnb.errors


def test_all_is_sorted():
    assert svcnb.__all__ == sorted(svcnb.__all__)


def test_all_is_complete_and_every_name_exists():
    for name in svcnb.__all__:  # the lazy ones land in the module's namespace when first used
        assert getattr(svcnb, name) is not None
    public = {
        name
        for name, value in vars(svcnb).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }
    assert set(svcnb.__all__) == public
    for name in svcnb.__all__:
        assert getattr(svcnb, name) is not None


def test_every_error_is_re_exported():
    assert svcnb.errors.__all__ == sorted(svcnb.errors.__all__)
    assert set(svcnb.errors.__all__) <= set(svcnb.__all__)
    for name in svcnb.errors.__all__:
        assert getattr(svcnb, name) is getattr(svcnb.errors, name)


def test_the_client_and_connect_are_public():
    assert {"Client", "connect"} <= set(svcnb.__all__)
    assert svcnb.Client.__module__.startswith("svcnb.client")
