"""Bandwidth: usage against the pack, growth, projected overage, top consumers, fleet total.

Model (the sandbox's, ``svcnb/sandbox/_life.py``; the spec shows none): ``bandwidth_used_bytes``
counts up from 0 over a billing cycle and restarts at 0 when the VM renews, so the cycle ends at
``next_renewal_at``. Only a running VM uses bandwidth. Status words are read as classes through
``svcnb.vocab`` (``active`` may mean running): a VM of class ``running`` grows, one of another
known class stays where it is, and one whose status word is unknown has an unknown projection
(``outlook`` "unknown" unless already over its pack); ``status_class`` says which.

Growth rate: bytes per day over the snapshot pairs of the last ``lookback`` (default 7 days),
summing each pair's growth over the time it covers; a pair whose usage fell (a renewal between
them) is left out because its growth is unknown. With evenly growing usage this is the slope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from svcnb.frames import ResourceName
from svcnb.reports._classes import UNKNOWN, left_out_note, vm_classes
from svcnb.reports._duration import duration, duration_text
from svcnb.reports._plots.bandwidth import (
    plot_fleet_total,
    plot_monthly_usage,
    plot_top,
    plot_usage,
)
from svcnb.reports._replay import latest_per_time, report, resolve_now
from svcnb.reports._reuse import reusable, sharing
from svcnb.reports._view import (
    UNKNOWN_STATUS,
    Figure,
    FigureSpec,
    PlotSpec,
    TableSpec,
    View,
    ViewSpec,
    view_notes,
    view_of,
)

__all__ = [
    "VIEW",
    "BANDWIDTH_HISTORY",
    "DEFAULT_LOOKBACK",
    "GIB",
    "exceeding",
    "fleet_now",
    "fleet_total",
    "growth",
    "monthly_usage",
    "plot_fleet_total",
    "plot_monthly_usage",
    "plot_top",
    "plot_usage",
    "projection",
    "top_consumers",
    "usage",
    "usage_over_time",
    "view",
]

GIB = 1024**3
DEFAULT_LOOKBACK = "7D"
# status too, so that fleet figures over time leave out terminated VMs as the figures of now do
BANDWIDTH_HISTORY: tuple[ResourceName, list[str]] = (
    "vms",
    ["bandwidth_used_bytes", "bandwidth_pack_bytes", "status"],
)
_DAY = pd.Timedelta(days=1)


@report(frames={"vms": "vms"})
def usage(vms: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Per VM: bytes used this cycle, the pack, and the share of the pack used.

    Reads ``vms``: id, name, status, plan_slug, bandwidth_used_bytes, bandwidth_pack_bytes.
    Returns vm_id, name, status, status_class (through ``svcnb.vocab``; "unknown" for a word it
    does not know), plan_slug, used_bytes, pack_bytes, share (NA when the pack is unknown or 0),
    sorted by share, highest first. VMs of class terminated are left out; ``attrs
    ["unknown_status"]`` counts the VMs whose status word is unknown (kept, with their usage).
    """
    classes = vm_classes(vms)
    keep = (classes != "terminated").to_numpy(dtype=bool)
    live, classes = vms[keep], classes[keep]
    used = live["bandwidth_used_bytes"].astype("Int64")
    pack = live["bandwidth_pack_bytes"].astype("Int64")
    share = used.astype("Float64") / pack.where(pack > 0).astype("Float64")
    out = pd.DataFrame(
        {
            "vm_id": live["id"].astype("string"),
            "name": live["name"].astype("string"),
            "status": live["status"].astype("string"),
            "status_class": classes,
            "plan_slug": live["plan_slug"].astype("string"),
            "used_bytes": used,
            "pack_bytes": pack,
            "share": share,
        }
    )
    out = out.sort_values(
        ["share", "vm_id"], ascending=[False, True], na_position="last"
    ).reset_index(drop=True)
    out.attrs["unknown_status"] = int((classes == UNKNOWN).sum())
    return out


