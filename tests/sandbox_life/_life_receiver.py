"""A local HTTPS webhook receiver for the delivery tests: trustme certificates, uvicorn on
127.0.0.1 port 0 in a thread, and a log of exactly what arrived (raw body and headers)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import trustme
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


@dataclass
class Received:
    body: bytes
    headers: dict[str, str]
    status: int


@dataclass
class Receiver:
    """``answers`` are the statuses given to successive requests (the last one repeats)."""

    url: str
    ca_path: str
    answers: list[int] = field(default_factory=lambda: [200])
    delay: float = 0.0  # seconds to wait before answering
    seen: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self) -> int:
        with self.lock:
            index = min(len(self.seen), len(self.answers) - 1)
            return self.answers[index]

    def count(self) -> int:
        with self.lock:
            return len(self.seen)

    def wait_for(self, n: int, timeout: float = 10.0) -> list[Received]:
        """Wait until at least ``n`` requests arrived; return them all."""
        deadline = time.monotonic() + timeout
        while self.count() < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"receiver saw {self.count()} requests, expected {n}")
            time.sleep(0.01)
        with self.lock:
            return list(self.seen)


@contextmanager
def https_receiver(tmp_path: Path, path: str = "/hook") -> Iterator[Receiver]:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    ca_path = tmp_path / "receiver-ca.pem"
    ca.cert_pem.write_to_path(str(ca_path))
    cert_path = tmp_path / "receiver-cert.pem"
    key_path = tmp_path / "receiver-key.pem"
    cert.cert_chain_pems[0].write_to_path(str(cert_path))
    cert.private_key_pem.write_to_path(str(key_path))

    receiver = Receiver(url="", ca_path=str(ca_path))

    async def hook(request: Request) -> Response:
        body = await request.body()
        if receiver.delay:
            await asyncio.sleep(receiver.delay)
        status = receiver.answer()
        with receiver.lock:
            receiver.seen.append(Received(body, dict(request.headers), status))
        return Response(status_code=status)

    app = Starlette(routes=[Route(path, hook, methods=["POST"])])
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        ssl_certfile=str(cert_path),
        ssl_keyfile=str(key_path),
        log_level="warning",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="test-webhook-receiver", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test webhook receiver did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    receiver.url = f"https://127.0.0.1:{port}{path}"
    try:
        yield receiver
    finally:
        server.should_exit = True
        thread.join(timeout=5)
