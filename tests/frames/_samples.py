"""Records shaped like the spec (and contracts section 1), for the frame and store tests."""

from __future__ import annotations

import copy
from typing import Any

_PRICES: list[Any] = [12.5, "12.50", {"amount": "12.50", "currency": "EUR"}]


def vm(i: int, **changes: Any) -> dict[str, Any]:
    """A full VM object as ``GET /vms/{id}`` returns it; the price form cycles with ``i``."""
    record: dict[str, Any] = {
        "id": f"vm-{i:05d}",
        "name": f"web-{i}",
        "hostname": f"web-{i}.example.test",
        "status": "running",
        "vcpu": 2,
        "ram": 4096,
        "disk": 80,
        "bandwidth": 2000,
        "networkSpeed": 1000,
        "network10gEnabled": False,
        "dailyBackupEnabled": i % 2 == 0,
        "isProtected": False,
        "ipAddress": f"203.0.113.{i % 250}",
        "region": {"slug": "fra1", "name": "Frankfurt 1"},
        "plan": {"slug": "s-2", "name": "Standard 2", "priceMonthly": 10},
        "osTemplate": {"slug": "debian-12", "name": "Debian", "version": "12"},
        "billing": {
            "priceMonthly": copy.deepcopy(_PRICES[i % 3]),
            "nextRenewalAt": "2026-12-01T00:00:00Z",
            "status": "active",
        },
        "createdAt": "2026-01-01T10:00:00Z",
        "bandwidthUsedBytes": 1_000_000 * i,
        "bandwidthPackBytes": "2147483648000",
        "sshKeys": [{"id": f"key-{i % 3}", "name": "ops", "fingerprint": f"SHA256:{i % 3}"}],
        "firewalls": [{"id": "fw-1", "name": "edge"}],
        "privateNetworks": [] if i % 2 else [{"id": "net-1", "name": "backend"}],
        "updatedAt": "2026-11-01T10:00:00Z",
    }
    record.update(changes)
    return record


def rule(i: int, firewall_id: str = "fw-1", **changes: Any) -> dict[str, Any]:
    record = {
        "id": f"rule-{i}",
        "firewallId": firewall_id,
        "position": i,
        "direction": "IN",
        "action": "ACCEPT",
        "protocol": "TCP",
        "port": "22" if i % 2 else "80,443",
        "sourceIps": ["10.0.0.0/8"] if i % 2 else [],
        "destIps": [],
        "description": f"rule {i}",
        "createdAt": "2026-01-01T00:00:00Z",
        "updatedAt": "2026-01-02T00:00:00Z",
    }
    record.update(changes)
    return record


def account(n_vms: int = 6) -> dict[str, list[dict[str, Any]]]:
    """Records for every resource, keyed like ``Store`` resources (VMs, rules, networks...)."""
    vms = [vm(i) for i in range(n_vms)]
    return {
        "vms": vms,
        "firewalls": [
            {
                "id": "fw-1",
                "name": "edge",
                "description": "public edge",
                "createdAt": "2026-01-01T00:00:00Z",
                "updatedAt": "2026-01-01T00:00:00Z",
            }
        ],
        "firewall_rules": [rule(i) for i in range(4)],
        "networks": [
            {
                "id": "net-1",
                "name": "backend",
                "region": {"slug": "fra1", "name": "Frankfurt 1"},
                "ipRange": "10.10.0.0/24",
                "createdAt": "2026-01-01T00:00:00Z",
                "updatedAt": "2026-01-01T00:00:00Z",
            }
        ],
        "attachments": [
            {
                "id": f"att-{i}",
                "vmId": f"vm-{i:05d}",
                "networkId": "net-1",
                "privateIp": f"10.10.0.{i + 2}",
                "netInterface": "eth1",
                "attachedAt": "2026-02-01T00:00:00Z",
            }
            for i in range(0, n_vms, 2)
        ],
        "wallet": [
            {
                "id": "wallet-1",
                "balance": {"amount": "150.00", "currency": "EUR"},
                "createdAt": "2026-01-01T00:00:00Z",
                "updatedAt": "2026-11-01T00:00:00Z",
            }
        ],
        "webhooks": [
            {
                "id": "wh-1",
                "url": "https://hooks.example.test/svc",
                "events": ["vm.stopped", "billing.low_balance"],
                "description": "ops",
                "isActive": True,
                "createdAt": "2026-01-01T00:00:00Z",
                "updatedAt": "2026-01-01T00:00:00Z",
                "consecutiveFailures": 0,
            }
        ],
        "deliveries": [
            {
                "id": "dlv-1",
                "webhookId": "wh-1",
                "eventId": "evt-1",
                "event": "vm.stopped",
                "url": "https://hooks.example.test/svc",
                "statusCode": None,
                "success": False,
                "attempts": 1,
                "createdAt": "2026-11-01T00:00:00Z",
                "lastAttemptAt": "2026-11-01T00:00:10Z",
                "error": "connection refused",
            }
        ],
    }
