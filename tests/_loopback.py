"""Loopback servers of this test session: an httpx client for them, and a start and a clean
end for the hand-written ones."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from typing import Any

import httpx


def loopback_client(base_url: str, **options: Any) -> httpx.Client:
    """``httpx.Client(base_url, **options)`` for plain http on loopback: no proxy from the
    environment, and no TLS context, whose CA bundle costs more CPU to load than most tests'
    requests (several hundred clients are made in one run)."""
    if httpx.URL(base_url).scheme != "http":
        raise ValueError(f"{base_url} is not plain http: use httpx.Client and verify it")
    return httpx.Client(base_url=base_url, trust_env=False, verify=False, **options)


def start_accepting(loop: Callable[[], object]) -> threading.Thread:
    """Run a hand-written server's accept ``loop`` in the background; end it with
    :func:`close_listener`."""
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def close_listener(sock: socket.socket, thread: threading.Thread) -> None:
    """Close a listening socket once ``thread``, its accept loop, has ended.

    Closed while the thread waits in accept(), the socket's number is free at once and the next
    socket made (another test's server) gets it. An accept restarted after that (a debugger or
    a profiler interrupting the process is enough) takes that server's connections and answers
    them as this one would: a test then sees answers its server never gave. Shut down first,
    the waiting accept fails, the loop ends, and only then is the number given back."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    thread.join(timeout=10)
    sock.close()
