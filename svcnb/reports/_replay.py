"""One calling convention for every report, and ``replay`` built on it.

Every report is a pure function of frames, called with the frames as keyword arguments named
after the store's resources, and ``now`` (the moment the frames describe)::

    billing.renewals(vms=vms, wallet=wallet, now=now, within="30D")

The ``@report`` decorator gives each one a second door, ``from_store(store, at=None, **options)``:
it picks the latest snapshot taken at or before ``at`` (server time), loads the frames the report
names from that snapshot, passes history up to that snapshot where the report reads trends, and
uses the snapshot's server time as ``now``. ``replay(report, store, every="1D")`` calls
``from_store`` over a regular grid of times, so every report replays the same way.

A snapshot that could not read a frame the report needs (a wallet behind a scope the token
lacks) gives no answer rather than one computed from nothing: ``from_store`` raises
``MissingResourceError`` naming the report, the resource, the snapshot and why, and ``replay``
shows such times as rows of NA with the resources in a ``missing`` column. Histories leave out
the snapshots that missed their resource (``Store.history``), so trends have gaps, not zeros.

Accounts: ``from_store``, ``inputs`` and ``replay`` take ``account=``: one name (the report of
that account), a list or ``"*"`` (the report of each, stacked with an ``account`` column first:
one row per account and whatever the report keeps apart, such as currency; nothing is added
across accounts, and ``attrs["note"]`` says so). None reads the store as it is bound (a store of
several accounts then refuses, naming them). Functions that take a store directly
(``firewall.changes``, ``webhooks.reconcile``) take ``store.for_account(name)``.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import pandas as pd

from svcnb import vocab
from svcnb.config import config_path
from svcnb.frames import ResourceName
from svcnb.reports import _reuse
from svcnb.store import MissingResourceError, Snapshot, TimeLike, stack
from svcnb.store import account_names as parse_accounts
from svcnb.times import to_utc

UTC = "UTC"


class StoreLike(Protocol):
    """The part of ``svcnb.store.Store`` reports read (see docs/contracts.md section 5)."""

    def snapshots(self) -> pd.DataFrame: ...
    def at(self, when: Any = None, *, account: str | None = None) -> Snapshot: ...
    def accounts(self) -> list[str]: ...
    def for_account(self, name: str) -> StoreLike: ...
    def load(
        self, resource: ResourceName, at: TimeLike | None = None
    ) -> pd.DataFrame: ...  # MissingResourceError
    def history(
        self,
        resource: ResourceName,
        columns: list[str],
        since: TimeLike | None = None,
        until: TimeLike | None = None,
    ) -> pd.DataFrame: ...
    def diff(self, resource: ResourceName, a: TimeLike, b: TimeLike) -> pd.DataFrame: ...
    def events(self) -> pd.DataFrame: ...  # the webhook event log


class Report:
    """A report function plus ``from_store``; calling it calls the function unchanged.

    ``frames`` maps keyword -> resource loaded with ``store.load``; ``histories`` maps
    keyword -> (resource, columns) read with ``store.history(..., until=snapshot time)``.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        frames: Mapping[str, ResourceName],
        histories: Mapping[str, tuple[ResourceName, list[str]]],
    ) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.frames = dict(frames)
        self.histories = dict(histories)
        # a report that reads pins (``billing.grace``) gets the snapshot's (``Snapshot.pins``)
        self.takes_pins = "pins" in inspect.signature(fn).parameters

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        reuse = _reuse.active()
        if reuse is not None:
            return reuse.call(self.fn, args, kwargs)  # the answer kept for this call, if any
        # the reports and helpers it calls share their answers for the length of this call
        with _reuse.Reuse():
            return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<report {self._module}.{self.fn.__qualname__}>"

    @property
    def _module(self) -> str:
        """The public module users reach the report by: ``svcnb.reports.firewall`` for a report
        written in ``svcnb.reports.firewall._findings``."""
        parts = self.fn.__module__.split(".")
        while len(parts) > 1 and parts[-1].startswith("_"):
            parts.pop()
        return ".".join(parts)

    @property
    def name(self) -> str:
        """``billing.runway``: the report module and function, as users call it."""
        return f"{self._module.rpartition('.')[2]}.{self.fn.__qualname__}"

    def missing_inputs(self, snap: Snapshot) -> list[str]:
        """The resources this report loads that snapshot ``snap`` could not read."""
        gone = snap.missing
        return [r for r in dict.fromkeys(self.frames.values()) if r in gone]

    def inputs(
        self, store: StoreLike | Snapshot, at: Any = None, account: str | None = None
    ) -> dict[str, Any]:
        """The keyword arguments ``from_store`` would pass: frames, histories and ``now``
        as of ``store.at(at, account=account)`` (or of the snapshot ``store`` is)."""
        return self._inputs(as_of(store, at, account))

    def _inputs(self, snap: Snapshot) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        for name, resource in self.frames.items():
            try:
                kwargs[name] = read_frame(snap, "load", resource)
            except MissingResourceError as exc:
                raise MissingResourceError(
                    exc.resource, exc.snapshot_id, exc.reason, exc.latest, needed_by=self.name
                ) from None
        for name, (resource, columns) in self.histories.items():
            kwargs[name] = read_frame(snap, "history", resource, tuple(columns))
        kwargs["now"] = snap.server_time
        if self.takes_pins:
            kwargs["pins"] = snap.pins
        return kwargs

    def from_store(
        self, store: StoreLike | Snapshot, at: Any = None, account: Any = None, **options: Any
    ) -> Any:
        """Run the report as of the latest snapshot at or before ``at`` (latest when None),
        or as of the snapshot ``store`` is (``store.at(...)``).

        Raises ``MissingResourceError`` when that snapshot could not read a frame the report
        needs ("billing.runway needs 'wallet', which snapshot ... could not read: ...").
        ``account``: one name, a list or ``"*"`` (see the module docstring); with several, each
        account's answer as of its own latest snapshot at or before ``at``.
        """
        if isinstance(store, Snapshot):
            return self._run(as_of(store, at, account), options)
        names = account_names(store, account)
        if names is None:
            return self._run(as_of(store, at), options)
        return per_account(names, lambda name: self._run(as_of(store, at, name), options))

    def _run(self, snap: Snapshot, options: Mapping[str, Any]) -> Any:
        """The report as of ``snap``, its status words as the snapshot's reader had them; an
        answer from a frame the store holds as incomplete (a list nothing proved whole) says
        so: ``complete`` False, ``attrs["incomplete"]``."""
        inputs = self._inputs(snap)
        with vocab.using(snap.vocabulary()):
            result = self(**inputs, **options)
        doubts = {
            self.frames.get(name, name): frame.attrs["incomplete"]
            for name, frame in inputs.items()
            if isinstance(frame, pd.DataFrame) and frame.attrs.get("incomplete")
        }
        if doubts and isinstance(result, pd.DataFrame):
            result.attrs["incomplete"] = doubts
            result.attrs["complete"] = False
            if "complete" in result.columns:
                result["complete"] = pd.array([False] * len(result), dtype="boolean")
            said = "; ".join(f"{r} may be incomplete ({why})" for r, why in doubts.items())
            note = result.attrs.get("note")
            result.attrs["note"] = f"{note} {said}" if note else said
        return result


