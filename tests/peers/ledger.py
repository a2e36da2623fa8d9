# ruff: noqa: E501, E731, B904, B905, B023, UP017, I001  (written blind from the spec; kept as its author wrote it)
"""ledger: a blind peer of the VM-hosting public API, written from the specification alone.

A small stateful HTTP server (standard library only) speaking the spec's envelopes, auth,
limits and endpoints, with its own choice wherever the spec says "not shown":

- base path: `/api/public/v1` only; anything under `/api/v1/` answers 410 Gone (failure envelope naming the canonical prefix); other paths 404
- paging: Stripe-style cursor: `?limit=N&starting_after=<last id>` (or `ending_before=<first id>`); answer `{success, data: {object: "list", data: [...], has_more, url}}` (the items are at data.data)
- page size: default 15, 1..80; a limit outside that is a 400 (no clamping)
- totals: no total unless asked with `include[]=total_count` (then `data.total_count`)
- unknown query parameters on lists: 400 "Received unknown parameter: NAME" (page, perPage, offset, cursor included)
- order: newest first (createdAt descending) for every list except rules (position ascending)
- every list is paged the same way, webhooks and deliveries included
- ids: VM ids are zero-padded numeric strings (`"0048213"`); others prefixed (`fw_`, `fwr_`, `pn_`, `pna_`, `wh_`, `dlv_`, `evt_`, `act_`, `wal_`)
- timestamps: ISO 8601 *basic* format in UTC, `20290817T130441Z` (every date-time field)
- server clock: starts at 2029-08-17T13:04:41Z and advances with real time; the `Date` header states it
- VM status words (French snake_case): provisioning=en_creation, running=en_marche, stopping=en_arret, stopped=arrete, suspended=suspendu, terminated=supprime
- billing status words: active=a_jour, overdue=impaye, suspended=bloque; billing is null for terminated VMs and for none else
- money priceMonthly: only in `billing.priceMonthly`, a string with a currency symbol and thousands separator: `"€14.90"`, `"€1,290.00"`; a few VMs (region nyc1) are billed in USD written `"$16.39"` (ambiguous: `$` alone does not name the currency)
- plan.priceMonthly: never present; a VM without a stated price has billing without the `priceMonthly` key
- wallet: `{id, balance, currency, createdAt, updatedAt}`; `balance` an integer of cents (`184307` = 1843.07) with no unit stated; `currency` lowercase (`"eur"`), stated only on the wallet
- ram and disk: KiB (libvirt style): 4 GiB ram is `4194304`; plan slugs/names state ram and disk in GB (`g2-4gb`, `General 4GB / 80GB`)
- bandwidth: TB per month (integer); networkSpeed: Mbit/s; bandwidthUsedBytes: a JSON float (`48213411840.0`); bandwidthPackBytes: decimal string
- VM list items: the VM object without `sshKeys` and `privateNetworks` (`firewalls` kept, `billing` kept)
- scopes: firewalls `security:read`/`security:write`, networks `vpc:read`/`vpc:write`, wallet `wallet:read`; 403 text "Forbidden: this API key lacks the 'SCOPE' scope"
- auth: missing/unknown key 401 "Invalid API key"; a revoked or expired key also 401 (none is seeded)
- stop: 201 Created `{actionId}` with a `Location: /api/public/v1/actions/<id>` header; VM goes `stopping`, then `stopped` 3 s later; stop of a VM not running: 412
- conflicts (stop not running, attach twice, region mismatch, IP taken, terminated VM): 412 Precondition Failed
- validation (body or query breaking a rule, bad JSON, unknown body field): 400 with a Stripe-like text naming the field
- webhook cap (10 active): 400 "Webhook endpoint limit reached: at most 10 active endpoints per account"
- create webhook: 201 with the webhook and its `secret` (`whsec_...`); webhook records: `{id, url, events, description, isActive, createdAt, updatedAt}` (no failure count)
- attach: 202 Accepted with the attachment including `vm`; body `vmId` required, `privateIp` optional (must lie in the network subnet, else 400; taken: 412)
- detach: 200 `{vmId, networkId}`; a VM not attached: 404
- attachment list items: the full attachment, `vm` included
- rule PATCH: position, port, sourceIps, destIps, description AND direction, action, protocol accepted and applied; anything else 400; empty body 400
- rule PATCH 502: the first PATCH of each rule of firewall "admin-legacy" fails upstream; the stored rule is rolled back (unchanged); a retry succeeds
- rule port format: "22", "80,443", ranges with a colon "20:25"; null port = all ports (ICMP/ANY); world is "0.0.0.0/0" and/or "::/0"
- delivery record: one record per event: `{id, event_id, event_type, num_attempts, last_http_status, outcome, queued_at, last_attempt_at}`; `outcome` is a string "delivered" | "failed" (not a boolean); `last_http_status` null when no answer came
- delivery success: 2xx within 15 s; a few records have `last_http_status` 200 and outcome "failed" (answer came too late)
- delivery retention: only records queued in the last 30 days are served (no marker says older ones exist)
- consecutive failures: counted per event (a failed delivery after its final attempt); re-enabling with isActive true resets it to 0
- the failing webhook: 44 consecutive failed events over ~62 days; about 21 of them are served; the webhook record does not state the count
- rate limit: token bucket per key, 600 capacity refilling 10/s; X-RateLimit-Remaining = whole tokens left, X-RateLimit-Reset = seconds until the bucket is full; unauthenticated traffic: per-IP bucket of 100 refilling 100/min
- 429 text: "Too many requests on bucket 'api-key' (600 requests per minute); retry in N seconds" (per IP: bucket 'global-ip', 100 per minute); Retry-After: N
- Idempotency-Key (POST): replays the first answer with header `Idempotent-Replayed: true`; same key with another path or body: 400
- errors for unknown routes/methods: 404 / 405 (with Allow) in the failure envelope; body over 64 KiB: 413
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
import math
import random
import re
import threading
import time
from datetime import datetime, timedelta, timezone
from decimal import Decimal, ROUND_HALF_UP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

UTC = timezone.utc
PREFIX = "/api/public/v1"
EPOCH = datetime(2029, 8, 17, 13, 4, 41, tzinfo=UTC)
CENT = Decimal("0.01")
PAGE_DEFAULT, PAGE_MAX = 15, 80
RETENTION = timedelta(days=30)
VM_WORDS = {
    "provisioning": "en_creation",
    "running": "en_marche",
    "stopping": "en_arret",
    "stopped": "arrete",
    "suspended": "suspendu",
    "terminated": "supprime",
}
BILL_WORDS = {"active": "a_jour", "overdue": "impaye", "suspended": "bloque"}
SYMBOL = {"EUR": "€", "USD": "$"}
REGIONS = {"fra1": "Frankfurt 1", "par1": "Paris 1", "ams1": "Amsterdam 1", "nyc1": "New York 1"}
# slug: (name, vcpu, ram_mib, disk_gib, bandwidth_tb, eur price)
PLANS = {
    "s1-512mb": ("Starter 512MB / 10GB", 1, 512, 10, 1, "2.99"),
    "s1-1gb": ("Starter 1GB / 25GB", 1, 1024, 25, 1, "4.50"),
    "s1-2gb": ("Starter 2GB / 50GB", 1, 2048, 50, 2, "8.00"),
    "g2-4gb": ("General 4GB / 80GB", 2, 4096, 80, 4, "14.90"),
    "g2-8gb": ("General 8GB / 160GB", 4, 8192, 160, 5, "29.90"),
    "c3-16gb": ("Compute 16GB / 320GB", 8, 16384, 320, 6, "79.00"),
    "m1-32gb": ("Memory 32GB / 200GB", 4, 32768, 200, 6, "119.50"),
    "m1-256gb": ("Memory 256GB / 1600GB", 32, 262144, 1600, 10, "1290.00"),
}
OS = [
    ("debian-12", "Debian", "12"),
    ("ubuntu-2404", "Ubuntu", "24.04"),
    ("rocky-9", "Rocky Linux", "9.4"),
    ("custom-image", "Custom image", None),
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
SCOPES = [
    "vms:read",
    "vms:write",
    "webhooks:read",
    "webhooks:write",
    "security:read",
    "security:write",
    "vpc:read",
    "vpc:write",
    "wallet:read",
]


def wire_ts(dt):
    return dt.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ") if dt else None


def true_ts(dt):
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if dt else None


def wire_money(amount: Decimal, cur: str) -> str:
    return f"{SYMBOL[cur]}{amount:,.2f}"


def canon_port(p):
    return None if p is None else p.replace(":", "-")


class _Err(Exception):
    def __init__(self, status, msg, headers=None):
        super().__init__(msg)
        self.status, self.msg, self.headers = status, msg, headers or {}


class _Account:
    """All state; every method is called with self.lock held."""

    def __init__(self, seed: int):
        self.lock = threading.RLock()
        self.t0 = time.monotonic()
        r = self.rng = random.Random(seed)
        hx = lambda n=12: "".join(r.choice("0123456789abcdef") for _ in range(n))
        self.hx = hx
        self.token = "svc_" + hashlib.sha256(f"ledger-all-{seed}".encode()).hexdigest()[:40]
        self.read_token = "svc_" + hashlib.sha256(f"ledger-ro-{seed}".encode()).hexdigest()[:40]
        self.scopes = {self.token: set(SCOPES), self.read_token: {"vms:read"}}
        self.buckets: dict = {}
        self.idem: dict = {}
        self.patched_once: set = set()
        now = EPOCH
        # firewalls and rules
        self.firewalls = []
        for i, (name, desc) in enumerate(
            [
                ("web-public", "HTTP(S) for the web tier"),
                ("admin-legacy", "old admin access, to be removed"),
                ("db-private", "database tier"),
            ]
        ):
            self.firewalls.append(
                {
                    "id": "fw_" + hx(),
                    "name": name,
                    "description": desc,
                    "createdAt": now - timedelta(days=700 - 150 * i),
                    "updatedAt": now - timedelta(days=40 - 10 * i),
                }
            )
        W4, W6, W = ["0.0.0.0/0"], ["::/0"], ["0.0.0.0/0", "::/0"]
        specs = [
            (0, "IN", "ACCEPT", "TCP", "80,443", W, [], "web"),
            (0, "IN", "ACCEPT", "TCP", "22", ["198.51.100.0/24"], [], "office ssh"),
            (0, "IN", "ACCEPT", "ICMP", None, W4, [], "ping"),
            (0, "OUT", "ACCEPT", "ANY", None, [], W, "egress"),
            (1, "IN", "ACCEPT", "TCP", "22", W4, [], "ssh from anywhere"),
            (1, "IN", "ACCEPT", "TCP", "3389", W, [], "rdp"),
            (1, "IN", "ACCEPT", "TCP", "20:25", W6, [], "ftp..smtp over v6"),
            (1, "IN", "DROP", "TCP", "23", W4, [], "no telnet"),
            (1, "IN", "ACCEPT", "UDP", "3389", ["10.0.0.0/8"], [], "rdp udp internal"),
            (2, "IN", "ACCEPT", "TCP", "5432", ["10.20.0.0/24"], [], "postgres"),
            (2, "IN", "ACCEPT", "TCP", "22", ["10.20.0.5/32"], [], "bastion"),
            (2, "IN", "REJECT", "ANY", None, W4, [], "default reject"),
            (2, "OUT", "ACCEPT", "TCP", "3389", [], W4, "outbound rdp"),
        ]
        self.rules = []
        pos: dict = {}
        for fi, d, a, p, port, src, dst, desc in specs:
            fw = self.firewalls[fi]
            pos[fi] = pos.get(fi, 0) + 10
            self.rules.append(
                {
                    "id": "fwr_" + hx(),
                    "firewallId": fw["id"],
                    "position": pos[fi],
                    "direction": d,
                    "action": a,
                    "protocol": p,
                    "port": port,
                    "sourceIps": list(src),
                    "destIps": list(dst),
                    "description": desc,
                    "createdAt": fw["createdAt"] + timedelta(hours=1 + pos[fi]),
                    "updatedAt": fw["updatedAt"],
                }
            )
        # VMs
        statuses = (
            ["provisioning"] * 3
            + ["running"] * 42
            + ["stopping"] * 2
            + ["stopped"] * 11
            + ["suspended"] * 6
            + ["terminated"] * 6
        )
        r.shuffle(statuses)
        regions = ["fra1"] * 30 + ["par1"] * 20 + ["ams1"] * 14 + ["nyc1"] * 6
        r.shuffle(regions)
        slugs = [s for s in PLANS if s != "m1-256gb"]
        ids: set = set()
        self.vms = []
        keys = [
            {"id": "key_" + hx(8), "name": n, "fingerprint": ":".join(hx(2) for _ in range(16))}
            for n in ("ops-laptop", "ci-deploy", "backup-robot")
        ]
        roles = ["web", "api", "db", "worker", "cache", "ci", "mail", "vpn"]
        running_idx = [i for i, s in enumerate(statuses) if s in ("running", "stopped")]
        overdue_idx = set(r.sample(running_idx, 5))
        noprice_idx = set(r.sample(running_idx, 5)) - overdue_idx
        for i in range(70):
            vid = f"{r.randrange(1000, 99999):07d}"
            while vid in ids:
                vid = f"{r.randrange(1000, 99999):07d}"
            ids.add(vid)
            st, reg = statuses[i], regions[i]
            plan = "m1-256gb" if i in (7, 41) else (None if i == 13 else r.choice(slugs))
            if plan:
                pname, vcpu, ram, disk, bw, eur = PLANS[plan]
            else:
                pname, vcpu, ram, disk, bw, eur = None, 3, 6144, 120, 3, None
            created = now - (
                timedelta(minutes=r.randint(3, 50))
                if st == "provisioning"
                else timedelta(days=r.randint(5, 1000), seconds=r.randint(0, 86399))
            )
            age = max(61, int((now - created).total_seconds()))
            updated = min(
                now - timedelta(seconds=30), created + timedelta(seconds=r.randint(60, age))
            )
            bst, price, renew = None, None, None
            if st == "suspended":
                bst, renew = (
                    "suspended",
                    now - timedelta(days=r.randint(8, 40), hours=r.randint(1, 20)),
                )
            elif i in overdue_idx:
                bst, renew = (
                    "overdue",
                    now - timedelta(days=r.randint(1, 12), hours=r.randint(1, 20)),
                )
            elif st != "terminated":
                bst = "active"
                if st != "provisioning":
                    renew = now + timedelta(days=r.randint(0, 59), hours=r.randint(2, 22))
            if st != "terminated" and eur is not None and i not in noprice_idx:
                amt = Decimal(eur)
                if r.random() < 0.15:
                    amt = (amt * Decimal("0.9")).quantize(CENT, ROUND_HALF_UP)
                price = (amt, "EUR")
                if reg == "nyc1":
                    price = ((amt * Decimal("1.10")).quantize(CENT, ROUND_HALF_UP), "USD")
            pack = bw * 10**12
            lo, hi = (0, pack // 3) if r.random() < 0.9 else (pack // 3, pack)
            used = 0 if st == "provisioning" else r.randrange(lo, hi)
            fwn = r.choice([0, 1, 1, 1, 2]) if st != "terminated" else 0
            fwset = {f["id"] for f in r.sample(self.firewalls, fwn)}
            ten = r.random() < 0.2
            osx = OS[3] if i == 13 else r.choice(OS[:3])
            name = f"{roles[i % len(roles)]}-{reg}-{i:02d}"
            self.vms.append(
                {
                    "id": vid,
                    "name": name,
                    "hostname": f"{name}.vm.ledger.example",
                    "status": st,
                    "stop_at": None,
                    "vcpu": vcpu,
                    "ram_mib": ram,
                    "disk_gib": disk,
                    "bandwidth_tb": bw,
                    "ten": ten,
                    "backup": r.random() < 0.4,
                    "protected": r.random() < 0.15,
                    "ip": None if st in ("provisioning", "terminated") else f"203.0.113.{10 + i}",
                    "region": reg,
                    "plan": plan,
                    "plan_name": pname,
                    "os": osx,
                    "billing": None
                    if st == "terminated"
                    else {"status": bst, "price": price, "renew": renew},
                    "created": created,
                    "updated": updated,
                    "used": used,
                    "pack": pack,
                    "keys": r.sample(keys, r.randint(0, 2)),
                    "fw": [f["id"] for f in self.firewalls if f["id"] in fwset],
                }
            )
        # networks and attachments
        self.networks = [
            {
                "id": "pn_" + hx(),
                "name": "backend-fra",
                "regionSlug": "fra1",
                "subnet": "10.20.0.0/24",
                "createdAt": now - timedelta(days=400),
                "updatedAt": now - timedelta(days=12),
            },
            {
                "id": "pn_" + hx(),
                "name": "mesh-par",
                "regionSlug": "par1",
                "subnet": "10.30.0.0/24",
                "createdAt": now - timedelta(days=220),
                "updatedAt": now - timedelta(days=3),
            },
        ]
        self.attachments = []
        for net, n in zip(self.networks, (6, 4)):
            cands = [
                v
                for v in self.vms
                if v["region"] == net["regionSlug"] and v["status"] != "terminated"
            ]
            for v in r.sample(cands, n):
                self._attach(
                    net,
                    v,
                    None,
                    max(v["created"], net["createdAt"]) + timedelta(hours=r.randint(1, 200)),
                )
        # wallet
        self.wallet = {
            "id": "wal_" + hx(),
            "balance": Decimal(r.randint(50000, 400000)) / 100,
            "createdAt": now - timedelta(days=1100),
            "updatedAt": now - timedelta(days=2, hours=5),
        }
        # webhooks and deliveries
        self.webhooks, self.deliveries = [], []
        whs = [
            (
                "https://hooks.ledger.example/svc",
                ["vm.created", "vm.stopped", "vm.terminated"],
                "ops bus",
                True,
            ),
            (
                "https://ops.broken.example/ingest",
                ["vm.stopped", "billing.low_balance", "vm.renewed"],
                "pager",
                True,
            ),
            ("https://legacy.ledger.example/hook", ["ticket.reply"], "old crm", False),
        ]
        for k, (url, ev, desc, act) in enumerate(whs):
            self.webhooks.append(
                {
                    "id": "wh_" + hx(),
                    "url": url,
                    "events": ev,
                    "description": desc,
                    "isActive": act,
                    "createdAt": now - timedelta(days=300 - 50 * k),
                    "updatedAt": now - timedelta(days=19 if not act else 60),
                    "secret": "whsec_" + hx(32),
                    "streak": 0,
                }
            )
        plan_ = [  # (webhook index, [(days ago, kind)]) kind: ok, ok2 (ok on 2nd try), fail, late
            (0, [(55 - 2.2 * j, "ok2" if j in (3, 9) else "ok") for j in range(24)]),
            (
                1,
                [(95 - 2.2 * j, "ok") for j in range(14)]
                + [(62 - 1.4 * j, "fail") for j in range(44)],
            ),
            (2, [(45 - 2.2 * j, "ok") for j in range(10)] + [(22.5, "late"), (20.4, "late")]),
        ]
        for k, seq in plan_:
            wh = self.webhooks[k]
            for days, kind in seq:
                q = now - timedelta(days=days, seconds=r.randint(0, 3000))
                n, code, ok = {
                    "ok": (1, r.choice([200, 200, 204, 202]), True),
                    "ok2": (2, 200, True),
                    "late": (3, 200, False),
                    "fail": (3, r.choice([500, 502, 503, 404, None]), False),
                }[kind]
                self.deliveries.append(
                    {
                        "id": "dlv_" + hx(16),
                        "webhook": wh["id"],
                        "event_id": "evt_" + hx(16),
                        "event_type": r.choice(wh["events"]),
                        "attempts": n,
                        "code": code,
                        "ok": ok,
                        "queued": q,
                        "last": q + timedelta(seconds=10 * (2 ** (n - 1) - 1) + r.randint(0, 14)),
                    }
                )
                wh["streak"] = 0 if ok else wh["streak"] + 1

    # --- clock and lazy transitions
    def now(self):
        return EPOCH + timedelta(seconds=int(time.monotonic() - self.t0))

    def settle(self):
        now = self.now()
        for v in self.vms:
            if v["status"] == "stopping" and v["stop_at"] and now >= v["stop_at"]:
                v["status"], v["updated"], v["stop_at"] = "stopped", v["stop_at"], None

    # --- rendering
    def vm_wire(self, v, full=True):
        b = v["billing"]
        bill = None
        if b is not None:
            bill = {"nextRenewalAt": wire_ts(b["renew"]), "status": BILL_WORDS[b["status"]]}
            if b["price"] is not None:
                bill = {"priceMonthly": wire_money(*b["price"]), **bill}
        d = {
            "id": v["id"],
            "name": v["name"],
            "hostname": v["hostname"],
            "status": VM_WORDS[v["status"]],
            "vcpu": v["vcpu"],
            "ram": v["ram_mib"] * 1024,
            "disk": v["disk_gib"] * 1024 * 1024,
            "bandwidth": v["bandwidth_tb"],
            "networkSpeed": 10000 if v["ten"] else 1000,
            "network10gEnabled": v["ten"],
            "dailyBackupEnabled": v["backup"],
            "isProtected": v["protected"],
            "ipAddress": v["ip"],
            "region": {"slug": v["region"], "name": REGIONS[v["region"]]},
            "plan": {"slug": v["plan"], "name": v["plan_name"]} if v["plan"] else None,
            "osTemplate": {"slug": v["os"][0], "name": v["os"][1], "version": v["os"][2]},
            "billing": bill,
            "createdAt": wire_ts(v["created"]),
            "bandwidthUsedBytes": float(v["used"]),
            "bandwidthPackBytes": str(v["pack"]),
            "sshKeys": [dict(k) for k in v["keys"]],
            "firewalls": [
                {"id": f["id"], "name": f["name"]} for f in self.firewalls if f["id"] in v["fw"]
            ],
            "privateNetworks": [
                {"id": n["id"], "name": n["name"]}
                for n in self.networks
                if any(a["vmId"] == v["id"] and a["networkId"] == n["id"] for a in self.attachments)
            ],
            "updatedAt": wire_ts(v["updated"]),
        }
        if not full:
            del d["sshKeys"], d["privateNetworks"]
        return d

    def rec_wire(self, rec, drop=()):
        return {
            k: (wire_ts(x) if isinstance(x, datetime) else x)
            for k, x in rec.items()
            if k not in drop
        }

    def att_wire(self, a):
        v = self.vm(a["vmId"])
        return {
            **self.rec_wire(a),
            "vm": {
                "id": v["id"],
                "name": v["name"],
                "hostname": v["hostname"],
                "status": VM_WORDS[v["status"]],
            },
        }

    def dlv_wire(self, d):
        return {
            "id": d["id"],
            "event_id": d["event_id"],
            "event_type": d["event_type"],
            "num_attempts": d["attempts"],
            "last_http_status": d["code"],
            "outcome": "delivered" if d["ok"] else "failed",
            "queued_at": wire_ts(d["queued"]),
            "last_attempt_at": wire_ts(d["last"]),
        }

    # --- lookups and mutations
    def vm(self, vid):
        for v in self.vms:
            if v["id"] == vid:
                return v
        raise _Err(404, f"No such vm: '{vid}'")

    def find(self, rows, rid, what):
        for x in rows:
            if x["id"] == rid:
                return x
        raise _Err(404, f"No such {what}: '{rid}'")

    def _attach(self, net, v, ip, when):
        taken = {a["privateIp"] for a in self.attachments if a["networkId"] == net["id"]}
        base = net["subnet"].rsplit(".", 1)[0]
        if ip is None:
            ip = next(f"{base}.{h}" for h in range(10, 255) if f"{base}.{h}" not in taken)
        nic = 1 + sum(1 for a in self.attachments if a["vmId"] == v["id"])
        a = {
            "id": "pna_" + self.hx(),
            "vmId": v["id"],
            "networkId": net["id"],
            "privateIp": ip,
            "netInterface": f"eth{nic}",
            "attachedAt": when,
        }
        self.attachments.append(a)
        return a

    # --- truth
    def truth(self):
        self.settle()
        now = self.now()
        vms = []
        for v in self.vms:
            b = v["billing"]
            price = b["price"] if b else None
            vms.append(
                {
                    "id": v["id"],
                    "name": v["name"],
                    "status_class": v["status"],
                    "billing_status_class": b["status"] if b else None,
                    "price_monthly": {"amount": str(price[0]), "currency": price[1]}
                    if price
                    else None,
                    "ram_mib": v["ram_mib"],
                    "disk_gib": v["disk_gib"],
                    "next_renewal_at": true_ts(b["renew"]) if b else None,
                    "created_at": true_ts(v["created"]),
                    "updated_at": true_ts(v["updated"]),
                    "bandwidth_used_bytes": v["used"],
                    "bandwidth_pack_bytes": v["pack"],
                    "is_protected": v["protected"],
                    "region_slug": v["region"],
                    "plan_slug": v["plan"],
                    "firewall_ids": list(v["fw"]),
                }
            )

        def dl(d):
            return {
                "webhook_id": d["webhook"],
                "id": d["id"],
                "status_code": d["code"],
                "success": d["ok"],
                "attempts": d["attempts"],
                "created_at": true_ts(d["queued"]),
            }

        return {
            "currency": "EUR",
            "vms": vms,
            "wallet": {"balance": {"amount": str(self.wallet["balance"]), "currency": "EUR"}},
            "firewalls": [{"id": f["id"], "name": f["name"]} for f in self.firewalls],
            "rules": [
                {
                    "id": x["id"],
                    "firewall_id": x["firewallId"],
                    "port": canon_port(x["port"]),
                    "source_ips": list(x["sourceIps"]),
                    "direction": x["direction"],
                    "action": x["action"],
                    "protocol": x["protocol"],
                }
                for x in self.rules
            ],
            "networks": [{"id": n["id"], "name": n["name"]} for n in self.networks],
            "attachments": [
                {"id": a["id"], "vm_id": a["vmId"], "network_id": a["networkId"]}
                for a in self.attachments
            ],
            "webhooks": [
                {
                    "id": w["id"],
                    "url": w["url"],
                    "is_active": w["isActive"],
                    "consecutive_failures": w["streak"],
                }
                for w in self.webhooks
            ],
            "deliveries_all": [dl(d) for d in self.deliveries],
            "deliveries_served": [dl(d) for d in self.deliveries if d["queued"] >= now - RETENTION],
            "now": true_ts(now),
        }


def _newest(rows, key):
    return sorted(rows, key=lambda x: (x[key], x["id"]), reverse=True)


def _page(items, q, url):
    allowed = {"limit", "starting_after", "ending_before", "include[]"}
    for k, _ in q:
        if k not in allowed:
            raise _Err(400, f"Received unknown parameter: {k}")
    qd = dict(q)
    raw = qd.get("limit", str(PAGE_DEFAULT))
    if not re.fullmatch(r"\d{1,6}", raw):
        raise _Err(400, f"Invalid integer: limit={raw!r}")
    limit = int(raw)
    if not 1 <= limit <= PAGE_MAX:
        raise _Err(400, f"Invalid limit: must be between 1 and {PAGE_MAX}")
    incl = [v for k, v in q if k == "include[]"]
    for v in incl:
        if v != "total_count":
            raise _Err(400, f"Invalid include[]: {v!r}")
    sa, eb = qd.get("starting_after"), qd.get("ending_before")
    if sa and eb:
        raise _Err(
            400, "You may only specify one of these parameters: starting_after, ending_before"
        )
    ids = [it["id"] for it in items]
    for name, cur in (("starting_after", sa), ("ending_before", eb)):
        if cur is not None and cur not in ids:
            raise _Err(400, f"Invalid {name}: no such object: '{cur}'")
    if sa is not None:
        i = ids.index(sa) + 1
        chunk, more = items[i : i + limit], i + limit < len(items)
    elif eb is not None:
        j = ids.index(eb)
        s = max(0, j - limit)
        chunk, more = items[s:j], s > 0
    else:
        chunk, more = items[:limit], len(items) > limit
    out = {"object": "list", "data": chunk, "has_more": more, "url": PREFIX + url}
    if incl:
        out["total_count"] = len(items)
    return out


def _body(raw, allowed, required=()):
    try:
        b = json.loads(raw.decode("utf-8") or "null")
    except (ValueError, UnicodeDecodeError):
        raise _Err(400, "Invalid JSON body")
    if not isinstance(b, dict):
        raise _Err(400, "Request body must be a JSON object")
    for k in b:
        if k not in allowed:
            raise _Err(400, f"Received unknown parameter: {k}")
    for k in required:
        if k not in b:
            raise _Err(400, f"Missing required param: {k}")
    return b


def _strlist(b, k):
    v = b[k]
    if (
        not isinstance(v, list)
        or len(v) > 50
        or not all(isinstance(s, str) and len(s) <= 64 for s in v)
    ):
        raise _Err(400, f"Invalid {k}: an array of at most 50 strings of at most 64 characters")
    return list(v)


ROUTES = [  # (method, pattern, scope, handler)
    ("GET", r"/vms", "vms:read", "list_vms"),
    ("GET", r"/vms/([^/]+)", "vms:read", "get_vm"),
    ("POST", r"/vms/([^/]+)/stop", "vms:write", "stop_vm"),
    ("GET", r"/firewalls", "security:read", "list_fws"),
    ("GET", r"/firewalls/([^/]+)/rules", "security:read", "list_rules"),
    ("PATCH", r"/firewalls/([^/]+)/rules/([^/]+)", "security:write", "patch_rule"),
    ("GET", r"/networks", "vpc:read", "list_nets"),
    ("GET", r"/networks/([^/]+)/attachments", "vpc:read", "list_atts"),
    ("POST", r"/networks/([^/]+)/attachments", "vpc:write", "attach"),
    ("DELETE", r"/networks/([^/]+)/attachments/([^/]+)", "vpc:write", "detach"),
    ("GET", r"/wallet", "wallet:read", "wallet"),
    ("GET", r"/webhooks", "webhooks:read", "list_whs"),
    ("POST", r"/webhooks", "webhooks:write", "create_wh"),
    ("PATCH", r"/webhooks/([^/]+)", "webhooks:write", "patch_wh"),
    ("GET", r"/webhooks/([^/]+)/deliveries", "webhooks:read", "list_dlvs"),
]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def date_time_string(self, timestamp=None):
        return email.utils.format_datetime(self.server.acct.now(), usegmt=True)

    def version_string(self):
        return "ledger/1.0"

    do_GET = lambda self: self._dispatch("GET")  # noqa: E731
    do_POST = lambda self: self._dispatch("POST")  # noqa: E731
    do_PATCH = lambda self: self._dispatch("PATCH")  # noqa: E731
    do_DELETE = lambda self: self._dispatch("DELETE")  # noqa: E731
    do_PUT = lambda self: self._dispatch("PUT")  # noqa: E731

    def _send(self, status, obj, headers):
        data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(data)

    def _bucket(self, key, cap, rate):
        b = self.server.acct.buckets.setdefault(key, [float(cap), time.monotonic()])
        t = time.monotonic()
        b[0] = min(cap, b[0] + (t - b[1]) * rate)
        b[1] = t
        ok = b[0] >= 1
        if ok:
            b[0] -= 1
        hdr = {
            "X-RateLimit-Limit": cap,
            "X-RateLimit-Remaining": int(b[0]),
            "X-RateLimit-Reset": math.ceil((cap - b[0]) / rate),
        }
        wait = 0 if ok else max(1, math.ceil((1 - b[0]) / rate))
        return hdr, wait

    def _dispatch(self, method):
        acct = self.server.acct
        url = urlsplit(self.path)
        path, q = url.path, parse_qsl(url.query, keep_blank_values=True)
        n = int(self.headers.get("Content-Length") or 0)
        if n > 65536:
            self.close_connection = True
            with acct.lock:
                hdr, _ = self._bucket(("ip", self.client_address[0]), 100, 100 / 60)
            return self._send(
                413, {"success": False, "error": "Request body exceeds 65536 bytes"}, hdr
            )
        raw = self.rfile.read(n) if n else b""
        with acct.lock:
            acct.settle()
            status, obj, hdr = self._handle(acct, method, path, q, raw)
        self._send(status, obj, hdr)

    def _handle(self, acct, method, path, q, raw):
        key = self.headers.get("x-api-key")
        authed = key in acct.scopes
        if authed:
            hdr, wait = self._bucket(("key", key), 600, 10.0)
            bucket, per = "api-key", 600
        else:
            hdr, wait = self._bucket(("ip", self.client_address[0]), 100, 100 / 60)
            bucket, per = "global-ip", 100
        try:
            if wait:
                raise _Err(
                    429,
                    f"Too many requests on bucket '{bucket}' ({per} requests per minute); "
                    f"retry in {wait} seconds",
                    {"Retry-After": wait},
                )
            if path == "/api/v1" or path.startswith("/api/v1/"):
                raise _Err(410, f"This base path is retired; use {PREFIX}")
            if not (path == PREFIX or path.startswith(PREFIX + "/")):
                raise _Err(404, f"No such route: {path}")
            if not authed:
                raise _Err(401, "Invalid API key")
            sub = path[len(PREFIX) :]
            if len(sub) > 1 and sub.endswith("/"):
                sub = sub[:-1]
            allow = []
            for m, pat, scope, fn in ROUTES:
                mt = re.fullmatch(pat, sub)
                if not mt:
                    continue
                allow.append(m)
                if m != method:
                    continue
                if scope not in acct.scopes[key]:
                    raise _Err(403, f"Forbidden: this API key lacks the '{scope}' scope")
                if method == "POST" and self.headers.get("Idempotency-Key"):
                    return self._idem(
                        acct,
                        key,
                        method,
                        path,
                        raw,
                        lambda: getattr(self, "h_" + fn)(acct, *mt.groups(), q=q, raw=raw, sub=sub),
                        hdr,
                    )
                st, data, extra = getattr(self, "h_" + fn)(
                    acct, *mt.groups(), q=q, raw=raw, sub=sub
                )
                return st, {"success": True, "data": data}, {**hdr, **extra}
            if allow:
                raise _Err(
                    405, f"Method {method} not allowed on {path}", {"Allow": ", ".join(allow)}
                )
            raise _Err(404, f"No such route: {path}")
        except _Err as e:
            return e.status, {"success": False, "error": e.msg}, {**hdr, **e.headers}

    def _idem(self, acct, key, method, path, raw, run, hdr):
        ik = self.headers.get("Idempotency-Key")
        fp = hashlib.sha256(method.encode() + path.encode() + b"\0" + raw).hexdigest()
        seen = acct.idem.get((key, ik))
        if seen:
            if seen[0] != fp:
                raise _Err(400, "Idempotency-Key was already used with a different request")
            return seen[1], seen[2], {**hdr, **seen[3], "Idempotent-Replayed": "true"}
        try:
            st, data, extra = run()
            body = {"success": True, "data": data}
        except _Err as e:
            if e.status >= 500 or e.status == 429:
                raise
            st, body, extra = e.status, {"success": False, "error": e.msg}, e.headers
        acct.idem[(key, ik)] = (fp, st, body, extra)
        return st, body, {**hdr, **extra}

    # --- handlers: return (status, data, extra headers)
    def h_list_vms(self, acct, q, raw, sub):
        return (
            200,
            _page([acct.vm_wire(v, full=False) for v in _newest(acct.vms, "created")], q, sub),
            {},
        )

    def h_get_vm(self, acct, vid, q, raw, sub):
        return 200, acct.vm_wire(acct.vm(vid)), {}

    def h_stop_vm(self, acct, vid, q, raw, sub):
        v = acct.vm(vid)
        if v["status"] != "running":
            raise _Err(412, f"VM {vid} is not running (status: {VM_WORDS[v['status']]})")
        now = acct.now()
        v["status"], v["updated"], v["stop_at"] = "stopping", now, now + timedelta(seconds=3)
        aid = "act_" + acct.hx(16)
        return 201, {"actionId": aid}, {"Location": f"{PREFIX}/actions/{aid}"}

    def h_list_fws(self, acct, q, raw, sub):
        rows = [
            {
                **acct.rec_wire(f),
                "ruleCount": sum(1 for x in acct.rules if x["firewallId"] == f["id"]),
            }
            for f in _newest(acct.firewalls, "createdAt")
        ]
        return 200, _page(rows, q, sub), {}

    def h_list_rules(self, acct, fid, q, raw, sub):
        acct.find(acct.firewalls, fid, "firewall")
        rows = sorted(
            (x for x in acct.rules if x["firewallId"] == fid),
            key=lambda x: (x["position"], x["id"]),
        )
        return 200, _page([acct.rec_wire(x) for x in rows], q, sub), {}

    def h_patch_rule(self, acct, fid, rid, q, raw, sub):
        fw = acct.find(acct.firewalls, fid, "firewall")
        rule = acct.find([x for x in acct.rules if x["firewallId"] == fid], rid, "rule")
        b = _body(
            raw,
            {
                "position",
                "port",
                "sourceIps",
                "destIps",
                "description",
                "direction",
                "action",
                "protocol",
            },
        )
        if not b:
            raise _Err(400, "At least one parameter is required")
        new = {}
        if "position" in b:
            p = b["position"]
            if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= 1000:
                raise _Err(400, "Invalid position: an integer from 0 to 1000")
            new["position"] = p
        for k, lim in (("port", 64), ("description", 255)):
            if k in b:
                if not isinstance(b[k], str) or len(b[k]) > lim:
                    raise _Err(400, f"Invalid {k}: a string of at most {lim} characters")
                new[k] = b[k]
        for k in ("sourceIps", "destIps"):
            if k in b:
                new[k] = _strlist(b, k)
        for k, ok in (
            ("direction", ("IN", "OUT")),
            ("action", ("ACCEPT", "DROP", "REJECT")),
            ("protocol", ("TCP", "UDP", "ICMP", "ESP", "GRE", "ANY")),
        ):
            if k in b:
                if b[k] not in ok:
                    raise _Err(400, f"Invalid {k}: one of {', '.join(ok)}")
                new[k] = b[k]
        if fw["name"] == "admin-legacy" and rid not in acct.patched_once:
            acct.patched_once.add(rid)
            raise _Err(502, "Upstream security group sync failed; the rule was not changed")
        rule.update(new)
        rule["updatedAt"] = fw["updatedAt"] = acct.now()
        return 200, acct.rec_wire(rule), {}

    def h_list_nets(self, acct, q, raw, sub):
        rows = [
            {
                **acct.rec_wire(n),
                "attachmentCount": sum(1 for a in acct.attachments if a["networkId"] == n["id"]),
            }
            for n in _newest(acct.networks, "createdAt")
        ]
        return 200, _page(rows, q, sub), {}

    def h_list_atts(self, acct, nid, q, raw, sub):
        acct.find(acct.networks, nid, "network")
        rows = _newest([a for a in acct.attachments if a["networkId"] == nid], "attachedAt")
        return 200, _page([acct.att_wire(a) for a in rows], q, sub), {}

    def h_attach(self, acct, nid, q, raw, sub):
        net = acct.find(acct.networks, nid, "network")
        b = _body(raw, {"vmId", "privateIp"}, ("vmId",))
        if not isinstance(b["vmId"], str):
            raise _Err(400, "Invalid vmId: a string")
        ip = b.get("privateIp")
        base = net["subnet"].rsplit(".", 1)[0]
        if ip is not None:
            m = re.fullmatch(re.escape(base) + r"\.(\d{1,3})", ip) if isinstance(ip, str) else None
            if not m or not 2 <= int(m.group(1)) <= 254:
                raise _Err(400, f"Invalid privateIp: an address inside {net['subnet']}")
        v = acct.vm(b["vmId"])
        if v["status"] == "terminated":
            raise _Err(412, f"VM {v['id']} is terminated")
        if v["region"] != net["regionSlug"]:
            raise _Err(
                412, f"VM {v['id']} is in {v['region']}, network {nid} in {net['regionSlug']}"
            )
        if any(a["vmId"] == v["id"] and a["networkId"] == nid for a in acct.attachments):
            raise _Err(412, f"VM {v['id']} is already attached to network {nid}")
        if ip is not None and any(
            a["privateIp"] == ip and a["networkId"] == nid for a in acct.attachments
        ):
            raise _Err(412, f"privateIp {ip} is already in use")
        a = acct._attach(net, v, ip, acct.now())
        net["updatedAt"] = acct.now()
        return 202, acct.att_wire(a), {}

    def h_detach(self, acct, nid, vid, q, raw, sub):
        net = acct.find(acct.networks, nid, "network")
        hit = [a for a in acct.attachments if a["networkId"] == nid and a["vmId"] == vid]
        if not hit:
            raise _Err(404, f"VM {vid} is not attached to network {nid}")
        acct.attachments.remove(hit[0])
        net["updatedAt"] = acct.now()
        return 200, {"vmId": vid, "networkId": nid}, {}

    def h_wallet(self, acct, q, raw, sub):
        w = acct.wallet
        return (
            200,
            {
                "id": w["id"],
                "balance": int(w["balance"] * 100),
                "currency": "eur",
                "createdAt": wire_ts(w["createdAt"]),
                "updatedAt": wire_ts(w["updatedAt"]),
            },
            {},
        )

    def h_list_whs(self, acct, q, raw, sub):
        rows = [
            acct.rec_wire(w, drop=("secret", "streak")) for w in _newest(acct.webhooks, "createdAt")
        ]
        return 200, _page(rows, q, sub), {}

    def _wh_fields(self, b):
        if "url" in b and (
            not isinstance(b["url"], str) or not b["url"].lower().startswith("https://")
        ):
            raise _Err(400, "Invalid url: must be an HTTPS URL")
        if "events" in b:
            ev = b["events"]
            if not isinstance(ev, list) or not ev or not all(e in EVENTS for e in ev):
                raise _Err(400, f"Invalid events: a non-empty array of {', '.join(EVENTS)}")
        if "description" in b and not isinstance(b["description"], str):
            raise _Err(400, "Invalid description: a string")
        if "isActive" in b and not isinstance(b["isActive"], bool):
            raise _Err(400, "Invalid isActive: a boolean")

    def h_create_wh(self, acct, q, raw, sub):
        b = _body(raw, {"url", "events", "description"}, ("url", "events"))
        self._wh_fields(b)
        if sum(1 for w in acct.webhooks if w["isActive"]) >= 10:
            raise _Err(
                400, "Webhook endpoint limit reached: at most 10 active endpoints per account"
            )
        now = acct.now()
        w = {
            "id": "wh_" + acct.hx(),
            "url": b["url"],
            "events": list(dict.fromkeys(b["events"])),
            "description": b.get("description", ""),
            "isActive": True,
            "createdAt": now,
            "updatedAt": now,
            "secret": "whsec_" + acct.hx(32),
            "streak": 0,
        }
        acct.webhooks.append(w)
        return 201, {**acct.rec_wire(w, drop=("secret", "streak")), "secret": w["secret"]}, {}

    def h_patch_wh(self, acct, wid, q, raw, sub):
        w = acct.find(acct.webhooks, wid, "webhook")
        b = _body(raw, {"isActive", "url", "events", "description"})
        self._wh_fields(b)
        if b.get("isActive") and not w["isActive"]:
            if sum(1 for x in acct.webhooks if x["isActive"]) >= 10:
                raise _Err(
                    400, "Webhook endpoint limit reached: at most 10 active endpoints per account"
                )
            w["streak"] = 0
        for k in ("isActive", "url", "description"):
            if k in b:
                w[k] = b[k]
        if "events" in b:
            w["events"] = list(dict.fromkeys(b["events"]))
        w["updatedAt"] = acct.now()
        return 200, acct.rec_wire(w, drop=("secret", "streak")), {}

    def h_list_dlvs(self, acct, wid, q, raw, sub):
        acct.find(acct.webhooks, wid, "webhook")
        cut = acct.now() - RETENTION
        rows = _newest(
            [d for d in acct.deliveries if d["webhook"] == wid and d["queued"] >= cut], "queued"
        )
        return 200, _page([acct.dlv_wire(d) for d in rows], q, sub), {}


class Peer:
    def __init__(self, server, acct):
        self._server, self._acct = server, acct
        self.base_url = f"http://127.0.0.1:{server.server_address[1]}"
        self.token, self.read_token = acct.token, acct.read_token

    def truth(self) -> dict:
        with self._acct.lock:
            return self._acct.truth()

    def choices(self) -> dict:
        out = {}
        for line in (__doc__ or "").splitlines():
            if line.startswith("- ") and ": " in line:
                k, v = line[2:].split(": ", 1)
                out[k] = v
        return out


@contextlib.contextmanager
def serve(port: int = 0, seed: int = 1):
    acct = _Account(seed)
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.daemon_threads = True
    server.acct = acct
    th = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    th.start()
    try:
        yield Peer(server, acct)
    finally:
        server.shutdown()
        server.server_close()
        th.join(5)


if __name__ == "__main__":
    import urllib.error
    import urllib.request
    from urllib.parse import urlencode

    def call(peer, method, path, body=None, token=None, query=None):
        url = peer.base_url + path + ("?" + urlencode(query) if query else "")
        req = urllib.request.Request(
            url,
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"x-api-key": token or peer.token, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req) as r:
                return r.status, json.loads(r.read()), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read()), dict(e.headers)

    def walk(peer, path, limit=None):  # follow has_more with starting_after=<last id>
        items, q = [], ({"limit": limit} if limit else {})
        while True:
            st, b, _ = call(peer, "GET", PREFIX + path, query=q)
            assert st == 200 and b["success"], (path, st, b)
            items += b["data"]["data"]
            if not b["data"]["has_more"]:
                return items
            q = {**q, "starting_after": b["data"]["data"][-1]["id"]}

    with serve() as p:
        t, results = p.truth(), []

        def check(name, got, want):
            results.append(got == want)
            print("ok  " if got == want else "FAIL", name, got, want)

        vms, fws, nets, whs = (walk(p, x) for x in ("/vms", "/firewalls", "/networks", "/webhooks"))
        check("vms", (len(vms), len({v["id"] for v in vms})), (len(t["vms"]), 70))
        check(
            "vms limit=80 / limit=7", (len(walk(p, "/vms", 80)), len(walk(p, "/vms", 7))), (70, 70)
        )
        check("firewalls", len(fws), len(t["firewalls"]))
        check(
            "rules",
            sum(len(walk(p, f"/firewalls/{f['id']}/rules", 2)) for f in fws),
            len(t["rules"]),
        )
        check("networks", len(nets), len(t["networks"]))
        check(
            "attachments",
            sum(len(walk(p, f"/networks/{n['id']}/attachments", 4)) for n in nets),
            len(t["attachments"]),
        )
        check("webhooks", len(whs), len(t["webhooks"]))
        check(
            "deliveries served",
            sum(len(walk(p, f"/webhooks/{w['id']}/deliveries")) for w in whs),
            len(t["deliveries_served"]),
        )
        print(
            "    deliveries all",
            len(t["deliveries_all"]),
            "streaks",
            [w["consecutive_failures"] for w in t["webhooks"]],
        )
        st, b, h = call(p, "GET", PREFIX + "/vms", query={"include[]": "total_count", "limit": 1})
        check("total_count", b["data"]["total_count"], 70)
        check(
            "headers",
            all(
                k in h
                for k in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Date")
            ),
            True,
        )
        check("unknown param 400", call(p, "GET", PREFIX + "/vms", query={"page": 1})[0], 400)
        check("retired base 410", call(p, "GET", "/api/v1/api/public/v1/vms")[0], 410)
        check("bad key 401", call(p, "GET", PREFIX + "/vms", token="svc_nope")[0], 401)
        check("scope 403", call(p, "GET", PREFIX + "/wallet", token=p.read_token)[0], 403)
        check("404 vm", call(p, "GET", PREFIX + "/vms/0000000")[0], 404)
        check(
            "wallet cents",
            Decimal(call(p, "GET", PREFIX + "/wallet")[1]["data"]["balance"]) / 100,
            Decimal(t["wallet"]["balance"]["amount"]),
        )
        run = next(v for v in t["vms"] if v["status_class"] == "running")
        st, b, h = call(p, "POST", PREFIX + f"/vms/{run['id']}/stop")
        check("stop 201", (st, "actionId" in b["data"], "Location" in h), (201, True, True))
        check("stop again 412", call(p, "POST", PREFIX + f"/vms/{run['id']}/stop")[0], 412)
        time.sleep(3.2)
        check(
            "stopped later",
            next(v for v in p.truth()["vms"] if v["id"] == run["id"])["status_class"],
            "stopped",
        )
        legacy = next(f for f in fws if f["name"] == "admin-legacy")
        rpath = (
            PREFIX
            + f"/firewalls/{legacy['id']}/rules/"
            + walk(p, f"/firewalls/{legacy['id']}/rules")[0]["id"]
        )
        check("patch 502", call(p, "PATCH", rpath, {"sourceIps": ["198.51.100.0/24"]})[0], 502)
        st, b, _ = call(p, "PATCH", rpath, {"sourceIps": ["198.51.100.0/24"]})
        check("patch retry 200", (st, b["data"]["sourceIps"]), (200, ["198.51.100.0/24"]))
        net, t2 = nets[0], p.truth()
        cand = next(
            v
            for v in t2["vms"]
            if v["region_slug"] == net["regionSlug"]
            and v["status_class"] != "terminated"
            and not any(
                a["vm_id"] == v["id"] and a["network_id"] == net["id"] for a in t2["attachments"]
            )
        )
        apath = PREFIX + f"/networks/{net['id']}/attachments"
        st, b, _ = call(p, "POST", apath, {"vmId": cand["id"]})
        check("attach 202", (st, b["data"]["vm"]["id"]), (202, cand["id"]))
        check("attach twice 412", call(p, "POST", apath, {"vmId": cand["id"]})[0], 412)
        check("detach 200", call(p, "DELETE", apath + "/" + cand["id"])[0], 200)
        st, b, _ = call(
            p,
            "POST",
            PREFIX + "/webhooks",
            {"url": "https://x.example/h", "events": ["vm.created"]},
        )
        check("webhook 201", (st, b["data"]["secret"].startswith("whsec_")), (201, True))
        check("webhooks now", len(walk(p, "/webhooks")), len(p.truth()["webhooks"]))
        print(f"{sum(results)}/{len(results)} checks passed")
        raise SystemExit(0 if all(results) else 1)
