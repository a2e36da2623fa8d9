"""The suite's one Hypothesis profile, and each fuzzer's example count under it.

Profile ``svcnb`` (what ``make test`` and CI run) and ``svcnb-all`` (``make test-all``, chosen by
``SVCNB_HYPOTHESIS_PROFILE=svcnb-all``) differ in the number of examples only. Neither has a
per-example deadline: what the fuzzers test is svcnb's own deadlines, and on a loaded CI box an
example's time says nothing; nor may a slow draw fail a run (``too_slow``), big draws being what
some fuzzers are for. A fuzzer names its full count with ``fuzz(N)``: ``svcnb-all`` draws N
examples, ``svcnb`` 15 % of them (at least 10), the same share as for a test that names none.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FULL = 100  # svcnb-all's default count, and the scale of every fuzz(N)
QUICK = 15

settings.register_profile(
    "svcnb",
    deadline=None,
    max_examples=QUICK,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("svcnb-all", settings.get_profile("svcnb"), max_examples=FULL)
settings.load_profile(os.environ.get("SVCNB_HYPOTHESIS_PROFILE", "svcnb"))


def examples(full: int) -> int:
    """``full`` under svcnb-all; the loaded profile's share of it otherwise (at least 10)."""
    return max(min(full, 10), full * settings.default.max_examples // FULL)


def fuzz(full: int, *also: HealthCheck, **more: object) -> settings:
    """The loaded profile with ``examples(full)`` examples; ``also``: health checks this
    fuzzer may fail besides the profile's (e.g. a function-scoped fixture it only reads)."""
    base = settings.default
    return settings(
        base,
        max_examples=examples(full),
        suppress_health_check=[*base.suppress_health_check, *also],
        **more,
    )
