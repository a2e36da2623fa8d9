"""Alert rules: the ``[alerts]`` section of the config file, and what each rule sees in a snapshot.

A rule turns one report of the snapshot into *conditions*: one row per thing that is in trouble
now (the wallet, a VM, a subscription, a finding), each with a stable ``key``. Whether a condition
is news (it fires) or was already reported is decided elsewhere (``svcnb.alerts._state``), so a
rule only says what holds in this snapshot.

A rule whose report cannot be computed (the snapshot could not read the wallet, the findings
report is not there) gives no condition and one line in ``unknown``: it is never read as "all
clear" silently.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from svcnb import vocab
from svcnb.config import ConfigError, config_path, read_config
from svcnb.money import money_text
from svcnb.reports import bandwidth, billing, firewall, kind_text, sharing, webhooks
from svcnb.store import MissingResourceError, Snapshot

__all__ = [
    "CONDITION_COLUMNS",
    "DEFAULTS",
    "ENV_URL",
    "AlertRules",
    "Evaluation",
    "evaluate",
    "rules_from_config",
]

ENV_URL = "SVCNB_ALERT_URL"

# key -> (default, what it means); a rule set to false is off
DEFAULTS: dict[str, tuple[Any, str]] = {
    "runway_days": (14, "runway (first renewal the wallet cannot pay) under N days"),
    "low_balance_days": (7, "the low-balance forecast falls within N days"),
    "bandwidth_days": (3, "a VM passes its bandwidth pack within N days (or is already over)"),
    "webhook_failures_left": (10, "an active subscription within K failures of auto-disable"),
    "high_findings": (True, "a high-severity firewall finding not alerted before"),
}
# delivery settings (never a rule)
DELIVERY: dict[str, Any] = {
    "url": None,  # HTTPS endpoint; $SVCNB_ALERT_URL wins over the file
    "ca_bundle": None,  # PEM file of CAs to trust instead of the system's
    "attempts": 4,
    "backoff_seconds": 1.0,
    "timeout_seconds": 10.0,
    # the whole `svcnb check` run, every delivery attempt and wait included: cron must not
    # find the last run still going, whatever the receiver does
    "deadline_seconds": 60.0,
}

CONDITION_COLUMNS = ["key", "rule", "subject", "value", "threshold", "due_at", "message"]


@dataclass(frozen=True)
class AlertRules:
    """The rules and delivery settings in force; ``None`` for a rule means it is off."""

    runway_days: float | None = DEFAULTS["runway_days"][0]
    low_balance_days: float | None = DEFAULTS["low_balance_days"][0]
    bandwidth_days: float | None = DEFAULTS["bandwidth_days"][0]
    webhook_failures_left: int | None = DEFAULTS["webhook_failures_left"][0]
    high_findings: bool = True
    url: str | None = field(default=None, repr=False)  # may carry a token: never shown whole
    ca_bundle: str | None = None
    attempts: int = DELIVERY["attempts"]
    backoff_seconds: float = DELIVERY["backoff_seconds"]
    timeout_seconds: float = DELIVERY["timeout_seconds"]
    deadline_seconds: float = DELIVERY["deadline_seconds"]


# the bounds of each delivery setting: a check must end (the delivery's longest time is computed
# from them, and an alert claim is held that long), and a setting past these is a typo
DELIVERY_BOUNDS: dict[str, tuple[float, float]] = {
    "attempts": (1, 20),
    "backoff_seconds": (0, 300),
    "timeout_seconds": (0.1, 600),
    "deadline_seconds": (1, 86_400),
}


def _number(table: dict[str, Any], key: str, where: str, *, whole: bool = False) -> Any:
    value = table[key]
    bounds = DELIVERY_BOUNDS.get(key)
    if value is False and bounds is None:
        return None  # a rule turned off
    low, high = bounds or (0, math.inf)
    bad = isinstance(value, bool) or not isinstance(value, int | float)
    if not bad and (
        not math.isfinite(value) or not low <= value <= high or (whole and value != int(value))
    ):
        bad = True
    if bad:
        kind = "a whole number" if whole else "a number"
        span = f"from {low:g} to {high:g}" if bounds else ">= 0, or false to turn the rule off"
        raise ConfigError(
            f"{where}: [alerts] {key} = {_shown(value)} must be {kind} {span}; e.g. {key} = "
            f"{DEFAULTS.get(key, (DELIVERY.get(key),))[0]}"
        )
    return int(value) if whole else float(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def _path_setting(table: dict[str, Any], key: str, where: str) -> str:
    """A file name the config gives (``ca_bundle``): text a path can be, ``~`` expanded."""
    value = table[key]
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise ConfigError(f'{where}: [alerts] {key} must be the path of a file, e.g. "ca.pem"')
    try:
        return str(Path(value).expanduser())
    except RuntimeError:  # ~user of a user this machine does not know
        raise ConfigError(
            f"{where}: [alerts] {key} = {_shown(value)} starts with a home folder this machine "
            "does not know; give the path in full"
        ) from None


def rules_from_config(path: Any = None, config: dict[str, Any] | None = None) -> AlertRules:
    """The ``[alerts]`` section of the config file (defaults for what it does not set).

    Keys: ``runway_days``, ``low_balance_days``, ``bandwidth_days``, ``webhook_failures_left``
    (numbers, or false to turn a rule off), ``high_findings`` (true/false), and for delivery
    ``url``, ``ca_bundle``, ``attempts``, ``backoff_seconds``, ``timeout_seconds`` and
    ``deadline_seconds`` (the whole check run's, delivery included; bounds in
    ``DELIVERY_BOUNDS``).
    ``$SVCNB_ALERT_URL`` overrides ``url``. An unknown key or a bad value is a ConfigError.
    """
    where = str(config_path(path))
    config = read_config(path) if config is None else config
    table = config.get("alerts", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: 'alerts' must be a table ([alerts])")
    unknown = sorted(set(table) - set(DEFAULTS) - set(DELIVERY))
    if unknown:
        raise ConfigError(
            f"{where}: [alerts] has unknown key(s) {', '.join(unknown)}; known: "
            + ", ".join([*DEFAULTS, *DELIVERY])
        )
    values: dict[str, Any] = {}
    for key in ("runway_days", "low_balance_days", "bandwidth_days"):
        if key in table:
            values[key] = _number(table, key, where)
    if "webhook_failures_left" in table:
        values["webhook_failures_left"] = _number(table, "webhook_failures_left", where, whole=True)
    if "high_findings" in table:
        if not isinstance(table["high_findings"], bool):
            raise ConfigError(f"{where}: [alerts] high_findings must be true or false")
        values["high_findings"] = table["high_findings"]
    if "url" in table:
        if not isinstance(table["url"], str) or not table["url"]:
            raise ConfigError(f"{where}: [alerts] url must be a non-empty string")
        values["url"] = table["url"]
    if "ca_bundle" in table:
        values["ca_bundle"] = _path_setting(table, "ca_bundle", where)
    if "attempts" in table:
        values["attempts"] = _number(table, "attempts", where, whole=True)
    for key in ("backoff_seconds", "timeout_seconds", "deadline_seconds"):
        if key in table:
            values[key] = _number(table, key, where)
    env = os.environ.get(ENV_URL)
    if env:
        values["url"] = env
    return AlertRules(**values)


@dataclass
class Evaluation:
    """What the rules see in one snapshot: ``conditions`` (``CONDITION_COLUMNS``) and
    ``unknown`` (rule -> why it could not be checked; condition key -> why the rule could not
    decide it)."""

    snapshot_id: str
    server_time: pd.Timestamp
    conditions: pd.DataFrame
    unknown: dict[str, str]
    # the rules turned off: what they raised before is no longer checked, never "cleared"
    off: frozenset[str] = frozenset()


def _days(delta: Any) -> float:
    return float(delta / pd.Timedelta(days=1))


def _days_text(days: Any) -> str:
    # as every report shows days (whole days left in full): one figure, one text
    return f"{kind_text('days', days)} days"


def _fmt_day(when: Any) -> str:
    return pd.Timestamp(when).strftime("%Y-%m-%d %H:%M UTC")


def _money(amount: Any, currency: Any) -> str:
    text = money_text(amount, currency)
    # an unknown currency is said, never left blank (the amount is in the wallet's, unstated)
    return text if not pd.isna(currency) else f"{text} (currency not stated)"


def _runway(store: Any, snap: Snapshot, limit: float) -> list[dict[str, Any]]:
    row = billing.runway.from_store(snap).iloc[0]
    if pd.isna(row["runway_at"]) or not row["runway_days"] < limit:
        return []
    note = "" if bool(row["complete"]) else " (some VMs' status is unknown: it may come sooner)"
    return [
        {
            "key": "runway",
            "rule": "runway_days",
            "subject": "wallet",
            "value": float(row["runway_days"]),
            "threshold": limit,
            "due_at": row["runway_at"],
            "message": f"runway {_days_text(row['runway_days'])}: the renewal of "
            f"{row['name']} ({row['vm_id']}) on {_fmt_day(row['runway_at'])} cannot be paid "
            f"(balance {_money(row['balance'], row['currency'])}){note}",
        }
    ]


def _low_balance(store: Any, snap: Snapshot, limit: float) -> list[dict[str, Any]]:
    row = billing.low_balance_forecast.from_store(snap).iloc[0]
    if pd.isna(row["low_at"]):
        return []
    days = _days(row["low_at"] - row["now"])
    if days > limit:
        return []
    return [
        {
            "key": "low_balance",
            "rule": "low_balance_days",
            "subject": "wallet",
            "value": days,
            "threshold": limit,
            "due_at": row["low_at"],
            "message": f"low balance in {_days_text(days)} ({_fmt_day(row['low_at'])}): "
            f"{_money(row['balance_then'], row['currency'])} against "
            f"{_money(row['needed'], row['currency'])} needed",
        }
    ]


def _bandwidth(store: Any, snap: Snapshot, limit: float) -> list[dict[str, Any]]:
    now = snap.server_time
    over = bandwidth.exceeding.from_store(snap)
    out = []
    for row in over.itertuples(index=False):
        already = row.outlook == "over"
        if not already and (pd.isna(row.exceeds_at) or _days(row.exceeds_at - now) > limit):
            continue
        days = 0.0 if already else _days(row.exceeds_at - now)
        when = "is over its pack" if already else f"passes its pack in {_days_text(days)}"
        out.append(
            {
                "key": f"bandwidth:{row.vm_id}",
                "rule": "bandwidth_days",
                "subject": str(row.vm_id),
                "value": days,
                "threshold": limit,
                "due_at": row.exceeds_at,
                # the UTC day, as the bandwidth report states it: the hour is an estimate from
                # a daily rate that moves by hours from one snapshot to the next
                "message": f"VM {row.name} ({row.vm_id}) {when}"
                + (f" (on {row.exceeds_on:%Y-%m-%d} UTC)" if not pd.isna(row.exceeds_on) else ""),
            }
        )
    return out


def _webhooks(store: Any, snap: Snapshot, limit: int) -> list[dict[str, Any]]:
    """Active subscriptions within ``limit`` failed deliveries of auto-disable.

    Fires only on what is proven: an exact distance within the limit, or an upper bound within
    it ("at most 8 left" is within 10 whatever the truth). A distance that is unknown, or only
    an upper bound above the limit ("at most 40 left": it may be 3), neither fires nor passes as
    clear: it is reported in ``unknown`` under the condition's key (see :func:`evaluate`).
    """
    health = webhooks.health.from_store(snap)
    out = []
    for row in health.itertuples(index=False):
        if not pd.isna(row.is_active) and not bool(row.is_active):
            continue  # disabled already: nothing left to warn about
        left = row.failures_to_disable
        bound = getattr(row, "failures_to_disable_bound", webhooks.EXACT)
        bound = webhooks.EXACT if pd.isna(bound) else str(bound)
        if pd.isna(left) or bound == webhooks.UNKNOWN_FIGURE:
            out.append(_blind(row, "failures left before auto-disable unknown"))
            continue
        if int(left) > limit:
            if bound == webhooks.AT_MOST:
                out.append(
                    _blind(row, f"at most {int(left)} failed deliveries left before auto-disable")
                )
            continue
        run = webhooks.bounded_text(
            row.consecutive_failures, getattr(row, "consecutive_failures_bound", webhooks.EXACT)
        )
        within = "at most " if bound == webhooks.AT_MOST else ""
        out.append(
            {
                "key": f"webhook:{row.webhook_id}",
                "rule": "webhook_failures_left",
                "subject": str(row.webhook_id),
                "value": float(left),
                "threshold": float(limit),
                "due_at": pd.NaT,
                "message": f"webhook subscription {row.webhook_id} is {within}{int(left)} failed "
                f"deliveries from auto-disable ({run} in a row)"
                + (f" [{row.reason}]" if within and not pd.isna(row.reason) else ""),
            }
        )
    return out


def _blind(row: Any, what: str) -> dict[str, Any]:
    """A subscription the webhook rule cannot decide on: marked ``blind`` for :func:`evaluate`."""
    why = "" if pd.isna(row.reason) else f": {row.reason}"
    return {
        "blind": True,
        "key": f"webhook:{row.webhook_id}",
        "message": f"webhook subscription {row.webhook_id}: {what}, so it may be within the "
        f"alert threshold{why}",
    }


def _findings(store: Any, snap: Snapshot, _on: bool) -> list[dict[str, Any]]:
    changes = firewall.finding_changes(store, at=snap.id)
    # "open" too: a finding new in a snapshot no check ran on is still news to the alerts; the
    # alert state keeps it from firing twice
    state = changes["state"].astype("string")
    high = changes[
        (changes["severity"].astype("string") == "high").fillna(False).to_numpy(dtype=bool)
        & state.isin(["new", "open"]).fillna(False).to_numpy(dtype=bool)
    ]
    out = []
    for row in high.itertuples(index=False):
        out.append(
            {
                "key": f"finding:{row.finding_id}",
                "rule": "high_findings",
                "subject": str(row.finding_id),
                "value": pd.NA,
                "threshold": pd.NA,
                "due_at": pd.NaT,
                "message": f"high-severity finding ({row.state}) {row.check} on firewall "
                f"{row.firewall_name} ({row.firewall_id}) rule {row.rule_id}: {row.reason}",
            }
        )
    return out


@sharing
def evaluate(store: Any, rules: AlertRules, at: Any = None) -> Evaluation:
    """The conditions the rules see in the latest snapshot at or before ``at`` (latest: None).

    Returns an :class:`Evaluation`; ``conditions`` has ``CONDITION_COLUMNS``: key (stable:
    "runway", "low_balance", "bandwidth:<vm id>", "webhook:<id>", "finding:<finding id>"), rule
    (its config key), subject, value (days or failures left; NA for findings), threshold,
    due_at (when the damage is forecast; NaT when not a time), message (one line).
    ``unknown`` maps a rule that could not be checked to why, and a condition key the rule
    could not decide (a webhook whose distance to auto-disable is unknown or only bounded) to
    what is known.
    """
    snap = store.at(at)
    # rule name -> (the check, its limit: days, failures, or True for findings; None: off)
    limits: dict[str, tuple[Callable[[Any, Snapshot, Any], list[dict[str, Any]]], Any]] = {
        "runway_days": (_runway, rules.runway_days),
        "low_balance_days": (_low_balance, rules.low_balance_days),
        "bandwidth_days": (_bandwidth, rules.bandwidth_days),
        "webhook_failures_left": (_webhooks, rules.webhook_failures_left),
        "high_findings": (_findings, True if rules.high_findings else None),
    }
    rows: list[dict[str, Any]] = []
    unknown: dict[str, str] = {}
    off = frozenset(name for name, (_, limit) in limits.items() if limit is None)
    for name, (rule, limit) in limits.items():
        if limit is None:
            continue
        try:
            # the status words as the snapshot's reader had them (a sandbox's dialect's own)
            with vocab.using(snap.vocabulary()):
                found = rule(store, snap, limit)
        except MissingResourceError as exc:
            unknown[name] = str(exc)
            continue
        for row in found:
            if row.pop("blind", False):
                # could cross the threshold, or not: said, never fired nor cleared on a guess
                unknown[row["key"]] = row["message"]
            else:
                rows.append(row)
    frame = pd.DataFrame(rows, columns=CONDITION_COLUMNS)
    frame["due_at"] = pd.to_datetime(frame["due_at"], utc=True)
    frame = frame.astype(
        {
            "key": "string",
            "rule": "string",
            "subject": "string",
            "value": "Float64",
            "threshold": "Float64",
            "message": "string",
        }
    )
    return Evaluation(snap.id, snap.server_time, frame, unknown, off)
