"""``Store``: the snapshot history of an account, one Delta Lake table per resource.

Tables: ``svcnb.store._layout``; publishing: ``svcnb.store._catalog``. Reading needs no server
and no svcnb (the README reads "the fleet as of a date" in DuckDB, Polars and Spark).
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from svcnb.assumptions import Pins
from svcnb.client import (  # Client: the type of take()'s argument
    Client,
    RefusedBaseUrl,
    screened_url,
)
from svcnb.config import ENV_ACCOUNT, service_url
from svcnb.errors import IncompleteWarning
from svcnb.frames import KEYS, SCHEMAS, ResourceName, vm_records
from svcnb.times import to_utc

from ._accounts import EVERY_ACCOUNT, Accounts, account_names, stack
from ._asof import Snapshot
from ._catalog import Catalog
from ._diff import diff_frames
from ._eventlog import EventLog
from ._fs import Location
from ._journal import Journal
from ._layout import MissingResourceError, StoreError, resolve_url, warn
from ._pull import pull
from ._segments import state, to_frame
from ._snapshots import (
    RESOURCES,
    Unreadable,
    account_of,
    accounts_in,
    adopt,
    adopted,
    check_write,
    group_by_segment,
    has,
    incomplete,
    latest_with,
    read_part,
    reason,
    resource_status,
    segment_files,
    state_at,
    unreadable,
    write_snapshot,
)
from ._snapshots import _identity as identity

TimeLike = str | datetime | pd.Timestamp


def _when(entry: Mapping[str, Any]) -> pd.Timestamp:
    return pd.Timestamp(_instant(entry))


def _instant(entry: Mapping[str, Any]) -> datetime:
    # the stamps are written by _snapshots._stamp as UTC ISO 8601
    return datetime.fromisoformat(entry["server_time"] or entry["local_time"])


def _check_resource(resource: str) -> None:
    if resource not in SCHEMAS:
        raise ValueError(
            f"resource={resource!r} is not stored; choose one of {', '.join(RESOURCES)}"
        )


def _account(frames: Mapping[str, pd.DataFrame]) -> str | None:
    """The wallet id: the account's identity (one wallet per account)."""
    wallet = frames.get("wallet")
    if wallet is None or len(wallet) != 1 or pd.isna(wallet["id"].iloc[0]):
        return None
    return str(wallet["id"].iloc[0])


def _session_account(path: object) -> str | None:
    """The account of the session (``SVCNB_ACCOUNT``: ``svcnb lab --account NAME`` sets it for
    its kernels) for a Store whose place comes from the environment too (no ``path``)."""
    return (os.environ.get(ENV_ACCOUNT) or None) if path is None else None


