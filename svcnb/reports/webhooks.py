"""Webhook health: success per subscription, attempts needed, failure runs, event mix.

A delivery record is one attempt (docs/contracts.md: ``attempts`` is the attempt number 1..3),
so an event sent to a subscription is the group of records sharing ``event_id``. The spec
disables a subscription after 50 consecutive delivery failures; like the sandbox, a failure here
is one failed attempt, and a success resets the run.

The run of consecutive failures, and the distance to auto-disable drawn from it, states its
ground (``consecutive_failures_bound``, ``failures_to_disable_bound``, ``reason``):

- the service's own counter (``webhooks.consecutive_failures``, the sandbox's
  ``consecutiveFailures``) wins whenever the data has it, and is exact;
- else the run is counted from the delivery records, newest attempt time backwards. It is exact
  only when that walk reaches a success, in an order the records prove (a readable attempt time
  on every record; records sharing a time ordered only within one event, by attempt number), and
  every failed record counted is provably one attempt (attempt number 1, or the event's records
  for the earlier attempts are there too);
- with no success among the records served, the run is "at least" the failures counted: the
  service may keep only its latest attempts, so the history may be cut. The same holds when an
  older record's outcome is unknown, when records of different outcome share one time, and when
  a failed record may stand for several attempts (attempt number 3 without attempts 1 and 2).
  Then failures before auto-disable are "at most" 50 minus that;
- with no readable attempt time on some record, or no readable attempt number on a failed
  record in the run (a key svcnb cannot place may hold it), the run is unknown (NA): never a
  count.

The spec leaves the delivery record's field names "not shown"; a record whose success flag the
frame could not find has ``success`` NA: its outcome is unknown, neither delivered nor failed.
An event with no successful attempt and some unknown ones is ``unknown``; rates are computed over
the events (or attempts) whose outcome is known, and the unknown ones are counted beside them,
with ``complete`` False and the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd
from pandas.api.typing import NAType

from svcnb.assumptions import Decision
from svcnb.frames import decision_text, event_grouping, history_depth
from svcnb.reports._classes import UNKNOWN, billing_classes, vm_classes
from svcnb.reports._plots.webhooks import MAX_BARS, plot_health
from svcnb.reports._replay import StoreLike, report, snapshot_at
from svcnb.reports._reuse import sharing
from svcnb.reports._view import (
    Figure,
    FigureSpec,
    PlotSpec,
    TableSpec,
    View,
    ViewSpec,
    view_notes,
    view_of,
)
from svcnb.store import MissingResourceError, Snapshot, StoreError

__all__ = [
    "AT_LEAST",
    "AT_MOST",
    "AUTO_DISABLE_AFTER",
    "EXACT",
    "HEALTH_COLUMNS",
    "MAX_ATTEMPTS",
    "MAX_BARS",
    "RECONCILE_COLUMNS",
    "VIEW",
    "attempts",
    "disabled",
    "event_mix",
    "frames_view",
    "health",
    "bounded_text",
    "plot_health",
    "reconcile",
    "view",
]

AUTO_DISABLE_AFTER = 50
MAX_ATTEMPTS = 3

# what a figure's ``*_bound`` column says about it
EXACT = "exact"
AT_LEAST = "at least"  # the value is a lower bound
AT_MOST = "at most"  # the value is an upper bound
UNKNOWN_FIGURE = "unknown"  # the value is NA
# where consecutive_failures comes from
STATED = "service counter"
COUNTED = "delivery records"

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
    "consecutive_failures_bound",
    "consecutive_failures_source",
    "failures_to_disable",
    "failures_to_disable_bound",
    "last_success_at",
    "last_failure_at",
    "complete",
    "reason",
]


_EVENT_DTYPES: dict[str, str | type[bool]] = {
    "webhook_id": "string",
    "event_id": "string",
    "event": "string",
    "tries": "Int64",
    "ok_on": "Int64",
    "delivered": bool,
    "failed": bool,
    "unknown": bool,
}


def _events(deliveries: pd.DataFrame, grouping: Decision | None = None) -> pd.DataFrame:
    """One row per (webhook, event): delivered (an attempt succeeded), failed (every attempt
    is known to have failed), unknown (neither), and the attempt it got through on (``ok_on``).

    Records sharing an event id are one event's attempts. A record without an event id is an
    event of its own only where ``grouping`` (:func:`svcnb.frames.event_grouping`) says each
    record is one event; otherwise which attempts make one event is unknown, and such records
    make no event here: ``attrs["ungrouped"]`` counts them per webhook.
    """
    grouping = grouping if grouping is not None else event_grouping(deliveries)
    loose = deliveries["event_id"].isna().to_numpy(dtype=bool)
    ungrouped: dict[str, int] = {}
    if loose.any() and grouping.value != "event":
        counts = deliveries.loc[loose, "webhook_id"].astype(str).value_counts()
        ungrouped = {str(k): int(v) for k, v in counts.items()}
        deliveries = deliveries[~loose]
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
        out = pd.DataFrame({c: pd.Series(dtype=t) for c, t in _EVENT_DTYPES.items()})
        out.attrs["ungrouped"] = ungrouped
        return out
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
    out = out[list(_EVENT_DTYPES)].astype(_EVENT_DTYPES)
    out.attrs["ungrouped"] = ungrouped
    return out


def _event_keys(records: pd.DataFrame) -> pd.Series:
    """Each record's event: its event id, or the record itself when it names none."""
    return records["event_id"].astype("string").fillna("record " + records["id"].astype("string"))


