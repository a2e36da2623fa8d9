"""What ``make test`` runs of a dialect sweep: the same check repeated over many dialects runs
there on a sample and in ``make test-all`` on every dialect named.

A check repeated per dialect asserts one behaviour; the dialects differ in how the service says
things, which the dialect sweeps (``tests/dialects``) and the frames' and client's own tests walk
one point at a time. The sample is the default dialect and ``acme``, the named dialect that
differs from it at the most points (23 of the choices the sweeps count: other words, money forms,
paging, delivery fields; ``test_dialect_sweep`` holds it to that), unless a test names its own.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

QUICK_DIALECTS = ("default", "acme")


def dialects(names: Iterable[str], quick: Iterable[str] = QUICK_DIALECTS) -> list:
    """``names`` as parameters, those outside ``quick`` marked slow (``make test-all``)."""
    keep = set(quick)
    return [n if n in keep else pytest.param(n, marks=pytest.mark.slow, id=n) for n in names]
