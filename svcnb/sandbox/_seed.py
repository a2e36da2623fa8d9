"""The seeded account: a fleet of any size with everything that hangs off it.

One ``random.Random(seed)`` drives every choice and ``State.new_id`` derives every id from the
seed, so the same seed and size give the same records, ids and bytes. The fleet is varied on
purpose: every status, all three priceMonthly forms, a few nulls the spec allows, risky and
unparseable firewall rules, networks with attachments, a wallet, actions and webhook
subscriptions (pointing at non-loopback URLs that are never called) with past deliveries.
"""

from __future__ import annotations

import base64
import hashlib
import random
from datetime import datetime, timedelta
from decimal import Decimal

from ._envelopes import iso
from ._plans_regions import GIB, OS_TEMPLATES, PLANS, REGIONS, ROLES, price_value, public_ip
from ._state import State
from .backends.vms import vm_brief

# (weight, status) of the seeded fleet
_STATUS_WEIGHTS = [
    (64, "running"),
    (15, "stopped"),
    (4, "provisioning"),
    (3, "stopping"),
    (8, "suspended"),
    (6, "terminated"),
]

# direction, action, protocol, port, sourceIps, destIps, description
_Rule = tuple[str, str, str, str, list[str], list[str], str]
_RULES: list[_Rule] = [
    ("IN", "ACCEPT", "TCP", "22", ["0.0.0.0/0"], [], "SSH from anywhere"),
    ("IN", "ACCEPT", "TCP", "22", ["10.0.0.0/8"], [], "SSH from the office VPN"),
    ("IN", "ACCEPT", "TCP", "80,443", ["0.0.0.0/0", "::/0"], [], "HTTP and HTTPS"),
    ("IN", "ACCEPT", "TCP", "3389", ["0.0.0.0/0"], [], "RDP for the Windows admins"),
    ("IN", "ACCEPT", "TCP", "5432", ["0.0.0.0/0"], [], "Postgres (temporary)"),
    ("IN", "ACCEPT", "TCP", "8000-8100", ["192.168.10.0/24"], [], "internal dashboards"),
    ("IN", "ACCEPT", "ICMP", "", [], [], "ping"),
    ("IN", "ACCEPT", "UDP", "51820", ["0.0.0.0/0"], [], "WireGuard"),
    ("IN", "ACCEPT", "TCP", "6379", ["203.0.113.7/32"], [], "Redis for the partner"),
    ("IN", "REJECT", "TCP", "25", [], [], "no inbound SMTP"),
    ("OUT", "ACCEPT", "ANY", "any", [], [], "all outbound"),
    ("OUT", "DROP", "TCP", "25", [], ["0.0.0.0/0"], "no outbound SMTP"),
]
# values that do not parse, seeded on purpose (a port name, an impossible address)
_BROKEN_RULES: list[_Rule] = [
    ("IN", "ACCEPT", "TCP", "ssh", ["10.0.0.300"], [], "legacy import, never cleaned up"),
    ("IN", "ACCEPT", "TCP", "443", ["office"], ["198.51.100.0/33"], "typo in the source"),
]
_DEFAULT_DENY: _Rule = ("IN", "DROP", "ANY", "any", [], [], "default deny")

_WEBHOOKS = [
    (
        "https://hooks.example.com/svc/ops",
        ["vm.stopped", "vm.suspended", "vm.terminated"],
        "ops pager",
        True,
        0,
    ),
    (
        "https://billing.example.org/webhooks/svc",
        ["billing.payment_received", "billing.low_balance", "vm.renewed"],
        "finance feed",
        True,
        3,
    ),
    (
        "https://old-receiver.example.net/hook",
        ["vm.created", "vm.started", "vm.stopped"],
        "decommissioned receiver",
        False,
        50,
    ),
]