def _one_attempt(events: pd.Series, attempts: pd.Series) -> list[bool]:
    """Per record: proven to be one attempt (attempt number 1, or the same event's records for
    every earlier attempt are there). A record with attempt number k alone may be a service's
    one record per event counting k attempts, or the last of k whose first ones were cut."""
    numbers = attempts.astype("Int64")
    seen: dict[Any, set[int]] = {}
    for event, k in zip(events, numbers, strict=True):
        if not pd.isna(k):
            seen.setdefault(event, set()).add(int(k))
    out = []
    for event, k in zip(events, numbers, strict=True):
        out.append(not pd.isna(k) and set(range(1, int(k))) <= seen.get(event, set()))
    return out


def _run_of_failures(
    records: pd.DataFrame, depth: Decision | None = None
) -> tuple[Any, str, str, bool]:
    """Failed attempts since the last success, counted from the delivery records newest attempt
    time backwards: (count or lower bound or NA, bound, why it is not exact, whether it rests
    on the history depth: no success was reached and ``depth`` does not say the records are
    the whole history)."""
    depth = depth if depth is not None else history_depth()
    n = len(records)
    if not n:
        if depth.value == "full":
            return 0, EXACT, "", False  # every attempt is kept, and none was made
        return (
            pd.NA,
            UNKNOWN_FIGURE,
            f"the service states no counter and served no deliveries; {decision_text(depth)}",
            True,
        )
    when = records["last_attempt_at"]
    untimed = int(when.isna().sum())
    if untimed:
        return (
            pd.NA,
            UNKNOWN_FIGURE,
            f"{untimed} of {n} delivery record(s) carry no readable attempt time, so the order "
            "of the attempts is unknown",
            False,
        )
    recs = pd.DataFrame(
        {
            "when": when,
            "success": records["success"].astype("boolean"),
            "attempt": records["attempts"].astype("Int64"),
            "event": _event_keys(records),
            "single": _one_attempt(_event_keys(records), records["attempts"]),
        }
    ).reset_index(drop=True)
    run = uncounted = unproven = 0
    found, stop = False, ""

    def tally(failed: pd.DataFrame) -> None:
        nonlocal run, uncounted, unproven
        run += len(failed)
        numbered = failed["attempt"].notna().to_numpy(dtype=bool)
        uncounted += int((~numbered).sum())
        unproven += int((numbered & ~failed["single"].to_numpy(dtype=bool)).sum())

    for at, group in reversed(list(recs.groupby("when", sort=True))):
        ok = group["success"]
        if ok.isna().any():
            stop = "an older delivery record's outcome is unknown (no readable success flag)"
            break
        flags = ok.to_numpy(dtype=bool)
        if flags.all():
            found = True
            break
        if not flags.any():
            tally(group)
            continue
        numbers = group["attempt"]
        if group["event"].nunique() == 1 and numbers.notna().all() and numbers.is_unique:
            last_ok = int(numbers[flags].max())
            tally(group[~flags & (numbers > last_ok).to_numpy(dtype=bool)])
            found = True
            break
        stop = (
            f"delivery records of different outcome share the attempt time {at:%Y-%m-%d %H:%M:%S}"
            " UTC, so their order is unknown"
        )
        break
    if uncounted:
        return (
            pd.NA,
            UNKNOWN_FIGURE,
            f"{uncounted} failed delivery record(s) in the run carry no readable attempt "
            "number: each may stand for several failed attempts",
            False,
        )
    why = []
    deep = not found and not stop and depth.value != "full"
    if deep:
        stop = (
            f"no success among the {n} delivery record(s) served: the service may keep only its "
            f"latest attempts, so the run may be longer ({decision_text(depth)})"
        )
    if stop:
        why.append(stop)
    if unproven:
        why.append(
            f"{unproven} failed delivery record(s) in the run have an attempt number above 1 "
            "without the records of the earlier attempts: each may stand for several"
        )
    if not why:
        return run, EXACT, "", False
    if run == 0:  # "at least 0" says nothing
        return pd.NA, UNKNOWN_FIGURE, "; ".join(why), deep
    return run, AT_LEAST, "; ".join(why), deep


