"""Parsing of firewall rule ports and IP lists, and the coverage tests built on them.

The spec leaves the formats of ``port``, ``sourceIps`` and ``destIps`` "not shown". These forms are
understood:

- port: ``"any"``, ``"all"``, ``"*"`` (every port: no provider uses these words for anything
  else); ``"22"``; ``"80,443"``; ``"8000-8100"`` (inclusive range, ``:`` accepted too, so
  ``"1-65535"`` is every port by arithmetic); lists may mix singles and ranges. On a portless
  protocol (ICMP, ESP, GRE) an empty or missing port is no port filter.
- port sentinels (:data:`SENTINELS`): ``"0"`` is every port at DigitalOcean and port 0 itself
  elsewhere; an empty or missing port on a TCP, UDP or ANY rule is every port at some services
  and no port at others. Their meaning is an assumption: unread (``error`` set, ``sentinel``
  naming the text) until pinned in ``[firewall.port_sentinels]`` of the config file
  (``"0" = "every"`` or ``"zero"``; ``"" = "every"`` or ``"none"``), so the audit counts such
  a rule as "could not read; may be open to every port", never as port 0 nor silently as
  every port.
- IP lists: ``[]`` means any address; each entry an address or a CIDR (``ipaddress``,
  host bits allowed), or ``"any"``/``"*"``.

Nothing here raises on any input: what does not parse comes back as ``error`` text, which the
firewall audit turns into a finding. A value that does not parse never covers nor is covered by
anything, so an unreadable rule is never called shadowed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from svcnb.assumptions import Pins, assumption
from svcnb.config import pins as config_pins

MAX_PORT = 65535
# what a sentinel port means: an assumption, pinned per text ([firewall.port_sentinels] "0")
SENTINEL = assumption("firewall.port_sentinels")


def sentinel_pins(pins: Pins | None = None) -> dict[str, str]:
    """Sentinel text -> its pinned reading (``"0"`` -> ``"every"``), from ``pins`` (None: the
    config file's)."""
    table = SENTINEL.name + "."
    given = config_pins() if pins is None else pins
    return {n.removeprefix(table): p.value for n, p in given.items() if n.startswith(table)}


ANY_WORDS = frozenset({"any", "all", "*"})
# port text -> what services mean by it; read only as pinned (the assumption
# firewall.port_sentinels of svcnb.assumptions: sentinel_pins)
SENTINELS = {
    "0": "every port (DigitalOcean's firewall API) or port 0 itself",
    "": "every port, or no port (services differ; the spec does not say)",
}

# Protocols whose traffic carries no port: a port filter on them is meaningless.
PORTLESS_PROTOCOLS = frozenset({"ICMP", "ESP", "GRE"})

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class PortSet:
    """Ports as sorted disjoint inclusive ranges; ``any`` for all ports; ``error`` if unparsed."""

    ranges: tuple[tuple[int, int], ...] = ()
    any: bool = False
    error: str | None = None
    # the sentinel text (``"0"``, ``""``) when the port is unread for want of a pin: the rule
    # may be open to every port
    sentinel: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def covers(self, other: PortSet) -> bool:
        """True when every port of ``other`` is in this set (False if either did not parse)."""
        if not (self.ok and other.ok):
            return False
        if self.any:
            return True
        if other.any:
            return self.ranges == ((0, MAX_PORT),)
        return all(any(a <= lo and hi <= b for a, b in self.ranges) for lo, hi in other.ranges)

    def intersects(self, ports: Iterable[int]) -> list[int]:
        """The given ports that fall in this set, in the order given."""
        if not self.ok:
            return []
        if self.any:
            return list(ports)
        return [p for p in ports if any(a <= p <= b for a, b in self.ranges)]


@dataclass(frozen=True)
class IpSet:
    """Addresses as collapsed networks per IP version; ``any`` for all; ``errors`` if unparsed."""

    v4: tuple[ipaddress.IPv4Network, ...] = ()
    v6: tuple[ipaddress.IPv6Network, ...] = ()
    any: bool = False
    errors: tuple[str, ...] = ()
    size: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def networks(self) -> tuple[Network, ...]:
        """Every network of both versions, IPv4 first."""
        return (*self.v4, *self.v6)

    @property
    def is_world(self) -> bool:
        """True when the set admits every address of IPv4 or of IPv6 (an "any source" rule)."""
        if not self.ok:
            return False
        return self.any or any(n.prefixlen == 0 for n in self.networks)

    def covers(self, other: IpSet) -> bool:
        """True when every address of ``other`` is in this set (False if either did not parse)."""
        if not (self.ok and other.ok):
            return False
        if self.any:
            return True
        if other.any:
            return _is_all(self.v4) and _is_all(self.v6)
        return all(any(n.subnet_of(m) for m in self.v4) for n in other.v4) and all(
            any(n.subnet_of(m) for m in self.v6) for n in other.v6
        )


def _is_all(nets: tuple[Network, ...]) -> bool:
    return any(n.prefixlen == 0 for n in nets)


def parse_port(
    value: object, protocol: object = None, pins: dict[str, str] | None = None
) -> PortSet:
    """Parse a rule's ``port`` string; never raises (see the module docstring for the forms).

    ``protocol`` is the rule's (an empty port on ICMP is no filter, on TCP a sentinel);
    ``pins`` maps a sentinel text to its pinned reading (:func:`sentinel_pins`)."""
    pins = pins or {}
    if value is None or _is_na(value):
        value = ""  # a missing port reads as an empty one: no filter or a sentinel
    if not isinstance(value, str):
        return PortSet(error=f"port {value!r} is not a string")
    text = value.strip()
    if text == "" and str(protocol).upper() in PORTLESS_PROTOCOLS:
        return PortSet(any=True)
    if text in SENTINELS:
        reading = pins.get(text)
        if reading == "every":
            return PortSet(any=True)
        if reading == "zero":
            return PortSet(ranges=((0, 0),))
        if reading == "none":
            return PortSet()
        hint = SENTINEL.hint("the config file", key=text)
        return PortSet(
            error=f"port {value!r} could not be read: it may mean {SENTINELS[text]}; {hint}",
            sentinel=text,
        )
    if text.lower() in ANY_WORDS:
        return PortSet(any=True)
    ranges: list[tuple[int, int]] = []
    for part in text.split(","):
        piece = part.strip()
        bounds = _split_range(piece)
        if bounds is None:
            return PortSet(error=f"port {value!r}: {piece!r} is not a port or a range lo-hi")
        lo, hi = bounds
        if not (0 <= lo <= hi <= MAX_PORT):
            return PortSet(error=f"port {value!r}: {piece!r} is outside 0-{MAX_PORT} or reversed")
        ranges.append((lo, hi))
    merged = _merge(ranges)
    if merged == [(0, MAX_PORT)]:
        return PortSet(any=True)
    return PortSet(ranges=tuple(merged))


def _split_range(piece: str) -> tuple[int, int] | None:
    for sep in ("-", ":"):
        if sep in piece:
            lo, _, hi = piece.partition(sep)
            a, b = _to_int(lo), _to_int(hi)
            return None if a is None or b is None else (a, b)
    n = _to_int(piece)
    return None if n is None else (n, n)


def _to_int(text: str) -> int | None:
    text = text.strip()
    # isdecimal() alone admits non-ASCII digits; int() would accept them, a firewall would not.
    if not text or not text.isascii() or not text.isdecimal() or len(text) > 5:
        return None
    return int(text)


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def parse_ips(values: object) -> IpSet:
    """Parse a rule's ``sourceIps``/``destIps`` list; never raises. ``[]`` (or NA) means any."""
    if values is None or _is_na(values):
        return IpSet(any=True)
    if isinstance(values, str):
        # A bare string where a list belongs: read it as a comma-separated list.
        values = [v for v in values.split(",") if v.strip()]
    try:
        items = list(values)  # type: ignore[call-overload]
    except TypeError:
        return IpSet(errors=(f"IP list {values!r} is not a list",))
    if not items:
        return IpSet(any=True, size=0)
    v4: list[ipaddress.IPv4Network] = []
    v6: list[ipaddress.IPv6Network] = []
    errors: list[str] = []
    is_any = False
    for item in items:
        if not isinstance(item, str):
            errors.append(f"IP entry {item!r} is not a string")
            continue
        text = item.strip()
        if text.lower() in ANY_WORDS:
            is_any = True
            continue
        try:
            net = ipaddress.ip_network(text, strict=False)
        except ValueError:
            errors.append(f"IP entry {item!r} is not an address or CIDR")
            continue
        (v4 if net.version == 4 else v6).append(net)  # type: ignore[arg-type]
    return IpSet(
        v4=tuple(ipaddress.collapse_addresses(v4)),
        v6=tuple(ipaddress.collapse_addresses(v6)),
        any=is_any,
        errors=tuple(errors),
        size=len(items),
    )


def _is_na(value: object) -> bool:
    try:
        return bool(value != value)  # NaN and pd.NA compare unequal to themselves
    except (TypeError, ValueError):
        return False


def protocol_covers(outer: str, inner: str) -> bool:
    """True when every packet matched by protocol ``inner`` is matched by ``outer``."""
    outer, inner = str(outer).upper(), str(inner).upper()
    return outer == "ANY" or outer == inner


def match_covers(
    outer_protocol: str, outer_ports: PortSet, inner_protocol: str, inner_ports: PortSet
) -> bool:
    """True when (protocol, port) traffic matched by the inner rule is all matched by the outer.

    A port filter on a portless protocol (ICMP, ESP, GRE) is ignored by the inner side but makes
    an outer ``ANY`` rule with specific ports an unknown match for portless traffic, so it does
    not count as covering it.
    """
    if not protocol_covers(outer_protocol, inner_protocol):
        return False
    if not (outer_ports.ok and inner_ports.ok):
        return False
    inner = str(inner_protocol).upper()
    if inner in PORTLESS_PROTOCOLS:
        return str(outer_protocol).upper() == inner or outer_ports.any
    return outer_ports.covers(inner_ports)