@reusable
def _per_vm(history: pd.DataFrame, now: Any) -> pd.DataFrame:
    """The rows of :func:`latest_per_time` up to ``now``, each VM's together in time order:
    what :func:`growth` and :func:`monthly_usage` both walk, sorted once per history and time
    (a sort of every VM's every snapshot is most of either's cost)."""
    hist = latest_per_time(history, ["id"], now=now)
    return hist.sort_values(["id", "server_time"], kind="stable")


@report(histories={"history": BANDWIDTH_HISTORY})
def growth(
    history: pd.DataFrame, now: Any = None, lookback: str = DEFAULT_LOOKBACK
) -> pd.DataFrame:
    """Growth rate per VM from snapshot history (see module docstring).

    Reads ``store.history('vms', ['bandwidth_used_bytes', ...])``: server_time, id,
    bandwidth_used_bytes. Returns vm_id, rate_bytes_per_day (NA with fewer than two usable
    snapshots in the lookback), days_observed.
    """
    now = resolve_now(now)
    since = now - duration(lookback, name="lookback")
    hist = _per_vm(history, now)
    times = pd.to_datetime(hist["server_time"], utc=True)
    per_vm = hist.groupby("id", sort=False)
    grew = per_vm["bandwidth_used_bytes"].diff().astype("Float64")
    started = pd.to_datetime(per_vm["server_time"].shift(), utc=True)
    span = (times - started) / _DAY
    # a pair counts when it lies wholly in the lookback and its usage did not fall (a renewal)
    keep = ((started >= since) & (grew >= 0) & (span > 0)).fillna(False).astype(bool)
    pairs = pd.DataFrame(
        {
            "vm_id": hist["id"].astype("string"),
            "grew": grew.where(keep, 0.0).astype(float),
            "days": span.where(keep, 0.0).astype(float),
        }
    )
    out = pairs.groupby("vm_id", sort=True)[["grew", "days"]].sum().reset_index()
    rate = (out["grew"] / out["days"]).where(out["days"] > 0)
    out = pd.DataFrame(
        {"vm_id": out["vm_id"], "rate_bytes_per_day": rate, "days_observed": out["days"]}
    )
    return out.astype(
        {"vm_id": "string", "rate_bytes_per_day": "Float64", "days_observed": "Float64"}
    )


PROJECTION_COLUMNS = [
    "vm_id",
    "name",
    "status",
    "status_class",
    "used_bytes",
    "pack_bytes",
    "share",
    "rate_bytes_per_day",
    "cycle_end",
    "projected_bytes",
    "projected_share",
    "exceeds",
    "exceeds_at",
    "exceeds_on",
    "outlook",
]


