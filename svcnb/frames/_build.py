"""Records -> typed frame, driven by a schema table (what becomes NA and how it is said:
docs/contracts.md §4).

Most columns come from one pass of Arrow's C++ converter (``_fast``); the exact Python path below
is the reference: it converts what Arrow cannot (money, decimal strings, lists, alternatives) and,
when Arrow rejects a value, finds it. There each column is pulled out of the records as one
Python list (one pass per source path, shared by the columns that read the same object), its
element types are checked as a set, and it is converted to its dtype once: a time or digit-string
column in one Arrow cast, value by value only when that cast refuses one; a price once per
distinct value, its three columns taken by index. That keeps the per-record cost to a few dict
lookups, which is what makes it several times faster than ``pd.json_normalize`` followed by
casts.
"""

from __future__ import annotations

import gc
import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api.extensions import ExtensionArray

from svcnb.assumptions import Decision, Pins, assumption, decide
from svcnb.config import config_path
from svcnb.config import pins as config_pins
from svcnb.errors import SvcnbError
from svcnb.money import Money, UnknownMoneyKeyError, parse_money

from ._fast import ARROW_STRINGS, ZONED, arrow_columns, arrow_objects, utc_times
from ._schema import BOOL, FLOAT, INT, LIST, SCHEMAS, STRING, TIME, Field, ResourceName

_NONE = type(None)
_ZONED = re.compile(ZONED)
# an ISO 8601 date-time that states no zone: its instant rests on the assumption times.zone
_NAIVE = re.compile(r"\d{4}-?\d{2}-?\d{2}[Tt ]\d{2}(?::?\d{2}(?::?\d{2}(?:[.,]\d+)?)?)?")
_DIGITS = re.compile(r"\s*[0-9]+\s*")
RECORD = "<record>"  # the attrs["unreadable"] key for records that were not objects


class RecordError(SvcnbError, ValueError):
    """A record had a value of the wrong type; names the frame, the record id and the field."""

    def __init__(self, resource: str, record_id: Any, field: str, problem: str) -> None:
        self.resource = resource
        self.record_id = record_id
        self.field = field
        super().__init__(
            f"{resource} record {record_id!r}, field {field!r}: {problem}. "
            "Check the record as the API returned it; svcnb does not guess a conversion."
        )


class UnreadableValueWarning(UserWarning):
    """Some values could not be read and are NA in the frame (see ``frame.attrs["unreadable"]``)."""


class AssumptionWarning(UnreadableValueWarning):
    """Values rest on an assumption (``svcnb.assumptions``) that nothing in the answers proved
    and nothing pinned: they are NA. One per assumption per frame, naming it and the config
    line that pins it."""


def resolve_pins(pins: Pins | None) -> Pins:
    """``pins`` as given (a client's ``pins``), else the config file's pins for all accounts."""
    return config_pins() if pins is None else pins


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _pluck(objects: list[Any], key: str) -> list[Any]:
    """``o.get(key)`` for every object (None for a None object), without a call per object
    when every object has the key (``None in objects`` would cost as much as the pluck)."""
    try:
        return [o[key] for o in objects]
    except (KeyError, TypeError):
        return [None if o is None else o.get(key) for o in objects]


# one unreadable value: (source path, what was wrong, the value)
Problem = tuple[str, str, Any]