def read_snapshots(store: StoreLike) -> pd.DataFrame:
    """``store.snapshots()``; read once per ``Reuse`` block (see ``svcnb.reports._reuse``)."""
    reuse = _reuse.active()
    if reuse is None:
        return store.snapshots()
    return reuse.shared(("snapshots",), (store,), store.snapshots)


def as_of(store: StoreLike | Snapshot, at: Any = None, account: str | None = None) -> Snapshot:
    """``store.at(at, account=account)``, once per ``Reuse`` block; ``store`` itself when it is
    a snapshot already (then ``at`` and ``account`` must be None: it is as of one time)."""
    if isinstance(store, Snapshot):
        if at is not None or account is not None:
            raise ValueError(
                f"{store!r} is one account as of one time already; give at= and account= to "
                "store.at() instead"
            )
        return store
    reuse = _reuse.active()
    if reuse is None:
        return store.at(at, account=account)
    return reuse.shared(("at", repr(at), account), (store,), lambda: store.at(at, account=account))


def read_frame(
    snap: Snapshot, how: str, resource: ResourceName, columns: tuple[str, ...] = ()
) -> pd.DataFrame:
    """``snap.load(resource)`` or ``snap.history(resource, columns)``; inside a ``Reuse`` block
    each is read once, and every report given the very same frame."""

    reuse = _reuse.active()
    when = snap.server_time

    def read() -> pd.DataFrame:
        if how == "load":
            return snap.load(resource)
        whole = reuse.histories if reuse is not None else None
        sliced = whole.until(snap.store, resource, columns, when) if whole is not None else None
        return snap.history(resource, list(columns)) if sliced is None else sliced

    if reuse is None:
        return read()
    return reuse.shared((how, resource, snap.id, columns), (snap.store,), read)


