"""Checks of JSON request bodies; every failure is a 422 whose message starts with the field."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from ._envelopes import ApiFailure

Check = Callable[[str, object], object]


def fields(
    body: object,
    checks: Mapping[str, Check],
    required: tuple[str, ...] = (),
    at_least_one: bool = False,
) -> dict:
    """Validate ``body`` (a JSON object) against ``checks``; unknown fields are refused."""
    if not isinstance(body, dict):
        raise ApiFailure(400, "request body must be a JSON object")
    unknown = [k for k in body if k not in checks]
    if unknown:
        raise ApiFailure(
            422, f"{unknown[0][:64]}: unknown field; accepted fields are {', '.join(checks)}"
        )
    for name in required:
        if name not in body:
            raise ApiFailure(422, f"{name}: required")
    if at_least_one and not body:
        raise ApiFailure(422, f"body: give at least one of {', '.join(checks)}")
    return {name: checks[name](name, value) for name, value in body.items()}


def integer(low: int, high: int) -> Callable[[str, object], int]:
    def check(name: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ApiFailure(422, f"{name}: must be an integer from {low} to {high}")
        if not low <= value <= high:
            raise ApiFailure(422, f"{name}: must be from {low} to {high}, got {value}")
        return value

    return check


def string(max_len: int, min_len: int = 0) -> Callable[[str, object], str]:
    def check(name: str, value: object) -> str:
        if not isinstance(value, str):
            raise ApiFailure(422, f"{name}: must be a string")
        if len(value) > max_len:
            raise ApiFailure(422, f"{name}: at most {max_len} characters, got {len(value)}")
        if len(value) < min_len:
            raise ApiFailure(422, f"{name}: must not be empty")
        return value

    return check


def string_list(max_items: int, max_len: int) -> Callable[[str, object], list[str]]:
    def check(name: str, value: object) -> list[str]:
        if not isinstance(value, list):
            raise ApiFailure(422, f"{name}: must be an array of strings")
        if len(value) > max_items:
            raise ApiFailure(422, f"{name}: at most {max_items} items, got {len(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise ApiFailure(422, f"{name}[{i}]: must be a string")
            if len(item) > max_len:
                raise ApiFailure(422, f"{name}[{i}]: at most {max_len} characters, got {len(item)}")
        return list(value)

    return check


def boolean(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ApiFailure(422, f"{name}: must be true or false")
    return value


def choice_list(allowed: list[str]) -> Callable[[str, object], list[str]]:
    def check(name: str, value: object) -> list[str]:
        if not isinstance(value, list) or not value:
            raise ApiFailure(422, f"{name}: must be a non-empty array of event names")
        for i, item in enumerate(value):
            if not isinstance(item, str) or item not in allowed:
                raise ApiFailure(
                    422, f"{name}[{i}]: unknown event; known events are {', '.join(allowed)}"
                )
        return list(dict.fromkeys(value))

    return check


def https_url(name: str, value: object) -> str:
    if not isinstance(value, str) or len(value) > 2048:
        raise ApiFailure(422, f"{name}: must be a string of at most 2048 characters")
    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme.lower() != "https" or not host:
        raise ApiFailure(422, f"{name}: must be an HTTPS URL such as https://example.com/hook")
    return value


def ipv4(name: str, value: object) -> ipaddress.IPv4Address:
    if not isinstance(value, str):
        raise ApiFailure(422, f"{name}: must be a string holding an IPv4 address")
    try:
        return ipaddress.IPv4Address(value)
    except ValueError:
        raise ApiFailure(422, f"{name}: {value[:64]!r} is not an IPv4 address") from None