def _to_disable(active: Any, run: Any, bound: str, deep: bool = False) -> tuple[Any, str, str]:
    """Failed attempts left before the auto-disable: (count or upper bound or NA, bound, why).

    A run counted from a history that may be cut (``deep``) bounds nothing the user can act
    on: what is left is unknown until the history depth is pinned (``[deliveries] history``).
    """
    if active is False:
        return 0, EXACT, ""
    if pd.isna(run):
        return pd.NA, UNKNOWN_FIGURE, ""
    left = max(AUTO_DISABLE_AFTER - int(run), 0)
    if left == 0:
        return 0, EXACT, ""
    if deep:
        return pd.NA, UNKNOWN_FIGURE, "it rests on how much history the service keeps"
    if active is None:
        return left, AT_MOST, "whether the subscription is active is not stated"
    return left, (EXACT if bound == EXACT else AT_MOST), ""


def bounded_text(value: Any, bound: Any) -> str:
    """A figure as read: ``47``, ``≥ 10``, ``≤ 40`` or ``unknown``."""
    if pd.isna(value) or str(bound) == UNKNOWN_FIGURE:
        return "unknown"
    text = f"{int(value):,d}" if float(value).is_integer() else f"{float(value):,.2f}"
    return {AT_LEAST: "≥ ", AT_MOST: "≤ "}.get(str(bound), "") + text


def _rate(hits: int, known: int) -> float | NAType:
    return hits / known if known else pd.NA


