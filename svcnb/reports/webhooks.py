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

import json
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes

from svcnb.reports._classes import UNKNOWN, billing_classes, vm_classes
from svcnb.reports._replay import StoreLike, report, snapshot_at
from svcnb.reports._timeaxis import legend_outside
from svcnb.store import MissingResourceError, StoreError

__all__ = [
    "AUTO_DISABLE_AFTER",
    "HEALTH_COLUMNS",
    "MAX_ATTEMPTS",
    "RECONCILE_COLUMNS",
    "attempts",
    "disabled",
    "event_mix",
    "health",
    "plot_health",
    "reconcile",
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
            kinds = (_STATUS_EVENTS[row["cls"]],)
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
        renew_old, renew_new = old.at[vm_id, "next_renewal_at"], row["next_renewal_at"]
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


def _subscribed(store: StoreLike, when: Any) -> set[str] | None:
    """Event types some active subscription listed at ``when``; None when not readable."""
    try:
        hooks = store.load("webhooks", at=when)
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
    old_vms, new_vms = store.load("vms", at=t0), store.load("vms", at=t1)
    expected, unknown = _expected(old_vms, new_vms)
    wanted = [_subscribed(store, t0), _subscribed(store, t1)]
    subscribed = None if any(w is None for w in wanted) else set().union(*wanted)
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
