# ruff: noqa: E501  (the choices are one per line, as `Peer.choices()` reads them)
"""sable: a blind peer of the VM-hosting public API, written from the spec (api-spec.md) alone.

A small stateful HTTP server (standard library only) that answers the public API the way a
European provider built on Scaleway/Hetzner habits might. It models, point by point: Scaleway
(ram and disk in bytes, disks sized in decimal GB, times with microseconds and +00:00, plan names
such as "DEV1-S" that state no size, an "archived" instance being a stopped one), Hetzner Cloud
(status words, "locked" meaning held while an action runs, 423 Locked, 422 invalid_input), Box
(offset paging) and Svix (message attempts whose `status` 0 means success and whose
`responseStatusCode` is 0 when no answer came). Every point the spec leaves "not shown" is
decided below, one per line as "- point: choice"; `Peer.choices()` returns exactly these lines.

- base_path: only /api/public/v1; anything under /api/v1/ answers 404 "not_found: unknown path" in the failure envelope
- paging: offset style; query `offset` (default 0); the page size is the server's own 20 whatever `limit`, `per_page`, `perPage` or `page_size` ask (ignored silently, and not stated in the reply); `page` and every other parameter are ignored (page=2 serves offset 0 again); reply {success, data: [...], meta: {offset, total}}; an offset past the end gives an empty page; a non-numeric offset is 400
- list_order: oldest first (createdAt ascending, then id) for every list except rules (position) and deliveries (newest first)
- fleet_changes_while_read: after the first page of GET /vms has been served, the next GET /vms (whatever it asks) first deletes the third VM of the list (already served on page 1) and creates a new VM (initializing, newest, so last); every later offset then shifts by one: a reader walking offsets skips the VM that moved onto page 1, sees the deleted one and the new one, and counts exactly `total`; GET /vms/{id} of the deleted one is 404
- vm_list_items: GET /vms items are the VM object without `sshKeys`, `firewalls`, `privateNetworks` and `updatedAt`
- vm_status_words: initializing=provisioning, running=running, stopping=stopping, off=stopped, archived=stopped (powered off with its volumes offloaded, Scaleway sense: NOT terminated), locked=transitional (held while a resize, rebuild or backup action runs, Hetzner sense: NOT suspended), suspended=suspended (for non-payment); deleted VMs vanish (no terminated word)
- billing_status_words: paid=active, pending=active (the renewal invoice is issued and will be taken from the wallet at renewal; nothing is owed yet), overdue=overdue, suspended=suspended
- money: major units written as integer-valued strings with nothing stating the scale or currency: billing.priceMonthly "29" is 29.00 EUR; plan.priceMonthly is the list price in the same form; prices are whole euros
- price_location: every VM states plan.priceMonthly (list price) and billing.priceMonthly (what it is billed); 6 VMs are billed below the list price
- currency: EUR for everything, stated only on the wallet (`currency: "EUR"`)
- wallet: {id, createdAt, updatedAt, balance, currency}; balance an integer-valued string of euros ("2318" is 2318.00 EUR)
- time_format: createdAt, updatedAt and every other time in UTC with microseconds and +00:00 (2026-10-02T09:12:44.512343+00:00), EXCEPT billing.nextRenewalAt: naive local time of Europe/Paris (renewals fall at local midnight, "2026-11-03T00:00:00"), so CEST (+02:00) before 2026-10-25T01:00Z and CET (+01:00) after
- clock: fixed at 2026-10-24T21:47:03Z; the Date header says that instant
- ram_unit: bytes (DEV1-S ram 2147483648)
- disk_unit: bytes of decimal GB (a 20 GB disk is 20000000000 bytes, 18.63 GiB)
- bandwidth_unit: `bandwidth` in GB (10^9 bytes) of monthly traffic; networkSpeed in bit/s (200000000)
- bandwidth_used: bandwidthUsedBytes a JSON integer; bandwidthPackBytes a decimal string of bytes
- next_renewal: in the past for overdue and suspended VMs
- ids: UUID v4 strings; stop action ids are decimal strings
- scopes: firewalls `security_groups:read`/`security_groups:write`, networks `private_networks:read`/`private_networks:write`, wallet `billing:read`
- status_401: "unauthorized: missing or invalid x-api-key"
- status_403: "forbidden: token scopes do not include SCOPE"
- rate_limit: sliding 60 s window per token (600) and, for unauthenticated requests, per IP (100); X-RateLimit-Reset = seconds until the oldest counted request leaves the window; a 429 is not counted
- text_429: "rate_limit_exceeded: bucket token allows 600 requests per minute; retry in N seconds" (per IP: bucket ip, 100 per minute)
- stop: success 201 {actionId}; VM goes `stopping` and stays there; a locked VM 423 "locked: an action is running on this server"; any other VM not running 409; unknown VM 404
- firewall_rule_port: "22", "80,443", "8000-9000"; "all" means every port; ICMP rules have port null
- firewall_rule_ips: sourceIps and destIps arrays ([] where the rule does not restrict); 0.0.0.0/0 and ::/0 for anywhere; description null when none
- patch_rule: any of position, port, sourceIps, destIps, description; direction, action and protocol 422 "invalid_input: KEY is read-only"; other keys ignored; {} 422; bad values 422; firewall "legacy-public" fails the upstream sync -> 502 and the rule is rolled back
- networks: records {id, name, region, subnet, createdAt}; attachment list items include the `vm` object
- attach: success 201; vmId required; privateIp optional (inside the subnet, else 422; taken 409); region mismatch 422; already attached 409; locked VM 423; unknown network or VM 404
- detach: success 200 {vmId, networkId}; VM not attached 404
- webhook_record: {id, url, events, description, isActive, createdAt, updatedAt}; no failure count
- webhook_create: 201 with `secret` ("whsec_" + base64); url must be https, events known (422); over 10 active 422 "resource_limit_exceeded: at most 10 active webhooks"
- webhook_patch: 200 with the record; isActive true re-enables and resets the failure run
- delivery_record: one record per attempt (Svix style): {id, msgId, status, responseStatusCode, attempt, timestamp, responseDurationMs}; `status` is the success flag as an enum, 0 = success, 2 = failed; `responseStatusCode` 0 = no answer came (timeout or refused); `attempt` 1..3
- delivery_history: every attempt is kept and served, newest first, paged like the rest
- consecutive_failures: counted in failed attempts; "ops-alerts" has 7 in a row; "legacy-erp" was disabled automatically after 50
- validation: malformed JSON 400; invalid values 422 "invalid_input: ..."; conflicts 409; locked resources 423
- other_errors: unknown path 404, wrong method 405 (with Allow); every failure uses the failure envelope
- idempotency: Idempotency-Key on POST replays the first answer (header Idempotent-Replayed: true) for 24 h; the same key with another request body 409
"""