@report(frames={"webhooks": "webhooks", "deliveries": "deliveries"})
def health(webhooks: pd.DataFrame, deliveries: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Per subscription: delivery success, attempts needed, and distance to auto-disable.

    Reads ``webhooks``: id, url, is_active, consecutive_failures; ``deliveries``: id,
    webhook_id, event_id, event, success, attempts, last_attempt_at. Returns webhook_id, url,
    is_active (NA when not stated), events (sent to it), delivered, failed (every attempt known
    to have failed), unknown (no attempt succeeded and some outcome is unknown), success_rate
    (delivered / (delivered + failed); NA when none is known), attempt_records,
    attempt_success_rate (over attempts of known outcome; NA when a record of known outcome has
    no readable attempt number, as it may stand for several attempts), ok_attempt_1..3 (events
    that got through on that attempt), consecutive_failures (the run of failed attempts: exact,
    or a lower bound, or NA), consecutive_failures_bound ("exact", "at least", "unknown"),
    consecutive_failures_source ("service counter" or "delivery records"),
    failures_to_disable (failed attempts left before the 50 auto-disable; 0 once disabled: exact,
    or an upper bound, or NA), failures_to_disable_bound ("exact", "at most", "unknown"),
    last_success_at, last_failure_at, complete (every figure of the row exact and every outcome
    known) and reason (why not; NA when complete). The module docstring has the rule.
    ``attrs["complete"]``: every row complete; ``attrs["incomplete"]``: {webhook_id: reason}.
    Worst first: disabled, then closest to auto-disable (unknown before known).
    """
    grouping, depth = event_grouping(deliveries), history_depth()
    events = _events(deliveries, grouping)
    ungrouped = events.attrs["ungrouped"]
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
        if not pd.isna(stated):
            run, run_bound, run_why, source, deep = int(stated), EXACT, "", STATED, False
        else:
            run, run_bound, run_why, deep = _run_of_failures(mine, depth)
            source = COUNTED
        # pandas-stubs: isna takes fewer kinds of scalar than itertuples is said to give
        active = None if pd.isna(hook.is_active) else bool(hook.is_active)  # type: ignore[arg-type]
        left, left_bound, left_why = _to_disable(active, run, run_bound, deep)
        loose = ungrouped.get(hook_id, 0)
        # event counts from records that cannot be grouped into events are unknown, never a
        # count of records taken for events
        counted: Any = pd.NA if loose else None
        delivered, lost = int(ev["delivered"].sum()), int(ev["failed"].sum())
        unknown = int(ev["unknown"].sum())
        known = ok | failed
        unnumbered = int((known & mine["attempts"].isna().to_numpy(dtype=bool)).sum())
        attempt_rate = pd.NA if unnumbered else _rate(int(ok.sum()), int(ok.sum() + failed.sum()))
        on_unknown = int((ev["delivered"] & ev["ok_on"].isna()).sum())
        why = []
        if loose:
            why.append(
                f"events, delivered, failed and success_rate unknown: {decision_text(grouping)}"
            )
        if run_bound != EXACT:
            why.append(f"consecutive failures {bounded_text(run, run_bound)}: {run_why}")
        if left_why:
            why.append(f"failures to auto-disable {bounded_text(left, left_bound)}: {left_why}")
        if unknown and not loose:
            why.append(
                f"{unknown} of {len(ev)} event(s) of unknown outcome (no readable success flag): "
                "delivered, failed and success_rate count only the known ones"
            )
        if unnumbered:
            why.append(
                f"{unnumbered} delivery record(s) of known outcome carry no readable attempt "
                "number: attempt_success_rate unknown"
            )
        untimed = int(mine["last_attempt_at"].isna().sum())
        if untimed:
            # the latest success or failure could be any of them: unknown, never a guess
            why.append(
                f"{untimed} delivery record(s) carry no readable attempt time: "
                "last_success_at and last_failure_at unknown"
            )
        if on_unknown and not loose:
            why.append(
                f"{on_unknown} delivered event(s) got through on an attempt of unknown number "
                "and are in no ok_attempt column"
            )
        rows.append(
            {
                "webhook_id": hook_id,
                "url": hook.url,
                "is_active": pd.NA if active is None else active,
                "events": len(ev) if counted is None else counted,
                "delivered": delivered if counted is None else counted,
                "failed": lost if counted is None else counted,
                "unknown": unknown if counted is None else counted,
                "success_rate": _rate(delivered, delivered + lost) if counted is None else counted,
                "attempt_records": len(mine),
                "attempt_success_rate": attempt_rate,
                **{
                    f"ok_attempt_{k}": int((ev["ok_on"] == k).fillna(False).sum())
                    if counted is None
                    else counted
                    for k in (1, 2, 3)
                },
                "consecutive_failures": run,
                "consecutive_failures_bound": run_bound,
                "consecutive_failures_source": source,
                "failures_to_disable": left,
                "failures_to_disable_bound": left_bound,
                "last_success_at": pd.NaT if untimed else mine.loc[ok, "last_attempt_at"].max(),
                "last_failure_at": (
                    pd.NaT if untimed else mine.loc[failed, "last_attempt_at"].max()
                ),
                "complete": not why,
                "reason": "; ".join(why) if why else pd.NA,
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
            "consecutive_failures_bound": "string",
            "consecutive_failures_source": "string",
            "failures_to_disable_bound": "string",
            "complete": "boolean",
            "reason": "string",
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
    out = out.sort_values(
        ["is_active", "failures_to_disable", "webhook_id"], kind="stable", na_position="first"
    ).reset_index(drop=True)
    incomplete = out[~out["complete"].to_numpy(dtype=bool)]
    out.attrs["complete"] = incomplete.empty
    out.attrs["incomplete"] = dict(
        zip(incomplete["webhook_id"].astype(str), incomplete["reason"].astype(str), strict=True)
    )
    return out


@report(frames={"deliveries": "deliveries"})
def attempts(deliveries: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Distribution of attempts needed per subscription: how many events got through on attempt
    1, 2 or 3, and how many not at all.

    Reads ``deliveries``: webhook_id, event_id, success, attempts. Returns webhook_id, outcome
    ("attempt 1", "attempt 2", "attempt 3", "delivered, attempt unknown", "not delivered",
    "unknown"), events, share. A subscription whose records cannot be grouped into events
    (no event id, grouping not pinned: :func:`svcnb.frames.event_grouping`) has one row,
    outcome "events unknown", events and share NA.
    """
    ev = _events(deliveries)
    ungrouped = ev.attrs["ungrouped"]
    ev = ev[~ev["webhook_id"].astype(str).isin(ungrouped).to_numpy(dtype=bool)]
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
    if ungrouped:
        hooks = sorted(ungrouped)
        blind = pd.DataFrame(
            {
                "webhook_id": hooks,
                "outcome": ["events unknown"] * len(hooks),
                "events": pd.array([None] * len(hooks), dtype="Int64"),
                "share": pd.array([None] * len(hooks), dtype="Float64"),
            }
        )
        out = pd.concat([out, blind], ignore_index=True)
        out = out.sort_values(["webhook_id", "outcome"], kind="stable").reset_index(drop=True)
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
    known outcome), share (of all events sent). Counts of an event type some of whose records
    cannot be grouped into events (no event id, grouping not pinned) are NA, and so is every
    share.
    """
    wanted: dict[str, int] = {}
    for hook in webhooks.itertuples(index=False):
        # pandas-stubs: isna takes fewer kinds of scalar than itertuples is said to give
        active = bool(hook.is_active) if not pd.isna(hook.is_active) else True  # type: ignore[arg-type]
        for name in _names(hook.events):
            wanted[str(name)] = wanted.get(str(name), 0) + int(active)
    ev = _events(deliveries)
    # event types some of whose records cannot be grouped into events: their counts unknown
    loose = deliveries["event_id"].isna().to_numpy(dtype=bool) & deliveries["webhook_id"].astype(
        str
    ).isin(ev.attrs["ungrouped"]).to_numpy(dtype=bool)
    blind = set(deliveries.loc[loose, "event"].astype(str))
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
    if blind:
        hit = out["event"].isin(blind).to_numpy(dtype=bool)
        out = out.astype({"events": "Float64", "delivered": "Float64", "unknown": "Float64"})
        out.loc[hit, ["events", "delivered", "unknown", "success_rate"]] = pd.NA
        out["share"] = pd.NA  # the whole is unknown, so is every part of it
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


# -- reconciliation: the event log against what the snapshots saw ------------------------------

RECONCILE_COLUMNS = [
    "finding",
    "event_type",
    "vm_id",
    "name",
    "before",
    "after",
    "event_id",
    "event_created_at",
    "from_snapshot",
    "to_snapshot",
    "from_time",
    "to_time",
]

# VM status class a VM moved to -> the event that says so (the sandbox's events; the spec lists
# the names and leaves what triggers each "not shown")
_STATUS_EVENTS = {
    "running": "vm.started",
    "stopped": "vm.stopped",
    "suspended": "vm.suspended",
    "terminated": "vm.terminated",
}
COMPARED_EVENTS = ("vm.created", *_STATUS_EVENTS.values(), "vm.restarted", "vm.renewed")


def _event_vm(data: Any) -> Any:
    """The VM id an event's ``data`` names: ``vm.id``, ``vmId`` or ``vm_id`` (NA when none)."""
    try:
        body = json.loads(data) if isinstance(data, str) else None
    except ValueError:
        return pd.NA
    if not isinstance(body, dict):
        return pd.NA
    vm = body.get("vm")
    if isinstance(vm, dict) and vm.get("id") is not None:
        return str(vm["id"])
    for key in ("vmId", "vm_id"):
        if body.get(key) is not None:
            return str(body[key])
    return pd.NA


