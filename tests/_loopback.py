"""Loopback servers of this test session: an httpx client for them, a wait until one answers,
and a start and a clean end for the hand-written ones."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
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


def wait_for_http(url: str, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Poll ``url`` until it answers below 500; raise naming the URL when it never does, or
    as soon as ``proc``, the server's process, has exited."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    with loopback_client(url, timeout=2.0) as http:  # one client for every poll
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"the server for {url} exited with status {proc.returncode}")
            try:
                response = http.get(url)
                if response.status_code < 500:
                    return
                last = f"status {response.status_code}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f} s ({last})")


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
