"""The catalog the seeded fleet is drawn from: regions, plans and OS templates.

Units as the sandbox fixes them: ram MiB, disk GiB, bandwidth GiB per month,
networkSpeed Mbit/s; prices in EUR per month.
"""

from __future__ import annotations

from decimal import Decimal

CURRENCY = "EUR"
# from an unpaid renewal to the VM's suspension (svcnb/sandbox/_life.py; the dialects state it
# as their pin ``billing.grace``: the spec shows no grace period)
GRACE_DAYS = 3

# slug, name, short name used in VM names
REGIONS: list[tuple[str, str, str]] = [
    ("eu-central-1", "Frankfurt", "fra"),
    ("eu-west-1", "Amsterdam", "ams"),
    ("us-east-1", "New York", "nyc"),
    ("ap-southeast-1", "Singapore", "sgp"),
]

# slug, name, vcpu, ram MiB, disk GiB, bandwidth GiB/month, networkSpeed Mbit/s, EUR per month
PLANS: list[tuple[str, str, int, int, int, int, int, Decimal]] = [
    ("s-1vcpu-1gb", "Starter 1 GB", 1, 1024, 25, 1000, 1000, Decimal("4.50")),
    ("s-2vcpu-4gb", "Standard 4 GB", 2, 4096, 80, 4000, 1000, Decimal("12.50")),
    ("c-4vcpu-8gb", "Compute 8 GB", 4, 8192, 160, 5000, 2000, Decimal("39.90")),
    ("m-8vcpu-32gb", "Memory 32 GB", 8, 32768, 320, 8000, 5000, Decimal("119.00")),
    ("g-16vcpu-64gb", "General 64 GB", 16, 65536, 640, 10000, 10000, Decimal("249.99")),
]

# slug, name, version (None: the template states no version)
OS_TEMPLATES: list[tuple[str, str, str | None]] = [
    ("ubuntu-24.04", "Ubuntu", "24.04"),
    ("ubuntu-22.04", "Ubuntu", "22.04"),
    ("debian-12", "Debian", "12"),
    ("rocky-9", "Rocky Linux", "9"),
    ("windows-2022", "Windows Server", "2022"),
    ("custom-iso", "Custom ISO", None),
]

ROLES = ["web", "api", "db", "cache", "worker", "ci", "vpn", "mail", "lb", "batch"]

SCOPES = [
    "vms:read",
    "vms:write",
    "firewalls:read",
    "firewalls:write",
    "networks:read",
    "networks:write",
    "billing:read",
    "webhooks:read",
    "webhooks:write",
]

EVENT_TYPES = [
    "vm.created",
    "vm.started",
    "vm.stopped",
    "vm.restarted",
    "vm.suspended",
    "vm.terminated",
    "vm.renewed",
    "billing.payment_received",
    "billing.low_balance",
    "ticket.reply",
]

VM_STATUSES = ["provisioning", "running", "stopping", "stopped", "suspended", "terminated"]
BILLING_STATUSES = ["active", "overdue", "suspended"]

GIB = 1024**3


def region_by_slug(slug: str) -> tuple[str, str, str] | None:
    return next((r for r in REGIONS if r[0] == slug), None)


def plan_by_slug(slug: str) -> tuple[str, str, int, int, int, int, int, Decimal] | None:
    return next((p for p in PLANS if p[0] == slug), None)


def price_value(amount: Decimal, form: str) -> object:
    """``amount`` in one of the three served forms: ``number``, ``string`` or ``object``."""
    if form == "number":
        return float(amount)
    if form == "string":
        return f"{amount:.2f}"
    return {"amount": f"{amount:.2f}", "currency": CURRENCY}


def public_ip(index: int) -> str:
    """The public address of the VM with this fleet index, unique per index."""
    # 100.64.0.0/10 (shared address space): never a real customer address, room for 4M VMs
    n = index + 1
    return f"100.{64 + (n >> 16) % 64}.{(n >> 8) & 255}.{n & 255}"