def _expected(before: pd.DataFrame, after: pd.DataFrame) -> tuple[list[dict[str, Any]], int]:
    """The events the change from ``before`` to ``after`` (vms frames) should have caused, and
    the VMs left out because a status word is unknown."""
    old = before.assign(cls=vm_classes(before)).set_index(before["id"].astype(str))
    new = after.assign(cls=vm_classes(after), bill=billing_classes(after)).set_index(
        after["id"].astype(str)
    )
    out: list[dict[str, Any]] = []
    unknown = 0
    for vm_id, row in new.iterrows():
        if row["cls"] == UNKNOWN or (vm_id in old.index and old.at[vm_id, "cls"] == UNKNOWN):
            unknown += 1
            continue
        base = {"vm_id": vm_id, "name": row["name"]}
        if vm_id not in old.index:
            # provisioning: vm.created comes when it is up, not when it is listed
            if row["cls"] != "transitional":
                out.append(
                    {
                        **base,
                        "event_type": "vm.created",
                        "kinds": ("vm.created",),
                        "before": "",
                        "after": row["cls"],
                    }
                )
            continue
        was = old.at[vm_id, "cls"]
        if row["cls"] != was and row["cls"] in _STATUS_EVENTS:
            kinds: tuple[str, ...] = (_STATUS_EVENTS[row["cls"]],)
            if was == "transitional" and row["cls"] == "running":
                # provisioning, starting or restarting: the class does not say which
                kinds = ("vm.created", "vm.started", "vm.restarted")
            out.append(
                {
                    **base,
                    "event_type": " or ".join(kinds),
                    "kinds": kinds,
                    "before": was,
                    "after": row["cls"],
                }
            )
        # a datetime column: pandas-stubs type .at as any scalar
        renew_old = cast(pd.Timestamp, old.at[vm_id, "next_renewal_at"])
        renew_new = row["next_renewal_at"]
        if (
            not pd.isna(renew_old)
            and not pd.isna(renew_new)
            and renew_new > renew_old
            and row["bill"] == "paid"
        ):
            out.append(
                {
                    **base,
                    "event_type": "vm.renewed",
                    "kinds": ("vm.renewed",),
                    "before": f"next renewal {renew_old:%Y-%m-%d}",
                    "after": f"next renewal {renew_new:%Y-%m-%d}",
                }
            )
    return out, unknown


def _match(pending: list[dict[str, Any]], kind: str, vm_id: str) -> dict[str, Any] | None:
    return next((e for e in pending if e["vm_id"] == vm_id and kind in e["kinds"]), None)


def _subscribed(snap: Snapshot) -> set[str] | None:
    """Event types some active subscription listed at snapshot ``snap``; None when not readable."""
    try:
        hooks = snap.load("webhooks")
    except MissingResourceError:
        return None
    active = hooks[hooks["is_active"].astype("boolean").fillna(True).to_numpy(dtype=bool)]
    return {name for value in active["events"] for name in _names(value)}


def _vm_ids(store: StoreLike) -> set[str]:
    """Every VM id the account's snapshots ever held."""
    return set(store.history("vms", ["name"])["id"].dropna().astype(str))