def reading(store: StoreLike, snapshots: pd.DataFrame | None = None) -> tuple[str, bytes, str]:
    """What every answer a report gives from ``store`` rests on besides the rows it reads:
    the store's snapshot list (each snapshot's id, time, account, rows and what it could not
    read; a snapshot written is never changed), the config file (the pins over the
    snapshots') and the vocabulary in use. Two equal readings give every report the same
    answers, so what was computed under one holds under the other; any change (a snapshot
    taken, a word mapped, a pin written) makes them differ. ``snapshots``: the store's
    ``snapshots()`` when the caller has just read them."""
    snaps = store.snapshots() if snapshots is None else snapshots
    path = config_path()
    pinned = path.read_bytes() if path.is_file() else b""
    words = vocab.current().words
    said = repr(sorted((kind, sorted(mapping.items())) for kind, mapping in words.items()))
    return snaps.to_json(orient="split", date_format="iso"), pinned, said


class Histories:
    """Each resource's history read once, whole, for every as-of time a panel shows.

    ``store.history(resource, columns, until=T)`` is the rows of the whole history whose
    snapshot's time is at or before T, in the same order, and the snapshots up to T that could
    not read the resource; ``until`` gives that slice (the same frame, dtypes and attrs)
    instead of reading every snapshot up to T again. It gives None, and the caller reads, where
    it cannot vouch for the slice: T after the snapshots read, a snapshot it cannot place in
    time, or a whole read that warned (a damaged file: the read up to T says so itself).
    A ``Reuse(histories=...)`` block reads histories through it.
    """

    def __init__(self) -> None:
        self._whole: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}

    def until(
        self, store: StoreLike, resource: ResourceName, columns: tuple[str, ...], until: Any
    ) -> pd.DataFrame | None:
        key = (id(store), resource, columns)
        if key not in self._whole:
            self._whole[key] = self._read(store, resource, columns)
        whole = self._whole[key]
        if whole is None:
            return None
        _store, frame, times, latest = whole
        when = to_utc(until, "until")
        if when > latest:
            return None
        out = frame[(frame["server_time"] <= when).to_numpy(dtype=bool)].reset_index(drop=True)
        gaps = frame.attrs["missing_snapshots"]
        out.attrs = {"missing_snapshots": {i: r for i, r in gaps.items() if times[i] <= when}}
        return out

    @staticmethod
    def _read(store: StoreLike, resource: ResourceName, columns: tuple[str, ...]) -> tuple | None:
        snaps = store.snapshots()
        if snaps.empty:
            return None
        # a snapshot's time as history places it: its server time, else its local time
        placed = snaps["server_time"].fillna(snaps["local_time"])
        times = dict(zip(snaps["snapshot_id"], placed, strict=True))
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            frame = store.history(resource, list(columns))
        if said or any(
            i not in times or pd.isna(times[i]) for i in frame.attrs["missing_snapshots"]
        ):
            return None
        return (store, frame, times, placed.max())


