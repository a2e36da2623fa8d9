"""Accepted risks: firewall findings someone chose to live with, until a date, kept in the store.

The register is the store's audit log (``_audit``): an acceptance and a revocation are each one
audit record, so the register and its audit trail can never disagree and every change to it is
on file with who, why and when. Records carry ``kind = "finding_acceptance"``, ``finding_id``,
``reason``, ``owner``, ``until`` (acceptances), ``account`` (the store's name for it; finding ids
of two accounts may coincide, an acceptance covers its own account only), ``wallet`` and, when
the caller knows them, the finding's ``firewall_id`` and ``rule_id`` (so a rule's audit history
shows its acceptances).

A later acceptance of the same finding replaces the earlier one (to extend or shorten it); a
revocation ends every acceptance of the finding made before it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pandas as pd

from ._audit import AuditLog
from ._layout import StoreError
from ._snapshots import _identity

KIND = "finding_acceptance"
ACCEPTED = "finding accepted"
REVOKED = "acceptance revoked"
ACCEPTANCE_COLUMNS = [
    "finding_id",
    "reason",
    "owner",
    "until",
    "accepted_at",
    "revoked_at",
    "revoked_by",
    "revoke_reason",
    "account",
    "wallet",
    "firewall_id",
    "rule_id",
]


def _time(value: Any, name: str) -> pd.Timestamp:
    try:
        ts = pd.Timestamp(value)
    except (TypeError, ValueError):
        ts = pd.NaT
    if ts is pd.NaT:
        raise StoreError(
            f"{name}={value!r} is not a time; give a datetime or ISO 8601 text such as "
            "'2030-01-31' or '2030-01-31T12:00Z' (a time without a zone is UTC)"
        )
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _words(value: Any, name: str, example: str) -> str:
    text = "" if value is None else str(value).strip()
    if not text:
        raise StoreError(f"{name} is required to accept or revoke a finding; e.g. {example}")
    return text


def _finding(finding_id: Any) -> str:
    return _words(finding_id, "finding_id", "the finding_id column of firewall.audit")


def accept(
    log: AuditLog,
    entries: list[dict[str, Any]],
    finding_id: str,
    *,
    reason: str,
    owner: str,
    until: Any,
    now: Any = None,
    account: str,
    firewall_id: str | None = None,
    rule_id: str | None = None,
) -> dict[str, Any]:
    """Write one acceptance of account ``account`` to the audit log; returns the record."""
    fid = _finding(finding_id)
    why = _words(reason, "reason", "reason='VPN appliance, vendor fix due in March'")
    who = _words(owner, "owner", "owner='sam@example.com'")
    when = _time(datetime.now(UTC) if now is None else now, "now")
    end = _time(until, "until")
    if end <= when:
        raise StoreError(
            f"until={end.isoformat()} is not in the future (now is {when.isoformat()}); an "
            "acceptance must end after it is made: give a later date"
        )
    return log.append(
        {
            "time": when,
            "kind": KIND,
            "outcome": ACCEPTED,
            "finding_id": fid,
            "reason": why,
            "owner": who,
            "until": end,
            "account": account,
            "wallet": _identity(entries, "account"),
            "firewall_id": firewall_id,
            "rule_id": rule_id,
            "before": "open",
            "after": f"accepted until {end:%Y-%m-%d %H:%M} UTC by {who}",
        },
    )


def revoke(
    log: AuditLog,
    entries: list[dict[str, Any]],
    finding_id: str,
    *,
    owner: str,
    reason: str,
    now: Any = None,
    account: str,
) -> dict[str, Any]:
    """Write one revocation to the audit log; StoreError when nothing is accepted to revoke."""
    fid = _finding(finding_id)
    who = _words(owner, "owner", "owner='sam@example.com'")
    why = _words(reason, "reason", "reason='the vendor fix shipped'")
    live = table(log, account)
    live = live[(live["finding_id"] == fid).fillna(False) & live["revoked_at"].isna()]
    if live.empty:
        raise StoreError(
            f"finding {fid} has no acceptance to revoke; Store.acceptances() lists them"
        )
    last = live.iloc[-1]
    return log.append(
        {
            "time": _time(datetime.now(UTC) if now is None else now, "now"),
            "kind": KIND,
            "outcome": REVOKED,
            "finding_id": fid,
            "reason": why,
            "owner": who,
            "account": account,
            "wallet": _identity(entries, "account"),
            "firewall_id": None if pd.isna(last["firewall_id"]) else last["firewall_id"],
            "rule_id": None if pd.isna(last["rule_id"]) else last["rule_id"],
            "before": "accepted",
            "after": f"acceptance revoked by {who}",
        },
    )


def table(audit: AuditLog, account: str) -> pd.DataFrame:
    """One row per acceptance of ``account``, oldest first: ``ACCEPTANCE_COLUMNS`` (times UTC;
    revoked_at, revoked_by, revoke_reason NA while it stands)."""
    log = audit.read()
    rows: list[dict[str, Any]] = []
    if not log.empty and "kind" in log and "account" in log:
        ours = (log["kind"] == KIND) & (log["account"] == account)
        mine = log[ours.to_numpy(dtype=bool)].sort_values("time", kind="stable")
        for record in mine.to_dict("records"):
            if record["outcome"] == ACCEPTED:
                rows.append(
                    {
                        "finding_id": record.get("finding_id"),
                        "reason": record.get("reason"),
                        "owner": record.get("owner"),
                        "until": record.get("until"),
                        "accepted_at": record["time"],
                        "revoked_at": None,
                        "revoked_by": None,
                        "revoke_reason": None,
                        "account": record.get("account"),
                        "wallet": record.get("wallet"),
                        "firewall_id": record.get("firewall_id"),
                        "rule_id": record.get("rule_id"),
                    }
                )
            elif record["outcome"] == REVOKED:
                for row in rows:
                    if row["finding_id"] == record.get("finding_id") and row["revoked_at"] is None:
                        row.update(
                            revoked_at=record["time"],
                            revoked_by=record.get("owner"),
                            revoke_reason=record.get("reason"),
                        )
    out = pd.DataFrame(rows, columns=ACCEPTANCE_COLUMNS)
    for column in ("until", "accepted_at", "revoked_at"):
        out[column] = pd.to_datetime(out[column], utc=True, format="ISO8601").astype(
            "datetime64[ns, UTC]"
        )
    text = [c for c in ACCEPTANCE_COLUMNS if c not in ("until", "accepted_at", "revoked_at")]
    return out.astype(dict.fromkeys(text, "string"))
