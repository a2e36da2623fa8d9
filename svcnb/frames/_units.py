"""Units of ram and disk, checked against the sizes plans state.

The rules (the assumptions ``units.ram`` and ``units.disk``, what is proven, what is NA):
docs/contracts.md §4, "Units". One VM that fits another unit than the one read in puts the
service's unit in doubt, so every value its plan does not confirm goes NA with it, not only that
VM's.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from svcnb.assumptions import Decision, Pins, assumption, decide
from svcnb.config import UNIT_CHOICES, config_path, unit_choice

from ._build import AssumptionWarning, RecordError, UnreadableValueWarning, resolve_pins
from ._schema import INT

__all__ = ["UnitCheck", "UnitWarning", "check_units", "resolve_units", "stated_sizes"]

# MiB in one of each unit
MIB = {"MiB": 1, "GiB": 1024}
# quantity -> (API key, frame column, the unit the column holds and values are assumed in)
QUANTITIES = {"ram": ("ram", "ram_mib", "MiB"), "disk": ("disk", "disk_gib", "GiB")}
# the assumption each unit is, by quantity
_ASSUMED = {"ram": assumption("units.ram"), "disk": assumption("units.disk")}
_CHECKED = 2**40  # values past this are no ram or disk size: not checked (and never overflow)

_SIZE = re.compile(
    r"(?<![A-Za-z0-9.])(?P<n>\d+(?:\.\d+)?)[ _]?(?P<u>[MGT])(?P<i>i?)B(?![A-Za-z])"
    r"(?:[-_ ]?(?P<what>[A-Za-z]+))?",
    re.IGNORECASE,
)
_SIZE_MIB = {"M": 1, "G": 1024, "T": 1024 * 1024}
_RAM_WORDS = frozenset({"ram", "mem", "memory"})
_DISK_WORDS = frozenset({"disk", "ssd", "nvme", "hdd", "storage", "drive"})
_OTHER_WORDS = frozenset({"bw", "bandwidth", "transfer", "traffic", "egress", "network"})
_MARKERS = _RAM_WORDS | _DISK_WORDS | _OTHER_WORDS
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[-_ :]*$")


class UnitWarning(UnreadableValueWarning):
    """Values of a quantity (ram, disk) look like another unit than the one they are read in:
    they are NA (see ``frame.attrs["unreadable"]``); the warning says how to pin the unit."""


@dataclass(frozen=True)
class UnitCheck:
    """What the plans' stated sizes say about the unit of one quantity (``ram`` or ``disk``).

    ``unit`` is the unit the values were read in (``pinned`` when the config or the caller
    set it); ``seen`` the unit the VMs whose plan states a size fit: ``"MiB"``, ``"GiB"``,
    ``"mixed"``, or None when none fits either (or no plan states a size). ``checked`` counts
    the VMs with a value whose plan states a size, ``agreeing`` those fitting ``unit``;
    ``disagreements`` are the ids of VMs fitting another unit instead, ``unknown`` the ids
    whose value is NA because of it (docs/contracts.md §4, Units).
    """

    quantity: str
    unit: str
    pinned: bool
    seen: str | None
    checked: int
    agreeing: int
    disagreements: tuple[Any, ...]
    unknown: tuple[Any, ...]
    # how the unit was decided (svcnb.assumptions): proven by the plans, pinned, or unknown
    decision: Decision | None = None

    @property
    def ok(self) -> bool:
        """No VM's value fits another unit than the one it is read in, and the unit is proven
        or pinned (an unknown one leaves every value NA)."""
        return not self.disagreements and (self.decision is None or self.decision.ok)

    @property
    def looks_like(self) -> str | None:
        """The unit the disagreeing VMs fit (None when none disagrees)."""
        if not self.disagreements:
            return None
        if self.seen in (None, "mixed", self.unit):
            return "another unit"
        return self.seen

    def summary(self) -> str:
        """One line for ``svcnb doctor``: proven (the evidence), pinned (where) or assumed."""
        decision = self.decision or Decision(_ASSUMED[self.quantity].name, "unknown")
        how = decision.text(config_path())
        if not self.checked:
            return f"{self.quantity}: no plan states a {self.quantity} size to check; {how}"
        line = (
            f"{self.quantity}: {how}; {self.checked} VM(s) checked against their plan's size, "
            f"{self.agreeing} fit {self.unit}"
        )
        if self.disagreements:
            line += (
                f", {len(self.disagreements)} fit {self.looks_like} instead (e.g. "
                f"{self.disagreements[0]!r}): {len(self.unknown)} value(s) NA. "
                + _pin_hint(self.quantity, self.looks_like or "")
            )
        return line


def _pin_hint(quantity: str, unit: str) -> str:
    if unit not in UNIT_CHOICES[quantity]:
        return (
            f"svcnb reads {quantity} in {' or '.join(UNIT_CHOICES[quantity])} only, so the "
            "values stay unknown"
        )
    return (
        f'If this service serves {quantity} in {unit}, pin it: [units] {quantity} = "{unit}" in '
        f"{config_path()}, or svcnb.frames.vms(records, units={{{quantity!r}: {unit!r}}})"
    )


@lru_cache(maxsize=4096)
def _stated_in(text: str) -> tuple[int | None, int | None]:
    """(ram MiB, disk MiB) one plan text states, None where it states none or is unclear."""
    ram: set[int] = set()
    unmarked: set[int] = set()
    disk: set[int] = set()
    end = 0  # past the previous size and the word after it
    for match in _SIZE.finditer(text):
        before = _WORD_BEFORE.search(text, end, match.start())
        end = match.end()
        if before is not None and before.group(1).lower() in _MARKERS:
            return None, None  # "RAM 2 GB SSD 50 GB": which word goes with which size?
        mib = Decimal(match["n"]) * _SIZE_MIB[match["u"].upper()]
        if mib != mib.to_integral_value() or mib <= 0:
            continue
        what = (match["what"] or "").lower()
        if what in _DISK_WORDS:
            disk.add(int(mib))
        elif what in _RAM_WORDS:
            ram.add(int(mib))
        elif what not in _OTHER_WORDS:
            unmarked.add(int(mib))
    ram = ram or unmarked
    return (
        next(iter(ram)) if len(ram) == 1 else None,
        next(iter(disk)) if len(disk) == 1 else None,
    )


def stated_sizes(slug: Any, name: Any) -> dict[str, int | None]:
    """The ram and disk sizes (MiB) a plan's slug and name state; None where they state none,
    more than one, or two that differ."""
    found = [_stated_in(t) for t in (slug, name) if isinstance(t, str)]
    out: dict[str, int | None] = {}
    for n, quantity in enumerate(("ram", "disk")):
        sizes = {f[n] for f in found if f[n] is not None}
        out[quantity] = sizes.pop() if len(sizes) == 1 else None
    return out


def resolve_units(
    units: Mapping[str, str] | None = None, pins: Pins | None = None
) -> dict[str, tuple[str | None, str | None]]:
    """quantity -> (the unit pinned, where), ``(None, None)`` where none is: ``units`` (the
    argument), over ``pins`` (a client's; None: the config file's ``[units]``)."""
    pins = resolve_pins(pins)
    out: dict[str, tuple[str | None, str | None]] = {}
    for quantity in QUANTITIES:
        pin = pins.get(_ASSUMED[quantity].name)
        out[quantity] = (pin.value, pin.where) if pin is not None else (None, None)
    for quantity, unit in (units or {}).items():
        out[quantity] = (unit_choice(quantity, unit, "the units argument"), "the units argument")
    return out


def _decided(
    quantity: str,
    ids: Sequence[Any],
    values: Any,
    stated: np.ndarray,
    pinned: tuple[str | None, str | None],
) -> _Outcome:
    """The unit of ``quantity``: pinned; else proven where every VM whose plan states a size
    fits it in one unit (and some do); else unknown. Unknown with plans that contradict a
    unit: the check's own outcome (NA where a plan does not confirm the value); unknown with
    no plan stating a size: every value NA."""
    name = _ASSUMED[quantity].name
    unit, where = pinned
    if unit is not None:
        return _with(
            _check(quantity, ids, values, stated, unit, True),
            Decision(name, "pinned", unit, where=where or ""),
        )
    first: _Outcome | None = None
    for candidate in UNIT_CHOICES[quantity]:
        outcome = _check(quantity, ids, values, stated, candidate, False)
        first = first or outcome
        check = outcome.check
        if check.agreeing and not check.disagreements:
            i = int(np.flatnonzero(stated > 0)[0])
            evidence = (
                f"{check.agreeing} VM(s) with a {quantity} size in their plan fit it in "
                f"{candidate} (e.g. {ids[i]!r}: {quantity} {values[i]}, the plan states "
                f"{int(stated[i])} MiB), none another unit"
            )
            return _with(outcome, decide(name, {}, (candidate, evidence), True))
    assert first is not None
    if first.check.checked:
        return _with(first, Decision(name, "unknown", None, "the plans contradict every unit"))
    present = ~np.asarray(pd.array(values, dtype=INT).isna(), dtype=bool)
    first.unknown = present
    first.values = None
    first.inexact = np.zeros(len(present), dtype=bool)
    first.assumed = bool(present.any())
    return _with(first, Decision(name, "unknown", None, f"no plan states a {quantity} size"))


def _with(outcome: _Outcome, decision: Decision) -> _Outcome:
    outcome.decision = decision
    outcome.check = replace(outcome.check, decision=decision)
    return outcome


def _stated_per_row(slugs: Any, names: Any) -> dict[str, np.ndarray]:
    """Per row, the ram and disk MiB its plan states (0 where none), parsing each distinct
    (slug, name) once."""
    cs, us = pd.factorize(pd.array(slugs, dtype="string"))
    cn, un = pd.factorize(pd.array(names, dtype="string"))
    pairs = (cs.astype(np.int64) + 1) * (len(un) + 1) + (cn.astype(np.int64) + 1)
    inverse, distinct = pd.factorize(pairs)
    out = {q: np.zeros(len(distinct), dtype=np.int64) for q in QUANTITIES}
    for n, pair in enumerate(distinct.tolist()):
        s, m = divmod(pair, len(un) + 1)
        sizes = stated_sizes(us[s - 1] if s else None, un[m - 1] if m else None)
        for quantity, size in sizes.items():
            out[quantity][n] = size or 0
    return {q: sizes[inverse] for q, sizes in out.items()}


@dataclass
class _Outcome:
    check: UnitCheck
    values: Any  # the column in its unit (Int64), or None when unchanged
    unknown: np.ndarray  # rows made NA by the check (a disagreement or a doubt)
    inexact: np.ndarray  # rows made NA by the conversion (not a whole number of the unit)
    example: tuple[Any, Any, int] | None  # (id, value, stated MiB) of the first disagreement
    decision: Decision | None = None
    assumed: bool = False  # every value NA: the unit is neither proven nor pinned


def _check(
    quantity: str,
    ids: Sequence[Any],
    values: Any,
    stated: np.ndarray,
    unit: str,
    pinned: bool,
) -> _Outcome:
    _, _, base = QUANTITIES[quantity]
    column = pd.array(values, dtype=INT)
    missing = np.asarray(column.isna(), dtype=bool)
    raw = column.to_numpy(dtype=np.int64, na_value=0)
    usable = ~missing & (np.abs(raw) <= _CHECKED)
    has = usable & (stated > 0)
    fits = {u: has & (raw * MIB[u] == stated) for u in UNIT_CHOICES[quantity]}
    fits["bytes"] = has & (raw == stated * 2**20)
    # Within a tenth of the plan's size is the unit read in (usable memory a little below the
    # plan's figure); anything else is not understood, whichever unit it fits.
    agree = has & (np.abs(raw * MIB[unit] - stated) <= stated // 10)
    disagree = has & ~agree
    fitting = [u for u in fits if (fits[u] & ~agree).any()]
    if not disagree.any():
        fitting = [unit] if agree.any() else []
    seen = fitting[0] if len(fitting) == 1 else ("mixed" if fitting else None)
    if disagree.any() and not fitting:
        seen = "an unknown unit"
    unknown = ~missing & ~agree if disagree.any() else np.zeros(len(raw), dtype=bool)
    # the column in its unit: value x MiB-per-unit / MiB-per-base-unit, exactly
    converted, inexact = None, np.zeros(len(raw), dtype=bool)
    if unit != base:
        scale_up, scale_down = MIB[unit], MIB[base]
        out = column.copy()
        if scale_up > scale_down:
            factor = scale_up // scale_down
            overflow = ~missing & (np.abs(raw) > np.iinfo(np.int64).max // factor)
            safe = np.where(overflow, 0, raw)
            out = pd.array(safe * factor, dtype=INT)
            inexact = overflow
        else:
            factor = scale_down // scale_up
            inexact = ~missing & (raw % factor != 0)
            out = pd.array(raw // factor, dtype=INT)
        out[missing | inexact] = pd.NA
        converted = out
    first = int(np.flatnonzero(disagree)[0]) if disagree.any() else None
    check = UnitCheck(
        quantity=quantity,
        unit=unit,
        pinned=pinned,
        seen=seen,
        checked=int(has.sum()),
        agreeing=int(agree.sum()),
        disagreements=tuple(ids[i] for i in np.flatnonzero(disagree).tolist()),
        unknown=tuple(ids[i] for i in np.flatnonzero(unknown).tolist()),
    )
    example = None if first is None else (ids[first], int(raw[first]), int(stated[first]))
    return _Outcome(check, converted, unknown, inexact & ~unknown, example)


def check_units(
    records: Iterable[Mapping[str, Any]],
    units: Mapping[str, str] | None = None,
    pins: Pins | None = None,
) -> dict[str, UnitCheck]:
    """Check the ram and disk of VM records (``GET /vms`` items or ``GET /vms/{id}``) against
    the sizes their plans state; ``{"ram": UnitCheck, "disk": UnitCheck}``.

    ``units`` pins units as ``svcnb.frames.vms`` does (over the config file's ``[units]``).
    Changes nothing and warns of nothing: this is the finding ``svcnb doctor`` reports.
    """
    ids, slugs, names = [], [], []
    values: dict[str, list[int | None]] = {q: [] for q in QUANTITIES}
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            continue
        ids.append(record.get("id", f"#{i}"))
        plan = record.get("plan")
        plan = plan if isinstance(plan, Mapping) else {}
        slugs.append(plan.get("slug") if isinstance(plan.get("slug"), str) else None)
        names.append(plan.get("name") if isinstance(plan.get("name"), str) else None)
        for quantity, (key, _, _) in QUANTITIES.items():
            value = record.get(key)
            ok = type(value) is int and abs(value) < 2**63
            values[quantity].append(value if ok else None)
    stated = _stated_per_row(slugs, names)
    resolved = resolve_units(units, pins)
    return {q: _decided(q, ids, values[q], stated[q], resolved[q]).check for q in QUANTITIES}


def apply_units(
    frame: pd.DataFrame,
    units: Mapping[str, str] | None,
    strict: bool,
    stacklevel: int,
    pins: Pins | None = None,
) -> None:
    """Check and convert ``frame``'s ram and disk columns in place (docs/contracts.md §4):
    NA where the unit is unknown or in doubt, counted in ``attrs["unreadable"]``, one warning
    per quantity; ``strict`` raises ``RecordError`` at the first such value instead."""
    resolved = resolve_units(units, pins)
    if frame.empty:
        return
    stated = _stated_per_row(frame["plan_slug"].array, frame["plan_name"].array)
    ids = frame["id"].tolist()
    for quantity, (key, column, base) in QUANTITIES.items():
        outcome = _decided(quantity, ids, frame[column].array, stated[quantity], resolved[quantity])
        decision = outcome.decision
        if decision is not None:
            decided = dict(frame.attrs.get("assumptions", {}))
            decided[decision.name] = {key: decision.state}
            frame.attrs["assumptions"] = decided
        if outcome.assumed:
            name = _ASSUMED[quantity].name
            first = int(np.flatnonzero(outcome.unknown)[0])
            hint = assumption(name).hint(config_path())
            if strict:
                raise RecordError(
                    "vms", ids[first], key, f"rests on the assumption {name}, unknown; {hint}"
                )
            example = frame[column].iloc[first]
            _lose(frame, column, outcome.unknown)
            warnings.warn(
                f"svcnb.frames.vms: {int(outcome.unknown.sum())} value(s) of {column} rest on "
                f"the assumption {name} ({assumption(name).meaning}), which nothing in the "
                f"answers proves ({decision.evidence if decision else ''}) and nothing pins, so "
                f"they are NA (e.g. {ids[first]!r}: {key} {example}); {hint}",
                AssumptionWarning,
                stacklevel=stacklevel + 1,
            )
            continue
        unit = outcome.check.unit
        if strict and outcome.example is not None:
            vm_id, value, size = outcome.example
            raise RecordError(
                "vms",
                vm_id,
                key,
                f"{key} {value} fits {outcome.check.looks_like}, not {unit}: its plan states "
                f"{size} MiB. {_pin_hint(quantity, outcome.check.looks_like or '')}",
            )
        if strict and outcome.inexact.any():
            i = int(np.flatnonzero(outcome.inexact)[0])
            raise RecordError("vms", ids[i], key, _inexact(quantity, unit, base))
        if outcome.values is not None:
            frame[column] = outcome.values
        lost = outcome.unknown | outcome.inexact
        if lost.any():
            _lose(frame, column, lost)
            warnings.warn(
                _warning(outcome, column, base, ids), UnitWarning, stacklevel=stacklevel + 1
            )


def _lose(frame: pd.DataFrame, column: str, rows: np.ndarray) -> None:
    """``rows`` of ``column`` NA, counted in ``attrs["unreadable"]``."""
    frame.loc[rows, column] = pd.NA
    counts = dict(frame.attrs.get("unreadable", {}))
    counts[column] = counts.get(column, 0) + int(rows.sum())
    frame.attrs["unreadable"] = counts


def _inexact(quantity: str, unit: str, base: str) -> str:
    return f"{quantity} read in {unit} is not a whole number of {base} (the column's unit)"


def _warning(outcome: _Outcome, column: str, base: str, ids: list[Any]) -> str:
    check = outcome.check
    parts = []
    if outcome.example is not None:
        vm_id, value, size = outcome.example
        others = len(check.unknown) - len(check.disagreements)
        how = "pinned" if check.pinned else "read"
        parts.append(
            f"{check.quantity} of {len(check.disagreements)} VM(s) looks like "
            f"{check.looks_like}, not {check.unit} as {how} (e.g. {vm_id!r}: "
            f"{check.quantity} {value}, its plan states {size} MiB), so the service's unit is in "
            f"doubt: {column} is NA (unknown) for them"
            + (
                f" and for {others} other VM(s) whose plan does not confirm a unit"
                if others
                else ""
            )
            + ". "
            + _pin_hint(check.quantity, check.looks_like or "")
            + "; a pinned unit is converted exactly"
        )
    if outcome.inexact.any():
        i = int(np.flatnonzero(outcome.inexact)[0])
        parts.append(
            f"{int(outcome.inexact.sum())} VM(s) have a {check.quantity} that "
            f"{_inexact(check.quantity, check.unit, base)} (e.g. {ids[i]!r}): NA"
        )
    return f"svcnb.frames.vms: {'. '.join(parts)}."
