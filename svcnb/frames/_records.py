"""Frames back to API records: the inverse of ``vms`` and its link frames.

``vm_records`` lets the client's incremental refresh start from a snapshot: the rebuilt dicts have
the VM object's keys and nesting, so ``frames.vms(vm_records(...))`` gives the frame it came from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import pandas as pd

from svcnb.money import money_value

from ._schema import SCHEMAS, TIME, ResourceName
from ._units import MIB, QUANTITIES, resolve_units

# VM key -> the link frame it is written from
_LINKS: dict[str, ResourceName] = {
    "sshKeys": "vm_ssh_keys",
    "firewalls": "vm_firewalls",
    "privateNetworks": "vm_private_networks",
}


def format_time(value: Any) -> str | None:
    """An aware timestamp as the API writes it (``2026-01-02T03:04:05Z``); NA gives None."""
    if value is None or value is pd.NaT or pd.isna(value):
        return None
    ts = pd.Timestamp(value).tz_convert("UTC")
    if ts.microsecond or ts.nanosecond:
        return ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def _plain(value: Any, dtype: str) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if dtype == TIME:
        return format_time(value)
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item"):  # numpy scalars -> Python
        return value.item()
    return value


def _column_values(frame: pd.DataFrame, column: str, dtype: str) -> list[Any]:
    series = frame[column]
    if dtype == TIME:
        return [format_time(v) for v in series]
    return [_plain(v, dtype) for v in series.astype(object)]


def _links_by_vm(frame: pd.DataFrame | None, resource: ResourceName) -> dict[Any, list]:
    out: dict[Any, list] = defaultdict(list)
    if frame is None or frame.empty:
        return out
    schema = SCHEMAS[resource]
    fields = [(c, f.path) for c, f in schema.items() if c != "vm_id"]
    columns = {c: _column_values(frame, c, schema[c].dtype) for c, _ in fields}
    for i, vm_id in enumerate(frame["vm_id"].astype(object)):
        out[vm_id].append({path: columns[c][i] for c, path in fields})
    return out


def _in_unit(value: Any, unit: str, base: str) -> int | None:
    """A column value (in ``base``) as the API serves it (in ``unit``), exactly or None."""
    if value is None:
        return None
    mib = value * MIB[base]
    return mib // MIB[unit] if mib % MIB[unit] == 0 else None


def vm_records(
    vms: pd.DataFrame,
    ssh_keys: pd.DataFrame | None = None,
    firewalls: pd.DataFrame | None = None,
    private_networks: pd.DataFrame | None = None,
    *,
    units: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Full VM dicts, shaped like ``GET /vms/{id}``, rebuilt from frames.

    Reads every column of ``SCHEMAS["vms"]`` from ``vms`` and the link frames ``vm_ssh_keys``,
    ``vm_firewalls`` and ``vm_private_networks`` (None counts as empty). A nested object
    (region, plan, osTemplate, billing) whose columns are all NA becomes null. The price goes back
    where ``price_monthly_raw`` says, under ``billing`` when the VM has billing, else ``plan``:
    a plan price shadowed by a billing price is not kept by the frame, so it is not rebuilt.
    ``ram`` and ``disk`` go back in the unit ``frames.vms`` reads them in (``units``, over the
    config file's ``[units]``), so that it gives the frame they came from; a value that is not a
    whole number of that unit becomes null.
    """
    schema = SCHEMAS["vms"]
    columns = {c: _column_values(vms, c, f.dtype) for c, f in schema.items() if not f.parse}
    raw = [money_value(v) for v in _column_values(vms, "price_monthly_raw", "string")]
    pack = _column_values(vms, "bandwidth_pack_bytes", "Int64")
    scale = {}  # API key -> (the unit it is served in, the column's unit), where they differ
    for quantity, (unit, _) in resolve_units(units).items():
        key, _, base = QUANTITIES[quantity]
        if unit is not None and unit != base:
            scale[key] = (unit, base)
    links = {
        key: _links_by_vm(frame, _LINKS[key])
        for key, frame in (
            ("sshKeys", ssh_keys),
            ("firewalls", firewalls),
            ("privateNetworks", private_networks),
        )
    }
    out = []
    for i in range(len(vms)):
        record: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for column, field in schema.items():
            if field.parse:
                continue
            value = columns[column][i]
            if "." in field.path:
                parent, leaf = field.path.split(".", 1)
                nested.setdefault(parent, {})[leaf] = value
            else:
                record[field.path] = value
        record["bandwidthPackBytes"] = None if pack[i] is None else str(pack[i])
        for key, (unit, base) in scale.items():
            record[key] = _in_unit(record.get(key), unit, base)
        for parent, values in nested.items():
            record[parent] = values if any(v is not None for v in values.values()) else None
        if raw[i] is not None:
            owner = "billing" if record.get("billing") is not None else "plan"
            if record.get(owner) is None:
                record[owner] = {}
            record[owner]["priceMonthly"] = raw[i]
        vm_id = record["id"]
        for key, by_vm in links.items():
            record[key] = by_vm.get(vm_id, [])
        out.append(record)
    return out
