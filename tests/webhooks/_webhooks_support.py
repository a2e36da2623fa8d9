"""Helpers for the webhook tests: an independent signer, event bodies, and an in-process POST.

The signer here is written from the spec alone (HMAC-SHA256 of the raw body, lowercase hex after
``sha256=``) and shares nothing with ``svcnb.webhooks`` or the sandbox's signing side.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import shutil
import subprocess
from typing import Any

import httpx
import pytest

SECRET = "whsec_test_0123456789abcdef"


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def event_body(
    event_id: str = "evt_1",
    type_: str = "vm.stopped",
    created_at: str = "2026-11-01T00:00:00Z",
    data: Any = None,
) -> bytes:
    payload = {
        "id": event_id,
        "type": type_,
        "createdAt": created_at,
        "data": {"vmId": "vm_1"} if data is None else data,
    }
    return json.dumps(payload).encode()


def signed_headers(body: bytes, delivery_id: str = "dlv_1", secret: str = SECRET) -> dict:
    return {
        "X-Service-Signature": sign(body, secret),
        "X-Service-Event": json.loads(body).get("type", "") if body.startswith(b"{") else "",
        "X-Service-Delivery-Id": delivery_id,
        "Content-Type": "application/json",
    }


def post(app, body: bytes, headers, path: str = "/hook") -> httpx.Response:
    """POST to an ASGI app in-process, headers passed through byte for byte."""

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://receiver.test") as c:
            return await c.post(path, content=body, headers=headers)

    return asyncio.run(go())


class RawResponse:
    def __init__(self, status_code: int, body: bytes) -> None:
        self.status_code = status_code
        self.text = body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.text)


def raw_post(app, body: bytes, headers: list[tuple[bytes, bytes]], path: str = "/hook"):
    """Call an ASGI app with exactly these header bytes (no client-side checks or additions)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower(), v) for k, v in headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 443),
    }
    sent: list[dict] = []
    chunks = [body[i : i + 64] for i in range(0, len(body), 64)] or [b""]

    async def receive() -> dict:
        if chunks:
            chunk = chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    payload = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return RawResponse(start["status"], payload)


def openssl_signature(body: bytes, secret: str, tmp_path) -> str:
    """``sha256=`` + ``openssl dgst -sha256 -hmac SECRET`` over ``body``, computed by OpenSSL."""
    path = tmp_path / f"body-{hashlib.sha256(body).hexdigest()[:12]}.bin"
    path.write_bytes(body)
    out = subprocess.run(
        [OPENSSL, "dgst", "-sha256", "-hmac", secret, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    # "HMAC-SHA2-256(path)= <hex>" (OpenSSL 3) or "HMAC-SHA256(path)= <hex>" (1.1)
    return "sha256=" + out.rsplit("= ", 1)[1].strip()


OPENSSL = shutil.which("openssl")
needs_openssl = pytest.mark.skipif(
    OPENSSL is None, reason="openssl is not installed: the independent HMAC check needs its CLI"
)


class Recorder:
    """ASGI wrapper that keeps every request's raw body and headers as they reached the app."""

    def __init__(self, app) -> None:
        self.app = app
        self.requests: list[tuple[bytes, list[tuple[bytes, bytes]]]] = []

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        chunks: list[bytes] = []

        async def recording_receive():
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    self.requests.append((b"".join(chunks), list(scope["headers"])))
            return message

        await self.app(scope, recording_receive, send)


class FailFirstAnswers:
    """ASGI wrapper: the app handles every request, but the first ``n`` answers go out as 503,
    as when a receiver stores an event and then crashes before its reply leaves."""

    def __init__(self, app, n: int = 1) -> None:
        self.app = app
        self.remaining = n

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or self.remaining <= 0:
            return await self.app(scope, receive, send)
        self.remaining -= 1

        async def failing_send(message):
            if message["type"] == "http.response.start":
                message = {**message, "status": 503}
            await send(message)

        await self.app(scope, receive, failing_send)
