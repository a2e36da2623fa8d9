"""A small in-process stand-in for the API, mounted with ``httpx.MockTransport``.

It serves VMs under one prefix with the DESIGN envelope and a fixed-window rate limit whose
``X-RateLimit-Reset`` is given in fractional seconds, and records every request it saw, so unit
tests can check what the client sent without a sandbox.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx

TOKEN = "svc_unit_test_secret_token_9f3a"
BASE = "http://api.test"
_hosts = itertools.count(1)


def vm(i: int, updated: datetime | None = None) -> dict:
    stamp = (updated or datetime(2026, 11, 1, tzinfo=UTC)).isoformat().replace("+00:00", "Z")
    return {
        "id": f"vm_{i:04d}",
        "name": f"web-{i}",
        "hostname": f"web-{i}.example",
        "status": "running",
        "vcpu": 2,
        "ram": 4096,
        "disk": 80,
        "bandwidth": 1000,
        "networkSpeed": 1000,
        "network10gEnabled": False,
        "dailyBackupEnabled": True,
        "isProtected": False,
        "ipAddress": "203.0.113.7",
        "region": {"slug": "fra", "name": "Frankfurt"},
        "plan": {"slug": "s2", "name": "Small", "priceMonthly": 12.5},
        "osTemplate": {"slug": "deb", "name": "Debian", "version": "12"},
        "billing": {"nextRenewalAt": None, "status": "active"},
        "createdAt": "2026-10-01T00:00:00Z",
        "bandwidthUsedBytes": 10,
        "bandwidthPackBytes": "1099511627776",
        "sshKeys": [{"id": "key_1", "name": "ops", "fingerprint": "SHA256:abc"}],
        "firewalls": [{"id": "fw_1", "name": "default"}],
        "privateNetworks": [],
        "updatedAt": stamp,
    }


def envelope(data, status: int = 200, meta: dict | None = None, headers=None) -> httpx.Response:
    body = {"success": 200 <= status < 300}
    if body["success"]:
        body["data"] = data
        if meta is not None:
            body["meta"] = meta
    else:
        body["error"] = data
    return httpx.Response(status, json=body, headers=headers)


class FakeApi:
    """Routes: GET /vms (paged), GET /vms/{id}, POST /vms/{id}/stop, PATCH rule, anything else
    via ``extra``. ``fault(request, attempt)`` may return a Response or raise to inject one."""

    def __init__(
        self,
        vms: int = 0,
        *,
        prefix: str = "/api/public/v1",
        limit: int | None = None,
        window: float = 1.0,
        token: str = TOKEN,
        latency: float = 0.0,
    ) -> None:
        self.latency = latency
        # Each fake is its own server, so no rate-limit state carries over between tests.
        self.base = f"http://api-{next(_hosts)}.test"
        self.prefix = prefix
        self.vms = {v["id"]: v for v in (vm(i) for i in range(vms))}
        self.limit = limit
        self.window = window
        self.token = token
        self.lock = threading.Lock()
        self.requests: list[httpx.Request] = []
        self.statuses: list[int] = []
        self.window_start: float | None = None
        self.used = 0
        self.fault: Callable[[httpx.Request], httpx.Response | None] | None = None
        self.extra: dict[tuple[str, str], Callable[[httpx.Request], httpx.Response]] = {}
        self.actions: list[str] = []
        self.inflight_max = 0
        self._inflight = 0

    def touch(self, vm_id: str) -> None:
        self.vms[vm_id]["updatedAt"] = (
            (datetime(2026, 11, 2, tzinfo=UTC) + timedelta(seconds=len(self.actions)))
            .isoformat()
            .replace("+00:00", "Z")
        )
        self.vms[vm_id]["name"] += "-x"

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def _rate(self) -> tuple[bool, dict]:
        if self.limit is None:
            return True, {}
        now = time.monotonic()
        with self.lock:
            if self.window_start is None or now - self.window_start >= self.window:
                self.window_start, self.used = now, 0
            reset = self.window_start + self.window - now
            allowed = self.used < self.limit
            if allowed:
                self.used += 1
            headers = {
                "x-ratelimit-limit": str(self.limit),
                "x-ratelimit-remaining": str(self.limit - self.used),
                "x-ratelimit-reset": f"{reset:.3f}",
            }
        if not allowed:
            headers["retry-after"] = f"{reset:.3f}"
        return allowed, headers

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.requests.append(request)
            self._inflight += 1
            self.inflight_max = max(self.inflight_max, self._inflight)
        try:
            time.sleep(self.latency)
            response = self._handle(request)
        finally:
            with self.lock:
                self._inflight -= 1
        with self.lock:
            self.statuses.append(response.status_code)
        return response

    def _handle(self, request: httpx.Request) -> httpx.Response:
        if request.headers.get("x-api-key") != self.token:
            reason = "missing" if "x-api-key" not in request.headers else "unknown"
            return envelope(f"API token {reason}", 401)
        allowed, headers = self._rate()
        if not allowed:
            return envelope("Rate limit exceeded: per-token limit", 429, headers=headers)
        path = request.url.path
        if not path.startswith(self.prefix + "/"):
            return envelope("Not found: no such route", 404, headers=headers)
        sub = path[len(self.prefix) :]
        if self.fault is not None:
            injected = self.fault(request)
            if injected is not None:
                injected.headers.update(headers)
                return injected
        response = self._route(request, sub)
        response.headers.update(headers)
        return response

    def _route(self, request: httpx.Request, sub: str) -> httpx.Response:
        parts = sub.strip("/").split("/")
        key = (request.method, sub)
        if key in self.extra:
            return self.extra[key](request)
        if request.method == "GET" and parts == ["vms"]:
            page = int(request.url.params.get("page", 1))
            per = int(request.url.params.get("perPage", 20))
            ids = sorted(self.vms)
            chunk = ids[(page - 1) * per : page * per]
            summaries = [
                {
                    k: v
                    for k, v in self.vms[i].items()
                    if k not in ("sshKeys", "firewalls", "privateNetworks")
                }
                for i in chunk
            ]
            total = len(ids)
            meta = {
                "page": page,
                "perPage": per,
                "total": total,
                "totalPages": max(1, -(-total // per)),
            }
            return envelope(summaries, meta=meta)
        if request.method == "GET" and len(parts) == 2 and parts[0] == "vms":
            if parts[1] not in self.vms:
                return envelope(f"VM {parts[1]} not found", 404)
            return envelope(json.loads(json.dumps(self.vms[parts[1]])))
        if request.method == "POST" and len(parts) == 3 and parts[2] == "stop":
            self.actions.append(parts[1])
            return envelope({"actionId": f"act_{len(self.actions)}"}, 202)
        return envelope(f"no route {request.method} {sub}", 404)