class _Columns:
    """Extracts source paths from one list of records, caching shared prefixes, and keeps the
    values it could not read (keyed by path) unless ``strict``.

    ``objects_known`` names paths already read as an object or null in every record (by the
    Arrow pass), which need no second look.
    """

    def __init__(
        self,
        resource: str,
        records: list[Any],
        ids: Sequence[Any] | None,
        strict: bool,
        objects_known: frozenset[str] = frozenset(),
        pins: Pins | None = None,
    ) -> None:
        self.resource = resource
        self._pins = pins
        # assumption -> problem key -> record -> (source path, why, value): NA because the
        # assumption is unknown (not proven, not pinned)
        self.assumed: dict[str, dict[str, dict[int, Problem]]] = {}
        # assumption -> source path -> how it was decided there
        self.decisions: dict[str, dict[str, Decision]] = {}
        self.records = records
        self.strict = strict
        self._ids = ids
        self._known = objects_known
        self._cache: dict[str, list[Any]] = {}
        self._money: dict[str, tuple[list[Money], np.ndarray]] = {}
        self.problems: dict[str, dict[int, Problem]] = {}
        # money objects with keys svcnb does not understand, per problem key ("money:<path>"):
        # (the source path they were seen at, the key) -> the records, in order
        self.unknown_keys: dict[str, dict[tuple[str, str], list[int]]] = {}

    def record_id(self, i: int) -> Any:
        if self._ids is not None:
            return self._ids[i]
        return self.records[i].get("id", f"#{i}")

    def bad(self, key: str, i: int, path: str, problem: str, value: Any) -> None:
        """Value ``i`` at ``path`` cannot be read: raise when strict, else keep it under ``key``."""
        if self.strict:
            raise RecordError(self.resource, self.record_id(i), path, problem)
        self.problems.setdefault(key, {}).setdefault(i, (path, problem, value))

    @property
    def pins(self) -> Pins:
        """The pins, the config file read only when a value needs one."""
        if self._pins is None:
            self._pins = resolve_pins(None)
        return self._pins

    def assume(self, name: str, key: str, i: int, path: str, value: Any) -> None:
        """Value ``i`` at ``path`` rests on the unknown assumption ``name``: NA (strict: raise)."""
        if self.strict:
            raise RecordError(
                self.resource,
                self.record_id(i),
                path,
                f"{_show(value)} rests on the assumption {name}, neither proven nor pinned; "
                + assumption(name).hint(config_path()),
            )
        self.assumed.setdefault(name, {}).setdefault(key, {}).setdefault(i, (path, name, value))

    def decided(self, decision: Decision, path: str) -> None:
        self.decisions.setdefault(decision.name, {})[path] = decision

    def check(
        self, values: list[Any], path: str, allowed: tuple[type, ...], expected: str
    ) -> list[Any]:
        """``values`` with every value not of an ``allowed`` type replaced by None (kept)."""
        out = list(values)
        for i, v in enumerate(values):
            if not isinstance(v, allowed) or isinstance(v, bool) and bool not in allowed:
                problem = f"expected {expected}, got {type(v).__name__} {_show(v)}"
                self.bad(path, i, self.source(i, path), problem, v)
                out[i] = None
        return out

    def source(self, i: int, path: str) -> str:
        """The alternative of ``path`` that gave value ``i`` (the first one when none did)."""
        if "|" not in path:
            return path
        for alternative in path.split("|"):
            if self.path(alternative)[i] is not None:
                return alternative
        return path.split("|", 1)[0]

    def path(self, path: str) -> list[Any]:
        """Values at ``path`` (None where absent); ``a|b`` falls back to b where a is null."""
        if path in self._cache:
            return self._cache[path]
        if "|" in path:
            first, rest = path.split("|", 1)
            a = self.path(first)
            if _NONE in set(map(type, a)):
                b = self.path(rest)
                values = [x if x is not None else y for x, y in zip(a, b, strict=True)]
            else:
                # b is never read, but a holder of it that is not an object still makes the
                # value unknown (``parents_bad``), as when b is read
                for alternative in rest.split("|"):
                    holder = alternative.rpartition(".")[0]
                    if holder not in self._known:
                        self.objects(holder)
                values = a
        else:
            parent, _, leaf = path.rpartition(".")
            values = _pluck(self.objects(parent), leaf)
        self._cache[path] = values
        return values

    def objects(self, parent: str) -> list[Any]:
        """The objects at ``parent`` ("" is the records): a value that is neither an object nor
        null is kept as a problem of ``parent`` and read as null."""
        if not parent:
            return self.records
        objects = self.path(parent)
        if not set(map(type, objects)) <= {dict, _NONE}:
            objects = self.check(objects, parent, (dict, _NONE), "an object or null")
            self._cache[parent] = objects
        return objects

    def parents_bad(self, path: str) -> dict[int, Problem]:
        """Problems of the objects holding ``path`` (e.g. ``region`` a string for ``region.slug``):
        the value there is unknown, and never replaced by a later alternative's."""
        out: dict[int, Problem] = {}
        for alternative in path.split("|"):
            parts = alternative.split(".")
            for n in range(1, len(parts)):
                for i, problem in self.problems.get(".".join(parts[:n]), {}).items():
                    out.setdefault(i, problem)
        return out

    def values(self, path: str) -> list[Any]:
        """``path`` values with None where an object holding them could not be read."""
        values = self.path(path)
        hidden = self.parents_bad(path)
        if hidden:
            values = list(values)
            for i in hidden:
                values[i] = None
        return values

    def money(self, path: str) -> tuple[list[Money], np.ndarray]:
        """The distinct values at ``path`` parsed, and each record's index into them.

        A fleet has few distinct prices: each is parsed once, and the columns are then taken
        from the parsed values by index instead of one Python object per record.
        """
        if path not in self._money:
            values = self.values(path)
            keys = _money_keys(values)
            # Each record's key looked up once: the index of the first record with an equal key
            # (setdefault keeps the first); the distinct firsts, in order seen, number the codes.
            seen: dict[Any, int] = {}
            first = np.fromiter(
                map(seen.setdefault, keys, range(len(keys))), dtype=np.intp, count=len(keys)
            )
            firsts, codes = np.unique(first, return_inverse=True)
            codes = codes.reshape(-1).astype(np.intp, copy=False)
            parsed, failed = [], {}
            for n, i in enumerate(firsts.tolist()):
                try:
                    parsed.append(parse_money(values[i]))
                except ValueError as exc:
                    # amount and currency unknown: never the part that was understood
                    parsed.append(Money(None, None, _raw(values[i])))
                    unknown = exc.keys if isinstance(exc, UnknownMoneyKeyError) else ()
                    failed[n] = (str(exc), unknown)
            if failed:  # counted once per record, in record order
                key = f"money:{path}"
                for i in np.flatnonzero(np.isin(codes, list(failed))).tolist():
                    problem, unknown = failed[int(codes[i])]
                    source = self.source(i, path)
                    self.bad(key, i, source, problem, values[i])
                    for name in unknown:
                        self.unknown_keys.setdefault(key, {}).setdefault((source, name), [])
                        self.unknown_keys[key][(source, name)].append(i)
            if any(m.basis == "open" for m in parsed):
                codes = self._scale(path, values, parsed, codes)
            self._money[path] = (parsed, codes)
        return self._money[path]

    def _scale(
        self, path: str, values: list[Any], parsed: list[Money], codes: np.ndarray
    ) -> np.ndarray:
        """Decide money.scale per field (each alternative of ``path``) for the amounts written
        as integers: a value of that field written with a decimal point proves major units;
        else a pin; else they stay NA (``assume``). ``parsed`` grows by the values read at the
        scale decided; the codes returned point at them."""
        # the first value written with a point, per alternative: in every record, also where
        # an earlier alternative gave the value (it is the same field of the same service)
        proof = {
            alternative: shown
            for alternative in path.split("|")
            if (shown := pointed(self.values(alternative))) is not None
        }
        open_codes = [n for n, m in enumerate(parsed) if m.basis == "open"]
        rows = np.flatnonzero(np.isin(codes, open_codes)).tolist()
        by_source: dict[str, list[int]] = {}
        for i in rows:
            by_source.setdefault(self.source(i, path), []).append(i)
        codes = codes.copy()
        for source, where in by_source.items():
            shown = proof.get(source)
            evidence = None
            if source in proof:
                evidence = ("major", f"{source} written with a decimal point ({_show(shown)})")
            decision = decide("money.scale", self.pins, evidence, True)
            self.decided(decision, source)
            if decision.state == "unknown":
                for i in where:
                    self.assume("money.scale", f"money:{path}", i, source, values[i])
                continue
            again: dict[int, int] = {}
            for i in where:
                code = int(codes[i])
                if code not in again:
                    again[code] = len(parsed)
                    try:
                        parsed.append(parse_money(values[i], decision.value))
                    except ValueError as exc:
                        parsed.append(Money(None, None, _raw(values[i])))
                        self.bad(f"money:{path}", i, source, str(exc), values[i])
                codes[i] = again[code]
        return codes