def _owners(store: StoreLike) -> tuple[set[str], set[str]] | None:
    """In a store of several accounts, the VM ids the account in scope ever held and those only
    other accounts held; None in a store of one account (every event is its own).

    The event log is the store's, one for all its accounts (the receiver cannot tell whose
    subscription an event came through), so an event is tied to an account by its VM."""
    names = store.accounts()
    if len(names) < 2:
        return None
    mine = getattr(store, "account", None)
    if mine is None:
        raise StoreError(
            f"the store holds accounts {', '.join(names)} and one event log for all of them; "
            "reconcile one account at a time: webhooks.reconcile(store.for_account('NAME'))"
        )
    ours = _vm_ids(store)
    theirs: set[str] = set()
    for name in names:
        if name != mine:
            theirs |= _vm_ids(store.for_account(name))
    return ours, theirs - ours


def reconcile(store: StoreLike, since: Any = None, at: Any = None) -> pd.DataFrame:
    """The webhook event log against what changed between two snapshots.

    Compares the VMs of the snapshot as of ``since`` (default: the one just before the ``at``
    snapshot) and of ``at`` (default: the latest) with the events in the store's log
    (``store.events()``, written by ``svcnb listen``) whose signed ``createdAt`` falls in
    ``(from_time, to_time]``. Changes that should cause an event: a VM listed anew and up
    (``vm.created``); its status class moving to running, stopped, suspended or terminated
    (``vm.started``, ``vm.stopped``, ``vm.suspended``, ``vm.terminated``; from a transitional
    state to running, the class cannot tell a start from the end of provisioning or a restart,
    so ``vm.created``, ``vm.started`` or ``vm.restarted`` matches); its next renewal moving
    later while billing is paid (``vm.renewed``). A change counts only when an active
    subscription (in either snapshot) lists its event type.

    Reads ``vms``: id, name, status, billing_status, next_renewal_at; ``webhooks``: is_active,
    events; the event log: event_id, type, created_at, data (the VM id from ``data.vm.id``,
    ``data.vmId`` or ``data.vm_id``). Returns ``RECONCILE_COLUMNS``, one row per discrepancy:
    finding ("missing_event": the snapshots show the change, no such event arrived;
    "unseen_change": an event arrived for a change neither snapshot shows, e.g. a VM stopped and
    started again in between, or an event svcnb cannot tie to a VM ("event without a VM") or
    to a time ("event without a time")), event_type, vm_id, name, before, after (status
    classes, or the renewal dates), event_id, event_created_at (NA for missing events),
    from_snapshot, to_snapshot, from_time, to_time. ``attrs``: ``matched`` (events that
    matched a change), ``not_compared`` ({event type: count} of events in the window of types
    not compared, e.g. billing.*), ``unknown_status`` (VMs left out because a status word is
    unknown), ``subscribed`` (the event types expected, or None when the snapshots could not
    read the subscriptions: then every type is expected).

    Accounts: the event log is one for the whole store. In a store of several accounts pass
    ``store.for_account(name)`` (the store unbound raises StoreError): an event counts for that
    account only when its VM is one the account's snapshots ever held. ``attrs["other_accounts"]``
    counts the events left out as another account's (their VM is one only another account held),
    ``attrs["unattributed"]`` those no account can be tied to (no VM, or a VM no account's
    snapshot holds): they are nobody's finding, so they are counted, never listed. In a store of
    one account both are 0 and every event is the account's.
    """
    owners = _owners(store)
    snaps = store.snapshots()
    to_snap = snapshot_at(store, at, snaps)
    if since is None:
        earlier = snaps[(snaps["server_time"] < to_snap["server_time"]).to_numpy(dtype=bool)]
        if earlier.empty:
            raise ValueError(
                "reconcile needs two snapshots: the store has none before "
                f"{to_snap['server_time'].isoformat()}; take another one later"
            )
        from_snap = earlier.sort_values(["server_time", "snapshot_id"]).iloc[-1]
    else:
        from_snap = snapshot_at(store, since, snaps)
    t0, t1 = from_snap["server_time"], to_snap["server_time"]
    if t0 >= t1:
        raise ValueError(f"since ({t0.isoformat()}) must be before at ({t1.isoformat()})")
    old, new = store.at(t0), store.at(t1)
    old_vms, new_vms = old.load("vms"), new.load("vms")
    expected, unknown = _expected(old_vms, new_vms)
    at_start, at_end = _subscribed(old), _subscribed(new)
    subscribed = None if at_start is None or at_end is None else at_start | at_end
    if subscribed is not None:
        expected = [e for e in expected if set(e["kinds"]) & subscribed]

    log = store.events()
    other_accounts = unattributed = 0
    if owners is not None:
        ours, theirs = owners
        vm_of = log["data"].map(_event_vm).astype("string")
        mine = vm_of.isin(ours).fillna(False).to_numpy(dtype=bool)
        other = vm_of.isin(theirs).fillna(False).to_numpy(dtype=bool)
        at_hand = log["created_at"]
        looked_at = (((at_hand > t0) & (at_hand <= t1)) | at_hand.isna()).fillna(False)
        looked_at = looked_at.to_numpy(dtype=bool)
        other_accounts = int((looked_at & other).sum())
        unattributed = int((looked_at & ~mine & ~other).sum())
        log = log[mine]
    created = log["created_at"]
    window = log[((created > t0) & (created <= t1)).fillna(False).to_numpy(dtype=bool)]
    timeless = log[created.isna().to_numpy(dtype=bool)]
    compared = window[window["type"].isin(COMPARED_EVENTS).fillna(False).to_numpy(dtype=bool)]
    others = window[~window["type"].isin(COMPARED_EVENTS).fillna(False).to_numpy(dtype=bool)]

    rows: list[dict[str, Any]] = []
    pending = list(expected)
    matched = 0
    for event in compared.itertuples(index=False):
        vm_id = _event_vm(event.data)
        base = {
            "event_type": event.type,
            "event_id": event.event_id,
            "event_created_at": event.created_at,
        }
        if pd.isna(vm_id):
            rows.append({**base, "finding": "unseen_change", "after": "event without a VM"})
        elif (hit := _match(pending, str(event.type), vm_id)) is not None:
            pending.remove(hit)
            matched += 1
        else:
            rows.append({**base, "finding": "unseen_change", "vm_id": vm_id})
    for event in timeless.itertuples(index=False):
        rows.append(
            {
                "finding": "unseen_change",
                "event_type": event.type,
                "event_id": event.event_id,
                "vm_id": _event_vm(event.data),
                "after": "event without a time",
            }
        )
    rows += [{**e, "finding": "missing_event"} for e in pending]

    out = pd.DataFrame(rows, columns=RECONCILE_COLUMNS)
    names: dict[str, Any] = {}
    for frame in (old_vms, new_vms):
        names.update(zip(frame["id"].astype(str), frame["name"], strict=True))
    # object first: with only unseen changes the column is all NaN (float), and pandas warns
    # on filling a float column with text
    out["name"] = out["name"].astype(object).fillna(out["vm_id"].map(names))
    out["from_snapshot"], out["to_snapshot"] = from_snap["snapshot_id"], to_snap["snapshot_id"]
    out["from_time"], out["to_time"] = t0, t1
    out["event_created_at"] = pd.to_datetime(out["event_created_at"], utc=True)
    out["from_time"] = pd.to_datetime(out["from_time"], utc=True)
    out["to_time"] = pd.to_datetime(out["to_time"], utc=True)
    text = [c for c in RECONCILE_COLUMNS if not c.endswith(("_at", "_time"))]
    out = out.astype(dict.fromkeys(text, "string"))
    out = out.sort_values(
        ["finding", "event_type", "vm_id", "event_created_at"], kind="stable", na_position="last"
    ).reset_index(drop=True)
    out.attrs.update(
        matched=matched,
        not_compared={str(k): int(v) for k, v in others["type"].value_counts().items()},
        unknown_status=unknown,
        subscribed=None if subscribed is None else sorted(subscribed),
        other_accounts=other_accounts,
        unattributed=unattributed,
    )
    return out


