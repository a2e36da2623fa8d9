"""Every assumption svcnb may rest a value on: what the answers themselves do not prove.

The spec leaves some meanings "not shown" (a money scale, the unit of ram, the zone of a time
written without one). None of them has a default: each is, per field and per answer,

- **proven** by evidence in the answers (the reader says which evidence),
- **pinned** by the user (the config file, per account or for all; ``svcnb doctor
  --write-config``; a sandbox hands over the pins of its own dialect), or
- **unknown**: the values resting on it are NA, with one warning naming the assumption and the
  config line that pins it.

``ASSUMPTIONS`` is the one list of them. A reader names an assumption only through
:func:`assumption` (an unregistered name is an error), so the list, docs/contracts.md section 0
("Assumptions") and the readers cannot drift apart; ``tests/test_assumptions.py`` holds all three
together. Adding one is one line below: its name is where it is pinned (``table.key`` of the
config file, ``[accounts.NAME.table]`` per account).

This module is a leaf: it imports nothing of svcnb.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = [
    "ASSUMPTIONS",
    "Assumption",
    "Decision",
    "Pin",
    "Pins",
    "UnregisteredAssumptionError",
    "assumption",
    "decide",
    "pin_value",
]


class UnregisteredAssumptionError(KeyError):
    """A reader named an assumption that ``ASSUMPTIONS`` does not list: register it there."""


def _zone(value: str) -> str:
    """An IANA zone name (``Europe/Berlin``) or ``UTC``, as ``zoneinfo`` knows it."""
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(
            f"{value!r} is not a time zone this machine knows; give an IANA name such as "
            '"UTC" or "Europe/Berlin"'
        ) from exc
    return value


@dataclass(frozen=True)
class Assumption:
    """One meaning the answers may leave open.

    ``name`` is ``table.key``: where the config file pins it. ``choices`` are the values a pin
    may take (spelled as svcnb spells them, matched without case), or ``check`` reads a free
    value (a zone). ``evidence`` says what in the answers proves it (``""``: nothing can, only a
    pin); ``example`` is the pin most often right, for the hint.
    """

    name: str
    meaning: str
    evidence: str
    choices: tuple[str, ...] = ()
    check: Callable[[str], str] | None = None
    example: str = ""

    @property
    def table(self) -> str:
        return self.name.partition(".")[0]

    @property
    def key(self) -> str:
        return self.name.partition(".")[2]

    def line(self, value: str | None = None) -> str:
        """The config line that pins it: ``[units] ram = "GiB"``."""
        return f'[{self.table}] {self.key} = "{value or self.example or self.choices[0]}"'

    def hint(self, config: object, value: str | None = None) -> str:
        """How to pin it, for a warning or a doctor line: the line, the file, the choices."""
        shown = value or self.example or self.choices[0]
        others = [c for c in self.choices if c != shown]
        choice = f" (or {' / '.join(repr(c) for c in others)})" if others else ""
        if self.check is not None and not self.choices:
            choice = " (an IANA zone name)"
        return (
            f"pin it: {self.line(value)}{choice} in {config}, or under "
            f"[accounts.NAME.{self.table}] for one account"
        )


ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in (
        # one entry each: name (table.key of the config file), what it decides, the evidence
        # that proves it (none: only a pin can), the values a pin may take
        Assumption(
            "money.scale",
            "the scale of an amount written without a decimal point or a stated exponent: "
            "major units (1250 is 1,250.00) or minor (1250 is 12.50)",
            'a value of the same field written with a decimal point ("12.50", 12.5) proves '
            "major units",
            ("major", "minor"),
        ),
        Assumption(
            "units.ram",
            "the unit of a VM's ram",
            "the VMs' ram fits the sizes their plans state (s-2vcpu-4gb, Standard 4 GB) in one "
            "unit, and no VM's ram fits another",
            ("MiB", "GiB"),
        ),
        Assumption(
            "units.disk",
            "the unit of a VM's disk",
            "the VMs' disk fits the sizes their plans state (-80gb-disk, 80 GB SSD) in one "
            "unit, and no VM's disk fits another",
            ("GiB", "MiB"),
        ),
        Assumption(
            "times.zone",
            "the zone of a time written without a zone or offset",
            "",
            check=_zone,
            example="UTC",
        ),
    )
}


def assumption(name: str) -> Assumption:
    """The registered assumption ``name``; UnregisteredAssumptionError when there is none."""
    try:
        return ASSUMPTIONS[name]
    except KeyError:
        raise UnregisteredAssumptionError(
            f"{name!r} is no registered assumption (svcnb.assumptions.ASSUMPTIONS: "
            f"{', '.join(ASSUMPTIONS)}); register it there and in docs/contracts.md section 0"
        ) from None


def pin_value(name: str, value: object) -> str:
    """``value`` as a pin of ``name`` (``"gib"`` is ``"GiB"``); ValueError naming the choices."""
    found = assumption(name)
    if isinstance(value, str):
        for choice in found.choices:
            if value.strip().lower() == choice.lower():
                return choice
        if found.check is not None and value.strip():
            return found.check(value.strip())
    allowed = ", ".join(repr(c) for c in found.choices) or "an IANA zone name"
    raise ValueError(f"{found.key} = {value!r} is not a pin of {name}; use {allowed}")


@dataclass(frozen=True)
class Pin:
    """A pinned assumption: its value and where it was pinned (``pinned by <where>``)."""

    value: str
    where: str


Pins = Mapping[str, Pin]


@dataclass(frozen=True)
class Decision:
    """What one field's values rest on for one assumption.

    ``state``: ``"stated"`` (every value states it itself: nothing is assumed), ``"proven"``
    (``evidence`` names what in the answers proves ``value``), ``"pinned"`` (``where``),
    ``"unknown"`` (the values resting on it are NA).
    """

    name: str
    state: str
    value: str | None = None
    evidence: str = ""
    where: str = ""

    @property
    def ok(self) -> bool:
        return self.state != "unknown"

    def text(self, config: object) -> str:
        """One phrase for a doctor line: ``proven: ...``, ``pinned by ...``, ``assumed: ...``."""
        if self.state == "stated":
            return f"{self.name}: {self.evidence or 'stated by every value'}"
        if self.state == "proven":
            return f"{self.name} = {self.value} proven: {self.evidence}"
        if self.state == "pinned":
            return f"{self.name} = {self.value} pinned by {self.where}"
        return (
            f"{self.name} assumed, not proven ({self.evidence}): those values are NA; "
            + assumption(self.name).hint(config, self.value)
        )


def decide(name: str, pins: Pins, evidence: tuple[str, str] | None, needed: bool) -> Decision:
    """The one rule: not ``needed`` (every value states it) -> stated; evidence (value, what
    shows it) -> proven; a pin -> pinned; else unknown. Evidence wins over a pin only where
    they agree: a pin the answers contradict is the user's word, and stays (the reader then
    finds the values that disagree)."""
    assumption(name)
    pin = pins.get(name)
    if not needed:
        return Decision(name, "stated")
    if pin is not None:
        return Decision(name, "pinned", pin.value, where=pin.where)
    if evidence is not None:
        return Decision(name, "proven", evidence[0], evidence[1])
    return Decision(name, "unknown")
