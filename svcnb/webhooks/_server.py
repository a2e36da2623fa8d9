"""Serving a :class:`~svcnb.webhooks.Receiver` over HTTPS with uvicorn.

The service delivers only to HTTPS URLs, so a certificate and key are required. :func:`serve` runs
the server in a background thread (for notebooks and tests); ``svcnb listen`` runs it in the
foreground with the same settings.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from starlette.types import ASGIApp

from svcnb.webhooks._receiver import Receiver

__all__ = ["RunningReceiver", "bind", "free_port", "serve", "uvicorn_server"]


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket; ``port`` 0 picks a free port. SO_REUSEADDR lets a restarted
    receiver take back its port (the subscription URL names it) while old connections linger."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
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
) -> uvicorn.Server:
    """A uvicorn server for ``receiver`` (or any ASGI app wrapping one) over TLS, quiet apart
    from warnings."""
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
    )
    return uvicorn.Server(config)


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
) -> Iterator[RunningReceiver]:
    """Serve ``receiver`` over HTTPS in a background thread until the block ends.

    ``port`` 0 picks a free port; pass the port of an earlier run to bring a stopped receiver back
    at the URL its subscription names. The subscription secret is known only once the
    subscription exists, and the subscription needs the URL: reserve a port first with
    ``free_port()``, subscribe ``https://127.0.0.1:<port>/``, then serve a Receiver there.
    """
    server = uvicorn_server(receiver, certfile, keyfile)
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
