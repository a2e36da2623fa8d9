"""Validation of a firewall rule update before anything is sent (the spec's bounds)."""

from __future__ import annotations

import ipaddress
import math
from typing import Any

POSITION_MIN, POSITION_MAX = 0, 1000
PORT_MAX_LEN = 64
IP_LIST_MAX_ITEMS = 50
IP_MAX_LEN = 64
DESCRIPTION_MAX_LEN = 255

# argument name -> body field; both spellings are taken so frames' columns can be passed back.
_FIELDS = {
    "position": "position",
    "port": "port",
    "source_ips": "sourceIps",
    "sourceIps": "sourceIps",
    "dest_ips": "destIps",
    "destIps": "destIps",
    "description": "description",
}
_ALLOWED = "position, port, source_ips, dest_ips, description"


def rule_update(fields: dict[str, Any]) -> dict[str, Any]:
    """The PATCH body for ``fields``; ValueError naming the field and the bound otherwise."""
    if not fields:
        raise ValueError(f"update_rule needs at least one field to change: {_ALLOWED}")
    body: dict[str, Any] = {}
    for name, value in fields.items():
        target = _FIELDS.get(name)
        if target is None:
            raise ValueError(
                f"update_rule does not take {name!r}: the endpoint changes only {_ALLOWED}"
            )
        if target in body:
            raise ValueError(f"{target} was given twice (as {name!r} and another spelling)")
        body[target] = _CHECKS[target](name, value)
    return body


def _position(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer from 0 to 1000, got {value!r}")
    if not POSITION_MIN <= value <= POSITION_MAX:
        raise ValueError(f"{name} must be from {POSITION_MIN} to {POSITION_MAX}, got {value}")
    return value


def _port(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(
            f"{name} must be a string such as '22', '80,443', '8000-8100', 'any' "
            f"or '' (ICMP), got {value!r}"
        )
    if len(value) > PORT_MAX_LEN:
        raise ValueError(f"{name} is at most {PORT_MAX_LEN} characters, got {len(value)}")
    if value == "" or value.lower() == "any":
        return value
    for part in value.split(","):
        low, sep, high = part.strip().partition("-")
        if not _port_number(low) or (sep and not _port_number(high)):
            raise ValueError(
                f"{name} {value!r} is not a port list: use ports 1-65535 as '22', '80,443', "
                "'8000-8100', 'any', or '' for ICMP"
            )
        if sep and int(low) > int(high):
            raise ValueError(f"{name} range {part.strip()!r} runs backwards")
    return value


def _port_number(text: str) -> bool:
    return text.isdigit() and 1 <= int(text) <= 65535


def _ips(name: str, value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValueError(
            f"{name} must be a list of IP addresses or CIDRs ([] means any), got {value!r}"
        )
    if len(value) > IP_LIST_MAX_ITEMS:
        raise ValueError(f"{name} holds at most {IP_LIST_MAX_ITEMS} items, got {len(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ValueError(f"{name}[{i}] must be a string, got {item!r}")
        if len(item) > IP_MAX_LEN:
            raise ValueError(f"{name}[{i}] is at most {IP_MAX_LEN} characters, got {len(item)}")
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ValueError(
                f"{name}[{i}] {item!r} is not an IP address or CIDR (e.g. 203.0.113.7, "
                "10.0.0.0/8, 2001:db8::/32)"
            ) from None
    return list(value)


def _description(name: str, value: Any) -> str:
    text(name, value)
    if len(value) > DESCRIPTION_MAX_LEN:
        raise ValueError(f"{name} is at most {DESCRIPTION_MAX_LEN} characters, got {len(value)}")
    return value


def text(name: str, value: Any) -> str:
    """``value`` when it is a string a request body can carry; ValueError naming ``name`` for
    one that is not a string, or holds a lone surrogate (which UTF-8 cannot encode: it would
    fail only as the body is written, half-way into sending)."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{name} holds a lone surrogate ({value[exc.start]!r} at position {exc.start}), "
            "which is not text a request can carry; remove it or use the character it was "
            "meant to be"
        ) from None
    return value


def unsendable(body: Any, where: str = "") -> str | None:
    """Where in ``body`` (``description``, ``events[1]``) a value JSON cannot send lies: text with
    a lone surrogate, a float that is not finite, a type JSON has no form for; None when the whole
    body can be sent."""
    if isinstance(body, str):
        try:
            body.encode("utf-8")
        except UnicodeEncodeError:
            return where or "the body"
        return None
    if isinstance(body, bool) or body is None or isinstance(body, int):
        return None
    if isinstance(body, float):
        return None if math.isfinite(body) else where or "the body"
    if isinstance(body, dict):
        for key, value in body.items():
            if not isinstance(key, str):
                return f"{where}.{key!r}" if where else repr(key)
            inner = f"{where}.{key}" if where else key
            found = unsendable(key, inner) or unsendable(value, inner)
            if found:
                return found
        return None
    if isinstance(body, list | tuple):
        for i, value in enumerate(body):
            found = unsendable(value, f"{where}[{i}]")
            if found:
                return found
        return None
    return where or "the body"


_CHECKS = {
    "position": _position,
    "port": _port,
    "sourceIps": _ips,
    "destIps": _ips,
    "description": _description,
}