from __future__ import annotations

import base64
import collections
import contextlib
import hashlib
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
from urllib.parse import parse_qsl, unquote, urlsplit

NOW = datetime(2026, 10, 24, 21, 47, 3, tzinfo=UTC)
PREFIX = "/api/public/v1"
PAGE = 20
DAY = 86400
# Europe/Paris around NOW: CEST (+2) until 2026-10-25 03:00 local, CET (+1) after; renewals
# fall between 2026-09 and 2027-01, inside one summer and one winter period
CEST_END_UTC = datetime(2026, 10, 25, 1, 0, tzinfo=UTC)
REGIONS = {"fr-par-1": "Paris 1", "nl-ams-1": "Amsterdam 1", "pl-waw-1": "Warsaw 1"}
# slug: (name, vcpu, ram GiB, disk GB (10^9), traffic GB, speed bit/s, list price EUR)
PLANS = {
    "dev1-s": ("DEV1-S", 2, 2, 20, 200, 200_000_000, 7),
    "dev1-m": ("DEV1-M", 3, 4, 40, 300, 300_000_000, 14),
    "dev1-l": ("DEV1-L", 4, 8, 80, 400, 400_000_000, 29),
    "gp1-xs": ("GP1-XS", 4, 16, 150, 500, 500_000_000, 59),
    "gp1-s": ("GP1-S", 8, 32, 300, 800, 800_000_000, 119),
    "pro2-m": ("PRO2-M", 8, 32, 100, 1000, 1_000_000_000, 189),
    "ent1-xl": ("ENT1-XL", 64, 256, 600, 5000, 5_000_000_000, 1290),
}
IMAGES = [
    ("ubuntu_noble", "Ubuntu", "24.04"),
    ("debian_bookworm", "Debian", "12"),
    ("rockylinux_9", "Rocky Linux", "9"),
    ("docker", "Docker", None),
]
# internal status (= wire word): canonical class word of the truth
VM_CLASS = {
    "initializing": "provisioning",
    "running": "running",
    "stopping": "stopping",
    "off": "stopped",
    "archived": "stopped",
    "locked": "provisioning",  # any transitional word: the class is what is compared
    "suspended": "suspended",
}
BILL_CLASS = {"paid": "active", "pending": "active", "overdue": "overdue", "suspended": "suspended"}
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
    "security_groups:read",
    "security_groups:write",
    "private_networks:read",
    "private_networks:write",
    "billing:read",
}
PORT_RE = re.compile(r"^(all|\d{1,5}(-\d{1,5})?(,\d{1,5}(-\d{1,5})?)*)$")


def wtime(dt):
    return None if dt is None else dt.astimezone(UTC).isoformat(timespec="microseconds")


def paris_naive(dt):  # the wall clock in Paris, no zone written
    offset = timedelta(hours=2 if dt < CEST_END_UTC else 1)
    return (dt.astimezone(UTC) + offset).replace(tzinfo=None).isoformat(timespec="seconds")


def paris_midnight(day):
    """The UTC instant of local midnight in Paris on ``day`` (a date)."""
    local = datetime(day.year, day.month, day.day)
    summer = local < datetime(2026, 10, 25, 3, 0)
    return (local - timedelta(hours=2 if summer else 1)).replace(tzinfo=UTC)


