"""An httpx client for a server this test session started on a loopback address."""

from __future__ import annotations

from typing import Any

import httpx


def loopback_client(base_url: str, **options: Any) -> httpx.Client:
    """``httpx.Client(base_url, **options)`` for plain http on loopback: no proxy from the
    environment, and no TLS context, whose CA bundle costs more CPU to load than most tests'
    requests (several hundred clients are made in one run)."""
    if httpx.URL(base_url).scheme != "http":
        raise ValueError(f"{base_url} is not plain http: use httpx.Client and verify it")
    return httpx.Client(base_url=base_url, trust_env=False, verify=False, **options)
