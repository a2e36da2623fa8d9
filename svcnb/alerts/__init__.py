"""Alerts that come before the damage: rules over the reports, fired once per crossing.

What a user sees (rules, delivery, exit codes): the README, "Alerts: ``svcnb check``".
``check(store, rules)`` evaluates the rules (``svcnb.alerts._rules``) on the latest snapshot
against the alerts standing in the store (``svcnb.alerts._state``). With a ``send`` callable the
fired alerts are claimed, sent, and recorded as fired once sent; the claim (a compare-and-set on
the journal's alerts table) makes each alert announced once however many checks run at once, on
one machine or several, on a local store or on object storage.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from svcnb.alerts._deliver import (
    DeliveryError,
    check_url,
    deliver,
    endpoint_label,
    longest_delivery,
)
from svcnb.alerts._rules import (
    CONDITION_COLUMNS,
    ENV_URL,
    AlertRules,
    Evaluation,
    evaluate,
    rules_from_config,
)
from svcnb.alerts._state import (
    CLAIMED,
    CLEARED,
    FIRED,
    RELEASED,
    Ledger,
    active,
    history,
    ledger,
    record,
    records,
)
from svcnb.store import StoreError

__all__ = [
    "CONDITION_COLUMNS",
    "ENV_URL",
    "AlertRules",
    "CheckResult",
    "DeliveryError",
    "Evaluation",
    "active",
    "check",
    "check_url",
    "deliver",
    "endpoint_label",
    "evaluate",
    "history",
    "payload",
    "rules_from_config",
]


# how often a check reads the alert state again after another writer of alerts went first;
# each refusal means some record landed, so this bounds only a store under a storm
CLAIM_ATTEMPTS = 30
# a claim outlives the longest delivery by this much: the rest of the check (writing "fired")
CLAIM_MARGIN_SECONDS = 60.0


@dataclass
class CheckResult:
    """One check: the snapshot, what fired, cleared and still stands, what could not be checked
    (``unknown``: a rule name, or the key of a condition the rule could not decide -> why).

    ``fired``, ``standing`` and ``cleared`` have ``CONDITION_COLUMNS`` (``cleared``: the
    conditions as they were when they fired: key, rule, message). ``unchecked``, as ``cleared``,
    holds the alerts standing from a rule now turned off: no longer checked, not known to be
    over, so never said nor recorded as cleared. ``delivered_attempts`` is the attempts
    delivery took (None when nothing was sent).
    """

    snapshot_id: str
    server_time: pd.Timestamp
    fired: pd.DataFrame
    standing: pd.DataFrame
    cleared: pd.DataFrame
    unknown: dict[str, str]
    delivered_attempts: int | None = None
    unchecked: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["key", "rule", "message"])
    )

    @property
    def exit_code(self) -> int:
        """0 nothing fired, 1 something fired (what cron reads)."""
        return 1 if len(self.fired) else 0

    def text(self) -> str:
        """A few lines for a terminal or a chat message."""
        when = self.server_time.strftime("%Y-%m-%d %H:%M UTC")
        head = f"svcnb check on snapshot {self.snapshot_id} ({when}): "
        head += f"{len(self.fired)} alert(s) fired" if len(self.fired) else "nothing new"
        lines = [head]
        lines += [f"FIRED   {m}" for m in self.fired["message"]]
        lines += [f"cleared {m}" for m in self.cleared["message"]]
        lines += [
            f"no longer checked ([alerts] {r} is off): {m}"
            for r, m in zip(self.unchecked["rule"], self.unchecked["message"], strict=True)
        ]
        if len(self.standing):
            lines.append(f"{len(self.standing)} alert(s) still standing from earlier checks")
        lines += [f"could not check {rule}: {why}" for rule, why in self.unknown.items()]
        return "\n".join(lines)


def payload(result: CheckResult) -> dict[str, Any]:
    """The JSON body sent: Slack's ``text`` plus the alerts as fields (times ISO 8601 UTC)."""

    def rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for row in frame.to_dict("records"):
            out.append(
                {
                    str(k): (
                        None
                        if v is None or v is pd.NaT or (not isinstance(v, str) and pd.isna(v))
                        else v.isoformat()
                        if isinstance(v, pd.Timestamp)
                        else v
                    )
                    for k, v in row.items()
                }
            )
        return out

    return {
        "text": result.text(),
        "snapshot_id": result.snapshot_id,
        "server_time": result.server_time.isoformat(),
        "fired": rows(result.fired),
        "cleared": rows(result.cleared),
        "unchecked": rows(result.unchecked),
        "unknown": dict(result.unknown),
    }