def report(
    frames: Mapping[str, ResourceName] | None = None,
    histories: Mapping[str, tuple[ResourceName, list[str]]] | None = None,
) -> Callable[[Callable[..., Any]], Report]:
    """Declare which store resources feed a report's keyword arguments (see module docstring)."""

    def wrap(fn: Callable[..., Any]) -> Report:
        return Report(fn, frames or {}, histories or {})

    return wrap


def account_names(store: StoreLike, account: Any) -> list[str] | None:
    """None for ``account`` None (the store as bound), else the names ``account`` asks for
    (one name, a list, or ``"*"`` for all), checked against the store's
    (``svcnb.store.account_names``)."""
    if account is None:
        return None
    return parse_accounts(account, store.accounts(), str(getattr(store, "path", store)))


def per_account(names: list[str], answer: Callable[[str], Any]) -> Any:
    """``answer(name)`` for one name as is; for several, their frames stacked as the store
    stacks them (``svcnb.store.stack``: an ``account`` column first, ``attrs["note"]`` saying
    nothing was added across them)."""
    if len(names) == 1:
        return answer(names[0])
    return stack(names, lambda name: _as_frame(answer(name)))


def resolve_now(now: Any) -> pd.Timestamp:
    """``now`` as UTC; None means the machine's clock (pass the server's time against a sandbox)."""
    return pd.Timestamp.now(tz=UTC) if now is None else to_utc(now, "now")


def snapshot_at(store: StoreLike, at: Any = None, snaps: pd.DataFrame | None = None) -> pd.Series:
    """The manifest row of the latest snapshot whose server time is at or before ``at``.

    ``snaps`` is ``store.snapshots()`` when the caller already has it.
    """
    snaps = store.snapshots() if snaps is None else snaps
    if snaps.empty:
        raise ValueError("the store holds no snapshot; take one first (svcnb snapshot)")
    snaps = snaps.sort_values(["server_time", "snapshot_id"], kind="stable")
    if at is None:
        return snaps.iloc[-1]
    when = to_utc(at)
    before = snaps[snaps["server_time"] <= when]
    if before.empty:
        first = snaps["server_time"].iloc[0]
        raise ValueError(
            f"no snapshot at or before {when.isoformat()}; the first is {first.isoformat()}"
        )
    return before.iloc[-1]


@_reuse.reusable
def latest_per_time(
    history: pd.DataFrame, keys: list[str] | None = None, now: Any = None
) -> pd.DataFrame:
    """The rows of one snapshot per server time: the latest taken at that time.

    Two snapshots can share a server time (the sandbox's clock is frozen, or the ``Date`` header
    has whole seconds); counted both, a fleet total would double at that point. Reads
    ``server_time``, ``snapshot_id`` (the store's ids sort in the order snapshots were taken) and,
    for history without ``snapshot_id``, ``keys``: then the last row per (server_time, keys) is
    kept. ``now`` (the report's ``now``) drops the rows after it; None keeps them all.
    Returns the same columns, rows sorted by server time, in their original order within it.
    """
    if now is not None:
        history = history[history["server_time"] <= resolve_now(now)]
    if history.empty:
        return history
    times = pd.to_datetime(history["server_time"], utc=True)
    if "snapshot_id" in history.columns:
        ids = history["snapshot_id"].astype("string").fillna("")
        order = pd.DataFrame({"t": times, "s": ids}).sort_values(["t", "s"], kind="stable")
        last = order.groupby("t", sort=False)["s"].transform("last")
        chosen = order.index[(order["s"] == last).to_numpy(dtype=bool)]
        return history.loc[chosen]
    order = history.assign(_when=times).sort_values("_when", kind="stable")
    kept = order.drop_duplicates(["_when", *(keys or [])], keep="last")
    return history.loc[kept.index]


