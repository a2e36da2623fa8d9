"""Answers reused while nothing they were computed from changed: ``with Reuse(): ...``.

Reports are pure functions of their frames and options, and one screen asks many of them the
same thing: a panel showing the billing report as of a snapshot calls ``runway``,
``low_balance_forecast`` and ``renewal_schedule``, which each price the same VMs and walk the
same renewals; the what-if panel asks ``topup_needed`` once for its table and again inside
``what_if_stop``. Inside ``with reuse:`` (a :class:`Reuse`), a report (or a helper marked
:func:`reusable`) called again with the same frame objects and equal options gives a copy of the
answer it gave, without computing it again; ``Report.inputs`` gives the same frames for the same
store, snapshot time and account, so every report of one snapshot shares them. A report called
outside any block opens one of its own for the length of the call, so the reports and helpers
it calls share their answers (``what_if_stop`` prices the VMs once, not once per figure); a function
marked :func:`sharing` (each report's ``view``, the alert rules) does the same for all the
reports it calls.

Frames are told apart by identity, which is only sound while nobody changes them: inside the
block the frames passed to reports (and those ``inputs`` gives) are read, never changed. Reports
never change their inputs; answers are handed out as copies, so a caller may change those. The
frames a ``Reuse`` was given are held until it is dropped (or ``clear``), so an identity is never
taken by another frame meanwhile. Outside any block nothing is kept and every call computes.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import functools
import inspect
from collections.abc import Callable, Hashable, Mapping
from decimal import Decimal
from typing import Any, TypeVar

import numpy as np
import pandas as pd

F = TypeVar("F", bound=Callable[..., Any])

_ACTIVE: contextvars.ContextVar[Reuse | None] = contextvars.ContextVar(
    "svcnb_reports_reuse", default=None
)


# arguments told apart by value (and type: 1, 1.0 and True are three calls)
_BY_VALUE = (str, bool, int, float, pd.Timestamp, pd.Timedelta, dt.datetime, dt.date, dt.tzinfo)


class _Unkeyable(Exception):
    """An argument that cannot be told apart from another by value (the call is not reused)."""


class Reuse:
    """A store of answers, active inside ``with`` blocks (any number, one after another)."""

    def __init__(self, histories: Any = None) -> None:
        # histories read whole and sliced per as-of time (``svcnb.reports._replay.Histories``),
        # shared by the blocks of one panel; None: each read up to its time
        self.histories = histories
        self._answers: dict[Hashable, Any] = {}
        self._held: dict[int, Any] = {}  # id -> object: ids in keys stay taken
        self._tokens: list[contextvars.Token[Reuse | None]] = []
        self.hits = 0
        self.misses = 0

    def __enter__(self) -> Reuse:
        self._tokens.append(_ACTIVE.set(self))
        return self

    def __exit__(self, *exc_info: object) -> None:
        _ACTIVE.reset(self._tokens.pop())

    def clear(self) -> None:
        """Forget every answer and frame."""
        self._answers.clear()
        self._held.clear()

    def call(self, fn: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any]) -> Any:
        """``fn(*args, **kwargs)``: a copy of the answer kept for an equal call, else computed
        (and kept)."""
        try:
            key = (fn, self._key(_bound(fn, args, kwargs)))
        except _Unkeyable:
            return fn(*args, **kwargs)
        if key in self._answers:
            self.hits += 1
        else:
            self.misses += 1
            self._answers[key] = fn(*args, **kwargs)
        return _copy(self._answers[key])

    def shared(self, key: Hashable, objects: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """``make()`` once per ``key`` and ``objects`` (told apart by identity): the very same
        answer every time, not a copy (what ``Report.inputs`` gives, so frames keep their
        identity)."""
        full = (key, tuple(self._hold(o) for o in objects))
        if full in self._answers:
            self.hits += 1
        else:
            self.misses += 1
            self._answers[full] = make()
        return self._answers[full]

    def _hold(self, obj: Any) -> int:
        self._held[id(obj)] = obj
        return id(obj)

    def _key(self, value: Any) -> Hashable:
        if isinstance(value, pd.DataFrame | pd.Series | pd.Index | np.ndarray):
            return ("object", self._hold(value))
        if isinstance(value, list | tuple):
            return (type(value).__name__, tuple(self._key(v) for v in value))
        if isinstance(value, set | frozenset):
            return ("set", frozenset(self._key(v) for v in value))
        if isinstance(value, dict):
            return ("dict", tuple((self._key(k), self._key(v)) for k, v in value.items()))
        if isinstance(value, Decimal):
            return ("Decimal", str(value))  # 1.0 and 1.00 are equal, and print apart
        if isinstance(value, float) and value == 0:
            return ("float", str(value))  # 0.0 and -0.0 likewise
        if value is None or value is pd.NA or value is pd.NaT:
            return ("missing", repr(value))
        if isinstance(
            value,
            str
            | bool
            | int
            | float
            | pd.Timestamp
            | pd.Timedelta
            | dt.datetime
            | dt.date
            | dt.tzinfo,
        ):
            return (type(value), value)
        raise _Unkeyable


def _bound(fn: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any]) -> tuple:
    """The call's arguments by name, defaults filled in: calls that differ only in spelling
    (``runway(vms, wallet)`` and ``runway(vms=vms, wallet=wallet, horizon="365D")``) are one."""
    try:
        bound = _signature(fn).bind(*args, **kwargs)
    except TypeError:
        raise _Unkeyable from None
    bound.apply_defaults()
    return tuple(bound.arguments.items())


@functools.cache
def _signature(fn: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(fn)


def _copy(answer: Any) -> Any:
    if isinstance(answer, pd.DataFrame | pd.Series):
        return answer.copy()
    if isinstance(answer, tuple):
        return tuple(_copy(a) for a in answer)
    if isinstance(answer, list):
        return [_copy(a) for a in answer]
    if isinstance(answer, dict):
        return {k: _copy(v) for k, v in answer.items()}
    return answer


def active() -> Reuse | None:
    """The :class:`Reuse` of the enclosing ``with`` block, if any."""
    return _ACTIVE.get()


def sharing(fn: F) -> F:
    """Mark a function that asks many reports about the same frames (a view, the alert rules):
    they share their answers and reads for the length of its call, inside the caller's block
    if there is one. Without it each report opens a block of its own, and the billing view
    priced the same VMs ten times."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _ACTIVE.get() is not None:
            return fn(*args, **kwargs)
        with Reuse():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def reusable(fn: F) -> F:
    """Mark a helper (a pure function of frames and options) as reused inside ``Reuse``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        reuse = _ACTIVE.get()
        if reuse is None:
            return fn(*args, **kwargs)
        return reuse.call(fn, args, kwargs)

    return wrapper  # type: ignore[return-value]
