"""The schema tables: for every frame, column -> (source path, dtype), and the frame's key.

A source path is dotted (``region.slug``); ``a|b`` takes the first alternative that is present and
not null. Each entry is a 2-tuple ``(path, dtype)`` as the contracts say, with a ``parse``
attribute naming the few conversions that are not implied by the dtype:

- ``decimal``: a decimal string of an integer (``bandwidthPackBytes``), an integer also accepted;
- ``money_amount`` / ``money_currency`` / ``money_raw``: the three parts of a price or balance
  (``svcnb.money.parse_money``);
- ``list``: a JSON array of strings, kept as a Python list in an ``object`` column.
"""

from __future__ import annotations

from typing import Final, Literal

# dtype names used in the tables (pandas dtype strings); Final, so a type checker sees the
# literal and picks the pandas overload that returns the matching array
STRING: Final = "string"
INT: Final = "Int64"
FLOAT: Final = "Float64"
BOOL: Final = "boolean"
TIME: Final = "datetime64[ns, UTC]"
LIST: Final = "object"
Dtype = Literal["string", "Int64", "Float64", "boolean", "datetime64[ns, UTC]", "object"]


class Field(tuple):
    """``(path, dtype)`` with a ``parse`` attribute; compares and unpacks as the plain pair."""

    parse: str

    def __new__(cls, path: str, dtype: Dtype, parse: str = "") -> Field:
        self = super().__new__(cls, (path, dtype))
        self.parse = parse
        return self

    @property
    def path(self) -> str:
        return self[0]

    @property
    def dtype(self) -> Dtype:
        return self[1]

    def __repr__(self) -> str:
        extra = f", parse={self.parse!r}" if self.parse else ""
        return f"Field({self.path!r}, {self.dtype!r}{extra})"


_PRICE = "billing.priceMonthly|plan.priceMonthly"

# The resource names, in SCHEMAS' order: what ``store.load("vms")`` and friends accept, spelled
# out so editors complete them and type checkers catch a typo. tests/panels/test_discoverable.py
# checks it names exactly the keys of SCHEMAS.
ResourceName = Literal[
    "vms",
    "vm_ssh_keys",
    "vm_firewalls",
    "vm_private_networks",
    "firewalls",
    "firewall_rules",
    "networks",
    "attachments",
    "wallet",
    "webhooks",
    "deliveries",
]