def ttime(dt):
    return None if dt is None else dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canon_port(rule):
    if rule["protocol"] == "ICMP":
        return None
    return "any" if rule["port"] == "all" else rule["port"]


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
            return timedelta(seconds=rng.randint(lo, hi), microseconds=rng.randint(0, 999999))

        self.listed = self.changed = False
        self.ssh_keys = [
            {
                "id": self.uid(),
                "name": n,
                "fingerprint": "SHA256:" + base64.b64encode(rng.randbytes(32)).decode().rstrip("="),
            }
            for n in ("admin", "gitlab-runner", "ansible")
        ]
        self._seed_firewalls(secs)
        self._seed_vms(secs)
        self._seed_networks(secs)
        self.wallet = {
            "id": self.uid(),
            "created": NOW - timedelta(days=1200),
            "updated": NOW - secs(3600, 2 * DAY),
            "euros": 2318,
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
            "default": [
                ("IN", "ACCEPT", "TCP", "22", ["0.0.0.0/0"], [], None),
                ("IN", "ACCEPT", "ICMP", None, anywhere, [], "ping"),
                ("IN", "DROP", "ANY", "all", anywhere, [], "drop the rest"),
                ("OUT", "ACCEPT", "ANY", "all", [], anywhere, None),
            ],
            "web": [
                ("IN", "ACCEPT", "TCP", "80,443", anywhere, [], "http and https"),
                ("IN", "ACCEPT", "UDP", "443", anywhere, [], "http/3"),
            ],
            "private-db": [
                ("IN", "ACCEPT", "TCP", "5432", ["172.16.8.0/22"], [], "postgres"),
                ("IN", "ACCEPT", "TCP", "9100-9200", ["172.16.8.0/22"], [], "exporters"),
                ("IN", "REJECT", "ANY", "all", ["0.0.0.0/0"], [], None),
            ],
            "legacy-public": [
                ("IN", "ACCEPT", "TCP", "all", ["0.0.0.0/0"], [], "open for the migration"),
                ("IN", "ACCEPT", "TCP", "3306", ["0.0.0.0/0"], [], "mysql"),
            ],
        }
        self.firewalls, self.rules = [], []
        for name, rules in spec.items():
            created = NOW - secs(200 * DAY, 1000 * DAY)
            fw = {"id": self.uid(), "name": name, "created": created}
            fw["updated"] = created + secs(0, 100 * DAY)
            fw["broken"] = name == "legacy-public"
            self.firewalls.append(fw)
            for i, (d, a, p, port, src, dst, desc) in enumerate(rules):
                rc = created + secs(60, 30 * DAY)
                self.rules.append(
                    {
                        "id": self.uid(),
                        "firewallId": fw["id"],
                        "position": i + 1,
                        "direction": d,
                        "action": a,
                        "protocol": p,
                        "port": port,
                        "sourceIps": list(src),
                        "destIps": list(dst),
                        "description": desc,
                        "created": rc,
                        "updated": rc + secs(0, 60 * DAY),
                    }
                )
        self.firewalls.sort(key=lambda f: (f["created"], f["id"]))

    def _new_vm(self, status, region, plan, created, price, billing):
        rng = self.rng
        n = len(self.vms)
        role = ["www", "app", "pg", "redis", "mq", "ci", "mon", "bastion"][n % 8]
        name = f"{role}-{region.split('-')[1]}-{n:02d}"
        traffic = PLANS[plan][4]
        return {
            "id": self.uid(),
            "name": name,
            "hostname": name,
            "status": status,
            "plan": plan,
            "region": region,
            "image": rng.choice(IMAGES),
            "price": price,  # whole euros billed, or None
            "billing": billing,  # {"status", "renew"}
            "backup": rng.random() < 0.5,
            "protected": rng.random() < 0.25,
            "ip": None
            if status == "initializing"
            else f"51.15.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
            "created": created,
            "updated": created + (NOW - created) * rng.random(),
            "used": 0 if status == "initializing" else int(traffic * 10**9 * rng.random() * 0.7),
            "pack": traffic * 10**9,
            "ssh": rng.sample(self.ssh_keys, rng.randint(1, 2)),
            "fw_ids": [f["id"] for f in rng.sample(self.firewalls, rng.choice([1, 1, 2]))],
        }

    def _seed_vms(self, secs):
        rng = self.rng
        n = 59
        created = sorted(NOW - secs(3 * DAY, 900 * DAY) for _ in range(n - 3))
        created += sorted(NOW - secs(300, 5000) for _ in range(3))  # the initializing ones
        statuses = (
            ["running"] * 36
            + ["stopping"] * 2
            + ["off"] * 7
            + ["archived"] * 4
            + ["locked"] * 3
            + ["suspended"] * 4
        )
        rng.shuffle(statuses)
        # the VM the change deletes (index 2) and the one it shifts onto page 1 (index 20) are
        # both running and billed, so a skipped VM changes the run rate
        for i in (2, 20):
            j = statuses.index("running", 21) if statuses[i] != "running" else i
            statuses[i], statuses[j] = statuses[j], statuses[i]
        statuses += ["initializing"] * 3
        running = [i for i, s in enumerate(statuses) if s == "running" and i not in (2, 20)]
        rng.shuffle(running)
        overdue, pending, discounted = set(running[:4]), set(running[4:9]), set(running[9:15])
        self.vms = []
        for i, (st, when) in enumerate(zip(statuses, created, strict=True)):
            region = rng.choice(["fr-par-1"] * 3 + ["nl-ams-1", "pl-waw-1"])
            plan = "ent1-xl" if i == 31 else rng.choice([p for p in PLANS if p != "ent1-xl"])
            price = PLANS[plan][6]
            if i in discounted:
                price = price * 85 // 100
            today = (NOW + timedelta(hours=2)).date()
            if st == "suspended":
                billing = {
                    "status": "suspended",
                    "renew": paris_midnight(today - timedelta(days=rng.randint(10, 40))),
                }
            elif i in overdue:
                billing = {
                    "status": "overdue",
                    "renew": paris_midnight(today - timedelta(days=rng.randint(1, 6))),
                }
            elif i in pending or st == "initializing":
                days = rng.randint(1, 3) if st != "initializing" else 30
                billing = {
                    "status": "pending",
                    "renew": paris_midnight(today + timedelta(days=days)),
                }
            else:
                billing = {
                    "status": "paid",
                    "renew": paris_midnight(today + timedelta(days=rng.randint(4, 60))),
                }
            self.vms.append(self._new_vm(st, region, plan, when, price, billing))

    def _seed_networks(self, secs):
        self.networks = [
            {
                "id": self.uid(),
                "name": n,
                "region": r,
                "subnet": c,
                "created": NOW - secs(50 * DAY, 500 * DAY),
            }
            for n, r, c in (
                ("pn-par", "fr-par-1", "172.16.8.0/22"),
                ("pn-ams", "nl-ams-1", "172.16.12.0/22"),
            )
        ]
        self.networks.sort(key=lambda x: (x["created"], x["id"]))
        self.attachments = []
        for net, count in zip(self.networks, (5, 2), strict=True):
            cands = [
                v
                for v in self.vms
                if v["region"] == net["region"]
                and v["status"] in ("running", "off")
                and v is not self.vms[2]
            ]
            for v in self.rng.sample(cands, count):
                self._attach(net, v, None, NOW - secs(DAY, 40 * DAY))
        self.attachments.sort(key=lambda a: (a["attached"], a["id"]))

    def _seed_webhooks(self, secs):
        rng = self.rng
        plans = [
            (
                "https://events.example.eu/sable",
                ["vm.created", "vm.terminated", "vm.renewed"],
                "events bus",
                ["s"] * 14 + ["fs"] + ["s"] * 10 + ["ffs"] + ["s"] * 6,
            ),
            (
                "https://alerts.example.eu/ops",
                ["vm.stopped", "vm.suspended", "billing.low_balance"],
                "ops-alerts",
                ["s"] * 8 + ["fs"] + ["s"] * 4 + ["fff"] * 2 + ["f"],
            ),
            (
                "https://erp.example.eu/legacy/hook",
                ["billing.payment_received"],
                "legacy-erp",
                ["s"] * 5 + ["fff"] * 16 + ["ff"],
            ),
        ]
        self.webhooks, self.deliveries = [], []
        for url, events, desc, plan in plans:
            hid, start = self.uid(), NOW - timedelta(days=12)
            fails = 0
            for ch in "".join(plan)[::-1]:
                if ch == "s":
                    break
                fails += 1
            self.webhooks.append(
                {
                    "id": hid,
                    "url": url,
                    "events": events,
                    "description": desc,
                    "active": fails < 50,
                    "created": start - secs(30 * DAY, 300 * DAY),
                    "updated": start,
                }
            )
            step = (NOW - timedelta(minutes=3) - start) / len(plan)
            for n, outcome in enumerate(plan):
                t0 = start + step * n
                msg = "msg_" + base64.b32encode(rng.randbytes(15)).decode().lower()
                for k, ch in enumerate(outcome, 1):
                    code = (
                        rng.choice([200, 200, 202, 204])
                        if ch == "s"
                        else rng.choice([500, 503, 404, None])
                    )
                    self.deliveries.append(
                        {
                            "webhook_id": hid,
                            "id": "atmpt_" + base64.b32encode(rng.randbytes(15)).decode().lower(),
                            "msg": msg,
                            "attempt": k,
                            "status_code": code,
                            "success": ch == "s",
                            "at": t0 + timedelta(seconds=10 * (2 ** (k - 1) - 1)),
                            "ms": 15000 if code is None else rng.randint(20, 3000),
                        }
                    )
            if fails >= 50:
                self.webhooks[-1]["updated"] = self.deliveries[-1]["at"]
        self.webhooks.sort(key=lambda h: (h["created"], h["id"]))

    # ---- helpers
    def find(self, items, id_, what):
        for it in items:
            if it["id"] == id_:
                return it
        raise ApiError(404, f"not_found: {what} {id_} does not exist")

    def _attach(self, net, vm, ip, when):
        taken = {a["privateIp"] for a in self.attachments if a["networkId"] == net["id"]}
        if ip is None:
            hosts = list(ipaddress.ip_network(net["subnet"]).hosts())[1:]
            ip = next(str(h) for h in hosts if str(h) not in taken)
        nics = sum(1 for a in self.attachments if a["vmId"] == vm["id"])
        att = {
            "id": self.uid(),
            "vmId": vm["id"],
            "networkId": net["id"],
            "privateIp": ip,
            "netInterface": f"ens{nics + 5}",
            "attached": when,
        }
        self.attachments.append(att)
        return att

    def change_fleet(self):
        """Between two page reads: delete the third VM of the list, create a new one (last)."""
        self.changed = True
        gone = self.vms.pop(2)
        self.attachments = [a for a in self.attachments if a["vmId"] != gone["id"]]
        born = self._new_vm(
            "initializing",
            "fr-par-1",
            "dev1-m",
            NOW - timedelta(seconds=41),
            PLANS["dev1-m"][6],
            {"status": "pending", "renew": paris_midnight((NOW + timedelta(days=30)).date())},
        )
        born["updated"] = NOW
        self.vms.append(born)

    # ---- wire forms
    def vm_wire(self, v, full=True):
        pname, vcpu, ram, disk, traffic, speed, list_price = PLANS[v["plan"]]
        b = v["billing"]
        billing = {"nextRenewalAt": paris_naive(b["renew"]), "status": b["status"]}
        if v["price"] is not None:
            billing = {"priceMonthly": str(v["price"]), **billing}
        nets = {a["networkId"] for a in self.attachments if a["vmId"] == v["id"]}
        d = {
            "id": v["id"],
            "name": v["name"],
            "hostname": v["hostname"],
            "status": v["status"],
            "vcpu": vcpu,
            "ram": ram * 2**30,
            "disk": disk * 10**9,
            "bandwidth": traffic,
            "networkSpeed": speed,
            "network10gEnabled": speed >= 10**10,
            "dailyBackupEnabled": v["backup"],
            "isProtected": v["protected"],
            "ipAddress": v["ip"],
            "region": {"slug": v["region"], "name": REGIONS[v["region"]]},
            "plan": {"slug": v["plan"], "name": pname, "priceMonthly": str(list_price)},
            "osTemplate": dict(zip(("slug", "name", "version"), v["image"], strict=True)),
            "billing": billing,
            "createdAt": wtime(v["created"]),
            "bandwidthUsedBytes": v["used"],
            "bandwidthPackBytes": str(v["pack"]),
            "sshKeys": [dict(k) for k in v["ssh"]],
            "firewalls": [
                {"id": f["id"], "name": f["name"]} for f in self.firewalls if f["id"] in v["fw_ids"]
            ],
            "privateNetworks": [
                {"id": n["id"], "name": n["name"]} for n in self.networks if n["id"] in nets
            ],
            "updatedAt": wtime(v["updated"]),
        }
        if not full:
            for k in ("sshKeys", "firewalls", "privateNetworks", "updatedAt"):
                del d[k]
        return d

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
            "createdAt": wtime(r["created"]),
            "updatedAt": wtime(r["updated"]),
        }

    def att_wire(self, a):
        v = self.find(self.vms, a["vmId"], "server")
        return {
            "id": a["id"],
            "vmId": a["vmId"],
            "networkId": a["networkId"],
            "privateIp": a["privateIp"],
            "netInterface": a["netInterface"],
            "attachedAt": wtime(a["attached"]),
            "vm": {
                "id": v["id"],
                "name": v["name"],
                "hostname": v["hostname"],
                "status": v["status"],
            },
        }

    @staticmethod
    def hook_wire(h):
        return {
            "id": h["id"],
            "url": h["url"],
            "events": list(h["events"]),
            "description": h["description"],
            "isActive": h["active"],
            "createdAt": wtime(h["created"]),
            "updatedAt": wtime(h["updated"]),
        }

    @staticmethod
    def delivery_wire(d):
        return {
            "id": d["id"],
            "msgId": d["msg"],
            "status": 0 if d["success"] else 2,
            "responseStatusCode": d["status_code"] or 0,
            "attempt": d["attempt"],
            "timestamp": wtime(d["at"]),
            "responseDurationMs": d["ms"],
        }

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
                "created_at": ttime(d["at"]),
            }

        served = [d for h in self.webhooks for d in self.deliveries if d["webhook_id"] == h["id"]]
        return {
            "currency": "EUR",
            "vms": [
                {
                    "id": v["id"],
                    "name": v["name"],
                    "status_class": VM_CLASS[v["status"]],
                    "billing_status_class": BILL_CLASS[v["billing"]["status"]],
                    "price_monthly": None
                    if v["price"] is None
                    else {"amount": str(Decimal(v["price"])), "currency": "EUR"},
                    "ram_mib": PLANS[v["plan"]][2] * 1024,
                    "disk_gib": PLANS[v["plan"]][3] * 10**9 / 2**30,
                    "next_renewal_at": ttime(v["billing"]["renew"]),
                    "created_at": ttime(v["created"]),
                    "updated_at": ttime(v["updated"]),
                    "bandwidth_used_bytes": v["used"],
                    "bandwidth_pack_bytes": v["pack"],
                    "is_protected": v["protected"],
                    "region_slug": v["region"],
                    "plan_slug": v["plan"],
                    "firewall_ids": list(v["fw_ids"]),
                }
                for v in self.vms
            ],
            "wallet": {
                "balance": {"amount": str(Decimal(self.wallet["euros"])), "currency": "EUR"}
            },
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
            "deliveries_all": [dl(d) for d in served],
            "deliveries_served": [dl(d) for d in served],
            "now": ttime(NOW),
        }


