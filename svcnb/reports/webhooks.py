"""Webhook health: success per subscription, attempts needed, failure runs, event mix.

A delivery record is one attempt (docs/contracts.md: ``attempts`` is the attempt number 1..3),
so an event sent to a subscription is the group of records sharing ``event_id``. The spec
disables a subscription after 50 consecutive delivery failures; like the sandbox, a failure here
is one failed attempt, and a success resets the run. The service's own counter
(``webhooks.consecutive_failures``) is used when the data has it, else the run is counted from
the delivery records, newest backwards.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes

from svcnb.reports._replay import report

__all__ = [
    "AUTO_DISABLE_AFTER",
    "HEALTH_COLUMNS",
    "MAX_ATTEMPTS",
    "attempts",
    "disabled",
    "event_mix",
    "health",
    "plot_health",
]

AUTO_DISABLE_AFTER = 50
MAX_ATTEMPTS = 3

HEALTH_COLUMNS = [
    "webhook_id",
    "url",
    "is_active",
    "events",
    "delivered",
    "failed",
    "success_rate",
    "attempt_records",
    "attempt_success_rate",
    "ok_attempt_1",
    "ok_attempt_2",
    "ok_attempt_3",
    "consecutive_failures",
    "failures_to_disable",
    "last_success_at",
    "last_failure_at",
]


def _events(deliveries: pd.DataFrame) -> pd.DataFrame:
    """One row per (webhook, event): whether it got through and on which attempt."""
    recs = deliveries.assign(
        success=deliveries["success"].astype("boolean").fillna(False),
        attempts=deliveries["attempts"].astype("Int64"),
    )
    ok = recs[recs["success"]]
    first_ok = ok.groupby(["webhook_id", "event_id"])["attempts"].min()
    out = (
        recs.groupby(["webhook_id", "event_id"], sort=True)
        .agg(event=("event", "first"), tries=("attempts", "max"))
        .reset_index()
    )
    key = pd.MultiIndex.from_frame(out[["webhook_id", "event_id"]])
    out["ok_on"] = pd.array(first_ok.reindex(key).to_numpy(), dtype="Int64")
    out["delivered"] = out["ok_on"].notna()
    return out


def _run_of_failures(records: pd.DataFrame) -> int:
    """Failed attempts since the last success, newest backwards."""
    order = records.sort_values(["last_attempt_at", "attempts", "id"], na_position="first")
    run = 0
    for success in order["success"].astype("boolean").fillna(False).to_numpy()[::-1]:
        if success:
            break
        run += 1
    return run


@report(frames={"webhooks": "webhooks", "deliveries": "deliveries"})
def health(webhooks: pd.DataFrame, deliveries: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Per subscription: delivery success, attempts needed, and distance to auto-disable.

    Reads ``webhooks``: id, url, is_active, consecutive_failures; ``deliveries``: id,
    webhook_id, event_id, event, success, attempts, last_attempt_at. Returns webhook_id, url,
    is_active, events (sent to it), delivered, failed (no attempt succeeded), success_rate
    (delivered / events), attempt_records, attempt_success_rate, ok_attempt_1..3 (events that
    got through on that attempt), consecutive_failures, failures_to_disable (failed attempts
    left before the 50 auto-disable; 0 once disabled), last_success_at, last_failure_at.
    Worst first: disabled, then closest to auto-disable.
    """
    events = _events(deliveries)
    # converted once, not once per subscription
    delivery_hooks = deliveries["webhook_id"].astype(str)
    event_hooks = events["webhook_id"].astype(str)
    rows = []
    for hook in webhooks.itertuples(index=False):
        hook_id = str(hook.id)
        mine = deliveries[delivery_hooks == hook_id]
        ev = events[event_hooks == hook_id]
        success = mine["success"].astype("boolean").fillna(False)
        stated = getattr(hook, "consecutive_failures", pd.NA)
        run = int(stated) if not pd.isna(stated) else _run_of_failures(mine)
        active = bool(hook.is_active) if not pd.isna(hook.is_active) else True
        n_events = len(ev)
        rows.append(
            {
                "webhook_id": hook_id,
                "url": hook.url,
                "is_active": active,
                "events": n_events,
                "delivered": int(ev["delivered"].sum()),
                "failed": int((~ev["delivered"]).sum()),
                "success_rate": ev["delivered"].mean() if n_events else pd.NA,
                "attempt_records": len(mine),
                "attempt_success_rate": success.mean() if len(mine) else pd.NA,
                **{f"ok_attempt_{k}": int((ev["ok_on"] == k).sum()) for k in (1, 2, 3)},
                "consecutive_failures": run,
                "failures_to_disable": max(AUTO_DISABLE_AFTER - run, 0) if active else 0,
                "last_success_at": mine.loc[success.to_numpy(), "last_attempt_at"].max(),
                "last_failure_at": mine.loc[~success.to_numpy(), "last_attempt_at"].max(),
            }
        )
    out = pd.DataFrame(rows, columns=HEALTH_COLUMNS)
    for col in ("last_success_at", "last_failure_at"):
        out[col] = pd.to_datetime(out[col], utc=True)
    out = out.astype(
        {
            "webhook_id": "string",
            "url": "string",
            "is_active": "boolean",
            "success_rate": "Float64",
            "attempt_success_rate": "Float64",
        }
        | {c: "Int64" for c in HEALTH_COLUMNS if c.startswith(("ok_", "events", "delivered"))}
        | {
            "failed": "Int64",
            "attempt_records": "Int64",
            "consecutive_failures": "Int64",
            "failures_to_disable": "Int64",
        }
    )
    return out.sort_values(
        ["is_active", "failures_to_disable", "webhook_id"], kind="stable"
    ).reset_index(drop=True)