# --- the webhooks view: what every surface shows (svcnb.reports._view) ------------------------
# Each figure's spec sits right above the function computing it from the view's ground.


@dataclass(frozen=True)
class _Ground:
    """What the webhooks figures are computed from: the subscriptions and their health."""

    webhooks: pd.DataFrame
    health: pd.DataFrame

    @property
    def bounded(self) -> int:
        """Subscriptions whose failure run or distance to auto-disable is not exact."""
        table = self.health
        if not (len(table) and "consecutive_failures_bound" in table):
            return 0
        exact = (table["consecutive_failures_bound"] == "exact") & (
            table["failures_to_disable_bound"] == "exact"
        )
        return int((~exact.fillna(False)).sum())

    def events_total(self, column: str) -> int | None:
        # a subscription whose events cannot be counted makes the total unknown, never a sum
        # of the others
        if not len(self.health):
            return 0
        values = self.health[column]
        return None if values.isna().any() else int(values.sum())


SUBSCRIPTIONS = FigureSpec("subscriptions", "Subscriptions", "count", "Every webhook subscription.")


def _subscriptions(g: _Ground) -> Figure:
    return Figure(SUBSCRIPTIONS, len(g.webhooks))


DISABLED = FigureSpec(
    "disabled",
    "Subscriptions disabled",
    "count",
    "Subscriptions not active (by hand or after failing deliveries).",
)


def _disabled(g: _Ground) -> Figure:
    hooks = g.webhooks
    active = hooks["is_active"] if "is_active" in hooks else pd.Series([], dtype="boolean")
    # an unknown active flag is not counted as disabled
    return Figure(DISABLED, int((active == False).sum()))  # noqa: E712