class Peer:
    """The running server: `base_url`, `token` (every scope), `read_token` (vms:read only)."""

    def __init__(self, seed=1, rate_per_minute=600):
        self.account = Account(seed)
        self.lock = threading.RLock()
        self.rate = rate_per_minute
        self.logs: dict = {}
        self.idem: dict = {}
        self.token, self.read_token = list(self.account.tokens)
        self.base_url = ""
        self.routes = [
            (m, re.compile(p + "$"), s, getattr(self, f))
            for m, p, s, f in (
                ("GET", r"/vms", "vms:read", "list_vms"),
                ("GET", r"/vms/([^/]+)", "vms:read", "get_vm"),
                ("POST", r"/vms/([^/]+)/stop", "vms:write", "stop_vm"),
                ("GET", r"/firewalls", "security_groups:read", "list_fws"),
                ("GET", r"/firewalls/([^/]+)/rules", "security_groups:read", "list_rules"),
                (
                    "PATCH",
                    r"/firewalls/([^/]+)/rules/([^/]+)",
                    "security_groups:write",
                    "patch_rule",
                ),
                ("GET", r"/networks", "private_networks:read", "list_nets"),
                ("GET", r"/networks/([^/]+)/attachments", "private_networks:read", "list_atts"),
                ("POST", r"/networks/([^/]+)/attachments", "private_networks:write", "attach"),
                (
                    "DELETE",
                    r"/networks/([^/]+)/attachments/([^/]+)",
                    "private_networks:write",
                    "detach",
                ),
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
        """A sliding 60 s log per key; returns (allowed, seconds to wait, headers)."""
        now = time.monotonic()
        with self.lock:
            log = self.logs.setdefault(key, collections.deque())
            while log and now - log[0] >= 60:
                log.popleft()
            ok = len(log) < cap
            if ok:
                log.append(now)
            reset = math.ceil(60 - (now - log[0])) if log else 0
        headers = {
            "X-RateLimit-Limit": str(cap),
            "X-RateLimit-Remaining": str(cap - len(log)),
            "X-RateLimit-Reset": str(reset),
        }
        return ok, max(1, reset), headers

    @staticmethod
    def page(req, items, render):
        raw = req["query"].get("offset", "0")
        if not raw.isdigit():
            raise ApiError(
                400, f"invalid_input: offset must be a non-negative integer, got {raw!r}"
            )
        offset = int(raw)
        return 200, {
            "success": True,
            "data": [render(it) for it in items[offset : offset + PAGE]],
            "meta": {"offset": offset, "total": len(items)},
        }

    def handle(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        raw, u = (h.rfile.read(length) if length else b""), urlsplit(h.path)
        path = u.path.rstrip("/") or "/"
        key = h.headers.get("x-api-key")
        scopes = self.account.tokens.get(key) if key else None
        if scopes is None:
            bucket, cap = "ip", 100
            ok, wait, rl = self.count(("ip", h.client_address[0]), 100)
        else:
            bucket, cap = "token", self.rate
            ok, wait, rl = self.count(("tok", key), self.rate)

        def fail(status, msg, extra=None):
            body = {"success": False, "error": msg}
            return self.send(h, status, body, {**rl, **(extra or {})})

        if not ok:
            return fail(
                429,
                f"rate_limit_exceeded: bucket {bucket} allows {cap} requests per minute; "
                f"retry in {wait} seconds",
                {"Retry-After": str(wait)},
            )
        if not (path == PREFIX or path.startswith(PREFIX + "/")):
            return fail(404, "not_found: unknown path")
        if scopes is None:
            return fail(401, "unauthorized: missing or invalid x-api-key")
        sub = path[len(PREFIX) :] or "/"
        found, allowed = None, []
        for m, rx, scope, fn in self.routes:
            mt = rx.match(sub)
            if mt:
                allowed.append(m)
                if m == h.command:
                    found = (scope, fn, [unquote(g) for g in mt.groups()])
        if found is None and allowed:
            return fail(405, f"method_not_allowed: {h.command}", {"Allow": ", ".join(allowed)})
        if found is None:
            return fail(404, "not_found: unknown path")
        scope, fn, args = found
        if scope not in scopes:
            return fail(403, f"forbidden: token scopes do not include {scope}")
        idem = h.headers.get("Idempotency-Key") if h.command == "POST" else None
        digest = hashlib.sha256(sub.encode() + b"\0" + raw).hexdigest()
        with self.lock:
            if idem and (key, idem) in self.idem:
                at, fp, status, body = self.idem[(key, idem)]
                if time.monotonic() - at < DAY:
                    if fp != digest:
                        return fail(409, "conflict: Idempotency-Key reused with another request")
                    return self.send(h, status, body, {**rl, "Idempotent-Replayed": "true"})
            req = {"query": dict(parse_qsl(u.query, keep_blank_values=True)), "raw": raw}
            try:
                status, body = fn(req, *args)
            except ApiError as e:
                status, body = e.status, {"success": False, "error": e.message}
                rl = {**rl, **e.headers}
            if idem and status < 500:
                self.idem[(key, idem)] = (time.monotonic(), digest, status, body)
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
            raise ApiError(400, f"bad_request: malformed JSON ({e})") from None
        if not isinstance(b, dict):
            raise ApiError(400, "bad_request: the body must be a JSON object")
        return b

    # ---- endpoints
    def list_vms(self, req):
        a = self.account
        if a.listed and not a.changed:
            a.change_fleet()
        a.listed = True
        return self.page(req, a.vms, lambda v: a.vm_wire(v, full=False))

    def get_vm(self, req, vid):
        a = self.account
        return 200, {"success": True, "data": a.vm_wire(a.find(a.vms, vid, "server"))}

    def stop_vm(self, req, vid):
        a = self.account
        v = a.find(a.vms, vid, "server")
        if v["status"] == "locked":
            raise ApiError(423, "locked: an action is running on this server")
        if v["status"] != "running":
            raise ApiError(409, f"conflict: server is {v['status']}, not running")
        v["status"], v["updated"] = "stopping", NOW
        return 201, {"success": True, "data": {"actionId": str(a.rng.randrange(10**8, 10**9))}}

    def list_fws(self, req):
        a = self.account
        return self.page(
            req,
            a.firewalls,
            lambda f: {
                "id": f["id"],
                "name": f["name"],
                "createdAt": wtime(f["created"]),
                "updatedAt": wtime(f["updated"]),
            },
        )

    def list_rules(self, req, fid):
        a = self.account
        a.find(a.firewalls, fid, "security group")
        rules = sorted((r for r in a.rules if r["firewallId"] == fid), key=lambda r: r["position"])
        return self.page(req, rules, a.rule_wire)

    def patch_rule(self, req, fid, rid):
        a = self.account
        fw = a.find(a.firewalls, fid, "security group")
        rule = a.find([r for r in a.rules if r["firewallId"] == fid], rid, "rule")
        b = self.body(req)
        for k in ("direction", "action", "protocol"):
            if k in b:
                raise ApiError(422, f"invalid_input: {k} is read-only")
        new = {
            k: v
            for k, v in b.items()
            if k in ("position", "port", "sourceIps", "destIps", "description")
        }
        if not new:
            raise ApiError(422, "invalid_input: nothing to update")
        if "position" in new:
            p = new["position"]
            if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= 1000:
                raise ApiError(422, "invalid_input: position must be an integer from 0 to 1000")
        if "port" in new and not (
            isinstance(new["port"], str) and len(new["port"]) <= 64 and PORT_RE.match(new["port"])
        ):
            raise ApiError(422, "invalid_input: port must be 'all', a port, a range or a list")
        for k in ("sourceIps", "destIps"):
            v = new.get(k, [])
            if (
                not isinstance(v, list)
                or len(v) > 50
                or not all(isinstance(x, str) and len(x) <= 64 for x in v)
            ):
                raise ApiError(422, f"invalid_input: {k} takes at most 50 strings of 64 characters")
        if "description" in new and not (
            new["description"] is None
            or (isinstance(new["description"], str) and len(new["description"]) <= 255)
        ):
            raise ApiError(422, "invalid_input: description takes at most 255 characters")
        if fw["broken"]:
            raise ApiError(502, "upstream_error: security group sync failed; the rule is unchanged")
        rule.update(new)
        rule["updated"] = NOW
        return 200, {"success": True, "data": a.rule_wire(rule)}

    def list_nets(self, req):
        return self.page(
            req,
            self.account.networks,
            lambda n: {
                "id": n["id"],
                "name": n["name"],
                "region": {"slug": n["region"], "name": REGIONS[n["region"]]},
                "subnet": n["subnet"],
                "createdAt": wtime(n["created"]),
            },
        )

    def list_atts(self, req, nid):
        a = self.account
        a.find(a.networks, nid, "private network")
        return self.page(req, [x for x in a.attachments if x["networkId"] == nid], a.att_wire)

    def attach(self, req, nid):
        a = self.account
        net = a.find(a.networks, nid, "private network")
        b = self.body(req)
        vid, ip = b.get("vmId"), b.get("privateIp")
        if not isinstance(vid, str):
            raise ApiError(422, "invalid_input: vmId is required")
        if ip is not None and not isinstance(ip, str):
            raise ApiError(422, "invalid_input: privateIp must be a string")
        vm = a.find(a.vms, vid, "server")
        if vm["status"] == "locked":
            raise ApiError(423, "locked: an action is running on this server")
        if vm["region"] != net["region"]:
            raise ApiError(
                422, f"invalid_input: server is in {vm['region']}, network in {net['region']}"
            )
        if any(x["vmId"] == vid and x["networkId"] == nid for x in a.attachments):
            raise ApiError(409, "conflict: server already attached to this private network")
        if ip is not None:
            try:
                inside = ipaddress.ip_address(ip) in ipaddress.ip_network(net["subnet"])
            except ValueError:
                inside = False
            if not inside:
                raise ApiError(422, f"invalid_input: privateIp must lie inside {net['subnet']}")
            if any(x["privateIp"] == ip and x["networkId"] == nid for x in a.attachments):
                raise ApiError(409, f"conflict: {ip} is already in use")
        att = a._attach(net, vm, ip, NOW)
        vm["updated"] = NOW
        return 201, {"success": True, "data": a.att_wire(att)}

    def detach(self, req, nid, vid):
        a = self.account
        a.find(a.networks, nid, "private network")
        hit = [x for x in a.attachments if x["networkId"] == nid and x["vmId"] == vid]
        if not hit:
            raise ApiError(404, f"not_found: server {vid} is not attached to {nid}")
        a.attachments.remove(hit[0])
        return 200, {"success": True, "data": {"vmId": vid, "networkId": nid}}

    def wallet(self, req):
        w = self.account.wallet
        return 200, {
            "success": True,
            "data": {
                "id": w["id"],
                "createdAt": wtime(w["created"]),
                "updatedAt": wtime(w["updated"]),
                "balance": str(w["euros"]),
                "currency": "EUR",
            },
        }

    def list_hooks(self, req):
        return self.page(req, self.account.webhooks, self.account.hook_wire)

    @staticmethod
    def _hook_fields(b, h):
        if "url" in b:
            if not isinstance(b["url"], str) or not b["url"].startswith("https://"):
                raise ApiError(422, "invalid_input: url must be an https:// URL")
            h["url"] = b["url"]
        if "events" in b:
            ev = b["events"]
            if not isinstance(ev, list) or not ev or not all(e in EVENTS for e in ev):
                raise ApiError(422, f"invalid_input: events must be among {', '.join(EVENTS)}")
            h["events"] = list(dict.fromkeys(ev))
        if "description" in b:
            if not isinstance(b["description"], str) or len(b["description"]) > 255:
                raise ApiError(422, "invalid_input: description takes at most 255 characters")
            h["description"] = b["description"]
        if "isActive" in b:
            if not isinstance(b["isActive"], bool):
                raise ApiError(422, "invalid_input: isActive must be a boolean")
            h["active"] = b["isActive"]

    def _cap(self):
        if sum(1 for x in self.account.webhooks if x["active"]) >= 10:
            raise ApiError(422, "resource_limit_exceeded: at most 10 active webhooks")

    def create_hook(self, req):
        a, b = self.account, self.body(req)
        if "url" not in b or "events" not in b:
            raise ApiError(422, "invalid_input: url and events are required")
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
        self._cap()
        a.webhooks.append(h)
        secret = "whsec_" + base64.b64encode(a.rng.randbytes(24)).decode()
        return 201, {"success": True, "data": {**a.hook_wire(h), "secret": secret}}

    def patch_hook(self, req, hid):
        a = self.account
        h = a.find(a.webhooks, hid, "webhook")
        new = dict(h)
        self._hook_fields(self.body(req), new)
        if new["active"] and not h["active"]:
            self._cap()
        if new != h:
            new["updated"] = NOW
        h.update(new)
        return 200, {"success": True, "data": a.hook_wire(h)}

    def list_deliveries(self, req, hid):
        a = self.account
        a.find(a.webhooks, hid, "webhook")
        mine = [d for d in a.deliveries if d["webhook_id"] == hid]
        return self.page(req, list(reversed(mine)), a.delivery_wire)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "sable/1.0"

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
    t = threading.Thread(target=srv.serve_forever, name="sable-peer", daemon=True)
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
        r = urllib.request.Request(
            peer.base_url + PREFIX + path,
            None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"x-api-key": token or peer.token, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(r) as resp:
                return resp.status, dict(resp.headers), json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), json.loads(e.read())

    def walk(peer, path):  # offset += len(page) until a short page; asks 100, gets 20
        out, offset = [], 0
        while True:
            sep = "&" if "?" in path else "?"
            st, hd, body = call(peer, "GET", f"{path}{sep}offset={offset}&limit=100")
            assert st == 200 and "X-RateLimit-Remaining" in hd, (path, st, body)
            out += body["data"]
            offset += len(body["data"])
            if len(body["data"]) < PAGE:
                return out, body["meta"]["total"]

    with serve() as p:
        before = p.truth()
        vms, total = walk(p, "/vms")
        after = p.truth()
        ids = [v["id"] for v in vms]
        b_ids, a_ids = {v["id"] for v in before["vms"]}, {v["id"] for v in after["vms"]}
        assert len(ids) == len(set(ids)) == total == len(a_ids), (len(ids), total)
        skipped = (b_ids & a_ids) - set(ids)
        assert len(skipped) == 1 and (b_ids - a_ids) <= set(ids) and (a_ids - b_ids) <= set(ids)
        assert call(p, "GET", f"/vms/{(b_ids - a_ids).pop()}")[0] == 404
        v = call(p, "GET", f"/vms/{ids[0]}")[2]["data"]
        assert (
            v["ram"] % 2**30 == 0
            and v["disk"] % 10**9 == 0
            and "+" not in v["billing"]["nextRenewalAt"]
        )
        assert v["billing"]["priceMonthly"].isdigit() and v["createdAt"].endswith("+00:00")
        assert len(walk(p, "/vms?page=2")[0]) == total, "page is ignored: offset 0 again"
        hooks = walk(p, "/webhooks")[0]
        dels = [d for h in hooks for d in walk(p, f"/webhooks/{h['id']}/deliveries")[0]]
        assert {d["id"] for d in dels} == {d["id"] for d in after["deliveries_served"]}
        assert sorted(h["consecutive_failures"] for h in after["webhooks"]) == [0, 7, 50]
        assert {d["status"] for d in dels} == {0, 2} and 0 in {
            d["responseStatusCode"] for d in dels
        }
        st, _, b = call(p, "GET", "/webhooks", token=p.read_token)
        assert st == 403 and "webhooks:read" in b["error"]
        assert call(p, "GET", "/wallet")[2]["data"]["balance"] == "2318"
        run = next(x for x in after["vms"] if x["status_class"] == "running")
        assert [call(p, "POST", f"/vms/{run['id']}/stop")[0] for _ in "12"] == [201, 409]
        print(
            f"sable ok: {len(vms)} vms read of {total} (one skipped by the shift), "
            f"{len(dels)} deliveries"
        )
