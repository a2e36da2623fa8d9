"""Every assumption svcnb may rest a value on: what the answers themselves do not prove.

The rule (proven, pinned or unknown) and the list: docs/contracts.md §0, "Assumptions", which
``tests/test_assumptions.py`` holds to ``ASSUMPTIONS`` and to every reader. A reader names an
assumption only through :func:`assumption` or :func:`decide` (an unregistered name is an error),
so the three cannot drift apart. An entry's name is where it is pinned (``table.key`` of the
config file); a *keyed* one's pins are named ``NAME.KEY``. This module is a leaf: it imports
nothing of svcnb.
"""

from __future__ import annotations

import re
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
    "kept_pins",
    "pin_value",
    "split",
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


_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*(d|days?|h|hours?)", re.IGNORECASE)


def _span(value: str) -> str:
    """A length of time in days or hours (``3D``, ``72h``), as ``svcnb.reports`` reads
    durations; months are refused (they have no one length)."""
    if not _SPAN.fullmatch(value.strip()):
        raise ValueError(f'{value!r} is no length of time; give days or hours such as "3D"')
    return value.strip()


_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class Assumption:
    """One meaning the answers may leave open.

    ``name`` is ``table.key``: where the config file pins it; for a ``keyed`` one, the table
    (``vocabulary.vm_status``), pinned once per key (``locked = "suspended"``). ``choices`` are
    the values a pin may take (spelled as svcnb spells them, matched without case), ``keys``
    (keyed ones with fixed keys) the choices per key, or ``check`` reads a free value (a zone).
    ``boolean``: pinned ``true`` or ``false``. ``evidence`` says what in the answers proves it
    (``""``: nothing can, only a pin); ``example`` (and ``example_key``) the pin most often
    right, for the hint.
    """

    name: str
    meaning: str
    evidence: str
    choices: tuple[str, ...] = ()
    check: Callable[[str], str] | None = None
    example: str = ""
    keyed: bool = False
    keys: Mapping[str, tuple[str, ...]] | None = None
    example_key: str = ""
    boolean: bool = False
    # what a free value (``check``) is, for the hint
    form: str = "an IANA zone name"
    # kept with each snapshot (its catalog entry's ``pins``): reports read it as of the
    # snapshot, long after the answers (frames decide the others while they read)
    kept: bool = False

    @property
    def table(self) -> str:
        """The config table it is pinned in (``units``, ``vocabulary.vm_status``)."""
        return self.name if self.keyed else self.name.rpartition(".")[0]

    @property
    def key(self) -> str:
        return self.example_key if self.keyed else self.name.rpartition(".")[2]

    def options(self, key: str | None = None) -> tuple[str, ...]:
        """The values a pin may take (for ``key`` of a keyed one with fixed keys)."""
        if self.keys is not None:
            return self.keys.get(key if key is not None else self.example_key, ())
        return self.choices

    def toml(self, value: str) -> str | bool:
        """``value`` as the config file holds it (``true`` for a boolean)."""
        return value == "true" if self.boolean else value

    def line(self, value: str | None = None, key: str | None = None) -> str:
        """The config line that pins it: ``[units] ram = "GiB"``."""
        key = self.key if key is None else key
        shown = value or self.example or next(iter(self.options(key)), "")
        said = shown if self.boolean else f'"{shown}"'
        named = key if _BARE_KEY.fullmatch(key) else '"' + key.replace('"', '\\"') + '"'
        return f"[{self.table}] {named} = {said}"

    def hint(self, config: object, value: str | None = None, key: str | None = None) -> str:
        """How to pin it, for a warning or a doctor line: the line, the file, the choices."""
        key = self.key if key is None else key
        shown = value or self.example or next(iter(self.options(key)), "")
        others = [c for c in self.options(key) if c != shown]
        choice = f" (or {' / '.join(repr(c) for c in others)})" if others else ""
        if self.check is not None and not self.choices:
            choice = f" ({self.form})"
        return (
            f"pin it: {self.line(value, key)}{choice} in {config}, or under "
            f"[accounts.NAME.{self.table}] for one account"
        )


