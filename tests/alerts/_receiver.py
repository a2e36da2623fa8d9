"""A tiny HTTPS receiver on loopback for alert deliveries: records each JSON body it is sent and
answers the status codes it is told to, in order (then 200)."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from _loopback import close_listener, start_accepting


class Receiver:
    def __init__(self, url: str) -> None:
        self.url = url
        self.bodies: list[Any] = []  # every request body, answered or not
        self.answers: list[int] = []  # status codes to give next, first one first


@contextmanager
def https_receiver(cert_pem: str, key_pem: str) -> Iterator[Receiver]:
    box: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            receiver = box["r"]
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            receiver.bodies.append(json.loads(body))
            status = receiver.answers.pop(0) if receiver.answers else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_pem, key_pem)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    box["r"] = Receiver(f"https://127.0.0.1:{server.server_address[1]}/alerts/T000/secret-part")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box["r"]
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def trickling_receiver(cert_pem: str, key_pem: str, gap: float = 0.3) -> Iterator[Receiver]:
    """An HTTPS receiver that reads the request, then sends its answer's status line and one
    header line every ``gap`` seconds, never the end: each read comes well within any timeout."""
    import socket

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_pem, key_pem)
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    receiver = Receiver(f"https://127.0.0.1:{listener.getsockname()[1]}/alerts/T000/secret-part")

    def answer(conn: socket.socket) -> None:
        try:
            with context.wrap_socket(conn, server_side=True) as tls:
                tls.recv(65536)
                receiver.bodies.append(None)  # a request came; its body is not read whole
                tls.sendall(b"HTTP/1.1 200 OK\r\n")
                while not stop.wait(gap):
                    tls.sendall(b"x-still-coming: yes\r\n")
        except OSError:
            pass

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    accepting = start_accepting(serve)
    try:
        yield receiver
    finally:
        stop.set()
        close_listener(listener, accepting)
