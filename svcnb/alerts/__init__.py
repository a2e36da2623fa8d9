"""Alerts that come before the damage: rules over the reports, fired once per crossing.

``check(store, rules)`` evaluates the rules (``svcnb.alerts._rules``, from the config file's
``[alerts]`` section) on the latest snapshot, compares what holds with the alerts standing in the
store (``svcnb.alerts._state``), and returns what fired (new since the last check), what cleared
(its condition went away, so it may fire again at the next crossing) and what could not be
checked. With a ``send`` callable (``svcnb check`` passes the HTTPS delivery), the fired alerts
are sent first and recorded only once sent: an alert that could not be delivered stays
unannounced and is sent by the next check.

Layer: above reports and store (imports both); the CLI (``svcnb check``) and notebooks use it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from svcnb.alerts._deliver import DeliveryError, deliver, endpoint_label
from svcnb.alerts._rules import (
    CONDITION_COLUMNS,
    ENV_URL,
    AlertRules,
    Evaluation,
    evaluate,
    rules_from_config,
)
from svcnb.alerts._state import CLEARED, FIRED, active, history, record

__all__ = [
    "CONDITION_COLUMNS",
    "ENV_URL",
    "AlertRules",
    "CheckResult",
    "DeliveryError",
    "Evaluation",
    "active",
    "check",
    "deliver",
    "endpoint_label",
    "evaluate",
    "history",
    "payload",
    "rules_from_config",
]


@dataclass
class CheckResult:
    """One check: the snapshot, what fired, cleared and still stands, what could not be checked
    (``unknown``: a rule name, or the key of a condition the rule could not decide -> why).

    ``fired``, ``standing`` and ``cleared`` have ``CONDITION_COLUMNS`` (``cleared``: the
    conditions as they were when they fired: key, rule, message). ``delivered_attempts`` is the
    attempts delivery took (None when nothing was sent).
    """

    snapshot_id: str
    server_time: pd.Timestamp
    fired: pd.DataFrame
    standing: pd.DataFrame
    cleared: pd.DataFrame
    unknown: dict[str, str]
    delivered_attempts: int | None = None

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
        if len(self.standing):
            lines.append(f"{len(self.standing)} alert(s) still standing from earlier checks")
        lines += [f"could not check {rule}: {why}" for rule, why in self.unknown.items()]
        return "\n".join(lines)


def payload(result: CheckResult) -> dict[str, Any]:
    """The JSON body sent: Slack's ``text`` plus the alerts as fields (times ISO 8601 UTC)."""

    def rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
        out = []
        for row in frame.to_dict("records"):
            out.append(
                {
                    k: (
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
    and record what fired and cleared in the store's audit log.

    ``send(payload)`` is called when something fired, before it is recorded; when it raises
    (DeliveryError), nothing is recorded and the error goes up, so the next check fires again.
    """
    rules = rules_from_config() if rules is None else rules
    seen: Evaluation = evaluate(store, rules, at=at)
    standing_before = active(store)
    before = set(standing_before["alert_key"].astype(str))
    now_keys = set(seen.conditions["key"].astype(str))
    is_new = ~seen.conditions["key"].astype(str).isin(before)
    fired = seen.conditions[is_new.to_numpy(dtype=bool)].reset_index(drop=True)
    standing = seen.conditions[~is_new.to_numpy(dtype=bool)].reset_index(drop=True)
    # a rule that could not be checked clears nothing: its conditions are unknown, not gone;
    # nor does a condition the rule could not decide (keyed by the condition's key)
    blind = set(seen.unknown)
    gone = standing_before[
        ~standing_before["alert_key"].astype(str).isin(now_keys).to_numpy(dtype=bool)
        & ~standing_before["alert_rule"].astype(str).isin(blind).to_numpy(dtype=bool)
        & ~standing_before["alert_key"].astype(str).isin(blind).to_numpy(dtype=bool)
    ]
    cleared = pd.DataFrame(
        {
            "key": gone["alert_key"],
            "rule": gone["alert_rule"],
            "message": gone["message"],
        }
    ).reset_index(drop=True)
    result = CheckResult(seen.snapshot_id, seen.server_time, fired, standing, cleared, seen.unknown)
    if send is not None and len(fired):
        try:
            result.delivered_attempts = send(payload(result))
        except DeliveryError as exc:
            exc.result = result  # type: ignore[attr-defined]  # what would have been sent
            raise
    record(store, FIRED, fired, snapshot_id=seen.snapshot_id, server_time=seen.server_time)
    record(store, CLEARED, cleared, snapshot_id=seen.snapshot_id, server_time=seen.server_time)
    return result
