"""What a competent user writes without svcnb: the baseline the pull benches compare against.

About 60 lines: httpx, a pool of 8 threads, pacing from ``X-RateLimit-Remaining`` /
``X-RateLimit-Reset`` and ``Retry-After``. It speaks the default dialect only (``meta`` paging),
checks nothing beyond the status, and keeps no store: it is the fastest honest way to get every
VM's details, not a toolkit.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx


class Paced:
    """GETs through one connection pool, never past the budget the last answer announced."""

    def __init__(self, api_root: str, token: str, workers: int) -> None:
        limits = httpx.Limits(max_connections=workers, max_keepalive_connections=workers)
        self.http = httpx.Client(
            base_url=api_root, headers={"x-api-key": token}, timeout=30, limits=limits
        )
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
            answer = self.http.get(path, params=params or None)
            headers = answer.headers
            with self.lock:
                if "x-ratelimit-remaining" in headers:
                    self.remaining = int(headers["x-ratelimit-remaining"])
                    self.reset_at = time.monotonic() + float(headers["x-ratelimit-reset"])
            if answer.status_code == 429:
                time.sleep(float(headers.get("retry-after", 1)))
                continue
            answer.raise_for_status()
            return answer.json()

    def close(self) -> None:
        self.http.close()


def pull(api_root: str, token: str, workers: int = 8, per_page: int = 100) -> list[dict]:
    """Every VM with its details: page 1, the other pages in parallel, then each VM."""
    api = Paced(api_root, token, workers)
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