def seed_account(state: State, vm_count: int) -> None:
    """Fill an empty ``state`` with the seeded account of ``vm_count`` VMs."""
    rng = random.Random(state.seed)
    epoch = state.clock.now()
    _seed_ssh_keys(state, rng, epoch)
    _seed_firewalls(state, rng, epoch, vm_count)
    _seed_networks(state, rng, epoch)
    statuses = [s for _, s in _STATUS_WEIGHTS]
    weights = [w for w, _ in _STATUS_WEIGHTS]
    for index in range(vm_count):
        status = rng.choices(statuses, weights)[0]
        vm = new_vm_record(state, rng, index, status, epoch - timedelta(days=rng.randint(1, 700)))
        state.backends.vms.add(vm)
        _link_vm(state, rng, vm)
        if status == "stopping":
            state.backends.vms.schedule_stop(vm, epoch + timedelta(seconds=rng.randint(5, 30)))
        elif status == "provisioning":
            state.backends.vms.schedule_provisioning(
                vm, epoch + timedelta(seconds=rng.randint(60, 600))
            )
    _seed_wallet(state, rng, epoch)
    _seed_actions(state, rng, epoch)
    _seed_webhooks(state, rng, epoch)


def new_vm_record(
    state: State,
    rng: random.Random,
    index: int,
    status: str,
    created: datetime,
    region: tuple[str, str, str] | None = None,
    plan: tuple | None = None,
) -> dict:
    """One VM in the spec's key order; links (keys, firewalls, networks) start empty."""
    region = region or rng.choice(REGIONS)
    plan = plan or rng.choice(PLANS)
    os_slug, os_name, os_version = rng.choice(OS_TEMPLATES)
    slug, region_name, short = region
    p_slug, p_name, vcpu, ram, disk, bandwidth, speed, price = plan
    role = ROLES[index % len(ROLES)]
    name = f"{role}-{short}-{index + 1:03d}"
    ten_g = rng.random() < 0.2
    price_form = rng.choice(["number", "string", "object"])
    # where the price is stated varies per record: billing, plan, both or neither
    placement = rng.choices(["billing", "plan", "both", "none"], [55, 20, 15, 10])[0]
    gone = status == "terminated"
    plan_obj: dict = {"slug": p_slug, "name": p_name}
    if placement in ("plan", "both"):
        plan_obj["priceMonthly"] = price_value(price, price_form)
    billing: dict | None = None
    if not gone:
        billing = {}
        if placement in ("billing", "both"):
            billing["priceMonthly"] = price_value(price, price_form)
        renew = created + timedelta(days=30 * ((state.clock.now() - created).days // 30 + 1))
        billing["nextRenewalAt"] = None if status == "provisioning" else iso(renew)
        billing["status"] = {"suspended": "suspended"}.get(
            status, "overdue" if rng.random() < 0.08 else "active"
        )
    used = int(bandwidth * GIB * rng.random() * (1.4 if rng.random() < 0.15 else 0.9))
    updated = created + timedelta(
        seconds=rng.randint(0, max(1, int((state.clock.now() - created).total_seconds()) - 1))
    )
    return {
        "id": state.new_id("vm"),
        "name": name,
        "hostname": f"{name}.{slug}.vm.example.net",
        "status": status,
        "vcpu": vcpu,
        "ram": ram,
        "disk": disk,
        "bandwidth": bandwidth,
        "networkSpeed": 10000 if ten_g else speed,
        "network10gEnabled": ten_g,
        "dailyBackupEnabled": rng.random() < 0.45,
        "isProtected": rng.random() < 0.25,
        "ipAddress": None if gone or status == "provisioning" else public_ip(index),
        "region": {"slug": slug, "name": region_name},
        "plan": plan_obj,
        "osTemplate": {"slug": os_slug, "name": os_name, "version": os_version},
        "billing": billing,
        "createdAt": iso(created),
        "bandwidthUsedBytes": 0 if status == "provisioning" else used,
        "bandwidthPackBytes": str(bandwidth * GIB),
        "sshKeys": [],
        "firewalls": [],
        "privateNetworks": [],
        "updatedAt": iso(updated),
        "_price": price,
        "_priceForm": price_form,
        "_index": index,
    }


def _seed_ssh_keys(state: State, rng: random.Random, epoch: datetime) -> None:
    for name in [
        "alice@laptop",
        "bob@workstation",
        "ci-deploy",
        "ops-break-glass",
        "carol@mac",
        "ansible",
    ]:
        key_id = state.new_id("key")
        digest = hashlib.sha256(f"{state.seed}:{key_id}".encode()).digest()
        fingerprint = "SHA256:" + base64.b64encode(digest).decode().rstrip("=")
        state.backends.vms.add_ssh_key(
            {
                "id": key_id,
                "name": name,
                "fingerprint": fingerprint,
                "createdAt": iso(epoch - timedelta(days=rng.randint(30, 900))),
            }
        )


def _seed_firewalls(state: State, rng: random.Random, epoch: datetime, vm_count: int) -> None:
    count = min(500, max(4, vm_count // 10))
    backend = state.backends.firewalls
    for i in range(count):
        fw_id = state.new_id("fw")
        created = epoch - timedelta(days=rng.randint(10, 800))
        firewall = backend.add(
            {
                "id": fw_id,
                "name": f"fw-{ROLES[i % len(ROLES)]}-{i + 1}",
                "description": f"rules for the {ROLES[i % len(ROLES)]} tier",
                "createdAt": iso(created),
                "updatedAt": iso(created + timedelta(days=rng.randint(0, 9))),
            }
        )
        picks = rng.sample(_RULES, rng.randint(2, 5))
        if i == 0 and _RULES[0] not in picks:
            picks.insert(0, _RULES[0])  # the first firewall always has SSH open to the world
        if i % 7 == 1:
            picks.append(_BROKEN_RULES[(i // 7) % len(_BROKEN_RULES)])
        picks.append(_DEFAULT_DENY)
        for position, rule in enumerate(picks):
            direction, action, protocol, port, src, dst, description = rule
            rule_id = state.new_id("rule")
            stamp = firewall["updatedAt"]
            backend.add_rule(
                {
                    "id": rule_id,
                    "firewallId": fw_id,
                    "position": 1000 if rule is _DEFAULT_DENY else (position + 1) * 10,
                    "direction": direction,
                    "action": action,
                    "protocol": protocol,
                    "port": port,
                    "sourceIps": list(src),
                    "destIps": list(dst),
                    "description": description,
                    "createdAt": stamp,
                    "updatedAt": stamp,
                }
            )


def _seed_networks(state: State, rng: random.Random, epoch: datetime) -> None:
    index = 0
    for slug, region_name, short in REGIONS:
        for k in range(2):
            net_id = state.new_id("net")
            created = epoch - timedelta(days=rng.randint(30, 600))
            state.backends.networks.add(
                {
                    "id": net_id,
                    "name": f"{short}-private-{k + 1}",
                    "region": {"slug": slug, "name": region_name},
                    "ipRange": f"10.{index + 10}.0.0/16",
                    "createdAt": iso(created),
                    "updatedAt": iso(created),
                    "_nextHost": 10,
                    "_taken": set(),
                }
            )
            index += 1


def _link_vm(state: State, rng: random.Random, vm: dict) -> None:
    keys = list(state.backends.vms.ssh_keys.values())
    for key in rng.sample(keys, rng.randint(0, 3)):
        vm["sshKeys"].append(
            {"id": key["id"], "name": key["name"], "fingerprint": key["fingerprint"]}
        )
    firewalls = list(state.backends.firewalls.firewalls.values())
    for fw in rng.sample(firewalls, rng.choice([0, 1, 1, 1, 2])):
        vm["firewalls"].append({"id": fw["id"], "name": fw["name"]})
    if vm["status"] in ("terminated", "provisioning") or rng.random() > 0.45:
        return
    nets = [
        n
        for n in state.backends.networks.networks.values()
        if n["region"]["slug"] == vm["region"]["slug"]
    ]
    for net in rng.sample(nets, rng.choice([1, 1, 1, 2])):
        state.backends.networks.attach(net, vm, None, at=vm["updatedAt"])


def _seed_wallet(state: State, rng: random.Random, epoch: datetime) -> None:
    monthly = sum(
        (vm["_price"] for vm in state.backends.vms.vms.values() if vm["billing"] is not None),
        Decimal(0),
    )
    balance = (monthly * Decimal(rng.randint(60, 250)) / 100).quantize(Decimal("0.01"))
    created = epoch - timedelta(days=800)
    state.backends.wallet.open(
        {
            "id": state.new_id("wal"),
            "createdAt": iso(created),
            "updatedAt": iso(epoch - timedelta(hours=rng.randint(1, 300))),
            "_balance": balance,
            "_balance_form": rng.choice(["number", "string", "object"]),
        }
    )


def _seed_actions(state: State, rng: random.Random, epoch: datetime) -> None:
    vms = [vm for vm in state.backends.vms.vms.values() if vm["status"] != "provisioning"]
    for vm in rng.sample(vms, len(vms) // 4):
        kind = rng.choice(["start", "restart", "stop"])
        started = epoch - timedelta(minutes=rng.randint(10, 60 * 24 * 60))
        action_id = state.new_id("act")
        state.backends.vms.add_action(
            {
                "id": action_id,
                "vmId": vm["id"],
                "type": kind,
                "status": "completed",
                "startedAt": iso(started),
                "completedAt": iso(started + timedelta(seconds=30)),
            }
        )


def _seed_webhooks(state: State, rng: random.Random, epoch: datetime) -> None:
    for url, events, description, active, failures in _WEBHOOKS:
        wh_id = state.new_id("whk")
        created = epoch - timedelta(days=rng.randint(20, 200))
        secret = hashlib.sha256(f"{state.seed}:secret:{wh_id}".encode()).hexdigest()
        state.backends.webhooks.add(
            {
                "id": wh_id,
                "url": url,
                "events": list(events),
                "description": description,
                "isActive": active,
                "createdAt": iso(created),
                "updatedAt": iso(created + timedelta(days=3)),
                "consecutiveFailures": failures,
                "_secret": "whsec_" + secret[:40],
            }
        )
        for k in range(3):
            at = epoch - timedelta(hours=rng.randint(2, 400))
            event = {
                "id": state.new_id("evt"),
                "type": events[k % len(events)],
                "createdAt": iso(at),
                "data": _past_event_data(state, rng, events[k % len(events)]),
            }
            state.events.append(event)
            # the finance feed failed only on its latest event; the old receiver on all
            ok = active and (failures == 0 or k < 2)
            for attempt in range(1, 2 if ok else 4):
                tried = at + timedelta(seconds=10 * (2 ** (attempt - 1) - 1))
                code = 200 if ok else rng.choice([500, 503, 404, None])
                state.backends.webhooks.add_delivery(
                    {
                        "id": state.new_id("dlv"),
                        "eventId": event["id"],
                        "event": event["type"],
                        "url": url,
                        "statusCode": code,
                        "success": ok,
                        "attempts": attempt,
                        "createdAt": iso(at),
                        "lastAttemptAt": iso(tried),
                        "error": None
                        if ok
                        else (
                            "timed out after 15 s" if code is None else f"receiver answered {code}"
                        ),
                        "_webhookId": wh_id,
                    }
                )
    state.events.sort(key=lambda e: e["createdAt"])


def _past_event_data(state: State, rng: random.Random, kind: str) -> dict:
    """Data of a seeded past event, shaped like the live ones."""
    vms = state.backends.vms.vms
    if kind.startswith("vm.") and vms:
        return {"vm": vm_brief(rng.choice(list(vms.values())))}
    if kind == "billing.payment_received":
        amount = Decimal(rng.randint(5, 50) * 10)
        return {
            "amount": f"{amount:.2f}",
            "balance": f"{state.backends.wallet.balance:.2f}",
            "currency": "EUR",
        }
    return {"balance": f"{state.backends.wallet.balance:.2f}", "currency": "EUR"}
