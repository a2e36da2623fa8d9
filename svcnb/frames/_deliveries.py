"""Delivery records: keys svcnb cannot place, and the delivery assumptions.

What an unplaced key blanks, and the assumptions ``deliveries.fields``, ``deliveries.records``
and ``deliveries.history``: docs/contracts.md §0 and §4. A key may be the service's name for a
meaning svcnb already read under another (``passed`` for ``success``), so the value read is not
proven while such a key is there.

What a key could mean is read from its name first (``tries_made``: a count; ``outcome``: a
status; ``sentAt``: a time), then from its values (a boolean: the success flag; a number: a
status code, a count or an epoch time; a date-time string: a time), and when neither says,
everything. Durations (``durationMs``) are how long, not when, so never a time. A run of
failures counted back from the records finds its start only in a success it reaches, never in
the first record served.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from svcnb.assumptions import Decision, Pins, assumption, decide
from svcnb.config import config_path

from ._build import AssumptionWarning, RecordError, UnreadableValueWarning, resolve_pins
from ._schema import SCHEMAS

__all__ = [
    "MEANINGS",
    "AssumptionWarning",
    "UnplacedKeyWarning",
    "could_mean",
    "decision_text",
    "event_grouping",
    "history_depth",
    "pin_fields",
    "unplaced_keys",
]


class UnplacedKeyWarning(UnreadableValueWarning):
    """Delivery records carry a key svcnb cannot place that may be a count, a status or a
    time: what it could mean is NA in those records (``frame.attrs["unplaced"]``)."""


STATUS = ("status_code", "success")
COUNT = ("attempts",)
TIMES = ("created_at", "last_attempt_at")
# every column a key could stand for, in the frame's order
MEANINGS = ("status_code", "success", "attempts", "created_at", "last_attempt_at")

# the record keys the schema reads (every alternative of every path)
PLACED = frozenset(
    alternative.split(".", 1)[0]
    for field in SCHEMAS["deliveries"].values()
    for alternative in field.path.split("|")
)

# keys whose name says they are none of the meanings
_HARMLESS_TOKENS = frozenset(
    {
        "id", "ids", "uuid", "guid", "url", "uri", "endpoint", "host", "target",
        "event", "events", "type", "kind", "topic",
        "body", "bodies", "header", "headers", "payload", "data", "content",
        "signature", "secret", "message", "description", "label", "name", "note", "notes",
        "link", "links", "href", "docs", "error", "errors", "reason", "detail", "details",
        "subscription", "webhook", "hook",
    }
)  # fmt: skip
_IDENTIFIER = frozenset({"id", "ids", "uuid", "guid"})
# words said beside the figures, not the figures (error text like ``error``)
_TEXT = frozenset(
    {"message", "reason", "detail", "details", "description", "text", "error", "errors"}
)
# bodies, headers and payloads carry the request and the answer, not the figures
_CARRIER = frozenset({"body", "bodies", "header", "headers", "payload"})
# a duration: how long something took, not when it happened
_DURATION_TOKENS = frozenset(
    {"duration", "latency", "elapsed", "took", "ms", "millis", "milliseconds", "seconds", "secs"}
)
_TIME_POINT_TOKENS = frozenset(
    {
        "at", "timestamp", "ts", "date", "datetime", "when", "sent", "received", "created",
        "updated", "scheduled", "finished", "started", "completed", "epoch", "on",
    }
)  # fmt: skip
_COUNT_TOKENS = frozenset(
    {
        "attempt", "attempts", "try", "tries", "tried", "retry", "retries", "retried", "count",
        "counter", "number", "num", "n", "total", "made", "times",
    }
)  # fmt: skip
_STATUS_TOKENS = frozenset(
    {
        "status", "code", "http", "result", "results", "outcome", "state", "ok", "pass",
        "passed", "fail", "failed", "failure", "success", "succeeded", "successful",
        "delivered", "acknowledged", "ack", "accepted", "verdict",
    }
)  # fmt: skip

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_ISO_TIME = re.compile(r"^\d{4}-?\d{2}-?\d{2}([Tt ]\d{2}.*)?$")
_NUMBER = re.compile(r"^\s*[+-]?\d+(\.\d+)?\s*$")


def _tokens(key: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(key)]


def _by_name(key: str) -> set[str] | None:
    """The columns ``key``'s name says it could be; an empty set for a key that is none of
    them; None when the name does not say."""
    tokens = _tokens(key)
    words = set(tokens)
    if not words:
        return None
    if tokens[-1] in _IDENTIFIER or tokens[-1] in _TEXT or words & _CARRIER:
        return set()  # an identifier (attemptId), a text (failureReason), a body or header
    meant: set[str] = set()
    point = bool(words & _TIME_POINT_TOKENS)
    if point or ("time" in words and not words & _DURATION_TOKENS):
        meant.update(TIMES)
    if words & _COUNT_TOKENS:
        meant.update(COUNT)
    if words & _STATUS_TOKENS:
        meant.update(STATUS)
    if meant:
        return meant
    if words & _HARMLESS_TOKENS or words & _DURATION_TOKENS:
        return set()
    return None


def _by_value(value: Any, depth: int = 0) -> set[str]:
    """The columns a value of an unplaced key could be."""
    if isinstance(value, bool):
        return {"success"}
    if isinstance(value, int | float):
        meant = {*STATUS[:1], *COUNT, *TIMES}  # a status code, a count, an epoch time
        if value in (0, 1):
            meant.add("success")
        return meant
    if isinstance(value, str):
        if _ISO_TIME.match(value.strip()):
            return set(TIMES)
        if _NUMBER.match(value):
            return {*STATUS[:1], *COUNT, *TIMES}
        return set(STATUS)  # "ok", "failed", "delivered", ...: an outcome in words
    if isinstance(value, Mapping) and depth < 3:
        inside: set[str] = set()
        for sub, inner in value.items():
            inside |= could_mean(str(sub), [inner], depth + 1)
        return inside
    return set(MEANINGS)  # a list or anything else: when in doubt, everything


def could_mean(key: str, values: Iterable[Any], depth: int = 0) -> set[str]:
    """The delivery columns an unplaced ``key`` with ``values`` could stand for (empty: none).

    The name decides when it says something; else every non-null value is looked at; a key
    that is always null, whose name says nothing, could be anything.
    """
    named = _by_name(key)
    if named is not None:
        return named
    meant: set[str] = set()
    seen = False
    for value in values:
        if value is None:
            continue
        seen = True
        meant |= _by_value(value, depth)
        if meant >= set(MEANINGS):
            break
    return meant if seen else set(MEANINGS)


def unplaced_keys(records: list[Any]) -> dict[str, tuple[set[str], list[int]]]:
    """Keys of ``records`` the schema does not read and that could be one of the meanings:
    key -> (the columns it could be, the indexes of the records carrying it)."""
    where: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            continue
        for key in record.keys() - PLACED:
            where.setdefault(key, []).append(i)
    out: dict[str, tuple[set[str], list[int]]] = {}
    for key in sorted(where, key=str):
        rows = where[key]
        meant = could_mean(str(key), (records[i][key] for i in rows))
        if meant:
            out[key] = (meant, rows)
    return out


def blank_unplaced(
    frame: pd.DataFrame, records: list[Any], *, strict: bool = False, stacklevel: int = 3
) -> pd.DataFrame:
    """``frame`` (built from ``records``: row i from the i-th record that is an object) with
    what unplaced keys could mean set to NA, one warning naming them, ``attrs["unplaced"]``
    ({key: [columns]}) and the NA counted in ``attrs["unreadable"]``. ``strict`` raises
    ``RecordError`` naming the first such key instead."""
    records = [r for r in records if isinstance(r, Mapping)]
    found = unplaced_keys(records)
    if not found:
        return frame
    if strict:
        key, (meant, rows) = next(iter(found.items()))
        could = _listed(meant)
        raise RecordError(
            "deliveries", records[rows[0]].get("id", f"#{rows[0]}"), str(key),
            f"a key svcnb cannot place, which could be {could}",
        )  # fmt: skip
    blanked: dict[str, set[int]] = {}
    for meant, rows in found.values():
        for column in meant:
            blanked.setdefault(column, set()).update(rows)
    for column in MEANINGS:
        rows = sorted(blanked.get(column, ()))
        if rows:
            values = frame[column].copy()
            values.iloc[rows] = None
            frame[column] = values
    counts = dict(frame.attrs.get("unreadable") or {})
    for column in MEANINGS:
        if column in blanked:
            counts[column] = counts.get(column, 0) + len(blanked[column])
    frame.attrs["unreadable"] = counts
    frame.attrs["unplaced"] = {
        str(key): [c for c in MEANINGS if c in meant] for key, (meant, _) in found.items()
    }
    parts = [
        f"{key!r} in {len(rows)} record(s) (could be {_listed(meant)})"
        for key, (meant, rows) in found.items()
    ]
    warnings.warn(
        "svcnb.frames.deliveries: delivery records carry key(s) svcnb cannot place: "
        f"{'; '.join(parts)}. In those records what they could be is NA (unknown), never "
        "False or 0: reports count those outcomes, attempts and times as unknown.",
        UnplacedKeyWarning,
        stacklevel=stacklevel,
    )
    return frame


def _listed(columns: set[str]) -> str:
    return ", ".join(c for c in MEANINGS if c in columns)


# -- assumptions: what the records do not prove ------------------------------------------------


def event_grouping(deliveries: pd.DataFrame, pins: Pins | None = None) -> Decision:
    """How the delivery records group into events (``deliveries``: a frame of
    :func:`svcnb.frames.deliveries`): the assumption ``deliveries.records``, decided by the
    registry's one rule over ``pins`` (None: the config file's).

    Stated when every record carries an event id (records sharing one are one event's
    attempts). Else a pin ``"event"`` makes each record without one an event of its own; with
    none (or ``"attempt"``), which attempts make one event is unknown.
    """
    total = len(deliveries)
    missing = int(deliveries["event_id"].isna().sum()) if total else 0
    decided = decide("deliveries.records", resolve_pins(pins), None, bool(missing))
    if decided.state == "stated":
        return Decision(decided.name, "stated", "attempt", _EVENT_IDS)
    if decided.value == "event":
        return decided
    said = (
        f"delivery records are attempts (pinned by {decided.where}), and "
        if decided.value == "attempt"
        else ""
    )
    return Decision(
        decided.name,
        "unknown",
        evidence=f"{said}{missing} of {total} delivery record(s) carry no event id, so which "
        "attempts make one event is unknown",
    )


_EVENT_IDS = "every delivery record carries an event id"


def history_depth(pins: Pins | None = None) -> Decision:
    """Whether the service keeps every delivery attempt: the assumption ``deliveries.history``
    over ``pins`` (None: the config file's). No answer proves that nothing older was dropped,
    so only a pin ``"full"`` decides it; ``"latest"`` (or none) leaves it unknown."""
    decided = decide("deliveries.history", resolve_pins(pins), None, True)
    if decided.value == "full":
        return decided
    said = f"pinned as latest only by {decided.where}; " if decided.value == "latest" else ""
    return Decision(
        decided.name,
        "unknown",
        evidence=f"{said}a run of failures with no success among the records served may be longer",
    )


def decision_text(decision: Decision) -> str:
    """One sentence for a warning or a report's reason: the decision and how to pin it."""
    return decision.text(config_path())


def pin_fields(
    records: list[Any], fields: Mapping[str, str] | None = None, pins: Pins | None = None
) -> tuple[list[Any], dict[str, str]]:
    """``records`` with each served key pinned to a delivery field (``fields``, else the pins'
    ``deliveries.fields.KEY``: ``[deliveries.fields]`` of the config file, served key ->
    ``statusCode``, ``attempts``, ...) renamed to the name the schema reads first; the pins
    used. A pinned key wins over a key of the field's own name."""
    if fields is None:
        table = assumption("deliveries.fields").name + "."
        fields = {
            n.removeprefix(table): p.value
            for n, p in resolve_pins(pins).items()
            if n.startswith(table)
        }
    if not fields:
        return records, {}
    # the schema's first name for each field: what a pinned key is read as
    first = {
        alternative.split("|", 1)[0]: field.path.split("|", 1)[0]
        for field in SCHEMAS["deliveries"].values()
        for alternative in field.path.split("|")
    }
    target = {served: first.get(name, name) for served, name in fields.items()}
    out = []
    for record in records:
        if not isinstance(record, Mapping) or not target.keys() & record.keys():
            out.append(record)
            continue
        moved = {target[k]: record[k] for k in target if k in record}
        out.append(
            {**{k: v for k, v in record.items() if k not in target and k not in moved}, **moved}
        )
    return out, target


def warn_grouping(frame: pd.DataFrame, stacklevel: int = 3, pins: Pins | None = None) -> None:
    """One :class:`AssumptionWarning` when the frame's event grouping is unknown; recorded in
    ``frame.attrs["assumptions"]``."""
    grouping = event_grouping(frame, pins)
    frame.attrs["assumptions"] = {grouping.name: grouping.state}
    if not grouping.ok:
        warnings.warn(
            f"svcnb.frames.deliveries: {decision_text(grouping)}. Event counts (events, delivered, "
            "failed) are NA (unknown).",
            AssumptionWarning,
            stacklevel=stacklevel,
        )