SCHEMAS: dict[ResourceName, dict[str, Field]] = {
    "vms": {
        "id": Field("id", STRING),
        "name": Field("name", STRING),
        "hostname": Field("hostname", STRING),
        "status": Field("status", STRING),
        "vcpu": Field("vcpu", INT),
        "ram_mib": Field("ram", INT),
        "disk_gib": Field("disk", INT),
        "bandwidth_gib": Field("bandwidth", INT),
        "network_speed_mbps": Field("networkSpeed", INT),
        "network_10g_enabled": Field("network10gEnabled", BOOL),
        "daily_backup_enabled": Field("dailyBackupEnabled", BOOL),
        "is_protected": Field("isProtected", BOOL),
        "ip_address": Field("ipAddress", STRING),
        "region_slug": Field("region.slug", STRING),
        "region_name": Field("region.name", STRING),
        "plan_slug": Field("plan.slug", STRING),
        "plan_name": Field("plan.name", STRING),
        "os_slug": Field("osTemplate.slug", STRING),
        "os_name": Field("osTemplate.name", STRING),
        "os_version": Field("osTemplate.version", STRING),
        "billing_status": Field("billing.status", STRING),
        "next_renewal_at": Field("billing.nextRenewalAt", TIME),
        "price_monthly_raw": Field(_PRICE, STRING, "money_raw"),
        "price_monthly_amount": Field(_PRICE, FLOAT, "money_amount"),
        "price_monthly_currency": Field(_PRICE, STRING, "money_currency"),
        "bandwidth_used_bytes": Field("bandwidthUsedBytes", INT),
        "bandwidth_pack_bytes": Field("bandwidthPackBytes", INT, "decimal"),
        "created_at": Field("createdAt", TIME),
        "updated_at": Field("updatedAt", TIME),
    },
    # link frames: "vmId" is the id of the VM the item was listed under
    "vm_ssh_keys": {
        "vm_id": Field("vmId", STRING),
        "ssh_key_id": Field("id", STRING),
        "name": Field("name", STRING),
        "fingerprint": Field("fingerprint", STRING),
    },
    "vm_firewalls": {
        "vm_id": Field("vmId", STRING),
        "firewall_id": Field("id", STRING),
        "name": Field("name", STRING),
    },
    "vm_private_networks": {
        "vm_id": Field("vmId", STRING),
        "network_id": Field("id", STRING),
        "name": Field("name", STRING),
    },
    "firewalls": {
        "id": Field("id", STRING),
        "name": Field("name", STRING),
        "description": Field("description", STRING),
        "created_at": Field("createdAt", TIME),
        "updated_at": Field("updatedAt", TIME),
    },
    "firewall_rules": {
        "id": Field("id", STRING),
        "firewall_id": Field("firewallId", STRING),
        "position": Field("position", INT),
        "direction": Field("direction", STRING),
        "action": Field("action", STRING),
        "protocol": Field("protocol", STRING),
        "port": Field("port", STRING),
        "source_ips": Field("sourceIps", LIST, "list"),
        "dest_ips": Field("destIps", LIST, "list"),
        "description": Field("description", STRING),
        "created_at": Field("createdAt", TIME),
        "updated_at": Field("updatedAt", TIME),
    },
    "networks": {
        "id": Field("id", STRING),
        "name": Field("name", STRING),
        "region_slug": Field("region.slug", STRING),
        "region_name": Field("region.name", STRING),
        "ip_range": Field("ipRange", STRING),
        "created_at": Field("createdAt", TIME),
        "updated_at": Field("updatedAt", TIME),
    },
    "attachments": {
        "id": Field("id", STRING),
        "vm_id": Field("vmId", STRING),
        "network_id": Field("networkId", STRING),
        "private_ip": Field("privateIp", STRING),
        "net_interface": Field("netInterface", STRING),
        "attached_at": Field("attachedAt", TIME),
    },
    "wallet": {
        "id": Field("id", STRING),
        "balance_raw": Field("balance", STRING, "money_raw"),
        "balance_amount": Field("balance", FLOAT, "money_amount"),
        "balance_currency": Field("balance", STRING, "money_currency"),
        "created_at": Field("createdAt", TIME),
        "updated_at": Field("updatedAt", TIME),
    },
    # the secret is deliberately absent: a frame can never carry it into the store
    "webhooks": {
        "id": Field("id", STRING),
        "url": Field("url", STRING),
        "events": Field("events", LIST, "list"),
        "description": Field("description", STRING),
        "is_active": Field("isActive", BOOL),
        "consecutive_failures": Field("consecutiveFailures", INT),
        "created_at": Field("createdAt", TIME),
        "updated_at": Field("updatedAt", TIME),
    },
    # "webhookId" is the webhook the deliveries were listed under. The spec leaves the delivery
    # record's field names "not shown": each column reads the names services use for it, and a
    # field none of them names is NA (unknown), never False or 0.
    "deliveries": {
        "id": Field("id", STRING),
        "webhook_id": Field("webhookId", STRING),
        "event_id": Field("eventId|event_id", STRING),
        "event": Field("event", STRING),
        "url": Field("url", STRING),
        "status_code": Field("statusCode|status_code|responseStatus|httpStatus|responseCode", INT),
        "success": Field("success|ok|delivered|succeeded|successful", BOOL),
        "attempts": Field("attempts|attempt|attemptCount|tries", INT),
        "error": Field("error", STRING),
        "created_at": Field("createdAt|created_at", TIME),
        "last_attempt_at": Field("lastAttemptAt|last_attempt_at|updatedAt", TIME),
    },
}

KEYS: dict[ResourceName, tuple[str, ...]] = {
    "vms": ("id",),
    "vm_ssh_keys": ("vm_id", "ssh_key_id"),
    "vm_firewalls": ("vm_id", "firewall_id"),
    "vm_private_networks": ("vm_id", "network_id"),
    "firewalls": ("id",),
    "firewall_rules": ("id",),
    "networks": ("id",),
    "attachments": ("id",),
    "wallet": ("id",),
    "webhooks": ("id",),
    "deliveries": ("id",),
}
