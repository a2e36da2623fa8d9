# ruff: noqa: E501, E731, B904, B905, UP017  (written blind from the spec; kept as its author wrote it)
"""quill: a blind peer of the VM-hosting public API, written from the spec (api-spec.md) alone.

A small stateful HTTP server (standard library only) that answers the public API the way one
plausible real deployment might. Every point the spec leaves "not shown" is decided below,
one per line as "- point: choice"; `Peer.choices()` returns exactly these lines.

- base_path: canonical base is /api/v1/api/public/v1; any request under /api/public/v1 gets 308 Permanent Redirect (Location: same path and query under the canonical base, body a failure envelope); other paths 404
- paging: Graph-API style keyset paging; query `limit` (default 15, max 40, larger served silently as 40) and `after` (opaque cursor); reply {success, data: [...], paging: {cursors: {before, after}, next?: ABSOLUTE_URL}, summary: {totalCount}}; `next` is present only when more items exist, `cursors.after` is present on every non-empty page (also the last); `page`, `perPage`, `cursor` and every other unknown query parameter are ignored (so `page=2` serves the first page again); a bad `limit` or `after` is 400
- list_order: VMs newest createdAt first; firewalls by name; rules by position; networks by name; attachments oldest first; webhooks oldest first; deliveries newest first
- webhooks_list: GET /webhooks is paged exactly like every other list
- vm_list_items: GET /vms items are the full VM object minus `sshKeys` (firewalls and privateNetworks included)
- vm_status_words: provisioning=Building, running=Online, stopping=Powering Down, stopped=Powered Off, suspended=Locked, terminated=Decommissioned (title case, with spaces)
- billing_status_words: active=Current, overdue=Past Due, suspended=On Hold; `billing` is null for decommissioned VMs
- money: PayPal-style object {"currency_code": "GBP", "value": "12.50"} (value a decimal string with 2 places) for priceMonthly and wallet balance
- currency: account currency GBP; 4 VMs priced in USD
- price_location: most VMs state billing.priceMonthly (plan without price); 6 VMs state only plan.priceMonthly (billing without it); the rest state no price (key absent in both)
- time_format: ISO 8601 with seconds at offset -03:30 (e.g. 2026-03-14T05:56:53-03:30), no fraction
- clock: fixed at 2026-03-14T09:26:53Z; Date header always says that instant
- ram_unit: bytes (std-2gb has ram 2147483648)
- disk_unit: MiB (50 GiB disk is 51200)
- bandwidth_unit: `bandwidth` in GB (10^9 bytes) of monthly pack; networkSpeed in Mbit/s
- bandwidth_used: bandwidthUsedBytes a JSON float with integral value (e.g. 734003200.0); bandwidthPackBytes a decimal string
- next_renewal: null while a VM is Building; overdue (Past Due / On Hold) renewals lie in the past
- ids: UUID v4 strings for every resource
- scopes: firewalls and networks need networking:read / networking:write; GET /wallet needs account:read; the full token holds vms:read vms:write webhooks:read webhooks:write networking:read networking:write account:read
- status_401: missing header -> "Missing x-api-key header"; unknown token -> "Invalid API key"
- status_403: text lists the scopes the token holds, then names the one it lacks
- rate_limit: token bucket per token (600 capacity, refills 10/s); per-IP bucket (100, refills 100/min) only for unauthenticated requests; X-RateLimit-Reset = seconds until the bucket is full again
- text_429: "Rate limit exceeded on bucket public-api:token (600 requests per minute). Retry in N seconds" (per-IP: bucket global:ip, 100 per minute)
- stop: success 201 {actionId}; VM goes to Powering Down; a VM not Online is 409; unknown VM 404
- firewall_rule_port: "22", "80,443", "8000-8100"; all ports are "0-65535"; ICMP rules have port null
- firewall_rule_ips: sourceIps always an array (explicit 0.0.0.0/0 or ::/0 for anywhere, [] on OUT rules); destIps null when unrestricted; description null when empty
- patch_rule: any of position, port, sourceIps, destIps, description, direction, action, protocol; unknown fields ignored; {} is a no-op 200; wrong JSON type 400, value out of range 422; firewall "legacy-edge" fails upstream sync -> 502 and the rule is NOT changed (rolled back)
- networks: records {id, name, region, subnet, createdAt}; attachments list items include the `vm` object
- attach: success 202; vmId required; privateIp optional (IPv4 inside the subnet, else 422; taken 409); region mismatch 422; already attached 409; Decommissioned VM 409; unknown network or VM 404
- detach: success 200 {vmId, networkId}; VM not attached 404
- wallet: {id, createdAt, updatedAt, balance}
- webhook_record: {id, url, events, description, isActive, createdAt, updatedAt, lastResponse: {code, outcome, at} | null}; no failure counter is exposed
- webhook_create: 201 with `secret` (whsec_...); url must be https (422); events must be known (422); over 10 active subscriptions 400
- webhook_patch: 200 with the record; isActive true re-enables; unknown fields ignored
- delivery_record: one record per attempt {id, webhookId, eventUuid, eventType, attemptNumber, responseStatusCode (null on timeout), isSuccessful, attemptedAt, durationMs, errorMessage}
- delivery_history: only the newest 25 attempts per subscription are served (older ones are pruned)
- validation: malformed JSON or wrong types 400, values out of range 422, state conflicts 409 (region mismatch 422)
- other_errors: unknown path 404, wrong method 405 (with Allow), an unexpected server fault 500; every failure uses the failure envelope
- idempotency: Idempotency-Key on POST replays the first answer (header Idempotent-Replayed: true) for the same body; same key with another body is 422; keys never expire
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import ipaddress
import itertools
import json
import math
import random
import re
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

UTC = timezone.utc
WIRE_TZ = timezone(-timedelta(hours=3, minutes=30))
NOW = datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC)
CANON, ALT = "/api/v1/api/public/v1", "/api/public/v1"
PAGE_DEFAULT, PAGE_MAX, KEEP_DELIVERIES = 15, 40, 25
CUR, CUR2 = "GBP", "USD"
VM_WORDS = {
    "provisioning": "Building",
    "running": "Online",
    "stopping": "Powering Down",
    "stopped": "Powered Off",
    "suspended": "Locked",
    "terminated": "Decommissioned",
}
BILL_WORDS = {"active": "Current", "overdue": "Past Due", "suspended": "On Hold"}
REGIONS = {"ams-1": "Amsterdam 1", "yyz-1": "Toronto 1", "sin-1": "Singapore 1"}
# slug: (name, vcpu, ram MiB, disk GiB, pack GB, speed Mbit/s, list price GBP)
PLANS = {
    "std-512mb": ("Standard 512 MB", 1, 512, 10, 500, 500, "3.50"),
    "std-1gb": ("Standard 1 GB", 1, 1024, 25, 1000, 1000, "5.00"),
    "std-2gb": ("Standard 2 GB", 2, 2048, 50, 2000, 1000, "10.00"),
    "std-4gb": ("Standard 4 GB", 2, 4096, 80, 3000, 1000, "18.50"),
    "cpu-8gb": ("Compute 8 GB", 4, 8192, 120, 4000, 10000, "42.00"),
    "mem-16gb": ("Memory 16 GB", 2, 16384, 160, 5000, 10000, "57.25"),
}
OSES = [
    ("ubuntu-24.04", "Ubuntu", "24.04"),
    ("debian-12", "Debian", "12"),
    ("rocky-9", "Rocky Linux", "9.4"),
    ("custom-iso", "Custom ISO", None),
]
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
ALL_SCOPES = [
    "vms:read",
    "vms:write",
    "webhooks:read",
    "webhooks:write",
    "networking:read",
    "networking:write",
    "account:read",
]
ENUMS = {
    "direction": ("IN", "OUT"),
    "action": ("ACCEPT", "DROP", "REJECT"),
    "protocol": ("TCP", "UDP", "ICMP", "ESP", "GRE", "ANY"),
}
PORT_RE = re.compile(r"^\d{1,5}(-\d{1,5})?(,\d{1,5}(-\d{1,5})?)*$")
_strs = lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)
_ips_ok = lambda v: v is None or (len(v) <= 50 and all(len(x) <= 64 for x in v))
RULE_FIELDS = {  # field: (type check -> else 400, value check -> else 422, 422 text); other fields are ignored
    "position": (
        lambda v: isinstance(v, int) and not isinstance(v, bool),
        lambda v: 0 <= v <= 1000,
        "position must be between 0 and 1000",
    ),
    "port": (
        lambda v: v is None or isinstance(v, str),
        lambda v: v is None or (len(v) <= 64 and PORT_RE.match(v)),
        "port must look like 22, 80,443 or 8000-8100 (max 64 characters)",
    ),
    "sourceIps": (_strs, _ips_ok, "sourceIps allows at most 50 entries of at most 64 characters"),
    "destIps": (
        lambda v: v is None or _strs(v),
        _ips_ok,
        "destIps allows at most 50 entries of at most 64 characters",
    ),
    "description": (
        lambda v: v is None or isinstance(v, str),
        lambda v: v is None or len(v) <= 255,
        "description must be at most 255 characters",
    ),
    **{
        k: (
            lambda v: isinstance(v, str),
            lambda v, k=k: v in ENUMS[k],
            f"{k} must be one of {', '.join(e)}",
        )
        for k, e in ENUMS.items()
    },
}


def wtime(dt):  # the wire's time form
    return None if dt is None else dt.astimezone(WIRE_TZ).isoformat(timespec="seconds")


def ttime(dt):  # the truth's time form
    return None if dt is None else dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


dec = lambda x: Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
wmoney = lambda m: {"currency_code": m[1], "value": str(m[0])}
tmoney = lambda m: None if m is None else {"amount": str(m[0]), "currency": m[1]}
canon_port = lambda p: "any" if p == "0-65535" else p


def in_subnet(ip, subnet):
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(subnet)
    except ValueError:
        return False


class ApiError(Exception):
    status = property(lambda self: self.args[0])
    message = property(lambda self: self.args[1])


class Account:
    """The account's state, canonical inside; rendered to the wire by the *_wire methods."""

    def __init__(self, seed):
        rng = self.rng = random.Random(seed)
        self.uid = lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))
        secs = lambda lo, hi: timedelta(seconds=rng.randint(lo, hi))
        day = 86400
        self.ssh_keys = [
            {
                "id": self.uid(),
                "name": n,
                "fingerprint": "SHA256:" + base64.b64encode(rng.randbytes(32)).decode().rstrip("="),
            }
            for n in ("laptop", "ci-deploy", "ops-yubikey")
        ]
        # firewalls and rules: (direction, action, protocol, port, sourceIps, destIps, description)
        fw_spec = {
            "web-public": [
                ("IN", "ACCEPT", "TCP", "80,443", ["0.0.0.0/0", "::/0"], None, "http and https"),
                ("IN", "ACCEPT", "TCP", "8000-8100", ["203.0.113.0/24"], None, "app ports"),
                ("IN", "ACCEPT", "ICMP", None, ["0.0.0.0/0"], None, "ping"),
                ("IN", "DROP", "ANY", "0-65535", ["0.0.0.0/0"], None, "deny the rest"),
                ("OUT", "ACCEPT", "ANY", "0-65535", [], None, None),
            ],
            "admin-access": [
                ("IN", "ACCEPT", "TCP", "22", ["0.0.0.0/0"], None, "ssh from anywhere"),
                ("IN", "ACCEPT", "TCP", "3389", ["0.0.0.0/0", "::/0"], None, "rdp"),
                ("IN", "ACCEPT", "TCP", "22", ["198.51.100.7/32"], None, "office"),
                ("IN", "REJECT", "UDP", "161", ["0.0.0.0/0"], None, None),
            ],
            "db-private": [
                ("IN", "ACCEPT", "TCP", "5432", ["10.20.0.0/24"], None, "postgres"),
                ("IN", "ACCEPT", "TCP", "6379", ["10.20.0.0/24", "10.30.0.0/24"], None, "redis"),
                ("IN", "DROP", "TCP", "22", ["0.0.0.0/0"], None, "no ssh"),
            ],
            "legacy-edge": [
                ("IN", "ACCEPT", "ANY", "0-65535", ["::/0"], None, "temporary - remove"),
                ("IN", "ACCEPT", "TCP", "21", ["0.0.0.0/0"], None, "ftp"),
                ("IN", "ACCEPT", "TCP", "3380-3390", ["0.0.0.0/0"], None, None),
                ("IN", "ACCEPT", "UDP", "51820", ["0.0.0.0/0"], None, "wireguard"),
                ("OUT", "ACCEPT", "TCP", "25", [], ["0.0.0.0/0"], "smtp out"),
                ("IN", "ACCEPT", "TCP", "22", ["192.0.2.10"], None, "jump host"),
            ],
        }
        self.firewalls, self.rules = [], []
        for name, rules in fw_spec.items():
            created = NOW - secs(200 * day, 600 * day)
            fw = {
                "id": self.uid(),
                "name": name,
                "created": created,
                "broken": name == "legacy-edge",
                "description": f"{name} rules",
            }
            self.firewalls.append(fw)
            for i, (d, a, p, port, src, dst, desc) in enumerate(rules):
                rc = created + secs(60, 90 * day)
                self.rules.append(
                    {
                        "id": self.uid(),
                        "firewallId": fw["id"],
                        "position": 10 * (i + 1),
                        "direction": d,
                        "action": a,
                        "protocol": p,
                        "port": port,
                        "sourceIps": list(src),
                        "destIps": dst,
                        "description": desc,
                        "created": rc,
                        "updated": rc + secs(0, 30 * day),
                    }
                )
        self.firewalls.sort(key=lambda f: f["name"])
        # VMs
        statuses = (
            ["running"] * 58
            + ["stopped"] * 12
            + ["provisioning"] * 5
            + ["stopping"] * 3
            + ["suspended"] * 6
            + ["terminated"] * 7
        )
        rng.shuffle(statuses)
        billable = [i for i, s in enumerate(statuses) if s != "terminated"]
        rng.shuffle(billable)
        mode = {i: "usd" for i in billable[:4]}
        mode.update({i: "plan" for i in billable[4:10]})
        mode.update({i: "none" for i in billable[10:15]})
        roles = ["web", "api", "db", "cache", "worker", "build", "mail", "vpn", "edge", "batch"]
        self.vms = []
        for i, st in enumerate(statuses):
            region = list(REGIONS)[i % 3]
            plan = rng.choice(list(PLANS))
            pname, vcpu, ram, disk, pack_gb, speed, list_price = PLANS[plan]
            created = NOW - (secs(60, 3600) if st == "provisioning" else secs(day, 500 * day))
            m = mode.get(i, "gbp")
            billing = None
            plan_price = (dec(list_price), CUR) if m == "plan" else None
            if st != "terminated":
                if st == "suspended":
                    bst, renew = "suspended", NOW - secs(5 * day, 40 * day)
                elif st == "provisioning":
                    bst, renew = "active", None
                else:
                    renew = (
                        NOW - secs(day, 25 * day)
                        if rng.random() < 0.12
                        else NOW + secs(3600, 60 * day)
                    )
                    bst = "overdue" if renew < NOW else "active"
                price = None
                if m == "gbp":
                    price = (
                        dec(
                            Decimal(list_price)
                            * Decimal(rng.choice(["1", "1", "1", "0.9", "0.85"]))
                        ),
                        CUR,
                    )
                elif m == "usd":
                    price = (dec(Decimal(list_price) * Decimal("1.27")), CUR2)
                billing = {"price": price, "renew": renew, "status": bst}
            pack = pack_gb * 10**9
            os_ = None if rng.random() < 0.08 else rng.choice(OSES)
            name = f"{roles[i % len(roles)]}-{region[:3]}-{i:02d}"
            self.vms.append(
                {
                    "id": self.uid(),
                    "name": name,
                    "hostname": f"{name}.vm.quill-hosting.net",
                    "status": st,
                    "vcpu": vcpu,
                    "ram_mib": ram,
                    "disk_gib": disk,
                    "bw_gb": pack_gb,
                    "speed": speed,
                    "n10g": speed >= 10000,
                    "backup": rng.random() < 0.4,
                    "protected": rng.random() < 0.2,
                    "ip": None
                    if st in ("provisioning", "terminated")
                    else f"185.{rng.randint(10, 250)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
                    "region": region,
                    "plan": plan,
                    "plan_price": plan_price,
                    "os": os_,
                    "billing": billing,
                    "created": created,
                    "updated": created + (NOW - created) * rng.random(),
                    "used": 0 if st == "provisioning" else int(pack * rng.random() * 1.15),
                    "pack": pack,
                    "ssh": rng.sample(self.ssh_keys, rng.randint(0, 2)),
                    "fw_ids": [
                        f["id"] for f in rng.sample(self.firewalls, rng.choice([0, 1, 1, 2]))
                    ],
                }
            )
            self.vms[-1]["updated"] = self.vms[-1]["updated"].replace(microsecond=0)
        self.vms.sort(key=lambda v: v["created"], reverse=True)
        self.vm_by_id = {v["id"]: v for v in self.vms}
        # networks and attachments
        self.networks = [
            {
                "id": self.uid(),
                "name": n,
                "region": r,
                "subnet": s,
                "created": NOW - secs(100 * day, 300 * day),
            }
            for n, r, s in (
                ("backend-ams", "ams-1", "10.20.0.0/24"),
                ("backend-yyz", "yyz-1", "10.30.0.0/24"),
            )
        ]
        self.attachments = []
        for net, count in zip(self.networks, (3, 2)):
            cands = [
                v for v in self.vms if v["region"] == net["region"] and v["status"] == "running"
            ]
            for v in rng.sample(cands, count):
                self._attach(net, v, None, NOW - secs(day, 90 * day))
        self.attachments.sort(key=lambda a: a["attached"])
        self.wallet = {
            "id": self.uid(),
            "created": NOW - timedelta(days=720),
            "updated": NOW - secs(3600, 5 * day),
            "balance": (dec("23.18"), CUR),
        }
        # webhooks and their delivery history (one record per attempt)
        self.webhooks, self.deliveries = [], []
        hooks = [
            (
                "https://hooks.example.org/svc/vm",
                ["vm.created", "vm.stopped", "vm.started", "vm.terminated"],
                True,
                ["s"] * 9 + ["fs"] + ["s"] * 6 + ["fff"] + ["s"] * 4 + ["ffs"] + ["s"] * 3,
            ),
            (
                "https://billing.example.net/hooks/quill",
                ["billing.payment_received", "billing.low_balance", "vm.renewed"],
                False,
                ["s", "s", "fs", "s", "s", "fff"],
            ),
            (
                "https://ops-bot.example.com/incoming",
                ["vm.suspended", "ticket.reply", "vm.restarted"],
                True,
                ["s"] * 8 + ["fs"] + ["s"] * 2 + ["fff"] * 12 + ["f"],
            ),
        ]
        for url, events, active, plan in hooks:
            hid, start = self.uid(), NOW - timedelta(days=9)
            self.webhooks.append(
                {
                    "id": hid,
                    "url": url,
                    "events": events,
                    "description": url.split("/")[2],
                    "active": active,
                    "created": start - secs(day, 60 * day),
                    "updated": start,
                }
            )
            step = (NOW - start) / len(plan)
            for n, outcome in enumerate(plan):
                t0 = (start + step * n + secs(0, 600)).replace(microsecond=0)
                eid, ev = self.uid(), rng.choice(events)
                for k, ch in enumerate(outcome, 1):
                    code = (
                        rng.choice([200, 200, 204, 202])
                        if ch == "s"
                        else rng.choice([500, 502, 503, 404, None])
                    )
                    self.deliveries.append(
                        {
                            "webhook_id": hid,
                            "id": self.uid(),
                            "event_id": eid,
                            "event": ev,
                            "attempt": k,
                            "status_code": code,
                            "success": ch == "s",
                            "at": t0 + timedelta(seconds=10 * (2 ** (k - 1) - 1)),
                            "ms": 15000 if code is None else rng.randint(40, 2500),
                            "error": None
                            if ch == "s"
                            else ("timed out after 15 s" if code is None else f"HTTP {code}"),
                        }
                    )
            self.webhooks[-1]["updated"] = self.deliveries[-1]["at"] if not active else start
        self.webhooks.sort(key=lambda h: h["created"])
        self.tokens = {
            "svc_" + rng.randbytes(20).hex(): set(ALL_SCOPES),
            "svc_" + rng.randbytes(20).hex(): {"vms:read"},
        }

    # ---- state helpers
    def _attach(self, net, vm, ip, when):
        taken = {a["privateIp"] for a in self.attachments if a["networkId"] == net["id"]}
        if ip is None:
            ip = next(
                str(h)
                for h in list(ipaddress.ip_network(net["subnet"]).hosts())[9:]
                if str(h) not in taken
            )
        nics = sum(1 for a in self.attachments if a["vmId"] == vm["id"])
        att = {
            "id": self.uid(),
            "vmId": vm["id"],
            "networkId": net["id"],
            "privateIp": ip,
            "netInterface": f"eth{nics + 1}",
            "attached": when,
        }
        self.attachments.append(att)
        return att

    def find(self, items, id_, what):
        if (it := next((it for it in items if it["id"] == id_), None)) is None:
            raise ApiError(404, f"{what} {id_} not found")
        return it

    # ---- wire forms
    def vm_wire(self, v, full=True):
        pname = PLANS[v["plan"]][0]
        plan = {"slug": v["plan"], "name": pname}
        if v["plan_price"]:
            plan["priceMonthly"] = wmoney(v["plan_price"])
        b = v["billing"]
        billing = None
        if b is not None:
            billing = {"nextRenewalAt": wtime(b["renew"]), "status": BILL_WORDS[b["status"]]}
            if b["price"]:
                billing = {"priceMonthly": wmoney(b["price"]), **billing}
        nets = {a["networkId"] for a in self.attachments if a["vmId"] == v["id"]}
        d = {
            "id": v["id"],
            "name": v["name"],
            "hostname": v["hostname"],
            "status": VM_WORDS[v["status"]],
            "vcpu": v["vcpu"],
            "ram": v["ram_mib"] * 1048576,
            "disk": v["disk_gib"] * 1024,
            "bandwidth": v["bw_gb"],
            "networkSpeed": v["speed"],
            "network10gEnabled": v["n10g"],
            "dailyBackupEnabled": v["backup"],
            "isProtected": v["protected"],
            "ipAddress": v["ip"],
            "region": {"slug": v["region"], "name": REGIONS[v["region"]]},
            "plan": plan,
            "osTemplate": None
            if v["os"] is None
            else dict(zip(("slug", "name", "version"), v["os"])),
            "billing": billing,
            "createdAt": wtime(v["created"]),
            "bandwidthUsedBytes": float(v["used"]),
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
            del d["sshKeys"]
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
            "destIps": None if r["destIps"] is None else list(r["destIps"]),
            "description": r["description"],
            "createdAt": wtime(r["created"]),
            "updatedAt": wtime(r["updated"]),
        }

    def att_wire(self, a):
        v = self.vm_by_id[a["vmId"]]
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
                "status": VM_WORDS[v["status"]],
            },
        }

    def hook_wire(self, h):
        last = [d for d in self.deliveries if d["webhook_id"] == h["id"]][-1:]
        lr = (
            None
            if not last
            else {
                "code": last[0]["status_code"],
                "outcome": "delivered" if last[0]["success"] else "failed",
                "at": wtime(last[0]["at"]),
            }
        )
        return {
            "id": h["id"],
            "url": h["url"],
            "events": list(h["events"]),
            "description": h["description"],
            "isActive": h["active"],
            "createdAt": wtime(h["created"]),
            "updatedAt": wtime(h["updated"]),
            "lastResponse": lr,
        }

    def delivery_wire(self, d):
        return {
            "id": d["id"],
            "webhookId": d["webhook_id"],
            "eventUuid": d["event_id"],
            "eventType": d["event"],
            "attemptNumber": d["attempt"],
            "responseStatusCode": d["status_code"],
            "isSuccessful": d["success"],
            "attemptedAt": wtime(d["at"]),
            "durationMs": d["ms"],
            "errorMessage": d["error"],
        }

    def served_deliveries(self, hid):
        return [d for d in self.deliveries if d["webhook_id"] == hid][-KEEP_DELIVERIES:]

    # ---- truth
    def truth(self):
        def price(v):
            if v["billing"] and v["billing"]["price"]:
                return tmoney(v["billing"]["price"])
            return tmoney(v["plan_price"])

        streak = lambda hid: len(
            list(
                itertools.takewhile(
                    lambda d: not d["success"],
                    reversed([d for d in self.deliveries if d["webhook_id"] == hid]),
                )
            )
        )

        dl = lambda d: {
            "webhook_id": d["webhook_id"],
            "id": d["id"],
            "status_code": d["status_code"],
            "success": d["success"],
            "attempts": d["attempt"],
            "created_at": ttime(d["at"]),
        }
        return {
            "currency": CUR,
            "vms": [
                {
                    "id": v["id"],
                    "name": v["name"],
                    "status_class": v["status"],
                    "billing_status_class": v["billing"]["status"] if v["billing"] else None,
                    "price_monthly": price(v),
                    "ram_mib": v["ram_mib"],
                    "disk_gib": v["disk_gib"],
                    "next_renewal_at": ttime(v["billing"]["renew"]) if v["billing"] else None,
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
            "wallet": {"balance": tmoney(self.wallet["balance"])},
            "firewalls": [{"id": f["id"], "name": f["name"]} for f in self.firewalls],
            "rules": [
                {
                    "id": r["id"],
                    "firewall_id": r["firewallId"],
                    "port": canon_port(r["port"]),
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
            "now": ttime(NOW),
        }


class Peer:
    """The running server; `base_url`, `token` (every scope), `read_token` (vms:read only)."""

    def __init__(self, seed=1, rate_per_minute=600):
        self.account = Account(seed)
        self.lock = threading.RLock()
        self.rate = rate_per_minute
        self.buckets, self.idem = {}, {}
        self.token, self.read_token = list(self.account.tokens)
        self.base_url = ""
        self.routes = [
            (m, re.compile(p + "$"), s, getattr(self, f))
            for m, p, s, f in (
                ("GET", r"/vms", "vms:read", "list_vms"),
                ("GET", r"/vms/([^/]+)", "vms:read", "get_vm"),
                ("POST", r"/vms/([^/]+)/stop", "vms:write", "stop_vm"),
                ("GET", r"/firewalls", "networking:read", "list_fws"),
                ("GET", r"/firewalls/([^/]+)/rules", "networking:read", "list_rules"),
                ("PATCH", r"/firewalls/([^/]+)/rules/([^/]+)", "networking:write", "patch_rule"),
                ("GET", r"/networks", "networking:read", "list_nets"),
                ("GET", r"/networks/([^/]+)/attachments", "networking:read", "list_atts"),
                ("POST", r"/networks/([^/]+)/attachments", "networking:write", "attach"),
                ("DELETE", r"/networks/([^/]+)/attachments/([^/]+)", "networking:write", "detach"),
                ("GET", r"/wallet", "account:read", "wallet"),
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
        return dict(ln[2:].split(": ", 1) for ln in __doc__.splitlines() if ln.startswith("- "))

    # ---- plumbing
    def take(self, key, cap, per_sec):
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(key, (float(cap), now))
            tokens = min(float(cap), tokens + (now - last) * per_sec)
            ok = tokens >= 1
            tokens -= ok
            self.buckets[key] = (tokens, now)
        hdr = {
            "X-RateLimit-Limit": str(cap),
            "X-RateLimit-Remaining": str(int(tokens)),
            "X-RateLimit-Reset": str(math.ceil((cap - tokens) / per_sec)),
        }
        return ok, (0 if ok else math.ceil((1 - tokens) / per_sec)), hdr

    def page(self, req, items, render):
        q = req["query"]
        limit = q.get("limit", str(PAGE_DEFAULT))
        if not limit.isdigit() or int(limit) < 1:
            raise ApiError(400, "limit must be a positive integer")
        limit, start = min(int(limit), PAGE_MAX), 0
        if "after" in q:
            try:
                key = base64.urlsafe_b64decode(q["after"] + "=" * (-len(q["after"]) % 4)).decode()
                assert key.startswith("k1:")
                start = [it["id"] for it in items].index(key[3:]) + 1
            except Exception:
                raise ApiError(400, "after: invalid or expired cursor")
        chunk = items[start : start + limit]
        enc = lambda it: base64.urlsafe_b64encode(f"k1:{it['id']}".encode()).decode().rstrip("=")
        paging = {
            "cursors": {
                "before": enc(chunk[0]) if chunk else None,
                "after": enc(chunk[-1]) if chunk else None,
            }
        }
        if start + limit < len(items):
            paging["next"] = f"http://{req['host']}{CANON}{req['sub']}?" + urlencode(
                {"limit": limit, "after": enc(chunk[-1])}
            )
        return 200, {
            "success": True,
            "data": [render(it) for it in chunk],
            "paging": paging,
            "summary": {"totalCount": len(items)},
        }

    def handle(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        raw, u = h.rfile.read(length) if length else b"", urlsplit(h.path)
        path, ip_key = u.path.rstrip("/") or "/", ("ip", h.client_address[0])
        fail = lambda status, msg, hdr: self.send(h, status, {"success": False, "error": msg}, hdr)
        if path == ALT or path.startswith(ALT + "/"):
            loc = CANON + path[len(ALT) :] + ("?" + u.query if u.query else "")
            return fail(
                308,
                f"Moved permanently to {loc}",
                {**self.take(ip_key, 100, 100 / 60)[2], "Location": loc},
            )
        if not (path == CANON or path.startswith(CANON + "/")):
            return fail(404, f"No such resource: {path}", self.take(ip_key, 100, 100 / 60)[2])
        sub, key = path[len(CANON) :] or "/", h.headers.get("x-api-key")
        scopes = self.account.tokens.get(key) if key else None
        bucket = ("global:ip", 100) if scopes is None else ("public-api:token", self.rate)
        ok, wait, rl = self.take(
            ip_key if scopes is None else ("token", key), bucket[1], bucket[1] / 60
        )
        if not ok:
            return fail(
                429,
                f"Rate limit exceeded on bucket {bucket[0]} ({bucket[1]} requests per minute). "
                f"Retry in {wait} seconds",
                {**rl, "Retry-After": str(wait)},
            )
        if scopes is None:
            return fail(401, "Missing x-api-key header" if not key else "Invalid API key", rl)
        found, allowed = None, []
        for m, rx, scope, fn in self.routes:
            mt = rx.match(sub)
            if mt:
                allowed.append(m)
                if m == h.command:
                    found = (scope, fn, [unquote(g) for g in mt.groups()])
        if found is None and allowed:
            return fail(
                405, f"Method {h.command} not allowed on {sub}", {**rl, "Allow": ", ".join(allowed)}
            )
        if found is None:
            return fail(404, f"No such endpoint: {h.command} {sub}", rl)
        scope, fn, args = found
        if scope not in scopes:
            return fail(
                403,
                f"This API key has scopes [{', '.join(sorted(scopes))}]; "
                f"{h.command} {sub} requires the '{scope}' scope",
                rl,
            )
        idem = h.headers.get("Idempotency-Key") if h.command == "POST" else None
        fp = hashlib.sha256(h.command.encode() + sub.encode() + raw).hexdigest()
        with self.lock:
            if idem and (key, idem) in self.idem:
                ofp, st, body = self.idem[(key, idem)]
                if ofp != fp:
                    return fail(
                        422, "Idempotency-Key was already used with a different request", rl
                    )
                return self.send(h, st, body, {**rl, "Idempotent-Replayed": "true"})
            req = {
                "query": {k: v[-1] for k, v in parse_qs(u.query).items()},
                "raw": raw,
                "host": h.headers.get("Host", "127.0.0.1"),
                "sub": sub,
            }
            try:
                st, body = fn(req, *args)
            except ApiError as e:
                st, body = e.status, {"success": False, "error": e.message}
            except Exception as e:  # a bug here must still answer in the envelope
                st, body = (
                    500,
                    {"success": False, "error": f"Internal server error ({type(e).__name__})"},
                )
            if idem and st < 500:
                self.idem[(key, idem)] = (fp, st, body)
        return self.send(h, st, body, rl)

    def send(self, h, status, body, headers):
        data = json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    @staticmethod
    def body(req):
        try:
            b = json.loads(req["raw"] or b"null")
        except ValueError as e:
            raise ApiError(400, f"Malformed JSON body: {e}")
        if not isinstance(b, dict):
            raise ApiError(400, "Request body must be a JSON object")
        return b

    # ---- endpoints
    def list_vms(self, req):
        return self.page(req, self.account.vms, lambda v: self.account.vm_wire(v, full=False))

    def get_vm(self, req, vid):
        return 200, {
            "success": True,
            "data": self.account.vm_wire(self.account.find(self.account.vms, vid, "VM")),
        }

    def stop_vm(self, req, vid):
        v = self.account.find(self.account.vms, vid, "VM")
        if v["status"] != "running":
            raise ApiError(
                409, f"VM {vid} is {VM_WORDS[v['status']]}; only Online VMs can be stopped"
            )
        v["status"], v["updated"] = "stopping", NOW
        return 201, {"success": True, "data": {"actionId": self.account.uid()}}

    def list_fws(self, req):
        a = self.account
        return self.page(
            req,
            a.firewalls,
            lambda f: {
                "id": f["id"],
                "name": f["name"],
                "description": f["description"],
                "createdAt": wtime(f["created"]),
                "ruleCount": sum(1 for r in a.rules if r["firewallId"] == f["id"]),
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
        rule = a.find([r for r in a.rules if r["firewallId"] == fid], rid, "Rule")
        new = {k: v for k, v in self.body(req).items() if k in RULE_FIELDS}
        for k, v in new.items():
            typed, valid, text = RULE_FIELDS[k]
            if not typed(v):
                raise ApiError(400, f"{k} has the wrong type")
            if not valid(v):
                raise ApiError(422, text)
        if new and fw["broken"]:
            raise ApiError(502, "Upstream security group sync failed; the rule was left unchanged")
        if new:
            rule.update(new)
            rule["updated"] = NOW
        return 200, {"success": True, "data": a.rule_wire(rule)}

    def list_nets(self, req):
        return self.page(
            req,
            sorted(self.account.networks, key=lambda n: n["name"]),
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
        a.find(a.networks, nid, "Network")
        return self.page(req, [x for x in a.attachments if x["networkId"] == nid], a.att_wire)

    def attach(self, req, nid):
        a = self.account
        b = self.body(req)
        net = a.find(a.networks, nid, "Network")
        vid, ip = b.get("vmId"), b.get("privateIp")
        if vid is None:
            raise ApiError(422, "vmId is required")
        if not isinstance(vid, str) or (ip is not None and not isinstance(ip, str)):
            raise ApiError(400, "vmId and privateIp must be strings")
        vm = a.find(a.vms, vid, "VM")
        if vm["region"] != net["region"]:
            raise ApiError(
                422, f"VM region {vm['region']} differs from network region {net['region']}"
            )
        if vm["status"] == "terminated":
            raise ApiError(409, f"VM {vid} is Decommissioned")
        if any(x["vmId"] == vid and x["networkId"] == nid for x in a.attachments):
            raise ApiError(409, f"VM {vid} is already attached to network {nid}")
        if ip is not None:
            if not in_subnet(ip, net["subnet"]):
                raise ApiError(422, f"privateIp must be an IPv4 address inside {net['subnet']}")
            if any(x["privateIp"] == ip and x["networkId"] == nid for x in a.attachments):
                raise ApiError(409, f"privateIp {ip} is already in use on network {nid}")
        att = a._attach(net, vm, ip, NOW)
        vm["updated"] = NOW
        return 202, {"success": True, "data": a.att_wire(att)}

    def detach(self, req, nid, vid):
        a = self.account
        a.find(a.networks, nid, "Network")
        att = [x for x in a.attachments if x["networkId"] == nid and x["vmId"] == vid]
        if not att:
            raise ApiError(404, f"VM {vid} is not attached to network {nid}")
        a.attachments.remove(att[0])
        if vid in a.vm_by_id:
            a.vm_by_id[vid]["updated"] = NOW
        return 200, {"success": True, "data": {"vmId": vid, "networkId": nid}}

    def wallet(self, req):
        w = self.account.wallet
        return 200, {
            "success": True,
            "data": {
                "id": w["id"],
                "createdAt": wtime(w["created"]),
                "updatedAt": wtime(w["updated"]),
                "balance": wmoney(w["balance"]),
            },
        }

    def list_hooks(self, req):
        return self.page(req, self.account.webhooks, self.account.hook_wire)

    def _hook_fields(self, b, h):
        checks = {
            "url": (
                str,
                lambda v: v.startswith("https://") and len(v) > 8,
                "url must be an https:// URL",
            ),
            "events": (
                list,
                lambda v: v and all(e in EVENTS for e in v),
                f"events must be a non-empty array of: {', '.join(EVENTS)}",
            ),
            "description": (
                str,
                lambda v: len(v) <= 255,
                "description must be at most 255 characters",
            ),
            "isActive": (bool, lambda v: True, ""),
        }
        for k, (typ, valid, text) in checks.items():
            if k in b:
                v = b[k]
                if not isinstance(v, typ) or (
                    typ is list and not all(isinstance(x, str) for x in v)
                ):
                    raise ApiError(400, f"{k} has the wrong type")
                if not valid(v):
                    raise ApiError(422, text)
                h["active" if k == "isActive" else k] = list(v) if typ is list else v

    def create_hook(self, req):
        a, b = self.account, self.body(req)
        if "url" not in b or "events" not in b:
            raise ApiError(422, "url and events are required")
        h = {
            "id": a.uid(),
            "url": None,
            "events": [],
            "description": "",
            "active": True,
            "created": NOW,
            "updated": NOW,
        }
        self._hook_fields({k: v for k, v in b.items() if k != "isActive"}, h)
        if sum(1 for x in a.webhooks if x["active"]) >= 10:
            raise ApiError(
                400,
                "Webhook subscription limit reached: at most 10 active subscriptions per account",
            )
        a.webhooks.append(h)
        return 201, {
            "success": True,
            "data": {**a.hook_wire(h), "secret": "whsec_" + a.rng.randbytes(24).hex()},
        }

    def patch_hook(self, req, hid):
        a = self.account
        h = a.find(a.webhooks, hid, "Webhook")
        b, new = self.body(req), dict(h)
        self._hook_fields(b, new)
        if new["active"] and not h["active"] and sum(1 for x in a.webhooks if x["active"]) >= 10:
            raise ApiError(
                400,
                "Webhook subscription limit reached: at most 10 active subscriptions per account",
            )
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
    server_version = "quill/1.0"

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
    t = threading.Thread(target=srv.serve_forever, name="quill-peer", daemon=True)
    t.start()
    try:
        yield peer
    finally:
        srv.shutdown()
        srv.server_close()
        t.join(5)


if __name__ == "__main__":
    import http.client
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

    def fetch_all(peer, path):  # follow paging.next until it is absent
        out, url = [], path + "?page=1&perPage=100&limit=100"
        while url:
            st, hd, body = call(peer, "GET", url)
            assert st == 200 and "X-RateLimit-Remaining" in hd and hd["Date"].endswith("GMT"), (
                path,
                st,
                hd,
            )
            out, total, url = (
                out + body["data"],
                body["summary"]["totalCount"],
                body["paging"].get("next"),
            )
        assert len(out) == total == len({x["id"] for x in out}), (path, len(out), total)
        return out

    with serve(seed=1) as p:
        t, ids = p.truth(), lambda xs: sorted(x["id"] for x in xs)
        vms, fws, nets, hooks = (
            fetch_all(p, x) for x in ("/vms", "/firewalls", "/networks", "/webhooks")
        )
        rules = [r for f in fws for r in fetch_all(p, f"/firewalls/{f['id']}/rules")]
        atts = [x for n in nets for x in fetch_all(p, f"/networks/{n['id']}/attachments")]
        dels = [d for h in hooks for d in fetch_all(p, f"/webhooks/{h['id']}/deliveries")]
        for got, key in (
            (vms, "vms"),
            (fws, "firewalls"),
            (rules, "rules"),
            (nets, "networks"),
            (atts, "attachments"),
            (hooks, "webhooks"),
            (dels, "deliveries_served"),
        ):
            assert ids(got) == ids(t[key]), key
        assert (
            len(dels) < len(t["deliveries_all"])
            and max(h["consecutive_failures"] for h in t["webhooks"]) >= 30
        )
        assert "sshKeys" not in vms[0] and "firewalls" in vms[0]
        st, _, b = call(p, "GET", "/vms?page=2&perPage=50")  # no limit: default size, page ignored
        assert len(b["data"]) == PAGE_DEFAULT and b["data"][0]["id"] == vms[0]["id"]
        tv = t["vms"][0]
        v = call(p, "GET", f"/vms/{tv['id']}")[2]["data"]
        assert v["ram"] == tv["ram_mib"] * 1048576 and v["createdAt"].endswith("-03:30")
        assert ttime(datetime.fromisoformat(v["createdAt"])) == tv["created_at"]
        assert (
            sum(
                1 for x in t["vms"] if x["price_monthly"] and x["price_monthly"]["currency"] == CUR2
            )
            >= 3
        )
        assert call(p, "GET", "/wallet")[2]["data"]["balance"]["currency_code"] == CUR
        assert (
            call(p, "GET", "/vms/nope")[0] == 404
            and call(p, "GET", "/vms", token="svc_bogus")[0] == 401
        )
        st, _, b = call(p, "GET", "/wallet", token=p.read_token)
        assert st == 403 and "vms:read" in b["error"] and "account:read" in b["error"]
        c = http.client.HTTPConnection(p.base_url[7:])
        c.request("GET", ALT + "/vms?limit=2", headers={"x-api-key": p.token})
        r = c.getresponse()
        assert r.status == 308 and r.getheader("Location") == CANON + "/vms?limit=2" and r.read()
        c.close()
        run = next(x for x in t["vms"] if x["status_class"] == "running")
        assert [call(p, "POST", f"/vms/{run['id']}/stop")[0] for _ in "12"] == [201, 409]
        assert (
            next(x for x in p.truth()["vms"] if x["id"] == run["id"])["status_class"] == "stopping"
        )
        fw_ok, fw_bad = (
            next(f["id"] for f in fws if f["name"] == n) for n in ("admin-access", "legacy-edge")
        )
        r0, r1 = (next(r["id"] for r in rules if r["firewallId"] == f) for f in (fw_ok, fw_bad))
        st, _, b = call(
            p, "PATCH", f"/firewalls/{fw_ok}/rules/{r0}", body={"sourceIps": ["10.0.0.0/8"]}
        )
        assert st == 200 and b["data"]["sourceIps"] == ["10.0.0.0/8"]
        assert call(p, "PATCH", f"/firewalls/{fw_bad}/rules/{r1}", body={"port": "443"})[0] == 502
        assert call(p, "PATCH", f"/firewalls/{fw_ok}/rules/{r0}", body={"position": 5000})[0] == 422
        net = nets[0]["id"]
        cand = next(
            x["id"]
            for x in t["vms"]
            if x["region_slug"] == nets[0]["region"]["slug"]
            and x["status_class"] == "running"
            and x["id"] not in {a["vmId"] for a in atts}
        )
        codes = [
            call(p, "POST", f"/networks/{net}/attachments", body={"vmId": cand})[0] for _ in "12"
        ]
        assert (
            codes == [202, 409]
            and call(p, "DELETE", f"/networks/{net}/attachments/{cand}")[0] == 200
        )
        st, _, b = call(
            p, "POST", "/webhooks", body={"url": "https://x.example/h", "events": ["vm.stopped"]}
        )
        assert st == 201 and b["data"]["secret"].startswith("whsec_")
        assert (
            call(
                p, "POST", "/webhooks", body={"url": "http://x.example/h", "events": ["vm.stopped"]}
            )[0]
            == 422
        )
        off = next(h["id"] for h in t["webhooks"] if not h["is_active"])
        assert (
            call(p, "PATCH", f"/webhooks/{off}", body={"isActive": True})[2]["data"]["isActive"]
            is True
        )
        print(
            f"quill ok: {len(vms)} vms, {len(rules)} rules, {len(atts)} attachments, "
            f"{len(dels)}/{len(t['deliveries_all'])} deliveries served, {len(p.choices())} choices"
        )
