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
