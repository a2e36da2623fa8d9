"""What a competent user writes without svcnb: the baseline the pull benches compare against.

About 60 lines for one wire: httpx, a pool of 8 threads, pacing from ``X-RateLimit-Remaining`` /
``X-RateLimit-Reset`` and ``Retry-After``. It speaks the default dialect only (``meta`` paging),
checks nothing beyond the status, and keeps no store: it is the fastest honest way to get every
VM's details, not a toolkit. ``pull(..., wire="urllib3")`` is the same client on urllib3's pool
(the wire svcnb uses), so a bench can also show what svcnb costs over its own wire written by
hand.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import urllib3


class Paced:
    """GETs through one connection pool, never past the budget the last answer announced."""

    def __init__(self, api_root: str, token: str, workers: int, wire: str = "httpx") -> None:
        self.root = api_root
        if wire == "httpx":
            limits = httpx.Limits(max_connections=workers, max_keepalive_connections=workers)
            self.http = httpx.Client(
                base_url=api_root, headers={"x-api-key": token}, timeout=30, limits=limits
            )
        else:
            self.http = urllib3.PoolManager(maxsize=workers, headers={"x-api-key": token})
        self.lock = threading.Lock()
        self.remaining = 1  # until the first answer tells
        self.reset_at = 0.0

    def get(self, path: str, **params: object) -> dict:
        while True:
            with self.lock:
                wait = self.reset_at - time.monotonic() if self.remaining <= 0 else 0.0
                self.remaining -= 1
            if wait > 0:
                time.sleep(wait)
            status, headers, body = self._send(path, params)
            with self.lock:
                if "x-ratelimit-remaining" in headers:
                    self.remaining = int(headers["x-ratelimit-remaining"])
                    self.reset_at = time.monotonic() + float(headers["x-ratelimit-reset"])
            if status == 429:
                time.sleep(float(headers.get("retry-after", 1)))
                continue
            if status >= 400:
                raise RuntimeError(f"GET {path}: {status}")
            return json.loads(body)

    def _send(self, path: str, params: dict) -> tuple[int, Any, bytes]:
        if isinstance(self.http, httpx.Client):
            answer = self.http.get(path, params=params or None)
            return answer.status_code, answer.headers, answer.content
        query = "?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else ""
        answer = self.http.request("GET", self.root + path + query, timeout=30, retries=False)
        return answer.status, answer.headers, answer.data

    def close(self) -> None:
        if isinstance(self.http, httpx.Client):
            self.http.close()
        else:
            self.http.clear()


def pull(
    api_root: str, token: str, workers: int = 8, per_page: int = 100, wire: str = "httpx"
) -> list[dict]:
    """Every VM with its details: page 1, the other pages in parallel, then each VM."""
    api = Paced(api_root, token, workers, wire)
    try:
        first = api.get("/vms", page=1, perPage=per_page)
        pages = first["meta"]["totalPages"]
        with ThreadPoolExecutor(workers) as pool:
            rest = pool.map(
                lambda n: api.get("/vms", page=n, perPage=per_page)["data"], range(2, pages + 1)
            )
            summaries = first["data"] + [vm for page in rest for vm in page]
            return list(pool.map(lambda vm: api.get(f"/vms/{vm['id']}")["data"], summaries))
    finally:
        api.close()
