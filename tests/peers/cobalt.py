# ruff: noqa: E501  (the choices are one per line, as `Peer.choices()` reads them)
"""cobalt: a blind peer of the VM-hosting public API, written from the spec (api-spec.md) alone.

A small stateful HTTP server (standard library only) that answers the public API the way an
OpenStack-flavoured deployment billed through Stripe might. It models, point by point: OpenStack
Nova/Neutron (marker paging with a `links` array of {rel, href}, Nova server status words, naive
UTC `updated_at` times, policy texts, 413/409/403-quota faults), Stripe (money as integer minor
units with a lowercase currency, zero-decimal JPY, subscription status words), DigitalOcean (a
firewall port "0" meaning every port, ICMP rules with port "0") and GitHub's hook deliveries
(one record per attempt, only the newest kept). Every point the spec leaves "not shown" is
decided below, one per line as "- point: choice"; `Peer.choices()` returns exactly these lines.

- base_path: only /api/v1/api/public/v1 (the published server entry); anything under /api/public/v1 alone answers 404 "Not Found" in the failure envelope, naming nothing
- paging: OpenStack marker style; query `limit` (default and silent maximum 25) and `marker` (id of the last record of the window); reply {success, data: [...], links: [{rel: "self", href}, {rel: "next", href}]} with absolute hrefs; `next` is present whenever the server's window was full, so the last page may carry one and the page after it is empty with none; `page`, `perPage`, `offset` and every other parameter are ignored (page=2 serves the first page again); an unknown marker is 400
- hidden_records: VMs purged after deletion stay in the server's ordered window but are never shown, so a page whose whole window was purged comes back EMPTY and still carries a `next` link (a batch of 60 purged CI runners sits mid-list); the next link's marker may then name a purged VM
- list_order: VMs by createdAt descending then id descending (Nova default); firewalls, networks by name; rules by position; attachments oldest first; webhooks oldest first; deliveries newest first
- fleet_changes_while_read: after the first page of GET /vms has been served, the next GET /vms (whatever it asks) first purges the oldest running VM (on the last page, not yet served) and creates a new VM (BUILD, newest, so it sorts before any marker); GET /vms/{id} of the purged one is then 404
- vm_list_items: GET /vms items are the full VM object (Nova servers/detail style)
- vm_status_words: Nova words: BUILD=provisioning, ACTIVE=running, SHUTOFF=stopped, SUSPENDED=stopped (the user suspended the VM to disk, Nova sense: NOT a billing suspension), LOCKED=suspended (locked by the provider for non-payment), SOFT_DELETED=terminated (deleted, still reclaimable); a stop moves ACTIVE to SHUTOFF at once
- billing_status_words: Stripe subscription words: trialing=active (free trial, not owing), active=active, past_due=overdue, unpaid=suspended (retries exhausted; the VM is LOCKED); `billing` is null for SOFT_DELETED VMs
- money: Stripe style {"amount": <integer in the currency's minor unit>, "currency": "<lowercase ISO code>"} for billing.priceMonthly and the wallet balance, nothing stating the scale: {"amount": 1590, "currency": "eur"} is 15.90 EUR, {"amount": 2480, "currency": "jpy"} is 2480 JPY (JPY has no minor unit)
- currency: account and wallet in EUR; VMs in nyc-a are billed in USD, in tyo-a in JPY
- price_location: only billing.priceMonthly; plan.priceMonthly is never sent; 4 VMs on a prepaid contract have billing without priceMonthly (no price)
- time_format: createdAt, nextRenewalAt, attachedAt, rule and webhook times are UTC with Z and no fraction; VM `updatedAt` is naive UTC with microseconds (OpenStack updated_at style, e.g. 2027-01-30T11:02:45.123456), no zone stated
- clock: fixed at 2027-02-11T08:41:19Z; the Date header says that instant
- ram_unit: GiB (flavor g1.small has ram 4); flavor names do not state sizes
- disk_unit: MiB (a 50 GiB disk is 51200)
- bandwidth_unit: `bandwidth` in TB (10^12 bytes) per month; networkSpeed in Gbit/s (1 or 10)
- bandwidth_used: bandwidthUsedBytes a JSON integer; bandwidthPackBytes a decimal string of bytes
- next_renewal: trial end for BUILD and trialing VMs; in the past for past_due and unpaid
- ids: UUID v4 strings for every resource; stop action ids are "req-<uuid>"
- scopes: firewalls and networks need network:read / network:write; GET /wallet needs billing:read; the full token holds vms:read vms:write webhooks:read webhooks:write network:read network:write billing:read
- status_401: missing header -> "Authentication required"; unknown token -> "The request you have made requires authentication."
- status_403: "Policy doesn't allow SCOPE to be performed." (Nova policy text); also 403 for the webhook quota
- rate_limit: fixed 60 s windows per token (600) and, for unauthenticated requests, per IP (100); X-RateLimit-Reset = seconds to the end of the current window; a 429 is not counted
- text_429: "Rate limit exceeded for bucket per-token (600 requests per minute); retry after N seconds" (per IP: bucket per-ip, 100 per minute)
- stop: success 202 {actionId}; a VM not ACTIVE is 409 "Cannot 'stop' instance ID while it is in vm_state X"; unknown VM 404
- firewall_rule_port: "22", "80,443", "8000-9000"; "0" means every port (DigitalOcean); ICMP rules always have port "0"
- firewall_rule_ips: sourceIps and destIps always arrays ([] on the side a rule does not restrict); 0.0.0.0/0 and ::/0 for anywhere; description "" when none
- patch_rule: any of position, port, sourceIps, destIps, description; direction, action, protocol or any other key 400 "Additional properties are not allowed ('KEY' was unexpected)"; {} is a no-op 200; bad types or values 400; firewall "legacy-dmz" fails the upstream sync -> 502 AFTER storing the change (re-read shows the new values)
- networks: records {id, name, region, cidr, createdAt}; attachment list items include the `vm` object
- attach: success 201; vmId required; privateIp optional (inside the cidr, else 400; taken 409); region mismatch 400; already attached 409; SOFT_DELETED VM 409; unknown network or VM 404
- detach: success 200 {vmId, networkId}; VM not attached 404 "Port could not be found"
- wallet: {id, createdAt, updatedAt, balance}
- webhook_record: {id, url, events, description, isActive, createdAt, updatedAt}; no failure count
- webhook_create: 201 with `secret` (hex); url must be https, events known (400); over 10 active: 403 "Quota exceeded for webhooks: Requested 1, but already used 10 of 10 webhooks"
- webhook_patch: 200 with the record; isActive true re-enables
- delivery_record: one record per ATTEMPT with no event id or event type: {id, deliveredAt, statusCode (null when no answer came), ok, attempt (1..3), durationMs}
- delivery_history: only the newest 30 attempts per subscription are served, with nothing saying older ones exist
- consecutive_failures: counted in failed attempts; the pager webhook has 41 in a row (13 events failed thrice, a 14th twice so far), so all 30 served records are failures
- validation: malformed JSON, wrong types and out-of-range values 400; conflicts 409
- other_errors: unknown path 404, wrong method 405 (with Allow); every failure uses the failure envelope
- idempotency: Idempotency-Key is accepted and ignored (no replay)
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import math
import random
import re
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

NOW = datetime(2027, 2, 11, 8, 41, 19, tzinfo=UTC)
CANON, SHORT = "/api/v1/api/public/v1", "/api/public/v1"
PAGE_MAX, KEEP_ATTEMPTS = 25, 30
DAY = 86400
EXPONENT = {"EUR": 2, "USD": 2, "JPY": 0}
# slug: (name, currency)
REGIONS = {
    "fra-a": ("Frankfurt A", "EUR"),
    "ams-a": ("Amsterdam A", "EUR"),
    "nyc-a": ("New York A", "USD"),
    "tyo-a": ("Tokyo A", "JPY"),
}
# flavor: (name, vcpu, ram GiB, disk GiB, pack TB, monthly price in minor units per currency)
FLAVORS = {
    "t1.nano": ("Tiny Nano", 1, 1, 10, 1, {"EUR": 400, "USD": 450, "JPY": 680}),
    "t1.micro": ("Tiny Micro", 1, 2, 25, 1, {"EUR": 790, "USD": 890, "JPY": 1280}),
    "g1.small": ("General Small", 2, 4, 50, 2, {"EUR": 1590, "USD": 1790, "JPY": 2480}),
    "g1.medium": ("General Medium", 4, 8, 100, 3, {"EUR": 3190, "USD": 3590, "JPY": 4980}),
    "g1.large": ("General Large", 8, 16, 200, 4, {"EUR": 6390, "USD": 7190, "JPY": 9980}),
    "m1.xlarge": ("Memory XLarge", 8, 64, 400, 5, {"EUR": 18950, "USD": 20990, "JPY": 29800}),
}
IMAGES = [
    ("ubuntu-22.04", "Ubuntu", "22.04"),
    ("debian-12", "Debian", "12"),
    ("almalinux-9", "AlmaLinux", "9.3"),
    ("cirros", "CirrOS", None),
]
# internal status: (wire word, canonical class word of the truth)
VM_WORDS = {
    "build": ("BUILD", "provisioning"),
    "active": ("ACTIVE", "running"),
    "shutoff": ("SHUTOFF", "stopped"),
    "hibernated": ("SUSPENDED", "stopped"),
    "locked": ("LOCKED", "suspended"),
    "soft_deleted": ("SOFT_DELETED", "terminated"),
}
BILL_CLASS = {
    "trialing": "active",
    "active": "active",
    "past_due": "overdue",
    "unpaid": "suspended",
}
EVENTS = [
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
ALL_SCOPES = {
    "vms:read",
    "vms:write",
    "webhooks:read",
    "webhooks:write",
    "network:read",
    "network:write",
    "billing:read",
}
PORT_RE = re.compile(r"^(0|\d{1,5}(-\d{1,5})?(,\d{1,5}(-\d{1,5})?)*)$")


def z_time(dt):
    return None if dt is None else dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def naive_time(dt):  # OpenStack's updated_at: UTC, microseconds, no zone
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")


def truth_time(dt):
    return None if dt is None else dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def wire_money(minor, currency):
    return {"amount": minor, "currency": currency.lower()}


def truth_money(minor, currency):
    amount = Decimal(minor).scaleb(-EXPONENT[currency])
    return {"amount": str(amount), "currency": currency}


def canon_port(rule):
    if rule["protocol"] == "ICMP":
        return None
    return "any" if rule["port"] == "0" else rule["port"]


class ApiError(Exception):
    def __init__(self, status, message, headers=None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


class Account:
    """The account's state, canonical inside; every method runs with the peer's lock held."""

    def __init__(self, seed):
        rng = self.rng = random.Random(seed)
        self.uid = lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))

        def secs(lo, hi):
            return timedelta(seconds=rng.randint(lo, hi))

        self.listed = self.changed = False
        self.ssh_keys = [
            {
                "id": self.uid(),
                "name": n,
                "fingerprint": ":".join(f"{rng.randrange(256):02x}" for _ in range(16)),
            }
            for n in ("ops-laptop", "deploy-bot", "breakglass")
        ]
        self._seed_firewalls(secs)
        self._seed_vms(secs)
        self._seed_networks(secs)
        self.wallet = {
            "id": self.uid(),
            "created": NOW - timedelta(days=840),
            "updated": NOW - secs(3600, 3 * DAY),
            "minor": 231812,
        }
        self._seed_webhooks(secs)
        self.tokens = {
            "svc_" + rng.randbytes(20).hex(): set(ALL_SCOPES),
            "svc_" + rng.randbytes(20).hex(): {"vms:read"},
        }

    # ---- seeding
    def _seed_firewalls(self, secs):
        anywhere = ["0.0.0.0/0", "::/0"]
        spec = {
            "web-edge": [
                ("IN", "ACCEPT", "TCP", "80,443", anywhere, [], "http(s)"),
                ("IN", "ACCEPT", "ICMP", "0", ["0.0.0.0/0"], [], "ping"),
                ("IN", "DROP", "ANY", "0", anywhere, [], "deny the rest"),
                ("OUT", "ACCEPT", "ANY", "0", [], anywhere, ""),
            ],
            "ssh-bastion": [
                ("IN", "ACCEPT", "TCP", "22", ["198.51.100.0/24"], [], "office"),
                ("IN", "ACCEPT", "TCP", "22", ["0.0.0.0/0"], [], "temporary: anywhere"),
                ("IN", "REJECT", "UDP", "0", ["0.0.0.0/0"], [], ""),
            ],
            "db-internal": [
                ("IN", "ACCEPT", "TCP", "5432", ["10.40.0.0/24"], [], "postgres"),
                ("IN", "ACCEPT", "TCP", "6379", ["10.40.0.0/24", "10.41.0.0/24"], [], "redis"),
                ("IN", "ACCEPT", "TCP", "8000-9000", ["10.40.0.0/16"], [], "app ports"),
            ],
            "legacy-dmz": [
                ("IN", "ACCEPT", "TCP", "0", ["0.0.0.0/0"], [], "everything over tcp"),
                ("IN", "ACCEPT", "TCP", "21", ["0.0.0.0/0"], [], "ftp"),
                ("OUT", "ACCEPT", "TCP", "25", [], ["0.0.0.0/0"], "smtp out"),
            ],
        }
        self.firewalls, self.rules = [], []
        for name, rules in spec.items():
            created = NOW - secs(300 * DAY, 900 * DAY)
            fw = {"id": self.uid(), "name": name, "created": created}
            fw["broken"] = name == "legacy-dmz"
            self.firewalls.append(fw)
            for i, (d, a, p, port, src, dst, desc) in enumerate(rules):
                rc = created + secs(60, 60 * DAY)
                self.rules.append(
                    {
                        "id": self.uid(),
                        "firewallId": fw["id"],
                        "position": 100 * (i + 1),
                        "direction": d,
                        "action": a,
                        "protocol": p,
                        "port": port,
                        "sourceIps": list(src),
                        "destIps": list(dst),
                        "description": desc,
                        "created": rc,
                        "updated": rc + secs(0, 90 * DAY),
                    }
                )
        self.firewalls.sort(key=lambda f: f["name"])

    def _new_vm(self, status, region, flavor, created, price, billing):
        rng = self.rng
        name_, vcpu, ram, disk, tb, _ = FLAVORS[flavor]
        n = len(self.vms)
        role = ["web", "api", "db", "queue", "worker", "cache", "search", "vpn"][n % 8]
        name = f"{role}-{region}-{n:03d}"
        pack = tb * 10**12
        speed = rng.choice([1, 1, 1, 10])
        return {
            "id": self.uid(),
            "name": name,
            "hostname": f"{name}.compute.cobalt.example",
            "status": status,
            "vcpu": vcpu,
            "ram_gib": ram,
            "disk_gib": disk,
            "tb": tb,
            "speed": speed,
            "backup": rng.random() < 0.3,
            "protected": rng.random() < 0.2,
            "ip": None
            if status in ("build", "soft_deleted")
            else f"198.18.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
            "region": region,
            "flavor": flavor,
            "image": None if rng.random() < 0.06 else rng.choice(IMAGES),
            "price": price,  # (minor, currency) or None
            "billing": billing,  # {"status", "renew"} or None
            "created": created,
            "updated": created
            + timedelta(microseconds=rng.randint(1, 10**6))
            + (NOW - created) * rng.random() * 0.9,
            "used": 0 if status == "build" else int(pack * rng.random() * 0.6),
            "pack": pack,
            "ssh": rng.sample(self.ssh_keys, rng.randint(0, 2)),
            "fw_ids": [f["id"] for f in rng.sample(self.firewalls, rng.choice([0, 1, 1, 2]))],
            "hidden": False,
        }

    def _seed_vms(self, secs):
        rng = self.rng
        statuses = (
            ["build"] * 4
            + ["active"] * 41
            + ["shutoff"] * 8
            + ["hibernated"] * 5
            + ["locked"] * 4
            + ["soft_deleted"] * 3
        )
        regions = ["fra-a"] * 30 + ["ams-a"] * 18 + ["nyc-a"] * 10 + ["tyo-a"] * 7
        rng.shuffle(statuses)
        rng.shuffle(regions)
        billable = [i for i, s in enumerate(statuses) if s in ("active", "shutoff", "hibernated")]
        rng.shuffle(billable)
        past_due, prepaid = set(billable[:4]), set(billable[4:8])
        batch = NOW - timedelta(days=20)  # the purged CI runners were made here
        self.vms = []
        for i, (st, region) in enumerate(zip(statuses, regions, strict=True)):
            if st == "build":
                created = NOW - secs(120, 3000)
            else:
                created = NOW - secs(2 * DAY, 700 * DAY)
                if abs((created - batch).total_seconds()) < 3 * 3600:
                    created -= timedelta(days=2)
            flavor = rng.choice(list(FLAVORS))
            currency = REGIONS[region][1]
            minor = FLAVORS[flavor][5][currency]
            if rng.random() < 0.2:
                minor = minor * 9 // 10
            billing, price = None, (minor, currency)
            if st == "soft_deleted":
                price = None
            elif st == "locked":
                billing = {"status": "unpaid", "renew": NOW - secs(8 * DAY, 40 * DAY)}
            elif st == "build":
                billing = {"status": "trialing", "renew": created + timedelta(days=14)}
            elif i in past_due:
                billing = {"status": "past_due", "renew": NOW - secs(DAY, 10 * DAY)}
            else:
                status = "trialing" if created > NOW - timedelta(days=14) else "active"
                billing = {"status": status, "renew": NOW + secs(3600, 31 * DAY)}
            if i in prepaid:
                price = None
            self.vms.append(self._new_vm(st, region, flavor, created, price, billing))
        for k in range(60):  # deleted CI runners: purged, never shown, still in the window
            vm = self._new_vm(
                "active", "fra-a", "t1.micro", batch + timedelta(seconds=30 * k), None, None
            )
            vm["name"] = vm["hostname"] = f"ci-runner-{k:02d}"
            vm["hidden"] = True
            self.vms.append(vm)
        self._sort_vms()

    def _sort_vms(self):
        self.vms.sort(key=lambda v: (v["created"], v["id"]), reverse=True)

    def _seed_networks(self, secs):
        self.networks = [
            {
                "id": self.uid(),
                "name": n,
                "region": r,
                "cidr": c,
                "created": NOW - secs(100 * DAY, 400 * DAY),
            }
            for n, r, c in (
                ("backend-fra", "fra-a", "10.40.0.0/24"),
                ("edge-nyc", "nyc-a", "10.41.0.0/24"),
            )
        ]
        self.networks.sort(key=lambda n: n["name"])
        self.attachments = []
        for net, count in zip(self.networks, (4, 2), strict=True):
            cands = [
                v
                for v in self.visible()
                if v["region"] == net["region"] and v["status"] in ("active", "shutoff")
            ]
            for v in self.rng.sample(cands, count):
                self._attach(net, v, None, NOW - secs(DAY, 80 * DAY))
        self.attachments.sort(key=lambda a: a["attached"])

    def _seed_webhooks(self, secs):
        rng = self.rng
        plans = [
            (
                "https://hooks.example.org/cobalt",
                ["vm.created", "vm.stopped", "vm.terminated", "vm.suspended"],
                True,
                ["s"] * 12 + ["fs"] + ["s"] * 7 + ["ffs"] + ["s"] * 5,
            ),
            (
                "https://pager.example.net/in/cobalt",
                ["vm.stopped", "billing.low_balance", "vm.renewed"],
                True,
                ["s"] * 9 + ["fs"] + ["s"] * 3 + ["fff"] * 13 + ["ff"],
            ),
            (
                "https://crm.example.com/hooks/tickets",
                ["ticket.reply"],
                False,
                ["s", "s", "fs", "s"],
            ),
        ]
        self.webhooks, self.deliveries = [], []
        for url, events, active, plan in plans:
            hid, start = self.uid(), NOW - timedelta(days=6)
            self.webhooks.append(
                {
                    "id": hid,
                    "url": url,
                    "events": events,
                    "description": url.split("/")[2],
                    "active": active,
                    "created": start - secs(10 * DAY, 200 * DAY),
                    "updated": start - secs(0, 5 * DAY),
                }
            )
            step = (NOW - timedelta(minutes=5) - start) / len(plan)
            for n, outcome in enumerate(plan):
                t0 = (start + step * n).replace(microsecond=0)
                for k, ch in enumerate(outcome, 1):
                    code = (
                        rng.choice([200, 200, 204])
                        if ch == "s"
                        else rng.choice([500, 502, 503, 410, None])
                    )
                    self.deliveries.append(
                        {
                            "webhook_id": hid,
                            "id": self.uid(),
                            "attempt": k,
                            "status_code": code,
                            "success": ch == "s",
                            "at": t0 + timedelta(seconds=10 * (2 ** (k - 1) - 1)),
                            "ms": 15000 if code is None else rng.randint(30, 2400),
                        }
                    )
        self.webhooks.sort(key=lambda h: h["created"])

    # ---- helpers
    def visible(self):
        return [v for v in self.vms if not v["hidden"]]

    def find_vm(self, vid):
        for v in self.vms:
            if v["id"] == vid and not v["hidden"]:
                return v
        raise ApiError(404, f"Instance {vid} could not be found.")

    @staticmethod
    def find(items, id_, what):
        for it in items:
            if it["id"] == id_:
                return it
        raise ApiError(404, f"{what} {id_} could not be found.")

    def _attach(self, net, vm, ip, when):
        taken = {a["privateIp"] for a in self.attachments if a["networkId"] == net["id"]}
        if ip is None:
            hosts = list(ipaddress.ip_network(net["cidr"]).hosts())[19:]
            ip = next(str(h) for h in hosts if str(h) not in taken)
        nics = sum(1 for a in self.attachments if a["vmId"] == vm["id"])
        att = {
            "id": self.uid(),
            "vmId": vm["id"],
            "networkId": net["id"],
            "privateIp": ip,
            "netInterface": f"tap{nics + 1}",
            "attached": when,
        }
        self.attachments.append(att)
        return att

    def change_fleet(self):
        """Between two page reads: purge the oldest running VM, create a new one."""
        self.changed = True
        gone = next(v for v in reversed(self.visible()) if v["status"] == "active" and v["price"])
        gone["hidden"] = True
        self.attachments = [a for a in self.attachments if a["vmId"] != gone["id"]]
        born = self._new_vm(
            "build",
            "fra-a",
            "g1.small",
            NOW,
            (FLAVORS["g1.small"][5]["EUR"], "EUR"),
            {"status": "trialing", "renew": NOW + timedelta(days=14)},
        )
        born["updated"] = NOW
        self.vms.append(born)
        self._sort_vms()

    # ---- wire forms
    def vm_wire(self, v):
        fname = FLAVORS[v["flavor"]][0]
        billing = None
        if v["billing"] is not None:
            billing = {}
            if v["price"] is not None:
                billing["priceMonthly"] = wire_money(*v["price"])
            billing["nextRenewalAt"] = z_time(v["billing"]["renew"])
            billing["status"] = v["billing"]["status"]
        nets = {a["networkId"] for a in self.attachments if a["vmId"] == v["id"]}
        return {
            "id": v["id"],
            "name": v["name"],
            "hostname": v["hostname"],
            "status": VM_WORDS[v["status"]][0],
            "vcpu": v["vcpu"],
            "ram": v["ram_gib"],
            "disk": v["disk_gib"] * 1024,
            "bandwidth": v["tb"],
            "networkSpeed": v["speed"],
            "network10gEnabled": v["speed"] >= 10,
            "dailyBackupEnabled": v["backup"],
            "isProtected": v["protected"],
            "ipAddress": v["ip"],
            "region": {"slug": v["region"], "name": REGIONS[v["region"]][0]},
            "plan": {"slug": v["flavor"], "name": fname},
            "osTemplate": None
            if v["image"] is None
            else dict(zip(("slug", "name", "version"), v["image"], strict=True)),
            "billing": billing,
            "createdAt": z_time(v["created"]),
            "bandwidthUsedBytes": v["used"],
            "bandwidthPackBytes": str(v["pack"]),
            "sshKeys": [dict(k) for k in v["ssh"]],
            "firewalls": [
                {"id": f["id"], "name": f["name"]} for f in self.firewalls if f["id"] in v["fw_ids"]
            ],
            "privateNetworks": [
                {"id": n["id"], "name": n["name"]} for n in self.networks if n["id"] in nets
            ],
            "updatedAt": naive_time(v["updated"]),
        }

    def rule_wire(self, r):
        return {
            "id": r["id"],
            "firewallId": r["firewallId"],
            "position": r["position"],
            "direction": r["direction"],
            "action": r["action"],
            "protocol": r["protocol"],
            "port": r["port"],
            "sourceIps": list(r["sourceIps"]),
            "destIps": list(r["destIps"]),
            "description": r["description"],
            "createdAt": z_time(r["created"]),
            "updatedAt": z_time(r["updated"]),
        }

    def att_wire(self, a):
        v = next(x for x in self.vms if x["id"] == a["vmId"])
        return {
            "id": a["id"],
            "vmId": a["vmId"],
            "networkId": a["networkId"],
            "privateIp": a["privateIp"],
            "netInterface": a["netInterface"],
            "attachedAt": z_time(a["attached"]),
            "vm": {
                "id": v["id"],
                "name": v["name"],
                "hostname": v["hostname"],
                "status": VM_WORDS[v["status"]][0],
            },
        }

    def hook_wire(self, h):
        return {
            "id": h["id"],
            "url": h["url"],
            "events": list(h["events"]),
            "description": h["description"],
            "isActive": h["active"],
            "createdAt": z_time(h["created"]),
            "updatedAt": z_time(h["updated"]),
        }

    @staticmethod
    def delivery_wire(d):
        return {
            "id": d["id"],
            "deliveredAt": z_time(d["at"]),
            "statusCode": d["status_code"],
            "ok": d["success"],
            "attempt": d["attempt"],
            "durationMs": d["ms"],
        }

    def served_deliveries(self, hid):
        return [d for d in self.deliveries if d["webhook_id"] == hid][-KEEP_ATTEMPTS:]

    # ---- truth
    def truth(self):
        def streak(hid):
            n = 0
            for d in reversed([d for d in self.deliveries if d["webhook_id"] == hid]):
                if d["success"]:
                    break
                n += 1
            return n

        def dl(d):
            return {
                "webhook_id": d["webhook_id"],
                "id": d["id"],
                "status_code": d["status_code"],
                "success": d["success"],
                "attempts": d["attempt"],
                "created_at": truth_time(d["at"]),
            }

        return {
            "currency": "EUR",
            "vms": [
                {
                    "id": v["id"],
                    "name": v["name"],
                    "status_class": VM_WORDS[v["status"]][1],
                    "billing_status_class": None
                    if v["billing"] is None
                    else BILL_CLASS[v["billing"]["status"]],
                    "price_monthly": None if v["price"] is None else truth_money(*v["price"]),
                    "ram_mib": v["ram_gib"] * 1024,
                    "disk_gib": v["disk_gib"],
                    "next_renewal_at": None
                    if v["billing"] is None
                    else truth_time(v["billing"]["renew"]),
                    "created_at": truth_time(v["created"]),
                    "updated_at": truth_time(v["updated"]),
                    "bandwidth_used_bytes": v["used"],
                    "bandwidth_pack_bytes": v["pack"],
                    "is_protected": v["protected"],
                    "region_slug": v["region"],
                    "plan_slug": v["flavor"],
                    "firewall_ids": list(v["fw_ids"]),
                }
                for v in self.visible()
            ],
            "wallet": {"balance": truth_money(self.wallet["minor"], "EUR")},
            "firewalls": [{"id": f["id"], "name": f["name"]} for f in self.firewalls],
            "rules": [
                {
                    "id": r["id"],
                    "firewall_id": r["firewallId"],
                    "port": canon_port(r),
                    "source_ips": list(r["sourceIps"]),
                    "direction": r["direction"],
                    "action": r["action"],
                    "protocol": r["protocol"],
                }
                for r in self.rules
            ],
            "networks": [{"id": n["id"], "name": n["name"]} for n in self.networks],
            "attachments": [
                {"id": a["id"], "vm_id": a["vmId"], "network_id": a["networkId"]}
                for a in self.attachments
            ],
            "webhooks": [
                {
                    "id": h["id"],
                    "url": h["url"],
                    "is_active": h["active"],
                    "consecutive_failures": streak(h["id"]),
                }
                for h in self.webhooks
            ],
            "deliveries_all": [dl(d) for d in self.deliveries],
            "deliveries_served": [
                dl(d) for h in self.webhooks for d in self.served_deliveries(h["id"])
            ],
            "now": z_time(NOW),
        }


class Peer:
    """The running server: `base_url`, `token` (every scope), `read_token` (vms:read only)."""

    def __init__(self, seed=1, rate_per_minute=600):
        self.account = Account(seed)
        self.lock = threading.RLock()
        self.rate = rate_per_minute
        self.windows: dict = {}
        self.token, self.read_token = list(self.account.tokens)
        self.base_url = ""
        self.routes = [
            (m, re.compile(p + "$"), s, getattr(self, f))
            for m, p, s, f in (
                ("GET", r"/vms", "vms:read", "list_vms"),
                ("GET", r"/vms/([^/]+)", "vms:read", "get_vm"),
                ("POST", r"/vms/([^/]+)/stop", "vms:write", "stop_vm"),
                ("GET", r"/firewalls", "network:read", "list_fws"),
                ("GET", r"/firewalls/([^/]+)/rules", "network:read", "list_rules"),
                ("PATCH", r"/firewalls/([^/]+)/rules/([^/]+)", "network:write", "patch_rule"),
                ("GET", r"/networks", "network:read", "list_nets"),
                ("GET", r"/networks/([^/]+)/attachments", "network:read", "list_atts"),
                ("POST", r"/networks/([^/]+)/attachments", "network:write", "attach"),
                ("DELETE", r"/networks/([^/]+)/attachments/([^/]+)", "network:write", "detach"),
                ("GET", r"/wallet", "billing:read", "wallet"),
                ("GET", r"/webhooks", "webhooks:read", "list_hooks"),
                ("POST", r"/webhooks", "webhooks:write", "create_hook"),
                ("PATCH", r"/webhooks/([^/]+)", "webhooks:write", "patch_hook"),
                ("GET", r"/webhooks/([^/]+)/deliveries", "webhooks:read", "list_deliveries"),
            )
        ]

    def truth(self) -> dict:
        with self.lock:
            return self.account.truth()

    def choices(self) -> dict:
        return dict(
            ln[2:].split(": ", 1) for ln in (__doc__ or "").splitlines() if ln.startswith("- ")
        )

    # ---- plumbing
    def count(self, key, cap):
        """Fixed 60 s windows; returns (allowed, seconds to wait, headers)."""
        now = time.monotonic()
        with self.lock:
            start, used = self.windows.get(key, (now, 0))
            if now - start >= 60:
                start, used = now, 0
            ok = used < cap
            used += ok
            self.windows[key] = (start, used)
        reset = max(1, math.ceil(60 - (now - start)))
        headers = {
            "X-RateLimit-Limit": str(cap),
            "X-RateLimit-Remaining": str(cap - used),
            "X-RateLimit-Reset": str(reset),
        }
        return ok, reset, headers

    def page(self, req, items, render, hidden=lambda it: False):
        q = req["query"]
        raw = q.get("limit", str(PAGE_MAX))
        if not raw.isdigit() or int(raw) < 1:
            raise ApiError(400, f"Invalid input for field/attribute limit. Value: {raw}.")
        limit = min(int(raw), PAGE_MAX)
        start = 0
        if "marker" in q:
            ids = [it["id"] for it in items]
            if q["marker"] not in ids:
                raise ApiError(400, f"marker [{q['marker']}] not found")
            start = ids.index(q["marker"]) + 1
        window = items[start : start + limit]
        base = f"http://{req['host']}{CANON}{req['sub']}"
        self_q = {"limit": limit, **({"marker": q["marker"]} if "marker" in q else {})}
        links = [{"rel": "self", "href": base + "?" + urlencode(self_q)}]
        if len(window) == limit:
            links.append(
                {
                    "rel": "next",
                    "href": base + "?" + urlencode({"limit": limit, "marker": window[-1]["id"]}),
                }
            )
        return 200, {
            "success": True,
            "data": [render(it) for it in window if not hidden(it)],
            "links": links,
        }

    def handle(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        raw, u = (h.rfile.read(length) if length else b""), urlsplit(h.path)
        path = u.path.rstrip("/") or "/"
        key = h.headers.get("x-api-key")
        scopes = self.account.tokens.get(key) if key else None
        if scopes is None:
            bucket, cap, ok_wait_hdr = "per-ip", 100, self.count(("ip", h.client_address[0]), 100)
        else:
            bucket, cap, ok_wait_hdr = "per-token", self.rate, self.count(("tok", key), self.rate)
        ok, wait, rl = ok_wait_hdr

        def fail(status, msg, extra=None):
            body = {"success": False, "error": msg}
            return self.send(h, status, body, {**rl, **(extra or {})})

        if not ok:
            return fail(
                429,
                f"Rate limit exceeded for bucket {bucket} ({cap} requests per minute); "
                f"retry after {wait} seconds",
                {"Retry-After": str(wait)},
            )
        if not (path == CANON or path.startswith(CANON + "/")):
            return fail(404, "Not Found")
        if scopes is None:
            return fail(
                401,
                "The request you have made requires authentication."
                if key
                else "Authentication required",
            )
        sub = path[len(CANON) :] or "/"
        found, allowed = None, []
        for m, rx, scope, fn in self.routes:
            mt = rx.match(sub)
            if mt:
                allowed.append(m)
                if m == h.command:
                    found = (scope, fn, [unquote(g) for g in mt.groups()])
        if found is None and allowed:
            return fail(405, f"Method {h.command} is not allowed", {"Allow": ", ".join(allowed)})
        if found is None:
            return fail(404, "Not Found")
        scope, fn, args = found
        if scope not in scopes:
            return fail(403, f"Policy doesn't allow {scope} to be performed.")
        req = {
            "query": dict(parse_qsl(u.query, keep_blank_values=True)),
            "raw": raw,
            "host": h.headers.get("Host", "127.0.0.1"),
            "sub": sub,
        }
        with self.lock:
            try:
                status, body = fn(req, *args)
            except ApiError as e:
                return fail(e.status, e.message, e.headers)
        return self.send(h, status, body, rl)

    @staticmethod
    def send(h, status, body, headers):
        data = json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    @staticmethod
    def body(req):
        try:
            b = json.loads(req["raw"] or b"{}")
        except ValueError as e:
            raise ApiError(400, f"Malformed request body: {e}") from None
        if not isinstance(b, dict):
            raise ApiError(400, "Malformed request body: an object is required")
        return b

    # ---- endpoints
    def list_vms(self, req):
        a = self.account
        if a.listed and not a.changed:
            a.change_fleet()
        a.listed = True
        return self.page(req, a.vms, a.vm_wire, hidden=lambda v: v["hidden"])

    def get_vm(self, req, vid):
        return 200, {"success": True, "data": self.account.vm_wire(self.account.find_vm(vid))}

    def stop_vm(self, req, vid):
        v = self.account.find_vm(vid)
        if v["status"] != "active":
            state = {"hibernated": "suspended", "soft_deleted": "soft-delete"}.get(
                v["status"], v["status"]
            )
            raise ApiError(409, f"Cannot 'stop' instance {vid} while it is in vm_state {state}")
        v["status"], v["updated"] = "shutoff", NOW
        return 202, {"success": True, "data": {"actionId": "req-" + self.account.uid()}}

    def list_fws(self, req):
        a = self.account
        return self.page(
            req,
            a.firewalls,
            lambda f: {
                "id": f["id"],
                "name": f["name"],
                "createdAt": z_time(f["created"]),
                "rulesCount": sum(1 for r in a.rules if r["firewallId"] == f["id"]),
            },
        )

    def list_rules(self, req, fid):
        a = self.account
        a.find(a.firewalls, fid, "Firewall")
        rules = sorted((r for r in a.rules if r["firewallId"] == fid), key=lambda r: r["position"])
        return self.page(req, rules, a.rule_wire)

    def patch_rule(self, req, fid, rid):
        a = self.account
        fw = a.find(a.firewalls, fid, "Firewall")
        rule = a.find([r for r in a.rules if r["firewallId"] == fid], rid, "Firewall rule")
        b = self.body(req)
        for k in b:
            if k not in ("position", "port", "sourceIps", "destIps", "description"):
                raise ApiError(400, f"Additional properties are not allowed ('{k}' was unexpected)")
        if "position" in b:
            p = b["position"]
            if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= 1000:
                raise ApiError(400, "Invalid input for field/attribute position.")
        if "port" in b and (
            not isinstance(b["port"], str) or len(b["port"]) > 64 or not PORT_RE.match(b["port"])
        ):
            raise ApiError(400, "Invalid input for field/attribute port.")
        for k in ("sourceIps", "destIps"):
            if k in b:
                v = b[k]
                if (
                    not isinstance(v, list)
                    or len(v) > 50
                    or not all(isinstance(x, str) and len(x) <= 64 for x in v)
                ):
                    raise ApiError(400, f"Invalid input for field/attribute {k}.")
        if "description" in b and (
            not isinstance(b["description"], str) or len(b["description"]) > 255
        ):
            raise ApiError(400, "Invalid input for field/attribute description.")
        if b:
            rule.update(b)
            rule["updated"] = NOW
            if fw["broken"]:
                raise ApiError(502, "Security group sync with the upstream network failed")
        return 200, {"success": True, "data": a.rule_wire(rule)}

    def list_nets(self, req):
        return self.page(
            req,
            self.account.networks,
            lambda n: {
                "id": n["id"],
                "name": n["name"],
                "region": {"slug": n["region"], "name": REGIONS[n["region"]][0]},
                "cidr": n["cidr"],
                "createdAt": z_time(n["created"]),
            },
        )

    def list_atts(self, req, nid):
        a = self.account
        a.find(a.networks, nid, "Network")
        return self.page(req, [x for x in a.attachments if x["networkId"] == nid], a.att_wire)

    def attach(self, req, nid):
        a = self.account
        net = a.find(a.networks, nid, "Network")
        b = self.body(req)
        vid, ip = b.get("vmId"), b.get("privateIp")
        if not isinstance(vid, str):
            raise ApiError(400, "Invalid input for field/attribute vmId.")
        if ip is not None and not isinstance(ip, str):
            raise ApiError(400, "Invalid input for field/attribute privateIp.")
        vm = a.find_vm(vid)
        if vm["region"] != net["region"]:
            raise ApiError(400, f"Network {nid} is not in the region of instance {vid}")
        if vm["status"] == "soft_deleted":
            raise ApiError(
                409, f"Cannot 'attach_interface' instance {vid} while it is in vm_state soft-delete"
            )
        if any(x["vmId"] == vid and x["networkId"] == nid for x in a.attachments):
            raise ApiError(409, f"Instance {vid} already has a port on network {nid}")
        if ip is not None:
            try:
                inside = ipaddress.ip_address(ip) in ipaddress.ip_network(net["cidr"])
            except ValueError:
                inside = False
            if not inside:
                raise ApiError(
                    400, f"IP address {ip} is not a valid IP for the subnet {net['cidr']}"
                )
            if any(x["privateIp"] == ip and x["networkId"] == nid for x in a.attachments):
                raise ApiError(409, f"IP address {ip} already allocated in subnet {net['cidr']}")
        att = a._attach(net, vm, ip, NOW)
        vm["updated"] = NOW
        return 201, {"success": True, "data": a.att_wire(att)}

    def detach(self, req, nid, vid):
        a = self.account
        a.find(a.networks, nid, "Network")
        hit = [x for x in a.attachments if x["networkId"] == nid and x["vmId"] == vid]
        if not hit:
            raise ApiError(404, f"Port for instance {vid} on network {nid} could not be found")
        a.attachments.remove(hit[0])
        return 200, {"success": True, "data": {"vmId": vid, "networkId": nid}}

    def wallet(self, req):
        w = self.account.wallet
        return 200, {
            "success": True,
            "data": {
                "id": w["id"],
                "createdAt": z_time(w["created"]),
                "updatedAt": z_time(w["updated"]),
                "balance": wire_money(w["minor"], "EUR"),
            },
        }

    def list_hooks(self, req):
        return self.page(req, self.account.webhooks, self.account.hook_wire)

    @staticmethod
    def _hook_fields(b, h):
        if "url" in b:
            if not isinstance(b["url"], str) or not b["url"].startswith("https://"):
                raise ApiError(400, "Invalid input for field/attribute url: an https URL")
            h["url"] = b["url"]
        if "events" in b:
            ev = b["events"]
            if not isinstance(ev, list) or not ev or not all(e in EVENTS for e in ev):
                raise ApiError(400, "Invalid input for field/attribute events.")
            h["events"] = list(dict.fromkeys(ev))
        if "description" in b:
            if not isinstance(b["description"], str) or len(b["description"]) > 255:
                raise ApiError(400, "Invalid input for field/attribute description.")
            h["description"] = b["description"]
        if "isActive" in b:
            if not isinstance(b["isActive"], bool):
                raise ApiError(400, "Invalid input for field/attribute isActive.")
            h["active"] = b["isActive"]

    def _quota(self, extra=1):
        used = sum(1 for x in self.account.webhooks if x["active"])
        if used + extra > 10:
            raise ApiError(
                403,
                f"Quota exceeded for webhooks: Requested {extra}, but already used {used} of 10 "
                "webhooks",
            )

    def create_hook(self, req):
        a, b = self.account, self.body(req)
        if "url" not in b or "events" not in b:
            raise ApiError(400, "'url' and 'events' are required properties")
        h = {
            "id": a.uid(),
            "url": "",
            "events": [],
            "description": "",
            "active": True,
            "created": NOW,
            "updated": NOW,
        }
        self._hook_fields({k: v for k, v in b.items() if k != "isActive"}, h)
        self._quota()
        a.webhooks.append(h)
        return 201, {
            "success": True,
            "data": {**a.hook_wire(h), "secret": a.rng.randbytes(20).hex()},
        }

    def patch_hook(self, req, hid):
        a = self.account
        h = a.find(a.webhooks, hid, "Webhook")
        new = dict(h)
        self._hook_fields(self.body(req), new)
        if new["active"] and not h["active"]:
            self._quota()
        if new != h:
            new["updated"] = NOW
        h.update(new)
        return 200, {"success": True, "data": a.hook_wire(h)}

    def list_deliveries(self, req, hid):
        a = self.account
        a.find(a.webhooks, hid, "Webhook")
        return self.page(req, list(reversed(a.served_deliveries(hid))), a.delivery_wire)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cobalt/1.0"

    def log_message(self, *args):
        pass

    def date_time_string(self, timestamp=None):
        return format_datetime(NOW, usegmt=True)

    def do_GET(self):
        self.server.peer.handle(self)

    do_POST = do_PATCH = do_DELETE = do_PUT = do_GET


@contextlib.contextmanager
def serve(port: int = 0, seed: int = 1, rate_per_minute: int = 600):
    """Start the peer on 127.0.0.1:port (0 = any free port); yields the Peer; stops on exit."""
    peer = Peer(seed, rate_per_minute)
    srv = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    srv.daemon_threads = True
    srv.peer = peer
    peer.base_url = f"http://127.0.0.1:{srv.server_address[1]}"
    t = threading.Thread(target=srv.serve_forever, name="cobalt-peer", daemon=True)
    t.start()
    try:
        yield peer
    finally:
        srv.shutdown()
        srv.server_close()
        t.join(5)


if __name__ == "__main__":
    import urllib.error
    import urllib.request

    def call(peer, method, path, token=None, body=None):
        url = path if path.startswith("http") else peer.base_url + CANON + path
        r = urllib.request.Request(
            url,
            None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"x-api-key": token or peer.token, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(r) as resp:
                return resp.status, dict(resp.headers), json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), json.loads(e.read())

    def walk(peer, path):  # follow rel=next until it is absent; count the empty pages
        out, url, empty = [], path, 0
        while url:
            st, hd, body = call(peer, "GET", url)
            assert st == 200 and "X-RateLimit-Remaining" in hd, (path, st, body)
            out += body["data"]
            empty += not body["data"]
            url = next((lk["href"] for lk in body["links"] if lk["rel"] == "next"), None)
        assert len(out) == len({x["id"] for x in out}), path
        return out, empty

    with serve() as p:
        before = p.truth()
        vms, empty = walk(p, "/vms")
        after = p.truth()
        ids = {v["id"] for v in vms}
        b_ids, a_ids = {v["id"] for v in before["vms"]}, {v["id"] for v in after["vms"]}
        assert empty >= 1 and a_ids - b_ids and b_ids - a_ids, (empty, len(vms))
        assert ids == b_ids & a_ids, "a marker walk reads exactly the VMs present throughout"
        assert call(p, "GET", f"/vms/{(b_ids - a_ids).pop()}")[0] == 404
        fws = walk(p, "/firewalls")[0]
        rules = [r for f in fws for r in walk(p, f"/firewalls/{f['id']}/rules")[0]]
        assert {r["id"] for r in rules} == {r["id"] for r in after["rules"]}
        hooks = walk(p, "/webhooks")[0]
        dels = [d for h in hooks for d in walk(p, f"/webhooks/{h['id']}/deliveries")[0]]
        assert {d["id"] for d in dels} == {d["id"] for d in after["deliveries_served"]}
        assert max(h["consecutive_failures"] for h in after["webhooks"]) == 41
        v = vms[0]
        assert isinstance(v["billing"]["priceMonthly"]["amount"], int) and "Z" not in v["updatedAt"]
        st, _, b = call(p, "GET", "/webhooks", token=p.read_token)
        assert st == 403 and "webhooks:read" in b["error"]
        assert call(p, "GET", "/wallet")[2]["data"]["balance"] == {
            "amount": 231812,
            "currency": "eur",
        }
        c = urllib.request.Request(p.base_url + SHORT + "/vms", headers={"x-api-key": p.token})
        try:
            urllib.request.urlopen(c)
        except urllib.error.HTTPError as e:
            assert e.code == 404
        run = next(x for x in vms if x["status"] == "ACTIVE")
        assert [call(p, "POST", f"/vms/{run['id']}/stop")[0] for _ in "12"] == [202, 409]
        print(
            f"cobalt ok: {len(vms)} vms read, {empty} empty page(s), {len(rules)} rules, "
            f"{len(dels)}/{len(after['deliveries_all'])} deliveries served"
        )