FAILING = FigureSpec(
    "failing",
    "Subscriptions whose last delivery failed",
    "count",
    "Subscriptions with a run of at least one failed event at the end of their records "
    "(a run known only as a bound counts when the bound is at least one).",
)


def _failing(g: _Ground) -> Figure:
    table = g.health
    runs = table["consecutive_failures"] if len(table) else pd.Series([], dtype="Int64")
    failing = int((runs.fillna(0).astype("Int64") > 0).sum())
    return Figure(FAILING, failing, qualifier="at least" if g.bounded else "")


DELIVERED_EVENTS = FigureSpec(
    "delivered",
    "Events delivered",
    "count",
    "Events whose delivery succeeded, over every subscription's records.",
)
FAILED_EVENTS = FigureSpec(
    "failed",
    "Events failed",
    "count",
    "Events whose every attempt failed, over every subscription's records.",
)
UNKNOWN_EVENTS = FigureSpec(
    "unknown",
    "Events of unknown outcome",
    "count",
    "Events whose records carry no success flag svcnb can read: left out of the rates.",
)


def _events_of(g: _Ground, spec: FigureSpec, column: str) -> Figure:
    """The events of one outcome: the health table's ``column`` over every subscription."""
    return Figure(spec, g.events_total(column))


BOUNDED = FigureSpec(
    "bounded",
    "Subscriptions whose failure run is only a bound",
    "count",
    "Subscriptions whose failures in a row or distance to auto-disable is 'at least', "
    "'at most' or unknown (see the reason column).",
)


def _bounded(g: _Ground) -> Figure:
    return Figure(BOUNDED, g.bounded)


HEALTH_TABLE = TableSpec(
    "health",
    "Subscriptions, worst first",
    (
        "url",
        "is_active",
        "events",
        "success_rate",
        "consecutive_failures",
        "failures_to_disable",
        "last_success_at",
        "last_failure_at",
        "reason",
    ),
    "One row per subscription.",
)
DISABLED_TABLE = TableSpec("disabled", "Disabled", None, "One row per disabled subscription.")
EVENT_MIX_TABLE = TableSpec("event_mix", "Event mix", None, "One row per event type.")
ATTEMPTS_TABLE = TableSpec(
    "attempts", "Attempts needed", None, "How many attempts deliveries took."
)
HEALTH_PLOT = PlotSpec("health", "Failure runs per subscription", (7.0, 4.0))

VIEW = ViewSpec(
    report="webhooks",
    title="Webhooks",
    figures=(
        SUBSCRIPTIONS,
        DISABLED,
        FAILING,
        DELIVERED_EVENTS,
        FAILED_EVENTS,
        UNKNOWN_EVENTS,
        BOUNDED,
    ),
    tables=(HEALTH_TABLE, DISABLED_TABLE, EVENT_MIX_TABLE, ATTEMPTS_TABLE),
    plots=(HEALTH_PLOT,),
)


@sharing
def view(store: StoreLike, at: Any = None, *, account: str | None = None) -> View:
    """The webhooks view as of the latest snapshot at or before ``at`` (see ``VIEW``)."""
    inputs = health.inputs(store, at, account)
    return frames_view(inputs["webhooks"], inputs["deliveries"], now=inputs["now"], inputs=inputs)


def frames_view(
    webhooks: pd.DataFrame,
    deliveries: pd.DataFrame,
    now: Any = None,
    inputs: dict[str, Any] | None = None,
) -> View:
    """The webhooks view of frames read live (the webhooks panel's): see :func:`view`."""
    now = pd.Timestamp.now(tz="UTC") if now is None else pd.Timestamp(now)
    table = health(webhooks, deliveries, now=now)
    tables = {
        HEALTH_TABLE: table,
        DISABLED_TABLE: disabled(webhooks, now=now),
        EVENT_MIX_TABLE: event_mix(webhooks, deliveries, now=now),
        ATTEMPTS_TABLE: attempts(deliveries, now=now),
    }
    g = _Ground(webhooks, table)
    unknown = _events_of(g, UNKNOWN_EVENTS, "unknown")
    figures = [
        _subscriptions(g),
        _disabled(g),
        _failing(g),
        _events_of(g, DELIVERED_EVENTS, "delivered"),
        _events_of(g, FAILED_EVENTS, "failed"),
        unknown,
        _bounded(g),
    ]
    notes = view_notes(inputs or {}, tables.values())
    grouping = event_grouping(deliveries)
    if not grouping.ok:
        notes.append(f"event counts unknown: {decision_text(grouping)}")
    if unknown.value:
        notes.append(
            f"{unknown.value} event(s) of unknown outcome (no success flag svcnb can "
            "read), left out of the success rates"
        )
    return view_of(
        VIEW,
        now,
        figures,
        tables,
        {HEALTH_PLOT: lambda ax: plot_health(table, ax=ax)},
        notes=notes,
        complete=not g.bounded and not unknown.value and grouping.ok,
    )