_SCALARS = frozenset({str, int, float, bool, _NONE})


def _money_keys(values: list[Any]) -> list[Any]:
    """One hashable key per value, equal only for values that parse alike and keep the same raw
    JSON: the type is part of the key, so 1, 1.0, "1" and True differ. A value with no such key
    (a list, a nested object) gets a key of its own."""
    kinds = list(map(type, values))
    keys: list[Any] = list(zip(kinds, values, strict=True))
    if not set(kinds) <= _SCALARS:
        for i in [i for i, kind in enumerate(kinds) if kind not in _SCALARS]:
            value = values[i]
            types = tuple(map(type, value.values())) if kinds[i] is dict else (list,)
            if _SCALARS.issuperset(types):
                keys[i] = (dict, tuple(value.items()), types)
            else:
                keys[i] = (None, i)
    return keys


def pointed(values: list[Any]) -> Any:
    """The first of ``values`` whose amount is written with a decimal point (which proves the
    field is in major units), None when none is; each distinct value parsed once."""
    seen: set[Any] = set()
    for key, value in zip(_money_keys(values), values, strict=True):
        if value is None or key in seen:
            continue
        seen.add(key)
        try:
            if parse_money(value).basis == "point":
                return value
        except ValueError:
            continue
    return None


def _raw(value: Any) -> str:
    """``value`` JSON-encoded as ``parse_money`` keeps it (its text when JSON has no form)."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(str(value), ensure_ascii=False)


def _strings(values: list[Any]) -> ExtensionArray:
    if ARROW_STRINGS:
        return pd.arrays.ArrowStringArray(pa.array(values, type=pa.large_string()))
    return pd.array(values, dtype=STRING)


def _string(cols: _Columns, path: str, values: list[Any]) -> ExtensionArray:
    if not set(map(type, values)) <= {str, _NONE}:
        values = cols.check(values, path, (str, _NONE), "a string or null")
    return _strings(values)


def _int(cols: _Columns, path: str, values: list[Any]) -> ExtensionArray:
    kinds = set(map(type, values))
    if not kinds <= {int, _NONE}:
        # JSON numbers such as bandwidthUsedBytes may arrive as 1.5e9; accept whole ones only
        values = [int(v) if type(v) is float and v.is_integer() else v for v in values]
        values = cols.check(values, path, (int, _NONE), "an integer or null")
    return _int64(cols, path, values)


_INT64 = range(-(2**63), 2**63)


def _int64(cols: _Columns, path: str, values: list[Any]) -> ExtensionArray:
    """Integers or None as Int64; an integer past 64 bits is unreadable."""
    try:
        with np.errstate(invalid="ignore"):  # numpy warns on its way to the error
            return pd.array(values, dtype=INT)
    except (OverflowError, TypeError):  # which one depends on how far past
        values = list(values)
        for i, v in enumerate(values):
            if v is not None and v not in _INT64:
                problem = f"an integer past 64 bits: {_show(v)}"
                cols.bad(path, i, cols.source(i, path), problem, v)
                values[i] = None
        return pd.array(values, dtype=INT)


def _decimal(cols: _Columns, path: str, values: list[Any]) -> ExtensionArray:
    kinds = set(map(type, values))
    if kinds <= {int, _NONE}:
        return _int64(cols, path, values)
    if kinds <= {str, _NONE}:
        text = pa.array(values, type=pa.string())
        # up to 18 digits always fits int64; anything else is read one value at a time below
        if pc.all(pc.match_substring_regex(text, r"^[0-9]{1,18}$"), min_count=0).as_py():
            return pd.Int64Dtype().__from_arrow__(text.cast(pa.int64()))  # type: ignore[attr-defined]  # pandas-stubs omit __from_arrow__
    out: list[int | None] = []
    for i, v in enumerate(values):
        if v is None or (type(v) is int):
            out.append(v)
        elif type(v) is str and _DIGITS.fullmatch(v):
            out.append(int(v))
        else:
            problem = f"expected a decimal string of an integer, got {type(v).__name__} {_show(v)}"
            cols.bad(path, i, cols.source(i, path), problem, v)
            out.append(None)
    return _int64(cols, path, out)


def _float(cols: _Columns, path: str, values: list[Any]) -> ExtensionArray:
    if not set(map(type, values)) <= {int, float, _NONE}:
        values = cols.check(values, path, (int, float, _NONE), "a number or null")
    return pd.array(values, dtype=FLOAT)


def _bool(cols: _Columns, path: str, values: list[Any]) -> ExtensionArray:
    if not set(map(type, values)) <= {bool, _NONE}:
        values = cols.check(values, path, (bool, _NONE), "true, false or null")
    return pd.array(values, dtype=BOOL)


def _time(cols: _Columns, path: str, values: list[Any]) -> Any:
    """ISO 8601 with a zone or an offset, any fraction of a second, as UTC. A time without a
    zone could be any of 27 offsets: it is unreadable, never taken to be UTC."""
    if not set(map(type, values)) <= {str, _NONE}:
        values = cols.check(values, path, (str, _NONE), "an ISO 8601 date-time string or null")
    else:
        times = utc_times(pa.array(values, type=pa.string()))
        if times is not None:
            return times
        values = list(values)
    naive: list[int] = []
    for i, v in enumerate(values):
        if v is None:
            continue
        if not _ZONED.match(v):
            if _NAIVE.fullmatch(v.strip()):
                naive.append(i)  # its zone is the assumption times.zone
            else:
                problem = f"not an ISO 8601 date-time with a zone or offset: {_show(v)}"
                cols.bad(path, i, cols.source(i, path), problem, v)
            values[i] = None
        else:
            values[i] = v.upper()  # RFC 3339 allows "t" and "z"; the parser takes "T" and "Z"
    zoned: dict[int, Any] = _zoneless(cols, path, naive) if naive else {}
    try:
        out = _to_utc(values)
    except (ValueError, OverflowError):
        for i, v in enumerate(values):
            try:
                _to_utc([v])
            except (ValueError, OverflowError):
                problem = f"not a valid ISO 8601 date-time in the years 1677..2262: {_show(v)}"
                cols.bad(path, i, cols.source(i, path), problem, v)
                values[i] = None
        out = _to_utc(values)
    if zoned:
        out = out.copy()
        for i, stamp in zoned.items():
            out[i] = stamp
    return out


def _zoneless(cols: _Columns, path: str, rows: list[int]) -> dict[int, Any]:
    """The times of ``rows`` (written without a zone) in the zone pinned for times.zone, as
    UTC; none pinned: each is NA, resting on the unknown assumption (nothing in an answer can
    prove the zone of a time that states none)."""
    raw = cols.values(path)
    decision = decide("times.zone", cols.pins, None, True)
    if decision.state == "unknown":
        for i in rows:
            cols.assume("times.zone", path, i, cols.source(i, path), raw[i])
        return {}
    for i in rows[:1]:
        cols.decided(decision, cols.source(i, path))
    out: dict[int, Any] = {}
    for i in rows:
        try:
            local = pd.Timestamp(raw[i].strip().upper())
            stamp = local.tz_localize(decision.value, ambiguous="raise", nonexistent="raise")
            out[i] = stamp.tz_convert("UTC")
        except (ValueError, OverflowError) as exc:  # a DST gap or fold: which instant?
            problem = (
                f"{_show(raw[i])} in {decision.value} (pinned by {decision.where}) is no one "
                f"instant ({type(exc).__name__}: a clock change)"
            )
            cols.bad(path, i, cols.source(i, path), problem, raw[i])
    return out


def _to_utc(values: Any) -> Any:
    """ISO 8601 text -> datetime64[ns, UTC]; raises ValueError past what nanoseconds hold."""
    parsed = pd.to_datetime(values, utc=True, format="ISO8601")
    return pd.DatetimeIndex(parsed).astype(TIME).array


def _list(cols: _Columns, path: str, values: list[Any]) -> Any:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        if v is None:
            continue
        if type(v) is not list or not all(type(x) is str for x in v):
            problem = f"expected a list of strings, got {_show(v)}"
            cols.bad(path, i, cols.source(i, path), problem, v)
            continue
        out[i] = list(v)
    return out


_BY_DTYPE: dict[str, Callable[[_Columns, str, list[Any]], Any]] = {
    STRING: _string,
    INT: _int,
    FLOAT: _float,
    BOOL: _bool,
    TIME: _time,
    LIST: _list,
}


def _column(cols: _Columns, field: Field) -> Any:
    if field.parse.startswith("money_"):
        part = field.parse.removeprefix("money_")
        parsed, codes = cols.money(field.path)
        values = [getattr(m, part) for m in parsed]
        array = _strings(values) if field.dtype == STRING else pd.array(values, dtype=field.dtype)
        return array.take(codes)
    convert = {"decimal": _decimal, "list": _list}.get(field.parse) or _BY_DTYPE[field.dtype]
    return convert(cols, field.path, cols.values(field.path))


def _unreadable(cols: _Columns, field: Field) -> dict[int, Problem]:
    """Every record whose value for ``field`` could not be read, with the first problem."""
    out = dict(cols.parents_bad(field.path))
    if field.parse == "money_amount":
        keys = [f"money:{field.path}"]
    elif field.parse.startswith("money_"):
        keys = []  # counted once, on the amount; the raw value is kept
    else:
        keys = [field.path]
    for key in keys:
        for i, problem in cols.problems.get(key, {}).items():
            out.setdefault(i, problem)
        for rows in cols.assumed.values():
            for i, problem in rows.get(key, {}).items():
                out.setdefault(i, problem)
    return out


def build(
    resource: ResourceName,
    records: Iterable[Any],
    ids: Sequence[Any] | None = None,
    *,
    strict: bool = False,
    skipped: Sequence[tuple[Any, str, Any]] = (),
    pins: Pins | None = None,
) -> pd.DataFrame:
    """The frame of ``resource`` from ``records``, with exactly the schema's columns and dtypes.

    ``ids`` names each record in messages when the record's own ``id`` is not enough.
    ``skipped`` lists (record id, problem, value) of items the caller could not turn into
    records (counted under ``"<record>"``). ``strict`` raises ``RecordError`` instead of NA.
    ``pins`` (a client's ``pins``; None: the config file's) decide the assumptions the values
    do not prove (``svcnb.assumptions``); ``attrs["assumptions"]`` says how each was decided.
    """
    schema = SCHEMAS[resource]
    records = records if isinstance(records, list) else list(records)
    with _gc_paused():
        return _build(resource, schema, records, ids, strict, list(skipped), pins)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic collector: the frame's arrays hold no cycles, and with 100,000 nested
    records alive each collection pass would walk all of them again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _objects(
    resource: ResourceName,
    records: list[Any],
    ids: Sequence[Any] | None,
    strict: bool,
    skipped: list[tuple[Any, str, Any]],
) -> tuple[list[Any], Sequence[Any] | None]:
    """The records that are objects (a Mapping is copied to a dict); the others are skipped."""
    kept, kept_ids = [], []
    for i, r in enumerate(records):
        if type(r) is not dict and isinstance(r, Mapping):
            r = dict(r)
        if type(r) is dict:
            kept.append(r)
            kept_ids.append(ids[i] if ids is not None else None)
            continue
        rid = ids[i] if ids is not None else i
        if strict:
            raise RecordError(resource, rid, RECORD, f"expected an object, got {_show(r)}")
        skipped.append((rid, f"expected an object, got {_show(r)}", r))
    return kept, (kept_ids if ids is not None else None)


def _build(
    resource: ResourceName,
    schema: dict[str, Field],
    records: list[Any],
    ids: Sequence[Any] | None,
    strict: bool,
    skipped: list[tuple[Any, str, Any]],
    pins: Pins | None = None,
) -> pd.DataFrame:
    if not set(map(type, records)) <= {dict}:
        records, ids = _objects(resource, records, ids, strict, skipped)
    data: dict[str, Any] = {}
    if records:
        try:
            data = arrow_columns(resource, records)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, ValueError, TypeError):
            data = {}  # the exact checks below find the values they cannot read
    rest = [name for name in schema if name not in data]
    cols = _Columns(
        resource, records, ids, strict, arrow_objects(resource) if data else frozenset(), pins
    )
    for name in rest:
        data[name] = _column(cols, schema[name])
    frame = pd.DataFrame(
        {name: data[name] for name in schema}, index=pd.RangeIndex(len(records)), copy=False
    )
    found = {name: _unreadable(cols, schema[name]) for name in rest}
    found = {name: problems for name, problems in found.items() if problems}
    if cols.decisions:
        frame.attrs["assumptions"] = {
            name: {path: d.state for path, d in paths.items()}
            for name, paths in cols.decisions.items()
        }
    if found or skipped:
        _report(resource, frame, cols, found, skipped)
    return frame


def _examples(cols: _Columns, field: Field, problems: dict[int, Problem]) -> str:
    """What went wrong in one column: each unknown money key once, with where it was seen and
    how many records had it, then an example of any other problem."""
    parts = []
    named: set[int] = set()
    if field.parse == "money_amount":
        for (source, key), rows in cols.unknown_keys.get(f"money:{field.path}", {}).items():
            named.update(rows)
            parts.append(
                f"unknown key {key!r} in the money object at {source} ({len(rows)} record(s), "
                f"e.g. {cols.record_id(rows[0])!r}: amount and currency NA, the value kept as "
                "sent)"
            )
    rest = [i for i in problems if i not in named]
    if rest:
        i = min(rest)
        path, problem, _ = problems[i]
        parts.append(f"e.g. record {cols.record_id(i)!r}, field {path!r}: {problem}")
    return "; ".join(parts)


def _report(
    resource: ResourceName,
    frame: pd.DataFrame,
    cols: _Columns,
    found: dict[str, dict[int, Problem]],
    skipped: list[tuple[Any, str, Any]],
) -> None:
    counts = {name: len(problems) for name, problems in found.items()}
    parts = []
    if skipped:
        counts = {RECORD: len(skipped), **counts}
        rid, problem, _ = skipped[0]
        parts.append(f"{len(skipped)} item(s) left out, not objects (e.g. {rid!r}: {problem})")
    assumed = {i for rows in cols.assumed.values() for key in rows.values() for i in key}
    for name, problems in found.items():
        # rows NA only for an unknown assumption are named by its own warning below
        problems = {
            i: p for i, p in problems.items() if i not in assumed or p[1] not in cols.assumed
        }
        if problems:
            examples = _examples(cols, SCHEMAS[resource][name], problems)
            parts.append(f"{name}: {len(problems)} ({examples})")
    frame.attrs["unreadable"] = counts
    if parts:
        warnings.warn(
            f"svcnb.frames.{resource}: values that could not be read are NA (unknown), per "
            f"column: {'; '.join(parts)}. Reports leave them out or show them as unknown; build "
            "with strict=True to stop at the first one.",
            UnreadableValueWarning,
            stacklevel=5,
        )
    for name, keys in cols.assumed.items():
        rows = {i: p for problems in keys.values() for i, p in problems.items()}
        fields = sorted({p[0] for p in rows.values()})
        first = min(rows)
        warnings.warn(
            f"svcnb.frames.{resource}: {len(rows)} value(s) of {', '.join(fields)} rest on the "
            f"assumption {name} ({assumption(name).meaning}), which nothing in the answers "
            f"proves and nothing pins, so they are NA (e.g. record {cols.record_id(first)!r}: "
            f"{_show(rows[first][2])}); {assumption(name).hint(config_path())}",
            AssumptionWarning,
            stacklevel=5,
        )


_EMPTY: dict[str, pd.DataFrame] = {}


def empty(resource: ResourceName) -> pd.DataFrame:
    """An empty frame with the schema's columns and dtypes (a new frame each call)."""
    if resource not in _EMPTY:
        _EMPTY[resource] = build(resource, [])
    return _EMPTY[resource].copy()
