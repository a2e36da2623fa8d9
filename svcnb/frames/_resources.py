"""One function per frame: API records in, typed DataFrame out (docs/contracts.md §4; ``strict``
as the package says).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any

import pandas as pd

from svcnb.assumptions import Pins
from svcnb.money import keys_beside_money

from ._build import RecordError, UnreadableValueWarning, build, resolve_pins
from ._deliveries import blank_unplaced, pin_fields, warn_grouping
from ._schema import ResourceName
from ._units import apply_units


def vms(
    records: Iterable[Mapping[str, Any]],
    *,
    strict: bool = False,
    units: Mapping[str, str] | None = None,
    pins: Pins | None = None,
) -> pd.DataFrame:
    """One row per VM, from VM objects (``GET /vms`` summaries or ``GET /vms/{id}``).

    Returns ``SCHEMAS["vms"]``: region, plan, osTemplate and billing flattened; the price from
    ``billing.priceMonthly``, else ``plan.priceMonthly``, as ``price_monthly_amount`` (Float64),
    ``price_monthly_currency`` (NA unless the value stated it) and ``price_monthly_raw``;
    ``bandwidth_pack_bytes`` parsed from its decimal string.

    ``pins`` (a client's ``pins``; None: the config file's) decide what the answers may not
    prove (``svcnb.assumptions``): the money scale of an amount written as an integer (proven
    by a decimal point in the same field), the units of ram and disk, the zone of a time
    written without one. A value resting on one nothing proves or pins is NA, with one
    ``AssumptionWarning`` naming the pin.

    Units: ram and disk are read in the unit pinned (``units={"ram": "GiB"}`` wins over the
    pins) or proven by the plans' stated sizes, then converted exactly to ``ram_mib`` and
    ``disk_gib``. Where a plan states a size (``s-1vcpu-2gb``), a value fitting another unit
    makes the service's unit doubtful: NA with one ``UnitWarning`` saying how to pin it
    (``svcnb.frames.check_units`` reports the same finding without building a frame).
    Bandwidth is GiB per month, network speed Mbit/s, as the API's (not checked).
    """
    records = records if isinstance(records, Sequence) else list(records)
    pins = resolve_pins(pins)
    frame = build("vms", records, strict=strict, pins=pins)
    apply_units(frame, units, strict, stacklevel=2, pins=pins)
    _money_beside(
        frame,
        "vms",
        records,
        [
            ("billing.priceMonthly", "billing", _BILLING_KEYS),
            ("plan.priceMonthly", "plan", _PLAN_KEYS),
        ],
        "price_monthly",
        strict,
    )
    return frame


# The keys the spec lists beside each money value ("no other keys").
_BILLING_KEYS = frozenset({"priceMonthly", "nextRenewalAt", "status"})
_PLAN_KEYS = frozenset({"slug", "name", "priceMonthly"})
_WALLET_KEYS = frozenset({"id", "createdAt", "updatedAt", "balance"})


def _get(record: Any, key: str) -> Any:
    return record.get(key) if isinstance(record, Mapping) else None


def _beside_somewhere(records: Sequence[Any], key: str, spec: frozenset[str]) -> bool:
    """Whether any holder (``record[key]``, the record for "") may have a key beside its money;
    each distinct set of keys is looked at once (a fleet's objects share a handful), and only
    where one may is each record looked at. Holders that are not all plain objects or null are
    always looked at one by one."""
    if not key:
        objects: Sequence[Any] = records
    elif set(map(type, records)) <= {dict}:
        objects = list(map(dict.get, records, repeat(key)))
    else:
        objects = [_get(r, key) for r in records]
    if not set(map(type, objects)) <= {dict, type(None)}:
        return True
    shapes = set(map(tuple, filter(None, objects)))  # an empty object holds no key
    return any(keys_beside_money(dict.fromkeys(shape), spec) for shape in shapes)


def _money_beside(
    frame: pd.DataFrame,
    resource: str,
    records: Sequence[Any],
    holders: list[tuple[str, str, frozenset[str]]],
    column: str,
    strict: bool,
) -> None:
    """Make ``<column>_amount`` and ``_currency`` NA in rows whose money sits beside a key that
    may change what it means (``svcnb.money.keys_beside_money``): understood or unknown.
    One ``UnreadableValueWarning`` names the keys; ``attrs["unreadable"]`` counts the rows.

    ``holders`` are (money path, the record's key holding it or "" for the record itself, the
    keys the spec lists there)."""
    if not any(_beside_somewhere(records, key, spec) for _, key, spec in holders):
        return
    seen: dict[str, int] = {}
    rows = []
    for i, record in enumerate(records):
        found = [
            f"{where.rsplit('.', 1)[0]}.{name}" if "." in where else name
            for where, key, spec in holders
            for name in keys_beside_money(_get(record, key) if key else record, spec)
        ]
        if found:
            rows.append(i)
            for key in found:
                seen[key] = seen.get(key, 0) + 1
    if not rows:
        return
    if strict:
        record_id = frame["id"].iloc[rows[0]] if "id" in frame else None
        raise RecordError(
            resource, record_id, next(iter(seen)), "a key beside the money svcnb cannot read"
        )
    for suffix in ("_amount", "_currency"):
        frame.loc[frame.index[rows], column + suffix] = pd.NA
    counts = dict(frame.attrs.get("unreadable", {}))
    counts[f"{column}_amount"] = counts.get(f"{column}_amount", 0) + len(rows)
    frame.attrs["unreadable"] = counts
    named = ", ".join(f"{key!r} ({n} record(s))" for key, n in seen.items())
    warnings.warn(
        f"svcnb.frames.{resource}: {column}_amount is NA (unknown) where the money sits beside "
        f"a key svcnb does not read for it: {named}. Such a key may change what the amount "
        "means (a currency beside a number of cents, a unit, a scale); the raw value is kept "
        f"in {column}_raw",
        UnreadableValueWarning,
        stacklevel=3,
    )


def _links(
    resource: ResourceName, vm_records: Iterable[Mapping[str, Any]], field: str, strict: bool
) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    ids: list[str] = []
    skipped: list[tuple[Any, str, Any]] = []

    def skip(record_id: Any, where: str, problem: str, value: Any) -> None:
        if strict:
            raise RecordError(resource, record_id, where, problem)
        skipped.append((record_id, f"{where}: {problem}", value))

    for i, vm in enumerate(vm_records):
        if not isinstance(vm, Mapping):
            skip(i, "<record>", f"expected a VM object, got {vm!r:.40}", vm)
            continue
        items = vm.get(field)
        if items is None:  # a summary from GET /vms: no links listed
            continue
        if not isinstance(items, list):
            skip(vm.get("id"), field, "expected a list of objects", items)
            continue
        for item in items:
            if not isinstance(item, Mapping):
                skip(vm.get("id"), field, f"expected an object: {item!r:.40}", item)
                continue
            rows.append({**item, "vmId": vm.get("id")})
            ids.append(f"{vm.get('id')}/{item.get('id')}")
    return build(resource, rows, ids, strict=strict, skipped=skipped)


def vm_ssh_keys(records: Iterable[Mapping[str, Any]], *, strict: bool = False) -> pd.DataFrame:
    """One row per (VM, SSH key) from full VM objects: vm_id, ssh_key_id, name, fingerprint."""
    return _links("vm_ssh_keys", records, "sshKeys", strict)


def vm_firewalls(records: Iterable[Mapping[str, Any]], *, strict: bool = False) -> pd.DataFrame:
    """One row per (VM, firewall) from full VM objects: vm_id, firewall_id, name."""
    return _links("vm_firewalls", records, "firewalls", strict)


def vm_private_networks(
    records: Iterable[Mapping[str, Any]], *, strict: bool = False
) -> pd.DataFrame:
    """One row per (VM, private network) from full VM objects: vm_id, network_id, name."""
    return _links("vm_private_networks", records, "privateNetworks", strict)


def firewalls(
    records: Iterable[Mapping[str, Any]], *, strict: bool = False, pins: Pins | None = None
) -> pd.DataFrame:
    """One row per firewall: id, name, description, created_at, updated_at."""
    return build("firewalls", records, strict=strict, pins=pins)


def firewall_rules(
    records: Iterable[Mapping[str, Any]], *, strict: bool = False, pins: Pins | None = None
) -> pd.DataFrame:
    """One row per rule: id, firewall_id, position, direction, action, protocol, port,
    source_ips and dest_ips (lists of str; ``[]`` means any), description, created_at,
    updated_at. Values are kept as sent (a port ``"ssh"`` stays), for the audit to judge."""
    return build("firewall_rules", records, strict=strict, pins=pins)


def networks(
    records: Iterable[Mapping[str, Any]], *, strict: bool = False, pins: Pins | None = None
) -> pd.DataFrame:
    """One row per private network: id, name, region_slug, region_name, ip_range, created_at,
    updated_at."""
    return build("networks", records, strict=strict, pins=pins)


def attachments(
    records: Iterable[Mapping[str, Any]], *, strict: bool = False, pins: Pins | None = None
) -> pd.DataFrame:
    """One row per attachment: id, vm_id, network_id, private_ip, net_interface, attached_at."""
    return build("attachments", records, strict=strict, pins=pins)


def wallet(
    records: Mapping[str, Any] | Iterable[Mapping[str, Any]],
    *,
    strict: bool = False,
    pins: Pins | None = None,
) -> pd.DataFrame:
    """One row per wallet (``GET /wallet`` gives one; a single dict is accepted): id,
    balance_raw, balance_amount, balance_currency, created_at, updated_at."""
    if isinstance(records, Mapping):
        records = [records]
    records = records if isinstance(records, Sequence) else list(records)
    frame = build("wallet", records, strict=strict, pins=pins)
    _money_beside(frame, "wallet", records, [("balance", "", _WALLET_KEYS)], "balance", strict)
    return frame


def webhooks(
    records: Iterable[Mapping[str, Any]], *, strict: bool = False, pins: Pins | None = None
) -> pd.DataFrame:
    """One row per webhook subscription: id, url, events (list of str), description, is_active,
    consecutive_failures, created_at, updated_at. The secret is never a column."""
    return build("webhooks", records, strict=strict, pins=pins)


def deliveries(
    records: Iterable[Mapping[str, Any]],
    webhook_id: str | None = None,
    *,
    strict: bool = False,
    fields: Mapping[str, str] | None = None,
    pins: Pins | None = None,
) -> pd.DataFrame:
    """One row per delivery attempt: id, webhook_id, event_id, event, url, status_code (NA when
    no answer came), success, attempts, error, created_at, last_attempt_at.

    Field names vary by service (``status_code``, ``responseStatus``, ``ok``, ``delivered``,
    ``attemptCount``, ``tries``, ``event_id``, ...; see ``SCHEMAS["deliveries"]``); a field
    none of the known names gives is NA: ``success`` NA means unknown, not failed. A record
    carrying a key svcnb cannot place that could be a count, a status or a time (``passed``,
    ``result``, ``tries_made``, ``sentAt``) has what that key could be NA as well, even where a
    known name gave a value: one ``UnplacedKeyWarning`` per frame names the keys, and
    ``attrs["unplaced"]`` maps each to the columns it blanked (``svcnb.frames._deliveries``).

    A served key the names do not place can be pinned to its field: ``fields={"tryCount":
    "attempts"}``, over the config file's ``[deliveries.fields]``. Records without an event id
    leave how attempts group into events unknown unless ``[deliveries] records = "event"``
    pins each record as one event: one ``AssumptionWarning`` then says so
    (``svcnb.frames.event_grouping``).

    The API's delivery records do not name their webhook: pass ``webhook_id`` for records listed
    under one webhook, or give each record a ``webhookId`` key.
    """
    if webhook_id is not None:
        records = [{**r, "webhookId": webhook_id} for r in records]
    records = records if isinstance(records, list) else list(records)
    records, _ = pin_fields(records, fields, pins)
    frame = build("deliveries", records, strict=strict, pins=pins)
    frame = blank_unplaced(frame, records, strict=strict)
    warn_grouping(frame, pins=pins)
    return frame