def replay(
    report: Report,
    store: StoreLike,
    every: str = "1D",
    since: Any = None,
    until: Any = None,
    account: Any = None,
    **options: Any,
) -> pd.DataFrame:
    """Run ``report`` as of each time on a grid from the first snapshot to the last.

    Returns the report's rows with two columns in front: ``at`` (the grid time asked for) and
    ``snapshot_time`` (server time of the snapshot that answered, the report's ``now``).
    A report returning a Series or a scalar contributes one row per time. Where that snapshot
    could not read a frame the report needs, the time has one row with every result NA, and a
    third column ``missing`` (only present when some time had one) names the resources,
    comma-separated ("" at the times that were computed).
    ``account``: one name, a list or ``"*"``: each account replayed on its own snapshots, the
    rows stacked with an ``account`` column first (nothing added across accounts).
    """
    if not isinstance(report, Report):
        raise ValueError(
            f"replay needs a report from svcnb.reports (one with from_store), got {report!r}"
        )
    names = account_names(store, account)
    if names is not None:
        return per_account(
            names,
            lambda name: replay(report, store.for_account(name), every, since, until, **options),
        )
    from svcnb.reports._duration import DurationError, duration

    step = duration(every, name="every")
    if step <= pd.Timedelta(0):
        raise DurationError(f"every={every!r} must be more than 0, e.g. every='1d' or every='6h'")
    snaps = store.snapshots()
    if snaps.empty:
        raise ValueError("the store holds no snapshot; take one first (svcnb snapshot)")
    start = to_utc(since, "since") if since is not None else snaps["server_time"].min()
    end = to_utc(until, "until") if until is not None else snaps["server_time"].max()
    start = max(start, snaps["server_time"].min())
    parts = []
    cache: dict[Any, pd.DataFrame | str] = {}
    for at in pd.date_range(start, end, freq=step):
        snap = snapshot_at(store, at, snaps)
        key = snap["snapshot_id"]
        if key not in cache:
            cache[key] = _answer(report, store, snap, options)
        answer = cache[key]
        parts.append((at, snap["server_time"], answer))
    if not parts:
        return pd.DataFrame(columns=["at", "snapshot_time"])
    answers = [a for a in cache.values() if isinstance(a, pd.DataFrame)]
    # an unanswered time is one row of NA in the dtypes the answered times have
    blank = answers[0].iloc[:0].reindex([0]) if answers else pd.DataFrame(index=[0])
    frames = []
    for at, snapshot_time, answer in parts:
        part = answer.copy() if isinstance(answer, pd.DataFrame) else blank.copy()
        part.insert(0, "snapshot_time", snapshot_time)
        part.insert(0, "at", at)
        part.insert(2, "missing", "" if isinstance(answer, pd.DataFrame) else answer)
        frames.append(part)
    out = pd.concat(frames, ignore_index=True)
    if len(answers) == len(cache):
        return out.drop(columns="missing")
    out["missing"] = out["missing"].astype("string")
    return out


def _answer(
    report: Report, store: StoreLike, snap: pd.Series, options: Mapping[str, Any]
) -> pd.DataFrame | str:
    """The report's frame at snapshot row ``snap``, or the missing inputs, comma-separated."""
    handle = store.at(snap["server_time"])
    missing = report.missing_inputs(handle)
    if missing:
        return ", ".join(missing)
    try:
        return _as_frame(report.fn(**report._inputs(handle), **options))
    except MissingResourceError as exc:  # a store whose snapshot list does not say
        return exc.resource


def _as_frame(result: Any) -> pd.DataFrame:
    if isinstance(result, pd.DataFrame):
        return result.reset_index(drop=True)
    if isinstance(result, pd.Series):
        return result.to_frame().T.reset_index(drop=True)
    return pd.DataFrame({"value": [result]})