class Store:
    """Snapshot history in ``path``: a folder or a URL such as ``s3://bucket/prefix``
    (argument, then ``$SVCNB_STORE``, then ``data/store``).

    On object storage, credentials and endpoints come from the environment (``AWS_*``,
    ``GOOGLE_*``, ``AZURE_*``) or the engine's usual configuration, or from ``storage_options``
    (deltalake's keys, e.g. ``AWS_ENDPOINT_URL``); never from a file in the store.
    Snapshots are ordered by when they were taken; ``at``, ``since`` and ``until`` are compared
    with each snapshot's server time (the API's ``Date`` header, the local clock if it had none).
    A store holds the history of one or several accounts, each under its name (the config's
    ``[accounts.NAME]``), each name bound to one server and one wallet (its first snapshot's).
    A store whose first snapshot named no account keeps one account, ``"default"``: every store
    written before accounts existed is such a store and reads as before.

    ``account`` (here, or ``for_account(name)``) binds this Store to one account: reads and
    ``take`` then see that account only. Unbound, a store of one account reads as that account;
    a store of several refuses to read without ``account=`` naming one, several or ``"*"``
    (then every row carries an ``account`` column): a frame never mixes accounts unsaid.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        storage_options: Mapping[str, str] | None = None,
        account: str | None = None,
    ) -> None:
        self._loc = Location.of(resolve_url(path), storage_options)
        self.url: str = self._loc.url
        # a folder for a local store; the URL for one on object storage
        self.path: Path | str = Path(resolve_url(path)) if self._loc.local else self.url
        self._catalog = Catalog(self._loc)
        # its tables shared with the account views, as the catalog is; each view's names its account
        self._journal = Journal(self._loc, self._scope, self._record_names)
        self._known: dict = {}  # this process's last write, to skip re-reading it
        # the catalog list the catalog shares while it is unchanged, and its times
        self._times: tuple[list[dict[str, Any]], list[datetime]] = ([], [])
        self._checked: dict[tuple[str, int], str | None] = {}
        self._bound: str | None = account if account is not None else _session_account(path)
        # the bound account's entries, and the catalog list they were filtered from
        self._mine: tuple[list[dict[str, Any]] | None, list[dict[str, Any]]] = (None, [])
        self._views: dict[str, Store] = {}

    def __repr__(self) -> str:
        if self._bound is not None:
            return f"Store({str(self.path)!r}, account={self._bound!r})"
        return f"Store({str(self.path)!r})"

    # -- accounts ------------------------------------------------------------------------------

    @property
    def account(self) -> str | None:
        """The account this Store is bound to (None: the store's only one)."""
        return self._bound

    def accounts(self) -> list[str]:
        """The account names the store holds, in the order of their first snapshot
        (``["default"]`` for a store of one account that named none)."""
        return accounts_in(self._catalog.read()[0])

    def adopt(self, name: str) -> int:
        """Name the one account of a store started with no account name ``name``: its whole
        history is then that account's (every earlier snapshot reads as before, under that
        name) and the store takes more accounts. Returns the number of snapshots adopted.
        StoreError when the store is empty or already names its accounts."""
        done = adopt(self._loc, self._catalog, name)
        self._known.clear()
        self._views.clear()
        self._times, self._mine = ([], []), (None, [])
        return done

    def _record_names(self, name: str) -> list[str]:
        """The names the journal's records of account ``name`` carry: its own, and for the
        account a store adopted also the one its records had before (``"default"``)."""
        from svcnb.config import DEFAULT_ACCOUNT

        return [name, DEFAULT_ACCOUNT] if adopted(self._catalog.read()[0]) == name else [name]

    def record_accounts(self) -> list[str]:
        """The account names the journal's records of the account in scope carry (its name;
        for an adopted account also ``"default"``, the name of its records before)."""
        return self._record_names(self.account_in_scope())

    def for_account(self, name: str) -> Store:
        """This store bound to account ``name``: shares the catalog, reads and takes that
        account only."""
        if not isinstance(name, str) or not name or name == EVERY_ACCOUNT:
            raise ValueError(f"for_account takes one account name, got {name!r}")
        if name == self._bound:
            return self
        view = self._views.get(name)
        if view is None:
            view = copy.copy(self)
            view._bound, view._known, view._views = name, {}, {}
            view._times, view._mine = ([], []), (None, [])
            view._journal = self._journal._scoped(view._scope)
            self._views[name] = view
        return view

    def _names(self, account: Accounts) -> list[str]:
        """The account names ``account`` asks for, each checked against the store's."""
        return account_names(account, self.accounts(), self.path)

    def _across(self, account: Accounts, read: Callable[[Store], pd.DataFrame]) -> pd.DataFrame:
        """``read`` of one account, or of several stacked with an ``account`` column first."""
        if isinstance(account, str) and account != EVERY_ACCOUNT:
            return read(self.for_account(self._names(account)[0]))
        return stack(self._names(account), lambda name: read(self.for_account(name)))

    def _entries(self) -> list[dict[str, Any]]:
        """The catalog entries of the account in scope: the bound one, else the store's only
        one; StoreError when the store holds several and none is named."""
        entries = self._catalog.read()[0]
        if self._mine[0] is entries:
            return self._mine[1]
        if self._bound is None:
            names = accounts_in(entries)
            if len(names) > 1:
                raise StoreError(
                    f"the store {self.path} holds accounts {', '.join(names)}: name one with "
                    "account='NAME' (or Store(..., account=...)), several as a list, or '*' for "
                    "all (each row then says its account); figures of several accounts are "
                    "never read as one"
                )
            mine = entries
        else:
            mine = [e for e in entries if account_of(e) == self._bound]
        self._mine = (entries, mine)
        return mine

    def _local(self, what: str) -> Path:
        if not self._loc.local:
            raise StoreError(
                f"the {what} is kept in a local store folder; {self.url} is on object storage"
            )
        return Path(self.path)

    # -- writing ---------------------------------------------------------------------------

    def take(self, client: Client, *, account: str | None = None, allow_older: bool = False) -> str:
        """Pull the account through ``client`` into one snapshot; returns its id.

        Every resource that can be read is stored. One that cannot (a scope the token lacks, a
        list not read to its end, a record frames cannot read) is recorded as missing with the
        reason, and reads of it at this snapshot raise ``MissingResourceError``; see
        ``snapshots()["missing"]``. Raises, storing nothing, when no resource could be read.
        VM details are fetched only for VMs whose ``updatedAt`` moved since the latest snapshot.
        The snapshot is published whole (one commit to the catalog) or not at all. Raises
        StoreError, storing nothing, when the client's server or account (the wallet id) is not
        the store's, or its server time is earlier than the latest snapshot's (unless
        ``allow_older``).

        ``account``: the name this snapshot is stored under (default: the bound account, else
        the store's only one; a new store taken with a name keeps accounts apart).
        """
        if account is not None and account != self._bound:
            return self.for_account(account).take(client, allow_older=allow_older)
        previous = self._previous_vms()
        pulled = pull(client, previous)
        return self.write(
            pulled.frames,
            missing=pulled.missing,
            server_time=client.server_time,
            local_time=datetime.now(UTC),
            server=str(client.base_url),
            allow_older=allow_older,
            pins=getattr(client, "pins", None),
        )

    def write(
        self,
        frames: Mapping[str, pd.DataFrame],
        *,
        server_time: TimeLike | None,
        local_time: TimeLike | None = None,
        missing: Mapping[str, str] | None = None,
        partial: bool = False,
        server: str | None = None,
        account: str | None = None,
        wallet: str | None = None,
        allow_older: bool = False,
        pins: Pins | None = None,
    ) -> str:
        """Store frames built by ``svcnb.frames`` as one snapshot; returns its id.

        ``frames`` maps resource names (``svcnb.store.RESOURCES``) to frames; ``missing`` maps
        the resources that could not be read to why. Every resource must be in one of them,
        else ValueError: a resource left out is never stored as empty. ``partial=True``
        records those left out as missing instead. An account that truly has no webhooks is
        an empty frame (``svcnb.frames.empty("webhooks")``). A frame's ``attrs["unreadable"]``
        (``{column: count}``) is kept in the snapshot's metadata. Only rows new or changed
        since the latest snapshot with the resource are written.

        ``server`` (the API's base URL, recorded as ``svcnb.config.service_url`` spells it, so
        one service is one server however its URL is written) and ``wallet`` (the wallet id; by
        default that of ``frames["wallet"]``) are recorded; the first snapshot of account
        ``account`` (the name; default: the bound one, else the store's only one) binds that
        name to them, and a snapshot of it from another server or wallet raises StoreError
        naming both, as does a server and wallet the store holds under another name (naming
        both names). So does one whose server time is earlier than the account's latest
        snapshot's, unless ``allow_older=True``. A ``server`` that may hold a secret
        (credentials, a query, a token) raises StoreError: the catalog keeps it with every
        snapshot, for anyone who reads the store. ``pins`` (a client's) are the assumptions
        the frames were read with: those reports read later are kept (``Snapshot.pins``).
        """
        screened = screened_url(server, "server=")
        # the raw text may hold a secret: it leaves this frame before anything can raise, so no
        # traceback that shows locals carries it
        server = None
        if isinstance(screened, RefusedBaseUrl):
            raise StoreError(
                f"{screened.source} is refused: it {screened.problem}; pass the API's base URL "
                "(scheme://host[:port][/path], as Client.base_url has it). Nothing was stored"
            )
        server = screened
        if account is not None and account != self._bound:
            # through the account's view: its own cache of what its latest snapshot held
            return self.for_account(account).write(
                frames,
                server_time=server_time,
                local_time=local_time,
                missing=missing,
                partial=partial,
                server=server,
                wallet=wallet,
                allow_older=allow_older,
                pins=pins,
            )
        missing = check_write(frames, missing or {}, partial)
        name = self._bound
        local = datetime.now(UTC) if local_time is None else local_time
        return write_snapshot(
            self._loc,
            self._catalog,
            frames,
            missing,
            server_time,
            local,
            self._known,
            server=service_url(server) if server else None,
            account=wallet or _account(frames),
            allow_older=allow_older,
            name=name,
            pins=pins,
        )

    def build_history(
        self,
        client: Any,
        days: float,
        advance: Callable[[float], Any],
        every: str | pd.Timedelta = "1D",
    ) -> list[str]:
        """Take a snapshot, call ``advance(seconds)`` to move a sandbox clock by ``every``,
        and repeat until ``days`` have passed: ``days / every + 1`` snapshots, the first now,
        the last ``days`` later. Returns their ids in order.
        """
        step = pd.Timedelta(every)
        if step <= pd.Timedelta(0):
            raise ValueError(f"every={every!r} must be a positive duration such as '1D' or '6h'")
        if days < 0:
            raise ValueError(f"days={days!r} must not be negative")
        count = int(pd.Timedelta(days=days) / step)
        ids = [self.take(client)]
        for _ in range(count):
            advance(step.total_seconds())
            ids.append(self.take(client))
        return ids

    @property
    def journal(self) -> Journal:
        """The store's journal: rule edits, accepted findings and their revocations, stop
        plans and alert state, one typed record kind per table (``svcnb.store.Journal``)."""
        return self._journal

    def account_in_scope(self) -> str:
        """The name of the account reads and records of this Store are about: the bound one,
        else the store's only one (``"default"`` when it named none); StoreError when the store
        holds several and none is bound."""
        entries = self._entries()
        return self._bound or (account_of(entries[-1]) if entries else account_of({}))

    def _scope(self, account: str | None) -> tuple[str, str | None]:
        """The name and wallet id of ``account`` (None: the account in scope), for the
        journal's records; StoreError as :meth:`account_in_scope`."""
        store = self if account is None else self.for_account(account)
        return store.account_in_scope(), identity(store._entries(), "account")

    # -- reading -----------------------------------------------------------------------------

    def snapshots(self, account: Accounts | None = None) -> pd.DataFrame:
        """One row per readable snapshot: snapshot_id, seq, server_time, local_time,
        ``<resource>_rows`` for each resource (NA where it is missing), ``missing`` (the
        resources that could not be read, comma-separated; "" when the snapshot is complete),
        ``incomplete`` (the resources stored although nothing proved their lists whole, e.g. a
        service that said nothing of more pages; "" when none) and ``unreadable``
        (``resource.column (count)`` of values frames could not read,
        comma-separated; "" when none), account (its name). ``resources()`` gives the
        reasons. Snapshots whose files are damaged are left out with a SnapshotWarning.

        ``account``: one name, a list or ``"*"``; None lists the bound account's, else every
        snapshot of the store (a list of snapshots adds nothing up)."""
        if account is not None:
            wanted = set(self._names(account))
            entries = [e for e in self._catalog.read()[0] if account_of(e) in wanted]
        elif self._bound is None:
            entries = self._catalog.read()[0]
        else:
            entries = self._entries()
        entries = self._readable(entries)
        data: dict[str, Any] = {
            "snapshot_id": pd.array([e["snapshot_id"] for e in entries], dtype="string"),
            "seq": pd.array([e["seq"] for e in entries], dtype="Int64"),
            "server_time": pd.to_datetime(
                [e["server_time"] for e in entries], utc=True, format="ISO8601"
            ).astype("datetime64[ns, UTC]"),
            "local_time": pd.to_datetime(
                [e["local_time"] for e in entries], utc=True, format="ISO8601"
            ).astype("datetime64[ns, UTC]"),
        }
        for resource in RESOURCES:
            data[f"{resource}_rows"] = pd.array(
                [e["rows"].get(resource) if has(e, resource) else None for e in entries],
                dtype="Int64",
            )
        data["missing"] = pd.array(
            [", ".join(r for r in RESOURCES if not has(e, r)) for e in entries], dtype="string"
        )
        data["incomplete"] = pd.array(
            [", ".join(r for r in RESOURCES if incomplete(e, r)) for e in entries], dtype="string"
        )
        data["unreadable"] = pd.array(
            [
                ", ".join(
                    f"{r}.{column} ({count})"
                    for r in RESOURCES
                    for column, count in unreadable(e, r).items()
                )
                for e in entries
            ],
            dtype="string",
        )
        data["account"] = pd.array([account_of(e) for e in entries], dtype="string")
        return pd.DataFrame(data)

    def resources(self, snapshot: TimeLike | None = None) -> pd.DataFrame:
        """What one snapshot holds of each resource (the latest by default; an id or a time).

        Columns: snapshot_id, resource, status ("ok" | "incomplete" | "missing"), reason (why it
        could not be read, or why it may be incomplete; NA when ok), rows (NA when missing),
        unreadable (``{column: count}`` of values frames could not read).
        """
        entry = self._entry(snapshot)
        status = [resource_status(entry, r) for r in RESOURCES]
        return pd.DataFrame(
            {
                "snapshot_id": pd.array([entry["snapshot_id"]] * len(RESOURCES), dtype="string"),
                "resource": pd.array(RESOURCES, dtype="string"),
                "status": pd.array([s["status"] for s in status], dtype="string"),
                "reason": pd.array([s["reason"] for s in status], dtype="string"),
                "rows": pd.array([s["rows"] for s in status], dtype="Int64"),
                "unreadable": pd.Series([s["unreadable"] for s in status], dtype=object),
            }
        )

    def at(self, when: TimeLike | None = None, *, account: str | None = None) -> Snapshot:
        """The latest snapshot whose server time is at or before ``when`` (the latest of all
        for None), of ``account`` (one name; None: the bound account, else the store's only
        one), as a handle every read as of it goes through: ``snap.load(resource)``,
        ``snap.history(resource, columns)``, ``snap.server_time``, ``snap.id``,
        ``snap.complete``. ``when`` is read once (``svcnb.times.to_utc``: TimeError), the
        catalog once. ValueError when the store holds no snapshot, or none that early; StoreError
        when it holds several accounts and none is named.
        """
        if account is not None:
            return self.for_account(account).at(when)
        limit = None if when is None else to_utc(when, "at")
        entries = self._entries()
        # the snapshots() list: readable entries, placed by their server time
        listed = self._readable(entries)
        times = pd.to_datetime(
            [e["server_time"] for e in listed], utc=True, format="ISO8601"
        ).astype("datetime64[ns, UTC]")
        order = sorted(
            (i for i in range(len(listed)) if not pd.isna(times[i])),
            key=lambda i: (times[i], listed[i]["snapshot_id"]),
        )
        if not order:
            raise ValueError("the store holds no snapshot; take one first (svcnb snapshot)")
        chosen = [i for i in order if limit is None or times[i] <= limit]
        if not chosen and limit is not None:
            first = times[order[0]]
            raise ValueError(
                f"no snapshot at or before {limit.isoformat()}; the first is {first.isoformat()}"
            )
        entry, server_time = listed[chosen[-1]], times[chosen[-1]]
        cut = server_time.to_pydatetime()
        if self._times[0] is not entries:
            self._times = (entries, [_instant(e) for e in entries])
        upto = [e for e, t in zip(entries, self._times[1], strict=True) if t <= cut]
        return Snapshot(self, entry, server_time, upto)

    def load(
        self,
        resource: ResourceName,
        at: TimeLike | None = None,
        *,
        allow_stale: bool = False,
        account: Accounts | None = None,
    ) -> pd.DataFrame:
        """The frame of ``resource`` as of server time ``at`` (the latest snapshot by default).

        Columns and dtypes are those of ``svcnb.frames.<resource>``; rows sorted by key;
        ``attrs["as_of_snapshot"]`` is the id of the snapshot the rows are from, and
        ``attrs["unreadable"]`` (when any) counts per column the values frames could not read.
        Works offline. A snapshot whose files are damaged is skipped with a SnapshotWarning and
        the one before it is used. Where the snapshot could not read ``resource``, raises
        ``MissingResourceError``; with ``allow_stale=True`` gives the resource as of the latest
        earlier snapshot that has it instead.

        ``account``: one name (that account's frame), a list or ``"*"`` (the frames stacked,
        an ``account`` column first, ``attrs["accounts"]`` holding each one's attrs); None: the
        bound account, else the store's only one (StoreError naming them when it has several).
        """
        if account is not None:
            return self._across(
                account, lambda one: one.load(resource, at, allow_stale=allow_stale)
            )
        _check_resource(resource)
        return self._load(resource, self._until(at), at, allow_stale)

    def _load(
        self,
        resource: ResourceName,
        entries: list[dict[str, Any]],
        at: TimeLike | None,
        allow_stale: bool,
    ) -> pd.DataFrame:
        """``load`` from ``entries``, the account's catalog entries up to ``at``."""
        for i in range(len(entries) - 1, -1, -1):
            entry = entries[i]
            if not has(entry, resource):
                if allow_stale:
                    continue
                before = latest_with(entries[:i], resource)
                raise MissingResourceError(
                    resource,
                    entry["snapshot_id"],
                    reason(entry, resource),
                    before["snapshot_id"] if before else None,
                )
            try:
                return self._frame(resource, entry)
            except Unreadable as exc:
                warn(f"skipping snapshot {entry['snapshot_id']}: {exc}")
        raise StoreError(self._nothing_before(at, resource if allow_stale else None))

    def history(
        self,
        resource: ResourceName,
        columns: Iterable[str] | None = None,
        since: TimeLike | None = None,
        until: TimeLike | None = None,
        *,
        account: Accounts | None = None,
    ) -> pd.DataFrame:
        """One long frame: snapshot_id, server_time, the key columns and ``columns`` (all by
        default) for every row of every snapshot with ``since <= server time <= until``.

        Snapshots that could not read ``resource`` are left out, never shown as having no
        rows: a series has a gap there rather than a false zero. ``attrs["missing_snapshots"]``
        maps their ids to why. ``account`` as in ``load``.
        """
        if account is not None:
            wanted = None if columns is None else list(columns)
            return self._across(account, lambda one: one.history(resource, wanted, since, until))
        return self._history(resource, columns, self._until(until, "until"), since)

    def _history(
        self,
        resource: ResourceName,
        columns: Iterable[str] | None,
        entries: list[dict[str, Any]],
        since: TimeLike | None,
    ) -> pd.DataFrame:
        """``history`` from ``entries``, the account's catalog entries up to ``until``."""
        _check_resource(resource)
        keys = list(KEYS[resource])
        wanted = [c for c in (SCHEMAS[resource] if columns is None else columns) if c not in keys]
        unknown = [c for c in wanted if c not in SCHEMAS[resource]]
        if unknown:
            raise ValueError(
                f"{resource} has no columns {unknown}; it has {list(SCHEMAS[resource])}"
            )
        if since is not None:
            start = to_utc(since, "since")
            entries = [e for e in entries if _when(e) >= start]
        gaps = {e["snapshot_id"]: reason(e, resource) for e in entries if not has(e, resource)}
        parts = []
        published = self._catalog.last
        for segment_entries in group_by_segment(resource, entries).values():
            last = segment_entries[-1]
            try:
                # the columns asked for alone: each snapshot's state takes every column read
                tables = read_part(self._loc, resource, last, published, keys + wanted)
            except Unreadable as exc:
                warn(f"skipping {len(segment_entries)} snapshot(s) of {resource}: {exc}")
                continue
            for entry in segment_entries:
                frame = to_frame(resource, state(resource, tables, entry["seq"]), keys + wanted)
                frame.insert(0, "server_time", _when(entry))
                frame.insert(0, "snapshot_id", entry["snapshot_id"])
                parts.append(frame)
        if not parts:
            out = to_frame(resource, state(resource, [], 0))[keys + wanted]
            out.insert(0, "server_time", pd.Series(dtype="datetime64[ns, UTC]"))
            out.insert(0, "snapshot_id", pd.Series(dtype="string"))
        else:
            out = pd.concat(parts, ignore_index=True)
            out["snapshot_id"] = out["snapshot_id"].astype("string")
            out["server_time"] = out["server_time"].astype("datetime64[ns, UTC]")
        out.attrs = {"missing_snapshots": gaps}
        return out

    def diff(
        self,
        resource: ResourceName,
        a: TimeLike,
        b: TimeLike,
        *,
        account: Accounts | None = None,
    ) -> pd.DataFrame:
        """Rows added, removed and changed from ``a`` to ``b`` (snapshot ids or times).

        Columns: the key columns, change ("added" | "removed" | "changed"), column, before,
        after; one row per changed column of a changed row. Raises ``MissingResourceError``
        when ``a`` or ``b`` could not read ``resource``: compared with rows nobody read, every
        row would show as added or removed. ``account`` as in ``load`` (with several, ``a``
        and ``b`` are times).
        """
        if account is not None:
            return self._across(account, lambda one: one.diff(resource, a, b))
        _check_resource(resource)
        return diff_frames(resource, self._frame_of(resource, a), self._frame_of(resource, b))

    def events(self) -> pd.DataFrame:
        """The webhook event log kept in this store (``svcnb.webhooks`` writes it)."""
        return EventLog(self._local("webhook event log")).frame()

    # -- helpers -------------------------------------------------------------------------------

    def _until(self, at: TimeLike | None, name: str = "at") -> list[dict[str, Any]]:
        entries = self._entries()
        if at is None:
            return entries
        limit = to_utc(at, name).to_pydatetime()
        if self._times[0] is not entries:
            self._times = (entries, [_instant(e) for e in entries])
        return [e for e, t in zip(entries, self._times[1], strict=True) if t <= limit]

    def _nothing_before(self, at: TimeLike | None, resource: str | None = None) -> str:
        entries = self._entries()
        if not entries and self._bound is not None and self._catalog.last:
            return (
                f"no snapshot of account {self._bound!r} in {self.path} (its accounts: "
                f"{', '.join(accounts_in(self._catalog.last))})"
            )
        if not entries:
            return (
                f"no snapshots in {self.path}: take one with `svcnb snapshot --store {self.path}` "
                "or Store.take(client)"
            )
        first = _when(entries[0])
        if at is not None and to_utc(at, "at") < first:
            return f"no snapshot at or before {at}; the first was taken at {first.isoformat()}"
        if resource is not None:
            return f"no readable snapshot at or before {at or 'now'} in {self.path} has {resource}"
        return f"no readable snapshot at or before {at or 'now'} in {self.path}"

    def _frame(self, resource: ResourceName, entry: Mapping[str, Any]) -> pd.DataFrame:
        # the list read by the caller a moment ago: one catalog check per call, not one per step
        frame = to_frame(resource, state_at(self._loc, resource, entry, self._catalog.last))
        frame.attrs["as_of_snapshot"] = entry["snapshot_id"]
        counts = unreadable(entry, resource)
        if counts:
            frame.attrs["unreadable"] = counts
        doubt = incomplete(entry, resource)
        if doubt:
            frame.attrs["incomplete"] = doubt
            warnings.warn(
                f"{resource} at snapshot {entry['snapshot_id']} may be incomplete: {doubt}; "
                "figures computed from it may be short (reports say complete=False)",
                IncompleteWarning,
                stacklevel=3,
            )
        return frame

    def _entry(self, which: TimeLike | None) -> dict[str, Any]:
        """The manifest entry of snapshot id ``which``, else the latest at or before time
        ``which`` (the latest of all for None)."""
        if isinstance(which, str):
            for entry in self._entries():
                if entry["snapshot_id"] == which:
                    return entry
            try:
                pd.Timestamp(which)
            except ValueError:
                raise ValueError(
                    f"{which!r} is neither a snapshot id of {self.path} nor a time"
                ) from None
        entries = self._until(which)
        if not entries:
            raise StoreError(self._nothing_before(which))
        return entries[-1]

    def _frame_of(self, resource: ResourceName, which: TimeLike) -> pd.DataFrame:
        if isinstance(which, str):
            entries = self._entries()
            for i, entry in enumerate(entries):
                if entry["snapshot_id"] == which:
                    if not has(entry, resource):
                        before = latest_with(entries[:i], resource)
                        raise MissingResourceError(
                            resource,
                            which,
                            reason(entry, resource),
                            before["snapshot_id"] if before else None,
                        )
                    try:
                        return self._frame(resource, entry)
                    except Unreadable as exc:
                        raise StoreError(f"snapshot {which} is unreadable: {exc}") from None
            try:
                pd.Timestamp(which)
            except ValueError:
                raise ValueError(
                    f"{which!r} is neither a snapshot id of {self.path} nor a time"
                ) from None
        return self.load(resource, at=which)

    def _readable(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Entries whose files exist and open, each file checked once (its footer only)."""
        problems: dict[str, str | None] = {}
        out = []
        for entry in entries:
            problem = None
            for resource, part in entry["parts"].items():
                base, changes = segment_files(entries, resource, part[0])
                for name in (base, changes) if part[1] else (base,):
                    path = self._loc.file(resource, name or "")
                    if path not in problems:
                        problems[path] = self._check(path)
                    if problems[path]:
                        problem = f"{path}: {problems[path]}"
            if problem:
                warn(f"skipping snapshot {entry['snapshot_id']}: {problem}")
            else:
                out.append(entry)
        return out

    def _check(self, path: str) -> str | None:
        """Why the file at ``path`` does not open (None when it does); files are never
        rewritten, so a good one is checked once while its size stays the same."""
        try:
            size = self._loc.size(path)
            key = (path, size)
            if key not in self._checked:
                source = (
                    pa.memory_map(path) if self._loc.local else self._loc.fs.open_input_file(path)
                )
                with source:
                    pq.read_metadata(source)
                self._checked[key] = None
            return self._checked[key]
        except (OSError, pa.ArrowException) as exc:
            return str(exc)

    def _previous_vms(self) -> list[dict[str, Any]] | None:
        if not self._entries():
            return None
        # an older state is as good a cache as any: details are fetched again where updatedAt
        # moved, and the four are read together, so they come from one snapshot
        try:
            frames = [
                self.load(r, allow_stale=True)
                for r in ("vms", "vm_ssh_keys", "vm_firewalls", "vm_private_networks")
            ]
        except StoreError:
            return None
        if len({f.attrs.get("as_of_snapshot") for f in frames}) != 1:
            return None
        return vm_records(*frames)
