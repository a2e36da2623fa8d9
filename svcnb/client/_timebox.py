"""A deadline on every socket step of an httpx client: connect, TLS, each write and each read.

httpx bounds each step by its own timeout only, so a server that sends one header line (or one
``100 Continue``) every few seconds holds a request for as long as it likes. :func:`bound` puts
a :class:`Deadline` in front of the network backend of each of the client's transports (its
own and those it mounted for proxies); a step then waits at most what is left of the deadline
the calling thread set (:meth:`Deadline.until`), and one that would start after it fails at once
as httpx's timeout of that step.

Used by the client's httpx wire (``svcnb.client._wire``) and, as ``svcnb.client.bound``, by alert
delivery (``svcnb.alerts._deliver``). A leaf: it imports nothing of svcnb.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpcore
import httpx


class Deadline:
    """The instant (``time.monotonic()``) each thread's current request must end by; None for
    no deadline. One per client, so the deadline of one client's request never reaches
    another's."""

    def __init__(self) -> None:
        self._local = threading.local()

    def until(self, ends: float | None) -> None:
        """Bound this thread's next steps on the client by ``ends`` (None: by their timeouts)."""
        self._local.ends = ends

    def cut(self, timeout: float | None, late: type[Exception]) -> float | None:
        """``timeout`` cut to what is left; ``late`` raised when nothing is."""
        ends = getattr(self._local, "ends", None)
        if ends is None:
            return timeout
        left = ends - time.monotonic()
        if left <= 0:
            raise late("the deadline passed")
        return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._stream, self._deadline = stream, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._deadline.cut(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.cut(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        cut = self._deadline.cut(timeout, httpcore.ConnectTimeout)
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, cut), self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, backend: httpcore.NetworkBackend, deadline: Deadline) -> None:
        self._backend, self._deadline = backend, deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        cut = self._deadline.cut(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_tcp(
            host, port, timeout=cut, local_address=local_address, socket_options=socket_options
        )
        return _Stream(stream, self._deadline)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        cut = self._deadline.cut(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_unix_socket(path, timeout=cut, socket_options=socket_options)
        return _Stream(stream, self._deadline)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def bound(client: httpx.Client) -> Deadline:
    """The :class:`Deadline` every step of ``client``'s own transports now keeps to. A transport
    a caller brought (a test's mock) has no sockets and is left as it is."""
    deadline = Deadline()
    for transport in (client._transport, *client._mounts.values()):
        pool = getattr(transport, "_pool", None)  # httpx.HTTPTransport's httpcore pool
        backend = getattr(pool, "_network_backend", None)
        if backend is not None and not isinstance(backend, _Backend):
            pool._network_backend = _Backend(backend, deadline)  # type: ignore[union-attr]
    return deadline
