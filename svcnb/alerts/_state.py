"""Which alerts have fired: kept in the store's journal, so each fires once per crossing.

Each fire and each clear is one ``svcnb.store.AlertRecord`` (``outcome`` "alert fired" or "alert
cleared"). The journal is kept wherever the store is, so a team sharing a store shares what
fired, and what was announced is audited with the rule edits and accepted findings.

Delivery is claimed before it is made, so two checks at once announce each alert once: a check
writes "alert claimed" records (with ``claimed_until``, its own clock plus the longest its
delivery may take) with ``Journal.append_if``, refused when anyone wrote since the check read
(then it reads again and claims what is still unclaimed). Once sent it writes "alert fired";
when the delivery failed, "alert not delivered", which frees the alert for the next check. A
claim whose check died mid-delivery frees it when ``claimed_until`` has passed. A lock file
beside the store would serve a local folder only, and would not be seen by a check on another
machine; Delta's own commit serves both kinds of store.

The record's ``time`` is the server time of the snapshot checked. Each record names the account
checked, so in a store of several accounts one account's standing alert never silences
another's; records written before accounts existed count for every account.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd

from svcnb.store import AlertRecord

__all__ = [
    "CLAIMED",
    "CLEARED",
    "FIRED",
    "KIND",
    "RELEASED",
    "STATE_COLUMNS",
    "Ledger",
    "active",
    "history",
    "ledger",
    "record",
    "records",
]

KIND = AlertRecord.AUDIT_KIND  # the ``kind`` of its records in ``store.journal.log()``
FIRED = "alert fired"
CLEARED = "alert cleared"
CLAIMED = "alert claimed"
RELEASED = "alert not delivered"
STATE_COLUMNS = ["alert_key", "alert_rule", "outcome", "time", "snapshot_id", "message"]


@dataclass
class Ledger:
    """The alert records of the account in scope, read at the alerts table's ``version``."""

    rows: pd.DataFrame  # STATE_COLUMNS and claimed_until, in the order written, every outcome
    version: int

    def history(self) -> pd.DataFrame:
        keep = self.rows["outcome"].isin([FIRED, CLEARED]).fillna(False).to_numpy(dtype=bool)
        return self.rows.loc[keep, STATE_COLUMNS].reset_index(drop=True)

    def _last(self) -> pd.DataFrame:
        return self.rows.drop_duplicates("alert_key", keep="last")

    def active(self) -> pd.DataFrame:
        """The alerts standing: those whose latest record is a fire (``STATE_COLUMNS``)."""
        last = self._last()
        mine = (last["outcome"] == FIRED).fillna(False).to_numpy(dtype=bool)
        return last.loc[mine, STATE_COLUMNS].reset_index(drop=True)

    def claimed(self, now: datetime) -> set[str]:
        """The keys another check is delivering now: latest record a claim not yet run out."""
        last = self._last()
        claims = last[(last["outcome"] == CLAIMED).fillna(False).to_numpy(dtype=bool)]
        until = pd.to_datetime(claims["claimed_until"], utc=True, errors="coerce")
        live = (until > pd.Timestamp(now)).fillna(False).to_numpy(dtype=bool)
        return set(claims.loc[live, "alert_key"].astype(str))


def ledger(store: Any) -> Ledger:
    """Every alert record of the account in scope, and the alerts table's version read."""
    log = store.journal.read(AlertRecord)
    version = int(log.attrs.get("version", -1))
    columns = [*STATE_COLUMNS, "claimed_until"]
    named = log["account"]
    keep = (named.isna() | named.isin(store.record_accounts())).fillna(False)
    out = log[keep.to_numpy(dtype=bool)].reindex(columns=columns).reset_index(drop=True)
    text = [c for c in columns if c not in ("time", "claimed_until")]
    return Ledger(out.astype(dict.fromkeys(text, "string")), version)


def history(store: Any) -> pd.DataFrame:
    """Every fire and clear of the account in scope, in the order written: ``STATE_COLUMNS``
    (time UTC)."""
    return ledger(store).history()


def active(store: Any) -> pd.DataFrame:
    """The alerts standing now (fired and not cleared since): ``STATE_COLUMNS`` of the fire."""
    return ledger(store).active()


def records(
    store: Any,
    outcome: str,
    rows: pd.DataFrame,
    *,
    snapshot_id: str,
    server_time: Any,
    claim_seconds: float | None = None,
) -> list[AlertRecord]:
    """One ``outcome`` record per row of ``rows`` (columns key, rule, message); a claim runs
    out ``claim_seconds`` from now."""
    account = store.account_in_scope()
    until = None
    if claim_seconds is not None:
        until = datetime.now(UTC) + timedelta(seconds=claim_seconds)
    return [
        AlertRecord(
            time=server_time,
            account=account,
            outcome=outcome,
            alert_key=str(row.key),
            alert_rule=str(row.rule),
            snapshot_id=snapshot_id,
            message=str(row.message),
            claimed_until=until,
        )
        for row in rows.itertuples(index=False)
    ]


def record(
    store: Any,
    outcome: str,
    rows: pd.DataFrame,
    *,
    snapshot_id: str,
    server_time: Any,
) -> None:
    """Append one ``outcome`` record per row of ``rows`` (columns key, rule, message)."""
    for one in records(store, outcome, rows, snapshot_id=snapshot_id, server_time=server_time):
        store.journal.append(one)
