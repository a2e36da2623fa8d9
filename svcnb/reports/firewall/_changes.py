"""What changed between two snapshots: the rules added, removed or edited (:func:`rule_changes`,
:func:`changes`) and the audit's findings new, open, accepted or resolved
(:func:`finding_changes`)."""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

from svcnb.reports._replay import (
    StoreLike,
    as_of,
    read_frame,
    read_snapshots,
    snapshot_at,
    to_utc,
)
from svcnb.reports.firewall._findings import (
    FINDING_CHANGE_COLUMNS,
    FINDING_COLUMNS,
    FINDING_STATES,
    SEVERITIES,
    audit,
)
from svcnb.store import StoreError


def rule_changes(
    diff: pd.DataFrame,
    before: pd.DataFrame | None = None,
    after: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per rule added, removed or changed, from ``store.diff('firewall_rules', a, b)``.

    Reads the diff: id, change, column, before, after; ``before``/``after`` (the rules frames at
    the two snapshots, optional) give firewall_id and position. Returns rule_id, firewall_id,
    position, change, columns (list of changed columns), detail ("port: '22' -> '2222'; ...").
    """
    cols = ["rule_id", "firewall_id", "position", "change", "columns", "detail"]
    if diff.empty:
        return pd.DataFrame(columns=cols).astype(
            {"rule_id": "string", "firewall_id": "string", "position": "Int64", "change": "string"}
        )
    key = "id" if "id" in diff else diff.columns[0]
    where: dict[str, tuple[Any, Any]] = {}
    for frame in (before, after):
        if frame is not None and not frame.empty:
            for row in frame.itertuples(index=False):
                where[str(row.id)] = (row.firewall_id, row.position)
    rows = []
    for rule_id, part in diff.groupby(key, sort=True):
        change = part["change"].iloc[0]
        changed = part[part["column"].notna()] if "column" in part else part.iloc[0:0]
        columns = [str(c) for c in changed["column"]] if not changed.empty else []
        detail = "; ".join(
            f"{c}: {_show(b)} -> {_show(a)}"
            for c, b, a in zip(changed["column"], changed["before"], changed["after"], strict=True)
            if change == "changed"
        )
        fw, pos = where.get(str(rule_id), (pd.NA, pd.NA))
        rows.append(
            {
                "rule_id": str(rule_id),
                "firewall_id": fw,
                "position": pos,
                "change": change,
                "columns": columns,
                "detail": detail or change,
            }
        )
    out = pd.DataFrame(rows, columns=cols)
    return out.astype(
        {
            "rule_id": "string",
            "firewall_id": "string",
            "position": "Int64",
            "change": "string",
            "detail": "string",
        }
    )


def _show(value: Any) -> str:
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, str):
        return repr(value)
    if hasattr(value, "tolist"):
        value = value.tolist()
    return repr(value)


def changes(store: StoreLike, since: Any = None, at: Any = None) -> pd.DataFrame:
    """Rules changed between the snapshot as of ``since`` and the one as of ``at`` (latest).

    ``since`` None means the snapshot just before the one as of ``at``. Returns the columns of
    :func:`rule_changes` plus ``from_snapshot`` and ``to_snapshot``.
    """
    listed = read_snapshots(store)
    to_snap = snapshot_at(store, at, listed)
    if since is None:
        snaps = listed.sort_values(["server_time", "snapshot_id"], kind="stable")
        earlier = snaps[snaps["server_time"] < to_snap["server_time"]]
        if earlier.empty:
            raise ValueError(
                "only one snapshot at or before that time; take another or give since="
            )
        from_snap = earlier.iloc[-1]
    else:
        from_snap = snapshot_at(store, since, listed)
    a, b = from_snap["snapshot_id"], to_snap["snapshot_id"]
    diff = store.diff("firewall_rules", a, b)
    out = rule_changes(
        diff,
        read_frame(as_of(store, from_snap["server_time"]), "load", "firewall_rules"),
        read_frame(as_of(store, to_snap["server_time"]), "load", "firewall_rules"),
    )
    return out.assign(from_snapshot=a, to_snapshot=b)


def _snapshot(store: StoreLike, which: Any, snaps: pd.DataFrame) -> pd.Series:
    """The manifest row of snapshot id ``which``, else the latest at or before time ``which``."""
    if isinstance(which, str):
        hit = snaps[(snaps["snapshot_id"] == which).fillna(False).to_numpy(dtype=bool)]
        if not hit.empty:
            return hit.iloc[-1]
    return snapshot_at(store, which, snaps)


def _audit_at(store: StoreLike, snap: pd.Series | None) -> pd.DataFrame:
    if snap is None:
        return pd.DataFrame(columns=FINDING_COLUMNS)
    # as ``audit.from_store`` does it (the snapshot's own vocabulary): so in a ``Reuse`` block
    # the latest snapshot's audit is the very answer a panel already has
    return audit._run(as_of(store, snap["server_time"]), {})


def _standing(store: StoreLike, now: pd.Timestamp) -> tuple[dict[str, dict[str, Any]], str]:
    """finding_id -> the acceptance that counts at ``now`` (the latest one not revoked, if it
    ends after ``now``), and why none could be read ("" when they could)."""
    journal = getattr(store, "journal", None)
    if journal is None:
        return {}, "this store keeps no acceptances"
    try:
        table = journal.acceptances()
    except StoreError as exc:
        warnings.warn(f"accepted findings not read: {exc}", stacklevel=3)
        return {}, str(exc)
    live = table[table["revoked_at"].isna().to_numpy(dtype=bool)]
    latest: dict[str, dict[str, Any]] = {}
    for row in live.sort_values("accepted_at", kind="stable").to_dict("records"):
        latest[str(row["finding_id"])] = row  # a later acceptance replaces an earlier one
    # an acceptance ending exactly at ``now`` has ended
    return {fid: row for fid, row in latest.items() if row["until"] > now}, ""


def finding_changes(
    store: StoreLike, since: Any = None, at: Any = None, now: Any = None
) -> pd.DataFrame:
    """What is new, still open and resolved between two snapshots, and what is accepted.

    Audits the snapshot as of ``at`` (latest by default) and the one as of ``since`` (by default
    the snapshot just before it); both may be snapshot ids or times. One row per finding present
    in either, matched by ``finding_id`` (:func:`audit`): state "new" (only in the later one),
    "open" (in both), "resolved" (only in the earlier one) or "accepted" (in the later one, with
    an acceptance from ``store.journal.acceptances()`` that stands: not revoked and ending
    after ``now``; ``now`` is the ``at`` snapshot's server time unless given). An acceptance
    ending at or before ``now`` counts no more: its finding is "new" or "open" again. With no
    snapshot before ``at`` every finding is "new" and ``from_snapshot`` is NA.

    Reads ``firewall_rules``, ``vm_firewalls``, ``firewalls`` and ``vms`` of both snapshots, as
    :func:`audit`. Returns ``FINDING_CHANGE_COLUMNS``: finding_id, state, the columns of
    :func:`audit` (of the later snapshot; of the earlier one for resolved findings),
    accepted_by, accepted_reason, accepted_until, accepted_at (NA unless accepted),
    from_snapshot, to_snapshot. Rows: new, open, accepted, resolved, each worst first.
    ``attrs["acceptances"]`` says why acceptances could not be read ("" when they were);
    ``attrs["to_time"]`` is the ``at`` snapshot's server time.
    """
    snaps = store.snapshots()
    if snaps.empty:
        raise ValueError("the store holds no snapshot; take one first (svcnb snapshot)")
    snaps = snaps.sort_values(["server_time", "snapshot_id"], kind="stable")
    to_snap = _snapshot(store, at, snaps) if at is not None else snaps.iloc[-1]
    if since is None:
        earlier = snaps[(snaps["server_time"] < to_snap["server_time"]).to_numpy(dtype=bool)]
        from_snap = None if earlier.empty else earlier.iloc[-1]
    else:
        from_snap = _snapshot(store, since, snaps)
        if from_snap["server_time"] > to_snap["server_time"]:
            raise ValueError(
                f"since={since!r} is later than at={at!r}; give the earlier snapshot as since"
            )
    when = to_snap["server_time"] if now is None else to_utc(now, "now")
    before, after = _audit_at(store, from_snap), _audit_at(store, to_snap)
    accepted, trouble = _standing(store, when)

    old_ids = set(before["finding_id"].astype(str))
    new_ids = set(after["finding_id"].astype(str))
    rows = []
    for frame, is_after in ((after, True), (before, False)):
        for row in frame.to_dict("records"):
            fid = str(row["finding_id"])
            if not is_after and fid in new_ids:
                continue
            # a resolved finding is gone: an acceptance still on file for it says nothing
            acc = accepted.get(fid) if is_after else None
            if acc is not None:
                state = "accepted"
            else:
                state = ("open" if fid in old_ids else "new") if is_after else "resolved"
            row.update(
                state=state,
                accepted_by=acc["owner"] if acc else None,
                accepted_reason=acc["reason"] if acc else None,
                accepted_until=acc["until"] if acc else None,
                accepted_at=acc["accepted_at"] if acc else None,
            )
            rows.append(row)
    out = pd.DataFrame(rows, columns=FINDING_CHANGE_COLUMNS)
    out["from_snapshot"] = None if from_snap is None else from_snap["snapshot_id"]
    out["to_snapshot"] = to_snap["snapshot_id"]
    out["severity"] = pd.Categorical(out["severity"], categories=SEVERITIES, ordered=True)
    for column in ("accepted_until", "accepted_at"):
        out[column] = pd.to_datetime(out[column], utc=True).astype("datetime64[ns, UTC]")
    text = [
        c
        for c in FINDING_CHANGE_COLUMNS
        if c not in ("severity", "affected_vms", "accepted_until", "accepted_at")
    ]
    out = out.astype({**dict.fromkeys(text, "string"), "position": "Int64"})
    out["affected_vm_count"] = out["affected_vm_count"].astype("Int64")
    order = pd.Categorical(out["state"], categories=FINDING_STATES, ordered=True)
    out = (
        out.assign(_order=order)
        .sort_values(
            ["_order", "severity", "check", "firewall_id", "position", "rule_id", "vm_id"],
            kind="stable",
        )
        .drop(columns="_order")
        .reset_index(drop=True)
    )
    out.attrs["acceptances"] = trouble
    out.attrs["to_time"] = to_snap["server_time"]
    return out
