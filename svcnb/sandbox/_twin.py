"""A twin of a user's own service: the sandbox speaking a dialect file (docs/twin.md).

The file's format is drawn in docs/twin.md; :func:`read_dialect_file` reads it. A point the file
does not state keeps the default dialect's value, raised to its ``at_least`` bound;
:attr:`DialectFile.listed` says each such point in one line. A file that is not TOML, of another
format or version, or with a key or value the sandbox does not know is a
:class:`~._saved.StateError` naming the file and the key.

Status words are keyed by the class a reader gives them (svcnb's vocabulary classes), not by the
sandbox's statuses; a word no rule places is listed, never said for a status it may not mean.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from svcnb import files as _files

from ._dialect import (
    BASE_PATHS,
    CAP_STATUS,
    CONFLICT_STATUS,
    CREATED_STATUS,
    DELETE_STATUS,
    DELIVERY_POOLS,
    LINK_FORMS,
    LIST_KEYS,
    MONEY,
    OVER_MAX,
    PAGING,
    RAM_UNITS,
    RATE_WINDOW,
    REVOKED_STATUS,
    STOP_STATUS,
    TIMESTAMPS,
    TOKEN_NAMES,
    VALIDATION_STATUS,
    VM_POOLS,
    WORDING,
    Dialect,
)
from ._envelopes import ApiFailure
from ._plans_regions import CURRENCY
from ._saved import StateError
from ._speak import _size

FORMAT = "svcnb-dialect"
VERSION = 1
DISK_UNIT = "GiB"  # the sandbox's disk sizes: GiB, whatever the dialect
# a dialect file `svcnb doctor --record` writes is a few KiB; one far larger is no such file
FILE_LIMIT = 256 * 1024
# a reader's classes of status words -> the sandbox status each stands for (transitional: two)
VM_CLASSES = {
    "running": "running",
    "stopped": "stopped",
    "transitional": None,
    "suspended": "suspended",
    "terminated": "terminated",
}
BILLING_CLASSES = {"paid": "active", "owing": "overdue", "suspended": "suspended"}
# settings that are not Dialect fields: what `serve()` takes them as
SERVICE = {"rate_limit": "rate_limit", "currency": None, "disk_unit": None}
AT_LEAST = ("page_default", "page_max", "rate_window_seconds")
TABLES = ("dialect", "service", "at_least", "not_observed", "not_expressible", "inferred")
DEFAULT = Dialect()
DEFAULT_RATE_WINDOW_SECONDS = 60.0  # SandboxConfig's; only raised to an at_least bound here


def _one_of(choices: tuple) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or value not in choices:
            return f"{value!r} is not one of {', '.join(map(str, choices))}"
        return None

    return check


def _size_value(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1_000_000:
        return f"{value!r} is not a page size (an integer 1..1000000)"
    return None


def _token_names(value: Any) -> str | None:
    if not isinstance(value, list) or tuple(value) not in TOKEN_NAMES:
        forms = "; ".join(", ".join(t) for t in TOKEN_NAMES)
        return f"{value!r} is not one of the token name triples the sandbox speaks ({forms})"
    return None


def _word(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 100 and value.isprintable()


def _words(classes: Mapping[str, str | None]) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if not isinstance(value, dict):
            return "is not a table of class = word"
        for cls, word in value.items():
            if cls not in classes:
                return f"{cls!r} is not a class ({', '.join(classes)})"
            said = word if cls == "transitional" and isinstance(word, list) else [word]
            if cls == "transitional" and not 1 <= len(said) <= 2:
                return "transitional holds one or two words (provisioning, stopping)"
            if not all(_word(w) for w in said):
                return f"{cls}: {word!r} is not a word (text of 1..100 printable characters)"
        flat = [w for v in value.values() for w in (v if isinstance(v, list) else [v])]
        if len(set(flat)) != len(flat):
            return "a word stands for two classes"
        return None

    return check


def _delivery_fields(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "is not a table of field = key"
    for name, key in value.items():
        if name not in DELIVERY_POOLS:
            return f"{name!r} is not a delivery field ({', '.join(DELIVERY_POOLS)})"
        if not _word(key):
            return f"{name}: {key!r} is not a key name"
    if len(set(value.values())) != len(value):
        return "two fields are given the same key"
    return None


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"{value!r} is not true or false"


def _limit(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"{value!r} is not a request count (an integer >= 1)"
    return None


def _seconds(value: Any) -> str | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0 < value <= 86_400 * 31:
        return f"{value!r} is not a window in seconds (> 0)"
    return None


# every point a file may state, and the check of its value
DIALECT_POINTS: dict[str, Callable[[Any], str | None]] = {
    "base_paths": _one_of(BASE_PATHS),
    "paging": _one_of(PAGING),
    "link_form": _one_of(LINK_FORMS),
    "token_names": _token_names,
    "page_default": _size_value,
    "page_max": _size_value,
    "over_max": _one_of(OVER_MAX),
    "vm_words": _words(VM_CLASSES),
    "billing_words": _words(BILLING_CLASSES),
    "money": _one_of(MONEY),
    "ram_unit": _one_of(RAM_UNITS),
    "timestamps": _one_of(TIMESTAMPS),
    "created_status": _one_of(CREATED_STATUS),
    "stop_status": _one_of(STOP_STATUS),
    "delete_status": _one_of(DELETE_STATUS),
    "validation_status": _one_of(VALIDATION_STATUS),
    "conflict_status": _one_of(CONFLICT_STATUS),
    "cap_status": _one_of(CAP_STATUS),
    "revoked_status": _one_of(REVOKED_STATUS),
    "wording": _one_of(WORDING),
    "delivery_fields": _delivery_fields,
    "list_keys": _one_of(LIST_KEYS),
    "rate_window": _one_of(RATE_WINDOW),
    "webhooks_paged": _flag,
}
SERVICE_POINTS: dict[str, Callable[[Any], str | None]] = {
    "rate_limit": _limit,
    "currency": _one_of((CURRENCY,)),
    "disk_unit": _one_of((DISK_UNIT,)),
}
AT_LEAST_POINTS: dict[str, Callable[[Any], str | None]] = {
    "page_default": _size_value,
    "page_max": _size_value,
    "rate_window_seconds": _seconds,
}
POINTS = (*DIALECT_POINTS, *SERVICE_POINTS, "rate_window_seconds")
assert set(DIALECT_POINTS) == {f.name for f in fields(Dialect)} - {"name"}


@dataclass
class DialectFile:
    """A dialect file read: the ``dialect`` to speak (registered under its ``file:PATH``
    name), the ``settings`` ``serve()`` takes besides it (``rate_limit``,
    ``rate_window_seconds``), and ``listed``: one line per point kept at a default, raised to a
    bound, inferred or not expressible."""

    path: Path
    dialect: Dialect
    settings: dict[str, Any] = field(default_factory=dict)
    listed: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.dialect.name


def _fail(path: Path, key: str, problem: str) -> StateError:
    return StateError(f"dialect file {path}: {key}: {problem}")


def _load(path: Path) -> dict:
    try:
        raw = _files.read(path, limit=FILE_LIMIT)
    except OSError as exc:
        raise StateError(f"dialect file {path}: cannot be read ({exc.strerror})") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise StateError(f"dialect file {path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise StateError(f"dialect file {path}: not TOML ({exc})") from None
    except RecursionError:
        raise StateError(f"dialect file {path}: nested too deeply to be one") from None


def _checked(path: Path, doc: dict) -> dict:
    """``doc`` checked key by key (the first problem raised, naming its key)."""
    if doc.get("format") != FORMAT:
        raise _fail(path, "format", f"{doc.get('format')!r}: not a dialect file ({FORMAT!r})")
    version = doc.get("version")
    if version != VERSION or isinstance(version, bool):
        raise _fail(
            path,
            "version",
            f"{version!r} is not a version this svcnb reads ({VERSION}); record it again with "
            "this svcnb's `svcnb doctor --record`",
        )
    for key, value in doc.items():
        if key in ("format", "version"):
            continue
        if key == "base_path":
            if not isinstance(value, str) or not re.fullmatch(r"(/[A-Za-z0-9._~-]+)*", value):
                raise _fail(path, key, f"{value!r} is not a URL path (no host, no query)")
            continue
        if key not in TABLES:
            raise _fail(path, key, f"not a key of a dialect file ({', '.join(TABLES)})")
        if not isinstance(value, dict):
            raise _fail(path, key, "is not a table")
    checks = {"dialect": DIALECT_POINTS, "service": SERVICE_POINTS, "at_least": AT_LEAST_POINTS}
    for table, known in checks.items():
        for key, value in doc.get(table, {}).items():
            if key not in known:
                raise _fail(path, f"{table}.{key}", f"not a point ({', '.join(known)})")
            problem = known[key](value)
            if problem is not None:
                raise _fail(path, f"{table}.{key}", problem)
    for table in ("not_observed", "not_expressible", "inferred"):
        for key, value in doc.get(table, {}).items():
            if key.split(".", 1)[0] not in POINTS:
                raise _fail(path, f"{table}.{key}", f"not a point ({', '.join(POINTS)})")
            if not isinstance(value, str):
                raise _fail(path, f"{table}.{key}", "is not a text saying why")
    return doc


def place_transitional(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """(status -> word for ``provisioning`` and ``stopping``, one line per placement that is not
    the synonym pools' own). A word is placed by the pool that holds it (matched as svcnb's
    vocabulary matches words: case-insensitively, spaces and hyphens read as underscores); one
    word no pool holds takes the status the other word left, or both statuses when it is the
    only transitional word seen; a status no word was seen for keeps its own word."""
    placed: dict[str, str] = {}
    unplaced: list[str] = []
    key = "vm_words.transitional"
    for word in words:
        plain = re.sub(r"[\s-]+", "_", word.strip().lower())
        status = next((s for s in ("provisioning", "stopping") if plain in VM_POOLS[s]), None)
        if status is None:
            unplaced.append(word)
        elif status in placed:  # two words for one status: the sandbox says one
            return {}, [
                f"not expressible: {key}: {placed[status]!r} and {word!r} are both words for "
                f"{status}; the twin says provisioning and stopping"
            ]
        else:
            placed[status] = word
    free = [s for s in ("provisioning", "stopping") if s not in placed]
    if len(unplaced) == 1 and len(free) == 1:
        placed[free[0]] = unplaced[0]
        return placed, [
            f"inferred: {key}: {unplaced[0]!r} is said for {free[0]}, the status the other "
            "transitional word left"
        ]
    if len(unplaced) == 1 and not placed:
        placed = dict.fromkeys(("provisioning", "stopping"), unplaced[0])
        return placed, [
            f"inferred: {key}: {unplaced[0]!r}, the one transitional word seen, is said for "
            "provisioning and stopping (the sandbox cannot tell which it stands for)"
        ]
    lines = [
        f"not expressible: {key}: {word!r} is no word for provisioning or stopping the sandbox "
        "knows; the twin says provisioning and stopping"
        for word in unplaced
    ]
    if unplaced:
        return {}, lines
    lines += [
        f"not observed: {key}: no word for {status} was seen; the twin says {status}"
        for status in free
    ]
    return placed, lines


def read_dialect_file(path: str | Path) -> DialectFile:
    """The dialect a file states, registered as ``file:PATH`` (docs/twin.md)."""
    path = Path(path)
    doc = _checked(path, _load(path))
    stated = dict(doc.get("dialect", {}))
    service = doc.get("service", {})
    bounds = doc.get("at_least", {})
    listed: list[str] = []
    values: dict[str, Any] = {}
    for key, value in stated.items():
        if key == "vm_words":
            words = dict(DEFAULT.vm_words)
            for cls, word in value.items():
                status = VM_CLASSES[cls]
                if status is not None:  # every class but "transitional" is one status
                    words[status] = word
                    continue
                placed, lines = place_transitional(word if isinstance(word, list) else [word])
                words.update(placed)
                listed.extend(lines)
            values[key] = words
        elif key == "billing_words":
            words = dict(DEFAULT.billing_words)
            words.update({BILLING_CLASSES[cls]: word for cls, word in value.items()})
            values[key] = words
        elif key == "delivery_fields":
            values[key] = {**DEFAULT.delivery_fields, **value}
        elif key == "token_names":
            values[key] = tuple(value)
        else:
            values[key] = value
    for key in ("page_default", "page_max"):
        if key not in values and bounds.get(key, 0) > getattr(DEFAULT, key):
            values[key] = bounds[key]
    if values.get("page_max", DEFAULT.page_max) < values.get("page_default", DEFAULT.page_default):
        if "page_max" in stated:
            raise _fail(path, "dialect.page_max", "is below page_default")
        values["page_max"] = values.get("page_default")
    if values.get("paging") == "bare":
        values["over_max"] = "clamp"  # what bare pages do, whatever over_max says
    dialect = Dialect(name=f"file:{path.resolve()}", **values).registered()

    settings: dict[str, Any] = {}
    if "rate_limit" in service:
        settings["rate_limit"] = service["rate_limit"]
    window = bounds.get("rate_window_seconds")
    if window is not None and window > DEFAULT_RATE_WINDOW_SECONDS:
        settings["rate_window_seconds"] = float(math.ceil(window))

    listed.extend(_listed(doc, dialect, settings))
    return DialectFile(path, dialect, settings, listed)


def _said(dialect: Dialect, settings: dict, point: str) -> str | None:
    """What the twin says for ``point`` (``a`` or ``a.b``), shown; None when it has no value."""
    head, _, sub = point.partition(".")
    if head in DIALECT_POINTS:
        value: Any = getattr(dialect, head)
        if sub and head == "vm_words":
            status = VM_CLASSES.get(sub)
            if status is None:
                return (
                    None
                    if sub != "transitional"
                    else _shown([value["provisioning"], value["stopping"]])
                )
            value = value[status]
        elif sub and head == "billing_words":
            if sub not in BILLING_CLASSES:
                return None
            value = value[BILLING_CLASSES[sub]]
        elif sub and head == "delivery_fields":
            if sub not in DELIVERY_POOLS:
                return None
            value = value[sub]
        elif sub:
            return None
        return _shown(value)
    if head == "rate_limit":
        return _shown(settings.get("rate_limit", "600 (or --rate-limit)"))
    if head == "rate_window_seconds":
        return _shown(settings.get("rate_window_seconds", "60 (or --rate-window)"))
    if head == "currency":
        return CURRENCY
    if head == "disk_unit":
        return DISK_UNIT
    return None


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, tuple | list):
        return ", ".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) else str(value)


def _applies(point: str, paging: str) -> bool:
    """Whether ``point`` changes anything on the wire under ``paging``."""
    if point == "link_form":
        return paging == "offset"
    if point == "token_names":
        return paging == "token"
    return True


def _listed(doc: dict, dialect: Dialect, settings: dict) -> list[str]:
    """One line per point the twin does not speak as proven: each the file explains (not
    observed, not expressible, inferred), and each it neither states nor explains."""
    stated = {**doc.get("dialect", {}), **doc.get("service", {})}
    bounds = doc.get("at_least", {})
    explained = [
        (key, label, why)
        for table, label in (
            ("not_observed", "not observed"),
            ("not_expressible", "not expressible"),
            ("inferred", "inferred"),
        )
        for key, why in doc.get(table, {}).items()
    ]
    lines: list[str] = []
    for point in POINTS:
        mine = [e for e in explained if e[0] == point or e[0].startswith(f"{point}.")]
        for key, label, why in mine:
            shown = None if label == "inferred" else _said(dialect, settings, key)
            lines.append(f"{label}: {key}: {why}" + (f"; the twin says {shown}" if shown else ""))
        if mine or point in stated or not _applies(point, dialect.paging):
            continue
        shown = _said(dialect, settings, point)
        if point in bounds:
            lines.append(f"not observed: {point}: at least {bounds[point]}; the twin says {shown}")
        elif point != "rate_window_seconds":  # a bound only, said with rate_window
            lines.append(f"not observed: {point}: not in the file; the twin says {shown}")
    return lines


def validation_wording(
    paging: str, over_max: str, page_default: int, page_max: int, query: dict[str, str], text: str
) -> str | None:
    """The wording (``plain`` or ``terse``) in which the sandbox, paging so, refuses ``query``
    (one page-size parameter) with exactly ``text``; None when it would not refuse it, or in
    neither wording says that text."""
    dialect = Dialect(
        paging=paging, over_max=over_max, page_default=page_default, page_max=page_max
    )
    ((name, _),) = query.items()
    try:
        _size(dialect, query, name)
    except ApiFailure as exc:
        return next(
            (w for w, t in (("plain", exc.message), ("terse", exc.terse)) if t == text), None
        )
    return None