# the delivery record's fields a served key can be pinned to (the names the sandbox's default
# dialect gives them; the spec leaves them "not shown")
DELIVERY_FIELDS = (
    "id",
    "eventId",
    "event",
    "url",
    "statusCode",
    "success",
    "attempts",
    "error",
    "createdAt",
    "lastAttemptAt",
)
VM_CLASSES = ("running", "stopped", "transitional", "suspended", "terminated")
BILLING_CLASSES = ("paid", "owing", "suspended")

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
        Assumption(
            "paging.no_continuation_is_end",
            "on a service that pages by next links or continuation tokens, an answer that "
            "carries none is the last page",
            "",
            ("true", "false"),
            boolean=True,
        ),
        Assumption(
            "deliveries.records",
            "what one delivery record is: one attempt (grouped into events by its event id) "
            "or one event (its attempt count says how many attempts it took)",
            "every delivery record carries an event id (records sharing one are one event's "
            "attempts)",
            ("event", "attempt"),
        ),
        Assumption(
            "deliveries.history",
            "how much delivery history the service keeps: every attempt, or only its latest",
            "",
            ("full", "latest"),
        ),
        Assumption(
            "deliveries.fields",
            "the delivery field a served key holds (the spec leaves the names not shown)",
            "a key the delivery reader knows by name (statusCode, success, attempts, ...)",
            DELIVERY_FIELDS,
            keyed=True,
            example="attempts",
            example_key="tryCount",
        ),
        Assumption(
            "vocabulary.vm_status",
            "the class of a VM status word",
            "a word that means one thing at every provider (svcnb.vocab.BUILTIN)",
            VM_CLASSES,
            keyed=True,
            example="suspended",
            example_key="locked",
            # a report from the store classifies the words as the snapshot's reader did
            kept=True,
        ),
        Assumption(
            "vocabulary.billing_status",
            "the class of a billing status word",
            "a word that means one thing at every provider (svcnb.vocab.BUILTIN)",
            BILLING_CLASSES,
            keyed=True,
            example="owing",
            example_key="unpaid",
            # a report from the store classifies the words as the snapshot's reader did
            kept=True,
        ),
        Assumption(
            "firewall.port_sentinels",
            'what a firewall rule\'s port "0" (every port, or port 0) or empty port on a TCP, '
            "UDP or ANY rule (every port, or none) means",
            "",
            keyed=True,
            keys={"0": ("every", "zero"), "": ("every", "none")},
            example_key="0",
        ),
        # billing rules: the spec states none, so the what-if report's suspension dates rest on
        # a pin (a sandbox's dialect pins its own)
        Assumption(
            "billing.grace",
            "how long after a renewal the wallet cannot pay the service suspends the VM",
            "",
            check=_span,
            example="3D",
            form="days or hours",
            kept=True,
        ),
    )
}


def assumption(name: str) -> Assumption:
    """The registered assumption ``name`` (a keyed one's pin name ``NAME.KEY`` too);
    UnregisteredAssumptionError when there is none."""
    return split(name)[0]


def split(name: str) -> tuple[Assumption, str | None]:
    """``name`` as (its registered assumption, the key of a keyed one's pin, else None):
    ``vocabulary.vm_status.locked`` is (vocabulary.vm_status, ``locked``)."""
    found = ASSUMPTIONS.get(name)
    if found is not None:
        return found, None
    for registered in ASSUMPTIONS.values():
        if registered.keyed and name.startswith(registered.name + "."):
            return registered, name[len(registered.name) + 1 :]
    raise UnregisteredAssumptionError(
        f"{name!r} is no registered assumption (svcnb.assumptions.ASSUMPTIONS: "
        f"{', '.join(ASSUMPTIONS)}); register it there and in docs/contracts.md section 0"
    ) from None


def kept_pins(pins: Pins) -> dict[str, dict[str, str]]:
    """The pins of ``pins`` a snapshot keeps (``Assumption.kept``), JSON-ready."""
    out = {}
    for name, pin in pins.items():
        try:
            kept = assumption(name).kept
        except UnregisteredAssumptionError:
            continue
        if kept:
            out[name] = {"value": pin.value, "where": pin.where}
    return out


def pin_value(name: str, value: object) -> str:
    """``value`` as a pin of ``name`` (``"gib"`` is ``"GiB"``, ``True`` is ``"true"``);
    ValueError naming the choices."""
    found, key = split(name)
    if found.keyed and key is None:
        raise ValueError(f"{name} is pinned per key: [{found.table}] KEY = VALUE")
    if found.boolean and isinstance(value, bool):
        return "true" if value else "false"
    options = found.options(key)
    if found.keys is not None and key not in found.keys:
        raise ValueError(
            f"{key!r} cannot be pinned in [{found.table}]; the keys are "
            f"{', '.join(repr(k) for k in found.keys)}"
        )
    if isinstance(value, str):
        for choice in options:
            if value.strip().lower() == choice.lower():
                return choice
        if found.check is not None and value.strip():
            return found.check(value.strip())
    allowed = ", ".join(repr(c) for c in options) or found.form
    if found.boolean:
        allowed = "true or false"
    shown = key if key is not None else found.key
    raise ValueError(f"{shown} = {value!r} is not a pin of {found.name}; use {allowed}")


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
        return f"{self.name} assumed, not proven ({self.evidence}): those values are NA; " + split(
            self.name
        )[0].hint(config, self.value, split(self.name)[1])


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