def check(
    store: Any,
    rules: AlertRules | None = None,
    *,
    at: Any = None,
    send: Callable[[Mapping[str, Any]], int] | None = None,
) -> CheckResult:
    """Evaluate ``rules`` (default: the config file's) on the snapshot as of ``at`` (latest)
    and record what fired and cleared in the store's journal.

    Each new alert is claimed first, in one compare-and-set commit with what cleared; an alert
    another check has claimed and not yet announced is left to it (it is in ``standing``), so
    checks running at once announce each alert once. ``send(payload)`` is then called when
    something fired; once it returns the alerts are recorded as fired. When it raises
    (DeliveryError), the claims are given up ("alert not delivered") and the error goes up, so
    the next check fires them again. StoreError when the state could not be claimed after
    ``CLAIM_ATTEMPTS`` reads (other writers kept going first).
    """
    rules = rules_from_config() if rules is None else rules
    seen: Evaluation = evaluate(store, rules, at=at)
    hold = None
    if send is not None:
        longest = longest_delivery(rules.attempts, rules.backoff_seconds, rules.timeout_seconds)
        # a delivery ends by the run's deadline (svcnb check passes it to deliver)
        hold = min(longest, rules.deadline_seconds) + CLAIM_MARGIN_SECONDS
    for attempt in range(CLAIM_ATTEMPTS):
        state = ledger(store)
        result = _decide(seen, state)
        claims = records(
            store,
            CLAIMED if send is not None else FIRED,
            result.fired,
            snapshot_id=seen.snapshot_id,
            server_time=seen.server_time,
            claim_seconds=hold,
        )
        claims += records(
            store,
            CLEARED,
            result.cleared,
            snapshot_id=seen.snapshot_id,
            server_time=seen.server_time,
        )
        if not claims or store.journal.append_if(claims, version=state.version):
            break
        time.sleep(min(0.01 * 2**attempt, 0.5) * (0.5 + secrets.randbelow(100) / 100))
    else:
        raise StoreError(
            f"could not record the alerts of snapshot {seen.snapshot_id}: other writers to the "
            f"store's journal went first {CLAIM_ATTEMPTS} times in a row; run the check again"
        )
    if send is not None and len(result.fired):
        try:
            result.delivered_attempts = send(payload(result))
        except BaseException as exc:
            # not known to have arrived: free the alerts for the next check
            record(
                store,
                RELEASED,
                result.fired,
                snapshot_id=seen.snapshot_id,
                server_time=seen.server_time,
            )
            if isinstance(exc, DeliveryError):
                exc.result = result  # type: ignore[attr-defined]  # what would have been sent
            raise
        record(
            store, FIRED, result.fired, snapshot_id=seen.snapshot_id, server_time=seen.server_time
        )
    return result


def _decide(seen: Evaluation, state: Ledger) -> CheckResult:
    """What ``seen`` fires, leaves standing and clears against the alert state ``state``."""
    standing_before = state.active()
    before = set(standing_before["alert_key"].astype(str))
    busy = state.claimed(datetime.now(UTC))
    keys = seen.conditions["key"].astype(str)
    now_keys = set(keys)
    is_new = (~keys.isin(before | busy)).to_numpy(dtype=bool)
    fired = seen.conditions[is_new].reset_index(drop=True)
    standing = seen.conditions[~is_new].reset_index(drop=True)
    # a rule that could not be checked clears nothing: its conditions are unknown, not gone;
    # nor does a condition the rule could not decide (keyed by the condition's key)
    blind = set(seen.unknown)
    # a rule turned off checks nothing: what it raised is no longer checked, not gone
    off = standing_before["alert_rule"].astype(str).isin(seen.off).to_numpy(dtype=bool)
    gone = standing_before[
        ~standing_before["alert_key"].astype(str).isin(now_keys).to_numpy(dtype=bool)
        & ~standing_before["alert_rule"].astype(str).isin(blind).to_numpy(dtype=bool)
        & ~standing_before["alert_key"].astype(str).isin(blind).to_numpy(dtype=bool)
        & ~off
    ]

    def listed(rows: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {"key": rows["alert_key"], "rule": rows["alert_rule"], "message": rows["message"]}
        ).reset_index(drop=True)

    return CheckResult(
        seen.snapshot_id,
        seen.server_time,
        fired,
        standing,
        listed(gone),
        seen.unknown,
        unchecked=listed(standing_before[off]),
    )
