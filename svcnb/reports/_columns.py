"""The result-column table: what each column of a report's frames holds, and its label.

Like ``frames.SCHEMAS`` for the API's resources, this is the one place a report column's kind
is declared; every surface formats a cell by its kind (``svcnb.reports._display``), never by
a list of names of its own. Kinds:

- ``money``: an amount, with the currency beside it (``<name>_currency`` or ``currency``);
- ``bytes`` and ``bytes_per_day``: shown in GiB (and GiB per day);
- ``share``: a fraction, shown in percent;
- ``days``: a count of days, shown in whole days (a runway of 1.9 days is 1 full day);
- ``time``: a UTC time, shown to the minute; ``date``: a day; ``month``: a month;
- ``count``: a whole number; ``number``: any other number;
- ``flag``: yes or no; ``text``: words, ids and names; ``list``: several values.

A column a report returns that is missing here is a test failure (``tests/reports/
test_views.py``): a new column is declared before any surface shows it.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

KINDS = frozenset(
    {
        "money",
        "bytes",
        "bytes_per_day",
        "share",
        "days",
        "time",
        "date",
        "month",
        "count",
        "number",
        "flag",
        "text",
        "list",
    }
)


class Column(NamedTuple):
    kind: str
    label: str


def _c(kind: str, label: str) -> Column:
    assert kind in KINDS, kind
    return Column(kind, label)


COLUMNS: dict[str, Column] = {
    # who and what
    "vm_id": _c("text", "VM id"),
    "id": _c("text", "VM id"),
    "vm": _c("text", "VM"),
    "name": _c("text", "Name"),
    "status": _c("text", "Status"),
    "billing_status": _c("text", "Billing"),
    "status_class": _c("text", "Status class"),
    "vm_class": _c("text", "Status class"),
    "billing_class": _c("text", "Billing class"),
    "plan_slug": _c("text", "Plan"),
    "region_slug": _c("text", "Region"),
    "ip_address": _c("text", "IP address"),
    "is_protected": _c("flag", "Protected"),
    "basis": _c("text", "Basis"),
    "outlook": _c("text", "Outlook"),
    "how": _c("text", "How"),
    "reason": _c("text", "Reason"),
    "price_source": _c("text", "Price from"),
    # money (each with a currency beside it)
    "amount": _c("money", "Amount"),
    "balance": _c("money", "Balance"),
    "balance_after": _c("money", "Balance after"),
    "balance_before": _c("money", "Balance before"),
    "balance_then": _c("money", "Balance then"),
    "balance_amount": _c("money", "Balance"),
    "monthly_amount": _c("money", "Monthly"),
    "price_monthly_amount": _c("money", "Monthly price"),
    "needed": _c("money", "Needed"),
    "owed": _c("money", "Owed now"),
    "owed_after": _c("money", "Owed after"),
    "shortfall": _c("money", "Shortfall"),
    "due": _c("money", "Renewals amount"),
    "due_after": _c("money", "Renewals after"),
    "due_before": _c("money", "Renewals before"),
    "due_saved": _c("money", "Renewals saved"),
    "topup": _c("money", "Top-up"),
    "topup_after": _c("money", "Top-up after"),
    "topup_before": _c("money", "Top-up before"),
    "topup_saved": _c("money", "Top-up saved"),
    "currency": _c("text", "Currency"),
    "unpaid_then": _c("list", "Unpaid then"),
    # counts
    "vms": _c("count", "VMs"),
    "vms_changed": _c("count", "VMs changed"),
    "renewals": _c("count", "Renewals"),
    "unpriced": _c("count", "Unpriced"),
    "unknown_status": _c("count", "Unknown status"),
    "unscheduled": _c("count", "Without renewal date"),
    "other_currency": _c("count", "Other currency"),
    "not_found": _c("count", "Not found"),
    "suspended_before": _c("count", "Suspended before"),
    "suspended_after": _c("count", "Suspended after"),
    "affected_vm_count": _c("count", "VMs"),
    "position": _c("count", "Position"),
    "events": _c("count", "Events"),
    "delivered": _c("count", "Delivered"),
    "failed": _c("count", "Failed"),
    "unknown": _c("count", "Unknown"),
    "subscriptions": _c("count", "Subscriptions"),
    "attempt_records": _c("count", "Attempt records"),
    "ok_attempt_1": _c("count", "OK at attempt 1"),
    "ok_attempt_2": _c("count", "OK at attempt 2"),
    "ok_attempt_3": _c("count", "OK at attempt 3"),
    "consecutive_failures": _c("count", "Consecutive failures"),
    "failures_to_disable": _c("count", "Failures to disable"),
    "horizon_days": _c("count", "Horizon (days)"),
    "within_days": _c("count", "Within (days)"),
    # days
    "days_until": _c("days", "In (days)"),
    "days_overdue": _c("days", "Overdue (days)"),
    "runway_days": _c("days", "Runway (days)"),
    "window_days": _c("days", "Window (days)"),
    # times
    "renewal_at": _c("time", "Renews (UTC)"),
    "next_renewal_at": _c("time", "Next renewal (UTC)"),
    "runway_at": _c("time", "Runway ends (UTC)"),
    "runway_before": _c("time", "Runway ends before (UTC)"),
    "runway_after": _c("time", "Runway ends after (UTC)"),
    "horizon_end": _c("time", "Horizon end (UTC)"),
    "low_at": _c("time", "Low from (UTC)"),
    "now": _c("time", "As of (UTC)"),
    "server_time": _c("time", "Snapshot (UTC)"),
    "exceeds_at": _c("time", "Exceeds (UTC)"),
    "exceeds_on": _c("date", "Runs out (UTC day)"),
    "cycle_end": _c("time", "Cycle ends (UTC)"),
    "failed_at": _c("time", "Renewal fails (UTC)"),
    "suspended_at": _c("time", "Suspended (UTC)"),
    "suspended_by": _c("time", "Suspended by (UTC)"),
    "last_success_at": _c("time", "Last success (UTC)"),
    "last_failure_at": _c("time", "Last failure (UTC)"),
    "last_attempt_at": _c("time", "Last attempt (UTC)"),
    "updated_at": _c("time", "Updated (UTC)"),
    "created_at": _c("time", "Created (UTC)"),
    "month": _c("month", "Month"),
    "day": _c("date", "Day"),
    "date": _c("date", "Date"),
    # bytes and shares
    "used_bytes": _c("bytes", "Used (GiB)"),
    "pack_bytes": _c("bytes", "Pack (GiB)"),
    "projected_bytes": _c("bytes", "Projected (GiB)"),
    "rate_bytes_per_day": _c("bytes_per_day", "GiB per day"),
    "share": _c("share", "Share"),
    "projected_share": _c("share", "Projected share"),
    "success_rate": _c("share", "Success rate"),
    "attempt_success_rate": _c("share", "Attempt success rate"),
    "failure_rate": _c("share", "Failure rate"),
    # flags
    "complete": _c("flag", "Complete"),
    "covered": _c("flag", "Covered"),
    "billed": _c("flag", "Billed"),
    "exceeds": _c("flag", "Exceeds"),
    "partial": _c("flag", "Partial month"),
    "is_active": _c("flag", "Active"),
    "success": _c("flag", "Success"),
    # webhooks
    "webhook_id": _c("text", "Webhook id"),
    "url": _c("text", "URL"),
    "event": _c("text", "Event"),
    "event_id": _c("text", "Event id"),
    "delivery_id": _c("text", "Delivery id"),
    "outcome": _c("text", "Outcome"),
    "attempts": _c("count", "Attempts"),
    "status_code": _c("count", "Status code"),
    "error": _c("text", "Error"),
    "consecutive_failures_bound": _c("text", "Failures in a row: bound"),
    "consecutive_failures_source": _c("text", "Failures in a row: from"),
    "failures_to_disable_bound": _c("text", "Failures to auto-disable: bound"),
    "used_bytes_bound": _c("text", "Used: bound"),
    "pack_bytes_bound": _c("text", "Pack: bound"),
    "owed_bound": _c("text", "Owed now: bound"),
    # firewall
    "finding_id": _c("text", "Finding id"),
    "severity": _c("text", "Severity"),
    "check": _c("text", "Check"),
    "firewall_id": _c("text", "Firewall id"),
    "firewall_name": _c("text", "Firewall"),
    "rule_id": _c("text", "Rule id"),
    "related_rule_id": _c("text", "Related rule"),
    "direction": _c("text", "Direction"),
    "protocol": _c("text", "Protocol"),
    "port": _c("text", "Port"),
    "action": _c("text", "Action"),
    "affected_vms": _c("list", "VMs affected"),
    "change": _c("text", "Change"),
    "columns": _c("list", "Fields"),
    "detail": _c("text", "Detail"),
    "from_snapshot": _c("text", "From snapshot"),
    "to_snapshot": _c("text", "To snapshot"),
    "action_id": _c("text", "Action id"),
    # frames the notebooks show beside the reports' (the VMs, the journal, the event log, a
    # stop plan, webhooks.reconcile): read as words, never as raw column names
    "vcpu": _c("count", "vCPUs"),
    "ram_mib": _c("count", "RAM (MiB)"),
    "time": _c("time", "Time (UTC)"),
    "accepted_at": _c("time", "Accepted (UTC)"),
    "until": _c("time", "Until (UTC)"),
    "owner": _c("text", "Owner"),
    "before": _c("text", "Before"),
    "after": _c("text", "After"),
    "decision": _c("text", "Decision"),
    "finding": _c("text", "Finding"),
    "event_type": _c("text", "Event type"),
    "type": _c("text", "Type"),
    "received_at": _c("time", "Received (UTC)"),
    "age_seconds": _c("number", "Age (s)"),
    "possible_replay": _c("flag", "Possible replay"),
    # the figures table of a view (svcnb.reports._view)
    "figure": _c("text", "Figure"),
    "label": _c("text", "Label"),
    "value": _c("text", "Value"),
    "text": _c("text", "As shown"),
    "kind": _c("text", "Kind"),
    "means": _c("text", "What it counts"),
}

MONEY_COLUMNS = frozenset(c for c, col in COLUMNS.items() if col.kind == "money")

# Values that are codes (what a report filters on and exports) and read as words wherever a frame
# is shown; a code missing here is shown as it is.
VALUES: dict[str, dict[str, str]] = {
    # svcnb.reports.firewall's checks (its module docstring says what each one finds)
    "check": {
        "exposed_sensitive_port": "Sensitive port open to any source",
        "accept_any_protocol": "Accepts any protocol",
        "shadowed": "Shadowed by an earlier rule",
        "duplicate": "Duplicate of an earlier rule",
        "unparsed_port": "Port not readable",
        "unparsed_ip": "IP entry not readable",
        "ip_list_near_cap": "IP list near its cap",
        "vm_without_firewall": "VM without a firewall",
        "firewall_unattached": "Firewall on no VM",
    },
    # svcnb.reports.webhooks.reconcile's findings
    "finding": {
        "missing_event": "No event for a change",
        "unseen_change": "Event for no change seen",
    },
}


def value_label(name: str, value: object) -> str:
    """How a value of column ``name`` reads (a firewall check's code in words); the value as
    text when it has no words of its own."""
    text = "" if value is None or value is pd.NA else str(value)
    return VALUES.get(name, {}).get(text, text)


def column(name: str) -> Column:
    """The kind and label of result column ``name``.

    A column the table does not hold (a frame a user built, the API's own columns in the VM
    grids) gets a kind and a label from its name's usual endings, as a fallback for showing it.
    """
    found = COLUMNS.get(name)
    if found is not None:
        return found
    words, unit, kind = name, "", "text"
    if words.endswith("_bytes"):
        words, unit, kind = words.removesuffix("_bytes"), " (GiB)", "bytes"
    elif words.endswith("_at") or words.endswith("_time"):
        words, unit, kind = words.removesuffix("_at"), " (UTC)", "time"
    elif words.endswith("_days"):
        words, unit, kind = words.removesuffix("_days"), " (days)", "days"
    elif words.endswith(("_gib", "_mib", "_mbps")):
        words, size = words.rsplit("_", 1)
        unit, kind = {"gib": " (GiB)", "mib": " (MiB)", "mbps": " (Mbit/s)"}[size], "number"
    elif words.endswith("_amount"):
        kind = "money"
    elif words.startswith("is_"):
        words, kind = words.removeprefix("is_"), "flag"
    words = words.removesuffix("_slug").replace("_", " ")
    return Column(kind, (words[:1].upper() + words[1:]) + unit)


def currency_of(frame: pd.DataFrame, name: str) -> pd.Series:
    """The currency beside money column ``name`` of ``frame`` (NA when the frame has none)."""
    for beside in (name.removesuffix("_amount") + "_currency", "currency"):
        if beside in frame:
            return frame[beside]
    return pd.Series(pd.NA, index=frame.index, dtype="string")
