"""API records -> typed pandas DataFrames, one function per resource, one schema table each.

``SCHEMAS[name]`` maps every column to ``(source path, dtype)``; ``KEYS[name]`` names the columns
that identify a row. ``API_FIELDS``/``COLUMNS`` are the same table read both ways (column -> the
API field it is read from, any API name -> its columns); ``api_record`` writes a row back at its
API fields. Datetimes are ``datetime64[ns, UTC]``, integers ``Int64``, booleans
``boolean``, text ``string``, lists ``object`` holding lists of str, money ``Float64`` plus
``*_currency`` and ``*_raw``. Empty input gives an empty frame with the same columns and dtypes.
A value that cannot be read (wrong type, a time without a zone, an unknown money form, a money
object with a key svcnb does not understand) is NA: ``frame.attrs["unreadable"]`` maps each
column to how many, and one ``UnreadableValueWarning`` per frame names them with an example
(each unknown money key once, with where it was seen). ``strict=True`` raises ``RecordError``
(naming the frame, the record id and the field) instead. Ram and disk are checked against the
sizes plans state (``check_units``; a ``UnitWarning`` when they look like another unit) and
converted from a pinned unit (``[units]`` in the config file, or ``vms(..., units=...)``).
"""

from __future__ import annotations

from svcnb.money import Money, UnknownMoneyKeyError, parse_money

from ._build import AssumptionWarning, RecordError, UnreadableValueWarning, empty, pointed
from ._deliveries import (
    MEANINGS,
    PLACED,
    UnplacedKeyWarning,
    decision_text,
    event_grouping,
    history_depth,
    pin_fields,
    unplaced_keys,
)
from ._fields import API_FIELDS, COLUMNS, api_record, column_of
from ._records import vm_records
from ._resources import (
    attachments,
    deliveries,
    firewall_rules,
    firewalls,
    networks,
    vm_firewalls,
    vm_private_networks,
    vm_ssh_keys,
    vms,
    wallet,
    webhooks,
)
from ._schema import KEYS, SCHEMAS, Field, ResourceName
from ._units import UnitCheck, UnitWarning, check_units

__all__ = [
    "API_FIELDS",
    "AssumptionWarning",
    "COLUMNS",
    "KEYS",
    "MEANINGS",
    "PLACED",
    "SCHEMAS",
    "AssumptionWarning",
    "Field",
    "Money",
    "RecordError",
    "ResourceName",
    "UnitCheck",
    "UnitWarning",
    "UnknownMoneyKeyError",
    "UnplacedKeyWarning",
    "UnreadableValueWarning",
    "api_record",
    "attachments",
    "check_units",
    "column_of",
    "deliveries",
    "empty",
    "decision_text",
    "event_grouping",
    "firewall_rules",
    "firewalls",
    "history_depth",
    "networks",
    "parse_money",
    "pin_fields",
    "pointed",
    "unplaced_keys",
    "vm_firewalls",
    "vm_private_networks",
    "vm_records",
    "vm_ssh_keys",
    "vms",
    "wallet",
    "webhooks",
]