@report(frames={"deliveries": "deliveries"})
def attempts(deliveries: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Distribution of attempts needed per subscription: how many events got through on attempt
    1, 2 or 3, and how many not at all.

    Reads ``deliveries``: webhook_id, event_id, success, attempts. Returns webhook_id, outcome
    ("attempt 1", "attempt 2", "attempt 3", "not delivered"), events, share.
    """
    ev = _events(deliveries)
    outcome = ev["ok_on"].map(lambda k: f"attempt {k}", na_action="ignore").fillna("not delivered")
    out = (
        ev.assign(outcome=outcome)
        .groupby(["webhook_id", "outcome"], sort=True)
        .size()
        .reset_index(name="events")
    )
    out["share"] = out["events"] / out.groupby("webhook_id")["events"].transform("sum")
    return out.astype(
        {"webhook_id": "string", "outcome": "string", "events": "Int64", "share": "Float64"}
    )


@report(frames={"webhooks": "webhooks"})
def disabled(webhooks: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Subscriptions that are not active (auto-disabled or turned off), with their counters.

    Reads ``webhooks``: id, url, events, is_active, consecutive_failures, updated_at.
    Returns webhook_id, url, events, consecutive_failures, updated_at.
    """
    off = webhooks[~webhooks["is_active"].astype("boolean").fillna(True)]
    out = pd.DataFrame(
        {
            "webhook_id": off["id"].astype("string"),
            "url": off["url"].astype("string"),
            "events": off["events"],
            "consecutive_failures": off["consecutive_failures"].astype("Int64"),
            "updated_at": off["updated_at"],
        }
    )
    return out.reset_index(drop=True)


@report(frames={"webhooks": "webhooks", "deliveries": "deliveries"})
def event_mix(webhooks: pd.DataFrame, deliveries: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Per event type: subscriptions that want it, events sent, success rate.

    Reads ``webhooks``: id, events, is_active; ``deliveries``: webhook_id, event_id, event,
    success, attempts. Returns event, subscriptions (active ones listing it), events (sent, per
    subscription), delivered, success_rate, share (of all events sent).
    """
    wanted: dict[str, int] = {}
    for hook in webhooks.itertuples(index=False):
        active = bool(hook.is_active) if not pd.isna(hook.is_active) else True
        for name in _names(hook.events):
            wanted[str(name)] = wanted.get(str(name), 0) + int(active)
    ev = _events(deliveries)
    sent = (
        ev.groupby("event", sort=True)
        .agg(events=("event_id", "size"), delivered=("delivered", "sum"))
        .reset_index()
    )
    names = sorted(set(wanted) | set(sent["event"].astype(str)))
    out = pd.DataFrame({"event": names})
    out["subscriptions"] = out["event"].map(wanted).fillna(0)
    out = out.merge(sent.astype({"event": str}), on="event", how="left")
    out[["events", "delivered"]] = out[["events", "delivered"]].fillna(0)
    out["success_rate"] = (out["delivered"] / out["events"]).where(out["events"] > 0)
    total = out["events"].sum()
    out["share"] = out["events"] / total if total else 0.0
    return out.astype(
        {
            "event": "string",
            "subscriptions": "Int64",
            "events": "Int64",
            "delivered": "Int64",
            "success_rate": "Float64",
            "share": "Float64",
        }
    )


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    try:
        return [str(v) for v in value]
    except TypeError:  # NA or None: the record did not say
        return []


def plot_health(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Bars of each subscription's current run of failed attempts, against the 50 auto-disable.

    ``frame`` from :func:`health` (webhook_id, url, is_active, consecutive_failures). Disabled
    subscriptions are drawn in red.
    """
    ax = ax if ax is not None else plt.figure().add_subplot()
    labels = [
        f"{u} ({w})" if not pd.isna(u) else str(w)
        for w, u in zip(frame["webhook_id"], frame["url"], strict=True)
    ]
    colours = [
        "tab:blue" if active else "tab:red"
        for active in frame["is_active"].fillna(True).astype(bool)
    ]
    ax.barh(labels, frame["consecutive_failures"].astype("Float64").fillna(0), color=colours)
    ax.axvline(AUTO_DISABLE_AFTER, color="black", linestyle="--", label="auto-disable (50)")
    ax.set_xlim(0, AUTO_DISABLE_AFTER * 1.1)
    ax.invert_yaxis()
    ax.set_xlabel("consecutive failed attempts")
    ax.set_title("Webhook subscriptions: failure runs")
    ax.legend()
    return ax
