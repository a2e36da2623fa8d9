"""Webhook health: success per subscription, attempts needed, failure runs, event mix.

A delivery record is one attempt (docs/contracts.md: ``attempts`` is the attempt number 1..3),
so an event sent to a subscription is the group of records sharing ``event_id``. The spec
disables a subscription after 50 consecutive delivery failures; like the sandbox, a failure here
is one failed attempt, and a success resets the run. The service's own counter
(``webhooks.consecutive_failures``) is used when the data has it, else the run is counted from
the delivery records, newest backwards.

The spec leaves the delivery record's field names "not shown"; a record whose success flag the
frame could not find has ``success`` NA: its outcome is unknown, neither delivered nor failed.
An event with no successful attempt and some unknown ones is ``unknown``; rates are computed over
the events (or attempts) whose outcome is known, and the unknown ones are counted beside them.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes

from svcnb.reports._replay import report
from svcnb.reports._timeaxis import legend_outside

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
    "unknown",
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


_EVENT_DTYPES = {
    "webhook_id": "string",
    "event_id": "string",
    "event": "string",
    "tries": "Int64",
    "ok_on": "Int64",
    "delivered": bool,
    "failed": bool,
    "unknown": bool,
}


def _events(deliveries: pd.DataFrame) -> pd.DataFrame:
    """One row per (webhook, event): delivered (an attempt succeeded), failed (every attempt
    is known to have failed), unknown (neither), and the attempt it got through on (``ok_on``).

    A record without an event id is an event of its own: grouping those together would merge
    events that may differ.
    """
    success = deliveries["success"].astype("boolean")
    ok = success.fillna(False).astype(bool)
    attempt = deliveries["attempts"].astype("Int64")
    recs = pd.DataFrame(
        {
            "webhook_id": deliveries["webhook_id"].astype("string"),
            "event_id": deliveries["event_id"]
            .astype("string")
            .fillna("record " + deliveries["id"].astype("string")),
            "event": deliveries["event"].astype("string"),
            "attempts": attempt,
            "ok": ok,
            "na": success.isna().astype(bool),
            "ok_attempt": attempt.where(ok),
        }
    )
    if recs.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _EVENT_DTYPES.items()})
    out = (
        recs.groupby(["webhook_id", "event_id"], sort=True, dropna=False)
        .agg(
            event=("event", "first"),
            tries=("attempts", "max"),
            ok_on=("ok_attempt", "min"),
            any_ok=("ok", "any"),
            any_na=("na", "any"),
        )
        .reset_index()
    )
    out["delivered"] = out["any_ok"].astype(bool)
    out["failed"] = ~out["delivered"] & ~out["any_na"].astype(bool)
    out["unknown"] = ~out["delivered"] & out["any_na"].astype(bool)
    return out[list(_EVENT_DTYPES)].astype(_EVENT_DTYPES)


def _run_of_failures(records: pd.DataFrame) -> Any:
    """Failed attempts since the last success, newest backwards; NA when an attempt of unknown
    outcome comes first (the run may have ended there)."""
    order = records.sort_values(["last_attempt_at", "attempts", "id"], na_position="first")
    run = 0
    for success in order["success"].astype("boolean").to_numpy(dtype=object)[::-1]:
        if success is pd.NA:
            return pd.NA
        if success:
            break
        run += 1
    return run


def _rate(hits: int, known: int) -> Any:
    return hits / known if known else pd.NA


@report(frames={"webhooks": "webhooks", "deliveries": "deliveries"})
def health(webhooks: pd.DataFrame, deliveries: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Per subscription: delivery success, attempts needed, and distance to auto-disable.

    Reads ``webhooks``: id, url, is_active, consecutive_failures; ``deliveries``: id,
    webhook_id, event_id, event, success, attempts, last_attempt_at. Returns webhook_id, url,
    is_active, events (sent to it), delivered, failed (every attempt known to have failed),
    unknown (no attempt succeeded and some outcome is unknown), success_rate (delivered /
    (delivered + failed); NA when none is known), attempt_records, attempt_success_rate (over
    attempts of known outcome), ok_attempt_1..3 (events that got through on that attempt),
    consecutive_failures (NA when unknown), failures_to_disable (failed attempts left before the
    50 auto-disable; 0 once disabled), last_success_at, last_failure_at.
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
        success = mine["success"].astype("boolean")
        ok = success.fillna(False).to_numpy(dtype=bool)
        failed = (~success).fillna(False).to_numpy(dtype=bool)
        stated = getattr(hook, "consecutive_failures", pd.NA)
        run = int(stated) if not pd.isna(stated) else _run_of_failures(mine)
        active = bool(hook.is_active) if not pd.isna(hook.is_active) else True
        delivered, lost = int(ev["delivered"].sum()), int(ev["failed"].sum())
        if not active:
            to_disable: Any = 0
        else:
            to_disable = pd.NA if pd.isna(run) else max(AUTO_DISABLE_AFTER - run, 0)
        rows.append(
            {
                "webhook_id": hook_id,
                "url": hook.url,
                "is_active": active,
                "events": len(ev),
                "delivered": delivered,
                "failed": lost,
                "unknown": int(ev["unknown"].sum()),
                "success_rate": _rate(delivered, delivered + lost),
                "attempt_records": len(mine),
                "attempt_success_rate": _rate(int(ok.sum()), int(ok.sum() + failed.sum())),
                **{
                    f"ok_attempt_{k}": int((ev["ok_on"] == k).fillna(False).sum())
                    for k in (1, 2, 3)
                },
                "consecutive_failures": run,
                "failures_to_disable": to_disable,
                "last_success_at": mine.loc[ok, "last_attempt_at"].max(),
                "last_failure_at": mine.loc[failed, "last_attempt_at"].max(),
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
            "unknown": "Int64",
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
    ("attempt 1", "attempt 2", "attempt 3", "delivered, attempt unknown", "not delivered",
    "unknown"), events, share.
    """
    ev = _events(deliveries)
    outcome = pd.Series("unknown", index=ev.index, dtype="string")
    outcome[ev["failed"].to_numpy()] = "not delivered"
    outcome[ev["delivered"].to_numpy()] = "delivered, attempt unknown"
    on = ev["ok_on"].notna().to_numpy(dtype=bool)
    outcome[on] = "attempt " + ev.loc[on, "ok_on"].astype("string")
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
    subscription), delivered, unknown (outcome unknown), success_rate (delivered / events of
    known outcome), share (of all events sent).
    """
    wanted: dict[str, int] = {}
    for hook in webhooks.itertuples(index=False):
        active = bool(hook.is_active) if not pd.isna(hook.is_active) else True
        for name in _names(hook.events):
            wanted[str(name)] = wanted.get(str(name), 0) + int(active)
    ev = _events(deliveries)
    sent = (
        ev.groupby("event", sort=True)
        .agg(
            events=("event_id", "size"),
            delivered=("delivered", "sum"),
            unknown=("unknown", "sum"),
        )
        .reset_index()
    )
    names = sorted(set(wanted) | set(sent["event"].astype(str)))
    out = pd.DataFrame({"event": names})
    out["subscriptions"] = out["event"].map(wanted).fillna(0)
    out = out.merge(sent.astype({"event": str}), on="event", how="left")
    out[["events", "delivered", "unknown"]] = out[["events", "delivered", "unknown"]].fillna(0)
    known = out["events"] - out["unknown"]
    out["success_rate"] = (out["delivered"] / known).where(known > 0)
    total = out["events"].sum()
    out["share"] = out["events"] / total if total else 0.0
    return out.astype(
        {
            "event": "string",
            "subscriptions": "Int64",
            "events": "Int64",
            "delivered": "Int64",
            "unknown": "Int64",
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
    legend_outside(ax)
    return ax
