"""Accepted risks: firewall findings someone chose to live with, until a date.

See docs/contracts.md §5 (journal). The register is read from the journal's own records
(``FindingAccepted``, ``AcceptanceRevoked``), so the register and its audit trail can never
disagree. Finding ids of two accounts may coincide: an acceptance covers its own account only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from svcnb.times import to_utc

from ._journal_kinds import AcceptanceRevoked, FindingAccepted, JournalRecord
from ._layout import StoreError

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


def _words(value: Any, name: str, example: str) -> str:
    text = "" if value is None else str(value).strip()
    if not text:
        raise StoreError(f"{name} is required to accept or revoke a finding; e.g. {example}")
    return text


def _finding(finding_id: Any) -> str:
    return _words(finding_id, "finding_id", "the finding_id column of firewall.audit")


def accepted(
    finding_id: str,
    *,
    wallet: str | None,
    reason: str,
    owner: str,
    until: Any,
    now: Any = None,
    account: str,
    firewall_id: str | None = None,
    rule_id: str | None = None,
) -> FindingAccepted:
    """The acceptance of account ``account`` (wallet ``wallet``) to write; StoreError when
    ``finding_id``, ``reason`` or ``owner`` is blank or ``until`` is not after ``now``."""
    fid = _finding(finding_id)
    why = _words(reason, "reason", "reason='VPN appliance, vendor fix due in March'")
    who = _words(owner, "owner", "owner='sam@example.com'")
    when = to_utc(datetime.now(UTC) if now is None else now, "now")
    end = to_utc(until, "until")
    if end <= when:
        raise StoreError(
            f"until={end.isoformat()} is not in the future (now is {when.isoformat()}); an "
            "acceptance must end after it is made: give a later date"
        )
    return FindingAccepted(
        time=when,
        finding_id=fid,
        reason=why,
        owner=who,
        until=end,
        account=account,
        wallet=wallet,
        firewall_id=firewall_id,
        rule_id=rule_id,
        before="open",
        after=f"accepted until {end:%Y-%m-%d %H:%M} UTC by {who}",
    )


def revocation(
    register: Callable[[], pd.DataFrame],
    finding_id: str,
    *,
    wallet: str | None,
    owner: str,
    reason: str,
    now: Any = None,
    account: str,
) -> AcceptanceRevoked:
    """The revocation to write of the acceptances of ``finding_id`` that stand in
    ``register()`` (the account's :func:`table`); StoreError when none does."""
    fid = _finding(finding_id)
    who = _words(owner, "owner", "owner='sam@example.com'")
    why = _words(reason, "reason", "reason='the vendor fix shipped'")
    live = register()
    live = live[(live["finding_id"] == fid).fillna(False) & live["revoked_at"].isna()]
    if live.empty:
        raise StoreError(
            f"finding {fid} has no acceptance to revoke; store.journal.acceptances() lists them"
        )
    last = live.iloc[-1]
    return AcceptanceRevoked(
        time=to_utc(datetime.now(UTC) if now is None else now, "now"),
        finding_id=fid,
        reason=why,
        owner=who,
        account=account,
        wallet=wallet,
        firewall_id=None if pd.isna(last["firewall_id"]) else last["firewall_id"],
        rule_id=None if pd.isna(last["rule_id"]) else last["rule_id"],
        before="accepted",
        after=f"acceptance revoked by {who}",
    )


def table(records: Iterable[JournalRecord], account: str | Sequence[str]) -> pd.DataFrame:
    """One row per acceptance of ``account`` (a name, or the names its records carry) in
    ``records`` (the journal's, in the order written), oldest first: ``ACCEPTANCE_COLUMNS``
    (times UTC; revoked_at, revoked_by, revoke_reason NA while it stands)."""
    rows: list[dict[str, Any]] = []
    names = [account] if isinstance(account, str) else list(account)
    mine = [
        r
        for r in records
        if isinstance(r, FindingAccepted | AcceptanceRevoked) and r.account in names
    ]
    # by when each happened; those of one time in the order written
    mine.sort(key=lambda r: r.when())
    for record in mine:
        if isinstance(record, FindingAccepted):
            rows.append(
                {
                    "finding_id": record.finding_id,
                    "reason": record.reason,
                    "owner": record.owner,
                    "until": record.until,
                    "accepted_at": record.time,
                    "revoked_at": None,
                    "revoked_by": None,
                    "revoke_reason": None,
                    "account": record.account,
                    "wallet": record.wallet,
                    "firewall_id": record.firewall_id,
                    "rule_id": record.rule_id,
                }
            )
        else:
            for row in rows:
                if row["finding_id"] == record.finding_id and row["revoked_at"] is None:
                    row.update(
                        revoked_at=record.time,
                        revoked_by=record.owner,
                        revoke_reason=record.reason,
                    )
    out = pd.DataFrame(rows, columns=ACCEPTANCE_COLUMNS)
    for column in ("until", "accepted_at", "revoked_at"):
        out[column] = pd.to_datetime(out[column], utc=True, format="ISO8601").astype(
            "datetime64[ns, UTC]"
        )
    text = [c for c in ACCEPTANCE_COLUMNS if c not in ("until", "accepted_at", "revoked_at")]
    return out.astype(dict.fromkeys(text, "string"))
