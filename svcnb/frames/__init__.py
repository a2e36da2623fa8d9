"""API records -> typed pandas DataFrames, one function per resource, one schema table each.

Columns, dtypes, unreadable values, money, units and deliveries: docs/contracts.md §4.
``KEYS[name]`` names the columns that identify a row; ``API_FIELDS``/``COLUMNS`` are the schema
table read both ways (``svcnb.frames._fields``), and ``api_record`` writes a row back at its API
fields.
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