@report(frames={"vms": "vms"}, histories={"history": BANDWIDTH_HISTORY})
def projection(
    vms: pd.DataFrame,
    history: pd.DataFrame,
    now: Any = None,
    lookback: str = DEFAULT_LOOKBACK,
) -> pd.DataFrame:
    """Projected usage at the end of the billing cycle, and when the pack runs out.

    Reads ``vms``: id, name, status, next_renewal_at, bandwidth_used_bytes,
    bandwidth_pack_bytes; ``history`` as :func:`growth`. Returns vm_id, name, status,
    status_class, used_bytes, pack_bytes, share, rate_bytes_per_day, cycle_end
    (next_renewal_at), projected_bytes (used + rate x days left; a VM of a known class other
    than running stays where it is; NA for a VM whose status word is unknown),
    projected_share, exceeds (the projection passes the pack), exceeds_at (when it does, or
    did: estimated back from the rate for a VM already over), exceeds_on (the UTC day of
    exceeds_at: what every surface shows, since a rate read from daily snapshots places the
    crossing to the day, not to the hour), outlook ("over", "will exceed",
    "within pack", "unknown"), sorted by exceeds_at then share. ``attrs["unknown_status"]``
    counts the VMs whose projection is unknown because their status word is.
    """
    now = resolve_now(now)
    base = usage(vms)
    live = vms.set_index(vms["id"].astype("string"))
    rates = growth(history, now=now, lookback=lookback).set_index("vm_id")["rate_bytes_per_day"]
    out = base.assign(
        rate_bytes_per_day=base["vm_id"].map(rates).astype("Float64"),
        cycle_end=pd.to_datetime(base["vm_id"].map(live["next_renewal_at"]), utc=True),
    )
    running = out["status_class"] == "running"
    days_left = ((out["cycle_end"] - now) / _DAY).clip(lower=0).astype("Float64")
    # growth of a VM whose status is unknown is unknown, never 0
    rate = out["rate_bytes_per_day"].where(running, 0.0).mask(out["status_class"] == UNKNOWN)
    used = out["used_bytes"].astype("Float64")
    pack = out["pack_bytes"].astype("Float64").where(out["pack_bytes"] > 0)
    out["projected_bytes"] = used + rate * days_left
    out["projected_share"] = out["projected_bytes"] / pack
    over = used >= pack
    out["exceeds"] = (out["projected_bytes"] > pack) | over
    cross_days = (pack - used) / out["rate_bytes_per_day"].where(out["rate_bytes_per_day"] > 0)
    out["exceeds_at"] = pd.Series(pd.NaT, index=out.index, dtype="datetime64[ns, UTC]")
    hit = out["exceeds"].fillna(False) & cross_days.notna()
    out.loc[hit, "exceeds_at"] = now + pd.to_timedelta(
        cross_days[hit].astype(float).to_numpy(), unit="D"
    )
    # the hour of an estimate from a daily rate is noise: it moved by hours from one snapshot
    # to the next while the day held
    out["exceeds_on"] = out["exceeds_at"].dt.floor("D")
    out["outlook"] = np.select(
        [
            over.fillna(False).to_numpy(dtype=bool),
            out["exceeds"].fillna(False).to_numpy(dtype=bool),
            out["projected_bytes"].notna().to_numpy(dtype=bool) & pack.notna().to_numpy(dtype=bool),
        ],
        ["over", "will exceed", "within pack"],
        default="unknown",
    )
    out = out.astype({"exceeds": "boolean", "outlook": "string"})
    out = (
        out[PROJECTION_COLUMNS]
        .sort_values(["exceeds_at", "share"], ascending=[True, False], na_position="last")
        .reset_index(drop=True)
    )
    out.attrs["unknown_status"] = base.attrs["unknown_status"]
    return out


@report(frames={"vms": "vms"}, histories={"history": BANDWIDTH_HISTORY})
def exceeding(
    vms: pd.DataFrame,
    history: pd.DataFrame,
    now: Any = None,
    lookback: str = DEFAULT_LOOKBACK,
) -> pd.DataFrame:
    """The VMs over their pack or projected to pass it this cycle, soonest first.

    Same columns as :func:`projection`.
    """
    proj = projection(vms, history, now=now, lookback=lookback)
    return proj[proj["exceeds"].fillna(False)].reset_index(drop=True)


@report(frames={"vms": "vms"})
def top_consumers(vms: pd.DataFrame, now: Any = None, n: int = 10) -> pd.DataFrame:
    """The ``n`` VMs that used the most bytes this cycle. Columns of :func:`usage`."""
    base = usage(vms)
    return (
        base.sort_values(["used_bytes", "vm_id"], ascending=[False, True], na_position="last")
        .head(n)
        .reset_index(drop=True)
    )


def _not_terminated(hist: pd.DataFrame) -> pd.DataFrame:
    if "status" not in hist:
        return hist
    return hist[(vm_classes(hist) != "terminated").to_numpy(dtype=bool)]


def _sums(frame: pd.DataFrame, unknown: int) -> dict[str, Any]:
    """The fleet sums of ``frame`` (VMs summed: used and pack bytes, NA where not read) with
    ``unknown`` VMs of unknown status left out: each sum, its ``_bound`` ("exact", or "at
    least" when VMs were left out or a value was not read), ``complete`` and ``reason``."""
    used, pack = frame["bandwidth_used_bytes"], frame["bandwidth_pack_bytes"]
    unread = {"usage": int(used.isna().sum()), "pack": int(pack.isna().sum())}
    why = []
    if unknown:
        why.append(f"{unknown:,} VM(s) of unknown status left out (they may be terminated)")
    why += [f"{n:,} VM(s) whose {what} svcnb could not read" for what, n in unread.items() if n]
    return {
        "vms": len(frame),
        "used_bytes": int(used.sum(skipna=True)),
        "used_bytes_bound": "at least" if unknown or unread["usage"] else "exact",
        "pack_bytes": int(pack.sum(skipna=True)),
        "pack_bytes_bound": "at least" if unknown or unread["pack"] else "exact",
        "unknown_status": unknown,
        "complete": not why,
        "reason": "; ".join(why) if why else pd.NA,
    }


