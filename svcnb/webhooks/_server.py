"""Serving a :class:`~svcnb.webhooks.Receiver` over HTTPS with uvicorn.

The service delivers only to HTTPS URLs, so a certificate and key are required. :func:`serve` runs
the server in a background thread (for notebooks and tests); ``svcnb listen`` runs it in the
foreground with the same settings.

The receiver listens on the open internet, so no client may hold a connection for free: the TLS
handshake, then each request's headers and body, must complete within deadlines, an idle
keep-alive connection is closed, and connections beyond a cap are closed at once with one log
line. Without these a thousand idle or trickling clients would hold a thousand descriptors.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from svcnb.webhooks._receiver import Receiver

__all__ = ["Limits", "RunningReceiver", "bind", "free_port", "serve", "uvicorn_server"]

_log = logging.getLogger("svcnb.webhooks")


@dataclass(frozen=True)
class Limits:
    """What one client may hold of the receiver. The service's deliveries are a few hundred
    bytes sent at once, so every deadline is generous for it and short for a client that
    trickles."""

    handshake_seconds: float = 10.0  # TCP accept -> TLS handshake done
    request_seconds: float = 10.0  # first byte of a request -> its headers and body read
    idle_seconds: int = 5  # a kept-alive connection with no request
    max_connections: int = 256  # open connections past their handshake


class _Bounded(H11Protocol):
    """uvicorn's h11 protocol with a deadline on reading each request: uvicorn bounds only the
    idle time between requests, so a client sending its headers or body a byte a minute would
    hold its connection for ever."""

    limits = Limits()
    refused = 0  # connections closed at the cap, for the log line and tests

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reading: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            type(self).refused += 1
            _log.warning(
                "svcnb webhooks: closed a connection from %s: %d are open, the cap is %d",
                self.client[0] if self.client else "?",
                len(self.connections) - 1,
                self.limits.max_connections,
            )
            transport.close()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._reading is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()  # the first bytes of a new request on a kept-alive connection
        super().data_received(data)
        if self.cycle is not None and not self.cycle.more_body:
            self._disarm()  # the whole request is in; the app's time is not the client's

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._reading = self.loop.call_later(self.limits.request_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._reading is not None:
            self._reading.cancel()
            self._reading = None

    def _too_slow(self) -> None:
        self._reading = None
        if not self.transport.is_closing():
            self.transport.close()


def _protocol(limits: Limits) -> type[H11Protocol]:
    return type("BoundedH11Protocol", (_Bounded,), {"limits": limits, "refused": 0})


class _Server(uvicorn.Server):
    """uvicorn's server with a deadline on the TLS handshake: uvicorn leaves asyncio's default
    of 60 s, and offers no setting for it."""

    def __init__(self, config: uvicorn.Config, handshake_seconds: float) -> None:
        super().__init__(config)
        self._handshake_seconds = handshake_seconds

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        loop = asyncio.get_running_loop()
        create_server = loop.create_server
        # shadowed on this loop only while uvicorn creates its listener, then removed
        loop.create_server = functools.partial(  # type: ignore[method-assign]
            create_server, ssl_handshake_timeout=self._handshake_seconds
        )
        try:
            await super().startup(sockets)
        finally:
            del loop.create_server


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket; ``port`` 0 picks a free port. SO_REUSEADDR lets a restarted
    receiver take back its port (the subscription URL names it) while old connections linger."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on accepted sockets whose
    # proto says TCP, and they inherit this one's. With proto 0 every answer's body waited for
    # the sender's delayed ACK of its headers: 44 ms a request, whatever the load.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    return sock


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on ``host`` now, to put in a subscription URL before the receiver starts."""
    with bind(host, 0) as sock:
        return sock.getsockname()[1]


def uvicorn_server(
    receiver: Receiver | ASGIApp,
    certfile: str | os.PathLike[str],
    keyfile: str | os.PathLike[str],
    limits: Limits = Limits(),
) -> uvicorn.Server:
    """A uvicorn server for ``receiver`` (or any ASGI app wrapping one) over TLS, quiet apart
    from warnings, holding every client to ``limits``."""
    for name, path in (("certificate", certfile), ("key", keyfile)):
        if not os.path.isfile(path):
            raise FileNotFoundError(f"the TLS {name} file {os.fspath(path)!r} does not exist")
    config = uvicorn.Config(
        receiver,
        ssl_certfile=os.fspath(certfile),
        ssl_keyfile=os.fspath(keyfile),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=5,
        http=_protocol(limits),
        timeout_keep_alive=limits.idle_seconds,
    )
    return _Server(config, limits.handshake_seconds)


@dataclass
class RunningReceiver:
    """A receiver being served: ``url`` is what to subscribe (``https://host:port/``)."""

    receiver: Receiver | ASGIApp
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}/"


@contextmanager
def serve(
    receiver: Receiver | ASGIApp,
    *,
    certfile: str | os.PathLike[str],
    keyfile: str | os.PathLike[str],
    host: str = "127.0.0.1",
    port: int = 0,
    startup_timeout: float = 10.0,
    limits: Limits = Limits(),
) -> Iterator[RunningReceiver]:
    """Serve ``receiver`` over HTTPS in a background thread until the block ends.

    ``port`` 0 picks a free port; pass the port of an earlier run to bring a stopped receiver back
    at the URL its subscription names. The subscription secret is known only once the
    subscription exists, and the subscription needs the URL: reserve a port first with
    ``free_port()``, subscribe ``https://127.0.0.1:<port>/``, then serve a Receiver there.
    """
    server = uvicorn_server(receiver, certfile, keyfile, limits)
    sock = bind(host, port)
    bound_port = sock.getsockname()[1]
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="svcnb-webhook-receiver", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise RuntimeError(
                f"the webhook receiver did not start on {host}:{bound_port} within "
                f"{startup_timeout:g} s; check the certificate and key files"
            )
        time.sleep(0.01)
    try:
        yield RunningReceiver(receiver, host, bound_port)
    finally:
        server.should_exit = True
        thread.join(timeout=startup_timeout)
        sock.close()
