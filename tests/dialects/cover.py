"""Which random dialects ``make test`` speaks: the fewest seeds that, beside the named dialects
it sweeps, draw every choice of every point the spec leaves open.

``make test-all`` sweeps every named dialect and 400 random seeds; ``make test`` sweeps the named
dialects of the quick tier (``tests/_tiers.py``: the default and ``acme``) and ``COVER``, a greedy
cover of the 400 seeds: with those two, every (point, choice) pair the seeds draw (each status or
billing word under each canonical one) and a fleet both under and over the dialect's default and
largest page, in eleven seeds. ``test_dialect_sweep`` holds ``COVER`` to that.
"""

from __future__ import annotations

import dataclasses

from _tiers import QUICK_DIALECTS

from svcnb.sandbox import Dialect

NAMED = ("default", "acme", "linkhdr", "cursor", "drf", "google", "hal", "zeropage", "capped")
NAMED_VMS = 57  # the fleet the named dialects are swept with
SEEDS = 400  # make test-all's random seeds
COVER = (253, 201, 336, 5, 349, 351, 391, 288, 180, 73, 49)


def fleet_size(seed: int) -> int:
    # sizes around the page caps the dialects draw (10..200), so short and capped pages occur
    return 5 + (seed * 37) % 180


def choices(name: str, vms: int) -> set[tuple[object, ...]]:
    """Each (point, choice) a dialect speaks (a word map: each canonical word's), and whether a
    fleet of ``vms`` fills more than the default page and more than the largest."""
    dialect = Dialect.parse(name)
    spoken: set[tuple[object, ...]] = set()
    for point in dataclasses.fields(dialect):
        if point.name == "name":
            continue
        value = getattr(dialect, point.name)
        if isinstance(value, dict):
            spoken.update((point.name, key, repr(word)) for key, word in value.items())
        else:
            spoken.add((point.name, repr(value)))
    spoken.add(("more than a default page", vms > dialect.page_default))
    spoken.add(("more than the largest page", vms > dialect.page_max))
    return spoken


def unspoken(seeds: tuple[int, ...]) -> set[tuple[object, ...]]:
    """What the 400 random seeds speak that the quick tier's named dialects and ``seeds`` do
    not."""
    drawn = set().union(*(choices(f"random:{s}", fleet_size(s)) for s in range(SEEDS)))
    named = set().union(*(choices(n, NAMED_VMS) for n in QUICK_DIALECTS))
    quick = set().union(*(choices(f"random:{s}", fleet_size(s)) for s in seeds))
    return drawn - named - quick
