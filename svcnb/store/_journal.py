"""The journal: what people and checks did with a store, one typed record kind per table.

Contract and listing: docs/contracts.md §5; each kind's table and columns are declared by its
class in ``svcnb.store._journal_kinds``. Every table also has ``time``, ``written`` (the writer's
clock at the append), ``record_id``, ``legacy_id`` and ``legacy_seq`` (a record copied from the
old audit log: its id there and its place in that log) and ``extra`` (fields the kind does not
declare, kept rather than dropped).

Records are read in the order written: those copied from the old audit log first, in its order,
then the rest by ``written``, and in commit order within a table. The old log is migrated on the
first write, each record keeping its id so it is copied once whoever copies it; until then
reads take the old records from it as they would read once copied. The old log itself is left as
it was, for an older svcnb that reads it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa

from svcnb.times import TimeError

from . import _acceptances
from ._appendlog import AppendLog
from ._fs import Location
from ._journal_kinds import (
    KINDS,
    AcceptanceRevoked,
    FindingAccepted,
    JournalRecord,
    R,
    TimeLike,
    differs,
    from_audit,
    from_row,
    to_rows,
)
from ._layout import StoreError
from ._old_audit import LegacyAudit, audit_frame, clean
from ._scrub import scrub

JOURNAL = "_journal"
_MIGRATE_ATTEMPTS = 20
# The account a record is about, for a name (None: the account in scope): its name and wallet
# id. The store that owns a journal gives it; a journal knows no accounts of its own.
AccountScope = Callable[[str | None], tuple[str, str | None]]


@dataclass(frozen=True)
class _Read:
    """A record as read, with where it sits in the order written."""

    order: tuple[int, int, int, int, int, int]
    record: JournalRecord
    legacy_id: str | None


@dataclass
class _Tables:
    """What the journals of one store share (its account views' too): the tables, the old
    audit log, whether it was migrated, the version of each table last read."""

    logs: dict[type[JournalRecord], AppendLog]
    legacy: LegacyAudit
    migrated: bool = False
    versions: dict[type[JournalRecord], int] = field(default_factory=dict)


class Journal:
    """The journal of the store at ``loc``: rule edits, accepted findings and their
    revocations, stop plans and alert state, one table per kind (``svcnb.store._journal_kinds``).
    Reach it as ``Store(...).journal``: ``scope`` (the store's, or its account view's) names
    the account and wallet an acceptance is about; a Journal without one reads and writes
    records but cannot accept, revoke or list acceptances, which are an account's."""

    def __init__(
        self,
        loc: Location,
        scope: AccountScope | None = None,
        names: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.loc = loc
        self._scope = scope
        # an account's name -> the names its records carry (a store that adopted a name: the
        # records written before name it "default")
        self._names = names
        logs = {
            cls: AppendLog(loc, f"{JOURNAL}/{cls.KIND}", cls.schema(), f"the journal's {cls.KIND}")
            for cls in KINDS
        }
        self._tables = _Tables(logs, LegacyAudit(loc))

    def __repr__(self) -> str:
        return f"Journal({self.loc.url!r})"

    def _scoped(self, scope: AccountScope) -> Journal:
        """This journal (its tables shared) with the accounts of ``scope``: an account view's."""
        view = copy.copy(self)
        view._scope = scope
        return view

    def _account(self, name: str | None) -> tuple[str, str | None]:
        if self._scope is None:
            raise StoreError(
                f"the journal of {self.loc.url} knows no accounts to accept findings for; "
                "use the store's: Store(...).journal"
            )
        return self._scope(name)

    # -- writing -------------------------------------------------------------------------

    def append(self, record: JournalRecord | Mapping[str, Any]) -> JournalRecord:
        """Write one record (scrubbed; see :meth:`JournalRecord.scrubbed`) and return it as
        written. A dict is a record as the audit log took it (time, firewall_id, rule_id,
        before, after, outcome, ``kind``; other keys are kept in ``extra``), written as the
        record of its kind (:func:`from_audit`; no kind: a rule edit): ValueError when it lacks
        firewall_id, rule_id or outcome, StoreError when its kind is not one the journal keeps.
        StoreError when the store cannot be written."""
        if not isinstance(record, JournalRecord):
            record = from_audit(clean(record))
        self.migrate()
        written = record.scrubbed()
        self._tables.logs[type(written)].append(to_rows([written]))
        return written

    def append_if(self, records: Sequence[JournalRecord], *, version: int) -> bool:
        """Write ``records`` (all of one kind) in one commit only if nobody wrote a record of
        that kind since its table was read at ``version`` (``read(kind).attrs["version"]``):
        a compare-and-set, on a local store and on object storage alike. False, nothing
        written, when someone did: read again and decide again."""
        if not records:
            raise ValueError("append_if needs at least one record")
        kinds = {type(r) for r in records}
        if len(kinds) != 1:
            names = sorted(k.__name__ for k in kinds)
            raise ValueError(f"append_if writes records of one kind in one commit, got {names}")
        self.migrate()
        written = [r.scrubbed() for r in records]
        return self._tables.logs[type(written[0])].append_if(to_rows(written), version)

    def accept_finding(
        self,
        finding_id: str,
        *,
        reason: str,
        owner: str,
        until: TimeLike,
        now: TimeLike | None = None,
        account: str | None = None,
        firewall_id: str | None = None,
        rule_id: str | None = None,
    ) -> dict[str, Any]:
        """Accept the risk of a firewall finding (``finding_id`` of ``firewall.audit``) until a
        time: a ``FindingAccepted`` record, the register being the journal
        (``svcnb.store._acceptances``). Reason and owner are required and ``until`` must be
        after ``now`` (the clock by default), else StoreError. The acceptance is the account's
        in scope (``account``, else the store's bound one, else its only one). Returns the
        record written, as :meth:`log` shows it."""
        name, wallet = self._account(account)
        record = _acceptances.accepted(
            finding_id,
            wallet=wallet,
            reason=reason,
            owner=owner,
            until=until,
            now=now,
            account=name,
            firewall_id=firewall_id,
            rule_id=rule_id,
        )
        return self.append(record).as_audit()

    def revoke_acceptance(
        self, finding_id: str, *, owner: str, reason: str, now: TimeLike | None = None
    ) -> dict[str, Any]:
        """End the acceptance of ``finding_id`` in the account in scope (an
        ``AcceptanceRevoked`` record); StoreError when none stands. Returns the record written,
        as :meth:`log` shows it."""
        name, wallet = self._account(None)
        record = _acceptances.revocation(
            lambda: self._register(name),
            finding_id,
            wallet=wallet,
            owner=owner,
            reason=reason,
            now=now,
            account=name,
        )
        return self.append(record).as_audit()

    def migrate(self, records: Sequence[tuple[str, Mapping[str, Any]]] | None = None) -> int:
        """Copy the old audit log's records into the journal, each once (by its id), then
        check them field for field; returns how many old records it checked (0 when this
        Journal had already migrated). Runs by itself before the first write of this
        Journal; ``records`` (id, record) copies those instead (from a store of the first
        format). StoreError naming a record that cannot be copied as it is (docs/contracts.md
        §5: nothing is copied then), or one that reads back differently."""
        if records is None:
            if self._tables.migrated:
                return 0
            records = self._tables.legacy.records()
        pending: dict[type[JournalRecord], list[tuple[int, str, JournalRecord]]] = {}
        for seq, (rid, raw) in enumerate(records):
            record = self._copy_of(rid, raw)
            pending.setdefault(type(record), []).append((seq, rid, record))
        for cls, items in pending.items():
            log = self._tables.logs[cls]
            for _ in range(_MIGRATE_ATTEMPTS):
                parts, version = log.read()
                have = {i for _, p in parts for i in p.column("legacy_id").to_pylist() if i}
                todo = [item for item in items if item[1] not in have]
                if not todo or log.append_if(to_rows([r for _, _, r in todo], todo), version):
                    break
            else:
                raise StoreError(
                    f"the old audit log's {cls.KIND} could not be copied into {log.url}: other "
                    f"writers went first {_MIGRATE_ATTEMPTS} times in a row; try again"
                )
        self._check(records)
        self._tables.migrated = True
        return len(records)

    def _copy_of(self, rid: str, raw: Any) -> JournalRecord:
        """The journal record the old record ``raw`` becomes: scrubbed, and the same as the
        scrubbed old record field for field once written and read back (tried in memory).
        StoreError naming it and what to do when it cannot be."""
        legacy = self._tables.legacy
        if not isinstance(raw, Mapping):  # a caller's list: the old log's are refused by it
            raise legacy.refused(rid, f"it is not a record but {type(raw).__name__}")
        want = scrub(dict(raw))
        try:
            record = from_audit(want).scrubbed()
            back = from_row(type(record), to_rows([record]).to_pylist()[0])
        except (StoreError, TimeError) as exc:
            raise legacy.refused(rid, str(exc)) from None
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise legacy.refused(rid, f"the journal cannot hold it ({exc})") from None
        problem = differs(want, back)
        if problem:
            raise legacy.refused(rid, f"the journal would change it: {problem}")
        return record

    def _check(self, records: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Every old record reads back from the journal as it was once scrubbed, field for
        field."""
        if not records:
            return
        copied = {r.legacy_id: r.record for r in self._read(KINDS, pending=False) if r.legacy_id}
        for rid, raw in records:
            got = copied.get(rid)
            if got is None:
                raise StoreError(f"the audit record {rid} was not copied into the journal")
            problem = differs(scrub(dict(raw)), got)
            if problem:
                raise StoreError(f"the audit record {rid} reads back differently: {problem}")

    # -- reading -------------------------------------------------------------------------

    def records(self, *kinds: type[R]) -> list[R]:
        """The records of ``kinds`` (all when none is named), in the order written."""
        wanted: tuple[type[JournalRecord], ...] = kinds or KINDS
        return [r.record for r in self._read(wanted)]  # type: ignore[misc]

    def read(self, kind: type[JournalRecord]) -> pd.DataFrame:
        """The records of ``kind`` in the order written: time (UTC), the kind's columns
        (times UTC, JSON as Python values), extra (dict), written, record_id, legacy_id.
        ``attrs["version"]``: the version of its table read (-1: none yet), for
        :meth:`append_if`."""
        read = self._read((kind,))
        columns: dict[str, Any] = {"time": [r.record.time for r in read]}
        for name in kind.COLUMNS:
            columns[name] = [getattr(r.record, name) for r in read]
        columns["extra"] = [dict(r.record.extra) for r in read]
        columns["legacy_id"] = [r.legacy_id for r in read]
        frame = pd.DataFrame(columns, dtype=object)
        for name, typ in {"time": "time", **kind.COLUMNS}.items():
            if typ == "time":
                frame[name] = pd.to_datetime(frame[name], utc=True).astype("datetime64[ns, UTC]")
            elif typ == "text":
                frame[name] = frame[name].astype("string")
        frame["legacy_id"] = frame["legacy_id"].astype("string")
        frame.attrs["version"] = self._tables.versions[kind]
        return frame

    def log(self) -> pd.DataFrame:
        """Every record, of every kind, in the order written, as the audit log showed them:
        time (UTC), firewall_id, rule_id, before, after, outcome, then any other field (kind,
        account, ...)."""
        return audit_frame([r.record.as_audit() for r in self._read(KINDS)])

    def acceptances(self) -> pd.DataFrame:
        """Accepted findings of the account in scope, oldest first: finding_id, reason, owner,
        until, accepted_at, revoked_at, revoked_by, revoke_reason, account (its name), wallet,
        firewall_id, rule_id (``FindingAccepted`` and ``AcceptanceRevoked`` records)."""
        return self._register(self._account(None)[0])

    def _register(self, account: str) -> pd.DataFrame:
        names = self._names(account) if self._names else [account]
        return _acceptances.table(self.records(FindingAccepted, AcceptanceRevoked), names)

    def _read(self, kinds: Sequence[type[JournalRecord]], pending: bool = True) -> list[_Read]:
        out: list[_Read] = []
        copied: set[str] = set()
        for cls in kinds:
            parts, version = self._tables.logs[cls].read()
            self._tables.versions[cls] = version
            for commit, part in parts:
                for row_no, row in enumerate(part.to_pylist()):
                    record = from_row(cls, row)
                    legacy = row["legacy_id"]
                    if legacy:
                        copied.add(legacy)
                        order = (0, int(row["legacy_seq"]), 0, 0, 0, 0)
                    else:
                        written = int(pd.Timestamp(row["written"]).value // 1000)
                        order = (1, 0, written, KINDS.index(cls), commit, row_no)
                    out.append(_Read(order, record, legacy))
        if pending:
            # the old log's records not copied yet read as they will once copied
            old = self._tables.legacy
            for seq, (rid, raw) in enumerate(old.records()):
                if rid in copied:
                    continue
                record = self._copy_of(rid, raw)
                if type(record) in kinds:
                    out.append(_Read((0, seq, 0, 0, 0, 0), record, rid))
        out.sort(key=lambda r: r.order)
        return out
