"""Pull every resource through the client's public API into typed frames."""

from __future__ import annotations

from typing import Any

import pandas as pd

from svcnb import frames


def pull(client: Any, previous_vms: list[dict[str, Any]] | None) -> dict[str, pd.DataFrame]:
    """VMs with details (refreshing only those whose ``updatedAt`` moved since ``previous_vms``),
    firewalls with rules, networks with attachments, the wallet, webhooks with deliveries.

    Secrets never reach a frame: no frame has a column for them.
    """
    vms = client.vms.all(details=True, previous=previous_vms)
    firewalls = client.firewalls.list()
    rules = [r for fw in firewalls for r in client.firewalls.rules(fw["id"])]
    networks = client.networks.list()
    attachments = [
        {**a, "networkId": a.get("networkId", n["id"])}
        for n in networks
        for a in client.networks.attachments(n["id"])
    ]
    wallet = client.wallet.get()
    hooks = client.webhooks.list()
    deliveries = [
        {**d, "webhookId": h["id"]} for h in hooks for d in client.webhooks.deliveries(h["id"])
    ]
    return {
        "vms": frames.vms(vms),
        "vm_ssh_keys": frames.vm_ssh_keys(vms),
        "vm_firewalls": frames.vm_firewalls(vms),
        "vm_private_networks": frames.vm_private_networks(vms),
        "firewalls": frames.firewalls(firewalls),
        "firewall_rules": frames.firewall_rules(rules),
        "networks": frames.networks(networks),
        "attachments": frames.attachments(attachments),
        "wallet": frames.wallet(wallet),
        "webhooks": frames.webhooks(hooks),
        "deliveries": frames.deliveries(deliveries),
    }