_SUMS_TYPES = {
    "vms": "Int64",
    "used_bytes": "Int64",
    "used_bytes_bound": "string",
    "pack_bytes": "Int64",
    "pack_bytes_bound": "string",
    "unknown_status": "Int64",
    "complete": "boolean",
    "reason": "string",
}


@report(frames={"vms": "vms"})
def fleet_now(vms: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """The fleet's bandwidth now, one row: the one source of the fleet figure.

    Over the VMs :func:`usage` lists (not terminated) whose status word svcnb knows: a VM of
    unknown status may be terminated, and then is not of the fleet, so it is left out and
    counted in unknown_status. Returns vms (those summed), used_bytes and pack_bytes, each with
    its ``_bound`` ("at least" while VMs are left out or a VM's value was not read, else
    "exact"), share (used over pack; NA when no pack is known or a sum is a bound),
    unknown_status, complete and reason. :func:`fleet_total`'s row at the same snapshot has the
    same sums.
    """
    base = usage(vms)
    known = base[(base["status_class"] != UNKNOWN).to_numpy(dtype=bool)]
    row = _sums(
        known.rename(
            columns={"used_bytes": "bandwidth_used_bytes", "pack_bytes": "bandwidth_pack_bytes"}
        ),
        base.attrs["unknown_status"],
    )
    used, pack = row["used_bytes"], row["pack_bytes"]
    row["share"] = used / pack if pack and row["complete"] else pd.NA
    out = pd.DataFrame([row]).astype({**_SUMS_TYPES, "share": "Float64"})
    out.attrs["complete"] = bool(row["complete"])
    out.attrs["incomplete"] = {} if row["complete"] else {"fleet": row["reason"]}
    return out


@report(histories={"history": BANDWIDTH_HISTORY})
def fleet_total(history: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Bytes used by the fleet at each server time, against the fleet's total pack.

    Reads ``history``: snapshot_id, server_time, id, bandwidth_used_bytes,
    bandwidth_pack_bytes, status (when present, terminated VMs and VMs whose status word is
    unknown are left out, as :func:`fleet_now` leaves them out). Returns server_time and the
    columns of :func:`fleet_now` but share: one row per server time, each VM counted once (from
    the latest snapshot taken at that time).
    """
    latest = latest_per_time(history, ["id"], now=now)
    hist = latest[["server_time", "id", "bandwidth_used_bytes", "bandwidth_pack_bytes"]]
    if "status" in latest:  # classed once: terminated VMs go, those of unknown status are counted
        classes = vm_classes(latest).to_numpy(dtype=object)
        hist = hist[classes != "terminated"]
        unknown = classes[classes != "terminated"] == UNKNOWN
    else:
        unknown = np.zeros(len(hist), dtype=bool)
    summed = hist[~unknown]
    left = pd.Series(unknown, index=hist["server_time"]).groupby(level=0).sum()
    rows = [
        {"server_time": when, **_sums(at, int(left.get(when, 0)))}
        for when, at in summed.groupby("server_time", sort=True)
    ]
    # a time whose every VM was left out still has its row: nothing summed, all of it a bound
    seen = {r["server_time"] for r in rows}
    rows += [
        {"server_time": when, **_sums(summed.iloc[:0], int(n))}
        for when, n in left.items()
        if when not in seen
    ]
    rows.sort(key=lambda r: r["server_time"])
    out = pd.DataFrame(rows, columns=["server_time", *_SUMS_TYPES]).astype(_SUMS_TYPES)
    incomplete = out[~out["complete"].fillna(False).to_numpy(dtype=bool)]
    out.attrs["complete"] = incomplete.empty
    out.attrs["incomplete"] = dict(
        zip(incomplete["server_time"], incomplete["reason"], strict=True)
    )
    return out


@report(histories={"history": BANDWIDTH_HISTORY})
def monthly_usage(history: pd.DataFrame, now: Any = None) -> pd.DataFrame:
    """Bytes the fleet used in each calendar month (UTC), renewals counted through.

    A VM's counter restarts at each renewal, and renewals are staggered over the month, so the
    fleet's "used this cycle" drops and climbs; what the fleet used is the sum of each VM's
    growth between snapshots, a restart counting as growth from 0, between two snapshots of
    the same month (what grew between the last snapshot of one month and the first of the next
    may have grown in either, so it is counted in neither). Snapshots see only part of it, so
    used_bytes is "at least" (``used_bytes_bound``) when the month has a restart (the bytes
    used between the snapshot before and the restart are not seen), a usage not read, a VM
    first seen after the first snapshot (its bytes before it are not seen), a VM seen before
    the month (its bytes before the month's first snapshot are not counted), or snapshots that
    do not reach the month's first and last instant (the bytes outside them are not seen:
    so a month of daily snapshots reads "at least"). pack_bytes is the monthly packs at the
    month's last snapshot of the VMs not terminated whose status word svcnb knows, "at least"
    while VMs of unknown status are left out (counted in unknown_status) or a pack was not
    read. Reads ``history`` as :func:`fleet_total`. Returns month (first day, UTC), used_bytes,
    used_bytes_bound, pack_bytes, pack_bytes_bound, vms (those in pack_bytes), unknown_status,
    partial (the month is not fully covered by snapshots: its first or last day has none),
    complete and reason.
    """
    hist = _per_vm(history, now)
    hist = hist.assign(server_time=pd.to_datetime(hist["server_time"], utc=True))
    hist = hist.assign(month=hist["server_time"].dt.tz_localize(None).dt.to_period("M"))
    per_vm = hist.groupby("id", sort=False)
    used = hist["bandwidth_used_bytes"].astype("Float64")
    before = per_vm["bandwidth_used_bytes"].shift().astype("Float64")
    seen = (per_vm.cumcount() > 0).to_numpy(dtype=bool)
    # a pair of snapshots in two months: its growth belongs to neither for sure
    across = seen & (per_vm["month"].shift() != hist["month"]).to_numpy(dtype=bool)
    before = before.mask(across)
    # the first sighting of a VM in the month has no growth to count; a restart counts from 0
    grew = (used - before).where(used >= before, used).where(before.notna(), 0.0).fillna(0.0)
    fell = (used < before).fillna(False).to_numpy(dtype=bool)
    unread = seen & ~across & (used.isna() | before.isna()).to_numpy(dtype=bool)
    first = hist["server_time"].min()
    late = ~seen & (hist["server_time"] > first).to_numpy(dtype=bool)
    hist = hist.assign(grew=grew.astype(float), fell=fell, unread=unread, late=late)
    rows = []
    for key, part in hist.groupby("month", sort=True):
        month = cast(pd.Period, key)  # a period[M] column; pandas-stubs type a key as any scalar
        last = _not_terminated(part[part["server_time"] == part["server_time"].max()])
        unknown = (
            (vm_classes(last) == UNKNOWN).to_numpy(dtype=bool)
            if "status" in last
            else np.zeros(len(last), dtype=bool)
        )
        packs = last.loc[~unknown, "bandwidth_pack_bytes"]
        missed = {
            "counter restart(s) between snapshots: the bytes used before each were not seen": int(
                part["fell"].sum()
            ),
            "usage reading(s) svcnb could not read: the growth around each is not counted": int(
                part["unread"].sum()
            ),
            "VM(s) first seen after the first snapshot: their bytes before it are not counted": (
                int(part["late"].sum())
            ),
        }
        start = month.start_time.tz_localize("UTC")
        end = month.end_time.tz_localize("UTC")
        times = part["server_time"]
        # bytes used before the month's first snapshot or after its last are not seen
        edges = [f"before {times.min():%Y-%m-%d %H:%M}"] if times.min() > start else []
        edges += [f"after {times.max():%Y-%m-%d %H:%M}"] if times.max() < end else []
        short = {
            "VM(s) of unknown status left out of the packs (they may be terminated)": int(
                unknown.sum()
            ),
            "VM(s) whose pack svcnb could not read": int(packs.isna().sum()),
        }
        why = [f"{n} {what}" for what, n in {**missed, **short}.items() if n]
        if edges:
            why.insert(0, f"the month's bytes {' and '.join(edges)} UTC are not seen")
        rows.append(
            {
                "month": start,
                "used_bytes": int(round(part["grew"].sum())),
                "used_bytes_bound": "at least" if edges or any(missed.values()) else "exact",
                "pack_bytes": int(packs.sum(skipna=True)),
                "pack_bytes_bound": "at least" if any(short.values()) else "exact",
                "vms": int(last.loc[~unknown, "id"].nunique()),
                "unknown_status": int(unknown.sum()),
                "partial": bool(times.min() - start >= _DAY or end - times.max() >= _DAY),
                "complete": not why,
                "reason": "; ".join(why) if why else pd.NA,
            }
        )
    out = pd.DataFrame(rows, columns=list(_MONTHLY_TYPES))
    out["month"] = pd.to_datetime(out["month"], utc=True)
    return out.astype(_MONTHLY_TYPES)


_MONTHLY_TYPES = {
    "month": "datetime64[ns, UTC]",
    "used_bytes": "Int64",
    "used_bytes_bound": "string",
    "pack_bytes": "Int64",
    "pack_bytes_bound": "string",
    "vms": "Int64",
    "unknown_status": "Int64",
    "partial": "boolean",
    "complete": "boolean",
    "reason": "string",
}


@report(frames={"vms": "vms"}, histories={"history": BANDWIDTH_HISTORY})
def usage_over_time(
    vms: pd.DataFrame, history: pd.DataFrame, now: Any = None, n: int = 5
) -> pd.DataFrame:
    """Bytes used at each server time by the ``n`` top consumers of now (long form).

    Reads ``vms`` as :func:`top_consumers`; ``history``: snapshot_id, server_time, id,
    bandwidth_used_bytes. Returns server_time, vm_id, name, used_bytes (one row per VM and
    server time, from the latest snapshot taken at that time).
    """
    top = top_consumers(vms, n=n)
    names = dict(zip(top["vm_id"], top["name"], strict=True))
    hist = latest_per_time(history, ["id"], now=now)
    hist = hist[hist["id"].astype("string").isin(list(names))]
    out = pd.DataFrame(
        {
            "server_time": pd.to_datetime(hist["server_time"], utc=True),
            "vm_id": hist["id"].astype("string"),
            "used_bytes": hist["bandwidth_used_bytes"].astype("Int64"),
        }
    )
    out.insert(2, "name", out["vm_id"].map(names).astype("string"))
    return out.sort_values(["server_time", "vm_id"]).reset_index(drop=True)


# --- the bandwidth view: what every surface shows (svcnb.reports._view) -----------------------

_SHOWN = (
    "name",
    "vm_id",
    "status",
    "used_bytes",
    "pack_bytes",
    "share",
    "rate_bytes_per_day",
    "projected_share",
    "exceeds_on",
    "outlook",
)

# Each figure's spec sits right above the function computing it from the view's ground.


@dataclass(frozen=True)
class _Ground:
    """What the bandwidth figures are computed from, as of one snapshot."""

    proj: pd.DataFrame  # the projection, every VM not terminated
    fleet: pd.Series  # fleet_now's one row
    now: pd.Timestamp

    @property
    def outlook(self) -> pd.Series:
        return self.proj["outlook"].fillna("")

    @property
    def unknown(self) -> int:
        """VMs whose projection is unknown: their status word is."""
        return int(self.proj.attrs.get("unknown_status", 0))


FLEET_USED = FigureSpec(
    "fleet_used_bytes",
    "Fleet used in each VM's current cycle (GiB)",
    "bytes",
    "The sum over VMs not terminated of what each used since its own last renewal; "
    "cycles are staggered, so this is not a calendar month (that is the per-month "
    "table).",
    left_out="at least",
)


def _fleet_used(g: _Ground) -> Figure:
    return _fleet_sum(FLEET_USED, g.fleet, "used_bytes")


FLEET_PACK = FigureSpec(
    "fleet_pack_bytes",
    "Fleet packs (GiB)",
    "bytes",
    "The sum of the monthly packs of the same VMs.",
    left_out="at least",
)


def _fleet_pack(g: _Ground) -> Figure:
    return _fleet_sum(FLEET_PACK, g.fleet, "pack_bytes")


def _fleet_sum(spec: FigureSpec, fleet: pd.Series, column: str) -> Figure:
    """A sum of :func:`fleet_now`'s row as its ``_bound`` says it holds."""
    if fleet[f"{column}_bound"] == "exact":
        return Figure(spec, int(fleet[column]))
    value = int(fleet[column])
    # "at least 0" says nothing: unknown, as a figure bounded by the VMs left out reads
    shown = None if value == 0 else value
    return Figure(spec, shown, qualifier="at least", complete=False, reason=str(fleet["reason"]))


VMS_OVER = FigureSpec(
    "vms_over",
    "VMs over their pack",
    "count",
    "VMs that used more than their pack.",
    left_out="at least",
)


def _vms_over(g: _Ground) -> Figure:
    return Figure(VMS_OVER, int((g.outlook == "over").sum()))


VMS_WILL_EXCEED = FigureSpec(
    "vms_will_exceed",
    "VMs projected to exceed this cycle",
    "count",
    "VMs within their pack now whose growth over the lookback passes it before their cycle ends.",
    left_out="at least",
)


def _vms_will_exceed(g: _Ground) -> Figure:
    return Figure(VMS_WILL_EXCEED, int((g.outlook == "will exceed").sum()))


FIRST_EXCEEDS_ON = FigureSpec(
    "first_exceeds_on",
    "Next pack to run out (UTC day)",
    "date",
    "The soonest day (UTC) after the snapshot a VM within its pack is projected to pass "
    "it (the VM in brackets); a growth rate read from daily snapshots places it to the "
    "day, not the hour. VMs already over are counted above.",
    left_out="by",
)


def _first_exceeds_on(g: _Ground) -> Figure:
    proj = g.proj
    ahead = proj[(g.outlook == "will exceed").to_numpy(dtype=bool)].dropna(subset=["exceeds_at"])
    ahead = ahead[ahead["exceeds_at"] > g.now].sort_values("exceeds_at").head(1)
    return Figure(
        FIRST_EXCEEDS_ON,
        ahead["exceeds_on"].iloc[0] if len(ahead) else pd.NaT,
        empty="none this cycle" if not g.unknown else "none of the VMs known this cycle",
        detail=str(ahead["name"].iloc[0]) if len(ahead) else "",
    )


def _unknown_status(g: _Ground) -> Figure:
    return Figure(UNKNOWN_STATUS, g.unknown)


PROJECTION_TABLE = TableSpec(
    "projection",
    "All VMs, soonest over their pack first (lookback {lookback})",
    _SHOWN,
    "One row per VM not terminated.",
)
EXCEEDING_TABLE = TableSpec(
    "exceeding",
    "VMs over or projected over their pack",
    _SHOWN,
    "The rows of the projection that are over or will exceed.",
)
TOP_CONSUMERS_TABLE = TableSpec(
    "top_consumers",
    "Top {top} consumers this cycle",
    ("name", "vm_id", "status", "plan_slug", "used_bytes", "pack_bytes", "share"),
    "The VMs that used the most since their last renewal.",
)
FLEET_NOW_TABLE = TableSpec(
    "fleet_now",
    "Fleet bandwidth now (each VM's current cycle)",
    ("vms", "used_bytes", "pack_bytes", "share", "unknown_status", "complete", "reason"),
    "One row: the fleet figures above.",
)
FLEET_TOTAL_TABLE = TableSpec(
    "fleet_total",
    "Fleet bandwidth per snapshot (each VM's current cycle)",
    ("server_time", "used_bytes", "pack_bytes", "vms", "unknown_status", "complete", "reason"),
    "One row per snapshot: used and packs as each VM's cycle stood then (at least, when VMs "
    "were left out or not read).",
)
MONTHLY_USAGE_TABLE = TableSpec(
    "monthly_usage",
    "Fleet bandwidth used per calendar month (renewals counted through)",
    ("month", "used_bytes", "pack_bytes", "vms", "unknown_status", "partial", "complete", "reason"),
    "One row per calendar month: the growth of every VM's counter between snapshots (at "
    "least, where a restart, an unread usage or a new VM hid some of it), against the packs "
    "at the month's last snapshot.",
)
UNKNOWN_STATUS_TABLE = TableSpec(
    "unknown_status",
    "VMs left out: status word unknown (projection unknown)",
    _SHOWN,
    "Map their words with svcnb.vocab.extend to project them.",
)
USAGE_PLOT = PlotSpec("usage", "Used against pack, with the projection", (7.0, 4.0))
TOP_PLOT = PlotSpec("top", "Top consumers over time")
MONTHLY_PLOT = PlotSpec("monthly", "Fleet used per calendar month")

VIEW = ViewSpec(
    report="bandwidth",
    title="Bandwidth",
    figures=(
        FLEET_USED,
        FLEET_PACK,
        VMS_OVER,
        VMS_WILL_EXCEED,
        FIRST_EXCEEDS_ON,
        UNKNOWN_STATUS,
    ),
    tables=(
        PROJECTION_TABLE,
        EXCEEDING_TABLE,
        TOP_CONSUMERS_TABLE,
        FLEET_NOW_TABLE,
        FLEET_TOTAL_TABLE,
        MONTHLY_USAGE_TABLE,
        UNKNOWN_STATUS_TABLE,
    ),
    plots=(USAGE_PLOT, TOP_PLOT, MONTHLY_PLOT),
)


@sharing
def view(
    store: Any,
    at: Any = None,
    *,
    top: int = 10,
    lookback: Any = "7d",
    account: str | None = None,
) -> View:
    """The bandwidth view as of the latest snapshot at or before ``at`` (see ``VIEW``).

    ``top``: how many top consumers; ``lookback``: the span the growth rate is read over (read
    by ``svcnb.reports.duration``).
    """
    span = duration(lookback, name="lookback")
    inputs = projection.inputs(store, at, account)
    vms, history, now = inputs["vms"], inputs["history"], inputs["now"]
    proj = projection(vms, history, now=now, lookback=span)
    hit = proj["exceeds"].fillna(False).to_numpy(dtype=bool)
    months = monthly_usage(history, now=now)
    fleet = fleet_now(vms, now=now)
    # the view states the day a pack runs out (exceeds_on), never the estimate's hour: CSV and
    # JSON exports of its tables hold what the text, the page and the panel show
    shown = proj.drop(columns=["exceeds_at"])
    tables = {
        PROJECTION_TABLE: shown.drop(columns=["status_class"]),
        EXCEEDING_TABLE: shown[hit].drop(columns=["status_class"]).reset_index(drop=True),
        TOP_CONSUMERS_TABLE: top_consumers(vms, n=top),
        FLEET_NOW_TABLE: fleet,
        FLEET_TOTAL_TABLE: fleet_total(history, now=now),
        MONTHLY_USAGE_TABLE: months,
    }
    left = shown[(proj["status_class"] == UNKNOWN).to_numpy(dtype=bool)]
    tables[UNKNOWN_STATUS_TABLE] = left.drop(columns=["status_class"]).reset_index(drop=True)
    g = _Ground(proj, fleet.iloc[0], now)
    over_time = usage_over_time(vms, history, now=now, n=5)
    worst = proj.sort_values("projected_share", ascending=False).head(top)
    figures = [
        _fleet_used(g),
        _fleet_pack(g),
        _vms_over(g),
        _vms_will_exceed(g),
        _first_exceeds_on(g),
        _unknown_status(g),
    ]
    notes = view_notes(inputs, tables.values())
    if g.unknown:
        notes.insert(0, left_out_note(g.unknown) + ": their projection is unknown")
    return view_of(
        VIEW,
        now,
        figures,
        tables,
        {
            USAGE_PLOT: lambda ax: plot_usage(worst, ax=ax),
            TOP_PLOT: lambda ax: plot_top(over_time, ax=ax),
            MONTHLY_PLOT: lambda ax: plot_monthly_usage(months, ax=ax),
        },
        options={"top": top, "lookback": duration_text(span)},
        notes=notes,
        complete=not g.unknown and not any("may be incomplete" in n for n in notes),
    )
