"""What one client may hold of the receiver: a handshake, a request and an idle connection are
each bounded in time, and connections past the cap are closed with one log line. Without the
bounds, each of these clients holds its connection (and a descriptor) for as long as it likes."""

from __future__ import annotations

import logging
import socket
import ssl
import threading
import time

import pytest
from _webhooks_support import SECRET, event_body, signed_headers

from svcnb.webhooks import Limits, Receiver, bind, serve, uvicorn_server

SHORT = Limits(handshake_seconds=0.5, request_seconds=0.5, idle_seconds=1, max_connections=3)
WAIT = 5.0  # far past every deadline above: a connection still open then is held for ever


@pytest.fixture
def receiver_url(tmp_path, tls):
    with serve(
        Receiver(SECRET, tmp_path / "store"),
        certfile=tls.cert_pem,
        keyfile=tls.key_pem,
        limits=SHORT,
    ) as running:
        yield running, tls


def _tls_socket(port: int, tls) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=str(tls.ca_pem))
    raw = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def _closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed ``sock`` (EOF or reset), or None if it was still open."""
    start = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return None
    except (ConnectionResetError, ssl.SSLError):
        pass
    return time.monotonic() - start


def test_a_client_that_never_starts_its_handshake_is_closed(receiver_url):
    running, _ = receiver_url
    raw = socket.create_connection(("127.0.0.1", running.port), timeout=WAIT)
    with raw:
        took = _closed_within(raw, WAIT)
    assert took is not None, "a connection that never began its TLS handshake was held open"
    assert took < 3


@pytest.mark.parametrize(
    "partial",
    [
        b"POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # headers never finished
        b'POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n{"id":',  # body
    ],
    ids=["headers", "body"],
)
def test_a_client_that_trickles_its_request_is_closed(receiver_url, partial):
    running, tls = receiver_url
    with _tls_socket(running.port, tls) as sock:
        sock.sendall(partial)
        took = _closed_within(sock, WAIT)
    assert took is not None, "a request never finished was held open"
    assert took < 3


def test_an_idle_kept_alive_connection_is_closed_after_its_answer(receiver_url):
    running, tls = receiver_url
    body = event_body("evt_limits")
    head = "".join(f"{k}: {v}\r\n" for k, v in signed_headers(body).items())
    request = (
        f"POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n{head}\r\n"
    ).encode() + body
    with _tls_socket(running.port, tls) as sock:
        sock.sendall(request)
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 200"), answer
        took = _closed_within(sock, WAIT)
    assert took is not None, "an idle connection was held open after its answer"
    assert SHORT.idle_seconds - 0.5 < took < SHORT.idle_seconds + 2


def test_connections_past_the_cap_are_closed_with_one_log_line(receiver_url, caplog):
    running, tls = receiver_url
    caplog.set_level(logging.WARNING, logger="svcnb.webhooks")
    held = [_tls_socket(running.port, tls) for _ in range(SHORT.max_connections)]
    try:
        # the first ones are open: the server sees their requests start
        for sock in held:
            sock.sendall(b"POST /hook HTTP/1.1\r\n")
        extra = _tls_socket(running.port, tls)
        with extra:
            took = _closed_within(extra, 2.0)
        assert took is not None, "a connection past the cap was kept"
    finally:
        for sock in held:
            sock.close()
    lines = [r.getMessage() for r in caplog.records if "the cap is" in r.getMessage()]
    assert lines == ["svcnb webhooks: closed a connection from 127.0.0.1: 3 are open, the cap is 3"]


def test_the_receivers_connections_send_without_waiting_for_acks(tmp_path, tls):
    """Nagle's algorithm held each answer's body until the sender acknowledged its headers (a
    delayed ACK: some 40 ms a delivery, whatever the load). The connections the receiver
    accepts must have TCP_NODELAY set."""
    server = uvicorn_server(Receiver(SECRET, tmp_path / "store"), tls.cert_pem, tls.key_pem)
    sock = bind()
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.01)
        with _tls_socket(sock.getsockname()[1], tls):
            deadline = time.monotonic() + WAIT
            while not server.server_state.connections and time.monotonic() < deadline:
                time.sleep(0.01)
            (protocol,) = server.server_state.connections
            accepted = protocol.transport.get_extra_info("socket")
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        server.should_exit = True
        thread.join(timeout=WAIT)
        sock.close()
