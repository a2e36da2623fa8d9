"""What every backend shares: the 404 of a record that is not there."""

from __future__ import annotations

from .._wire import ApiFailure


def find(table: dict[str, dict], record_id: str, what: str) -> dict:
    """The record, or a 404 naming what was looked for."""
    record = table.get(record_id)
    if record is None:
        shown = record_id if len(record_id) <= 80 else record_id[:80] + "..."
        raise ApiFailure(404, f"{what} {shown!r} not found")
    return record
