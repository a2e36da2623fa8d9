"""Which alerts have fired: kept in the store's audit log, so each fires once per crossing.

An alert fires when its condition holds and it is not already standing; it stands until a check
finds its condition gone, which clears it (and it may fire again at a later crossing). Each fire
and each clear is one audit record (``Store.append_audit``) with ``kind = "alert"``,
``outcome`` "alert fired" or "alert cleared", ``alert_key``, ``alert_rule``, ``snapshot_id`` and
``message``; ``firewall_id`` and ``rule_id`` are empty, so a rule's edit history never shows
them. The audit log is append-only, kept in the store wherever it is (a folder or object
storage: a team sharing a store shares what fired) and on file with the rule edits and accepted
findings, so what was announced and when is audited like everything else.

The record's ``time`` is the server time of the snapshot checked (the server's clock, as the
rest of the store); records are read in the order they were written. Each record names the
account checked (``account``), so in a store of several accounts one account's standing alert
never silences another's; records written before accounts existed count for every account.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["FIRED", "CLEARED", "KIND", "STATE_COLUMNS", "active", "history", "record"]

KIND = "alert"
FIRED = "alert fired"
CLEARED = "alert cleared"
STATE_COLUMNS = ["alert_key", "alert_rule", "outcome", "time", "snapshot_id", "message"]


def history(store: Any) -> pd.DataFrame:
    """Every fire and clear of the account in scope, in the order written: ``STATE_COLUMNS``
    (time UTC)."""
    log = store.audit_log()
    if log.empty or "kind" not in log:
        return pd.DataFrame({c: pd.Series(dtype="string") for c in STATE_COLUMNS}).astype(
            {"time": "datetime64[ns, UTC]"}
        )
    keep = (log["kind"] == KIND).fillna(False).to_numpy(dtype=bool)
    if "account" in log:
        named = log["account"]
        ours = (named.isna() | (named == store.account_in_scope())).fillna(False)
        keep = keep & ours.to_numpy(dtype=bool)
    mine = log[keep]
    out = mine.reindex(columns=STATE_COLUMNS).reset_index(drop=True)
    text = [c for c in STATE_COLUMNS if c != "time"]
    return out.astype(dict.fromkeys(text, "string"))


def active(store: Any) -> pd.DataFrame:
    """The alerts standing now (fired and not cleared since): ``STATE_COLUMNS`` of the fire."""
    log = history(store)
    last = log.drop_duplicates("alert_key", keep="last")
    return last[(last["outcome"] == FIRED).fillna(False).to_numpy(dtype=bool)].reset_index(
        drop=True
    )


def record(
    store: Any,
    outcome: str,
    rows: pd.DataFrame,
    *,
    snapshot_id: str,
    server_time: Any,
) -> None:
    """Append one ``outcome`` record per row of ``rows`` (columns key, rule, message)."""
    account = store.account_in_scope()
    for row in rows.itertuples(index=False):
        store.append_audit(
            {
                "time": server_time,
                "kind": KIND,
                "account": account,
                "outcome": outcome,
                "alert_key": str(row.key),
                "alert_rule": str(row.rule),
                "snapshot_id": snapshot_id,
                "message": str(row.message),
                "firewall_id": None,
                "rule_id": None,
                "before": None,
                "after": None,
            }
        )
