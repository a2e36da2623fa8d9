"""The two wires under the client send the same request and read answers alike.

urllib3's pool is the default wire; an httpx client is used when a test brings a transport or a
proxy is configured. A raw loopback socket records the bytes each wire sends and answers with
bytes the test writes, so what is compared is what a server would see and what a user gets.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import ssl
import threading

import httpx
import pytest
from _loopback import close_listener, start_accepting

from svcnb.client import Client, HttpxWire, Urllib3Wire, wire_for
from svcnb.errors import ApiError, TransportError

TOKEN = "svc_" + "wire" * 8
OK = json.dumps({"success": True, "data": {"id": "vm_1", "name": "é"}}).encode()


class RawServer:
    """Answers every request on a loopback socket with ``answer`` (bytes, or a callable of the
    request's bytes), keeping each request as received."""

    def __init__(self, answer, close: bool = False, tls=None) -> None:
        self.answer, self.close_after = answer, close
        self.requests: list[bytes] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        scheme = "http"
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(tls.cert_pem, tls.key_pem)
            self.sock = context.wrap_socket(self.sock, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.sock.getsockname()[1]}"
        self._accepting = start_accepting(self._serve)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except ssl.SSLError:
                continue  # a client that did not trust the certificate
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        # a client may hang up mid-answer (a body over the cap): that ends this connection
        with conn, contextlib.suppress(OSError):
            while True:
                data = b""
                while b"\r\n\r\n" not in data:
                    got = conn.recv(65536)
                    if not got:
                        return
                    data += got
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(
                    (int(line.split(b":")[1]) for line in head.split(b"\r\n")
                     if line.lower().startswith(b"content-length:")),
                    0,
                )  # fmt: skip
                while len(body) < length:
                    body += conn.recv(65536)
                request = head + b"\r\n\r\n" + body
                self.requests.append(request)
                answer = self.answer(request) if callable(self.answer) else self.answer
                conn.sendall(answer)
                if self.close_after:
                    return

    def close(self) -> None:
        close_listener(self.sock, self._accepting)


def _http(body: bytes, status: str = "200 OK", headers: tuple[str, ...] = ()) -> bytes:
    lines = [f"HTTP/1.1 {status}", "content-type: application/json", *headers]
    lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@pytest.fixture
def raw():
    servers: list[RawServer] = []

    def start(answer, close: bool = False, tls=None) -> RawServer:
        servers.append(RawServer(answer, close, tls))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _request_parts(request: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = request.partition(b"\r\n\r\n")
    first, *lines = head.decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return first, headers, body


def _both_clients(url: str):
    """The default client (urllib3 wire) and one forced onto the httpx wire."""
    default = Client(TOKEN, url, progress=False)
    assert isinstance(default._req._wire, Urllib3Wire)
    other = Client(TOKEN, url, progress=False, transport=httpx.HTTPTransport())
    assert isinstance(other._req._wire, HttpxWire)
    return default, other


def test_both_wires_send_the_same_request(raw):
    server = raw(_http(OK))
    default, other = _both_clients(server.url)
    seen = []
    for client in (default, other):
        with client:
            client._req.request("GET", "/vms", params={"page": 2, "perPage": 100, "q": "a b/é"})
            client._req.request("POST", "/vms/vm%2F1/stop", json={"note": "é", "n": 1})
        seen.append([_request_parts(r) for r in server.requests[-2:]])
    for (line_a, head_a, body_a), (line_b, head_b, body_b) in zip(*seen, strict=True):
        assert line_a == line_b
        keys = ("host", "accept", "accept-encoding", "user-agent", "x-api-key", "content-type")
        assert {k: head_a.get(k) for k in keys} == {k: head_b.get(k) for k in keys}
        assert body_a == body_b
        assert head_a["x-api-key"] == TOKEN
    get, post = seen[0]
    assert get[0] == "GET /api/public/v1/vms?page=2&perPage=100&q=a+b%2F%C3%A9 HTTP/1.1"
    assert post[0] == "POST /api/public/v1/vms/vm%2F1/stop HTTP/1.1"
    assert json.loads(post[2]) == {"note": "é", "n": 1}
    # a write carries its idempotency key on either wire
    assert all(len(parts[1]["idempotency-key"]) == 32 for parts in seen[0][1:] + seen[1][1:])


@pytest.mark.parametrize("wire", ["urllib3", "httpx"])
def test_a_gzip_body_is_read_and_a_broken_one_is_named(raw, wire):
    packed = gzip.compress(OK)
    good = raw(_http(packed, headers=("content-encoding: gzip",)))
    broken = raw(_http(b"not gzip at all", headers=("content-encoding: gzip",)))
    transport = None if wire == "urllib3" else httpx.HTTPTransport()
    with Client(TOKEN, good.url, progress=False, transport=transport) as client:
        assert client._req.request("GET", "/wallet").data == {"id": "vm_1", "name": "é"}
    with (
        Client(TOKEN, broken.url, progress=False, transport=transport) as client,
        pytest.raises(ApiError, match=r"does not decode as its Content-Encoding \(gzip\)"),
    ):
        client._req.request("GET", "/wallet")


def test_a_closed_test_server_leaves_no_accept_waiting():
    # a thread left waiting in accept() on a closed socket could, once restarted, take the
    # connections of the next server given that socket's number (this test file's old flake)
    server = RawServer(_http(OK))
    server.close()
    assert not server._accepting.is_alive()


@pytest.mark.parametrize("wire", ["urllib3", "httpx"])
def test_a_connection_cut_mid_answer_is_retried_then_named(raw, wire):
    cut = _http(OK)[:-10]  # promises more than it sends, then closes

    server = raw(cut, close=True)
    transport = None if wire == "urllib3" else httpx.HTTPTransport()
    with (
        Client(TOKEN, server.url, progress=False, transport=transport, max_retries=2) as c,
        pytest.raises(TransportError, match=r"after 3 attempt\(s\)") as caught,
    ):
        c._req.request("GET", "/wallet")
    assert TOKEN not in str(caught.value)
    assert len(server.requests) == 3


def test_nothing_listening_is_a_transport_error_naming_the_server():
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
    with (
        Client(TOKEN, f"http://127.0.0.1:{port}", progress=False, max_retries=1) as client,
        pytest.raises(TransportError, match=f"no answer from http://127.0.0.1:{port}"),
    ):
        client._req.request("GET", "/wallet")


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_configured_proxy_leaves_the_wire_to_httpx(monkeypatch, variable):
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    args = {"transport": None, "pool_size": 4, "default_headers": {}}
    assert isinstance(wire_for("https://api.example.com", None, **args), Urllib3Wire)
    monkeypatch.setenv(variable, "http://proxy.internal:3128")
    assert isinstance(wire_for("https://api.example.com", None, **args), HttpxWire)


def test_tls_is_verified_against_the_cas_ssl_cert_file_names(raw, tls, monkeypatch):
    server = raw(_http(OK), tls=tls)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    # certifi's CAs do not know this certificate: refused at once, never retried
    with (
        Client(TOKEN, server.url, progress=False, max_retries=3) as client,
        pytest.raises(
            TransportError, match=r"after 1 attempt.*CERTIFICATE_VERIFY_FAILED.*set SSL_CERT_FILE"
        ) as no,
    ):
        client._req.request("GET", "/wallet")
    assert TOKEN not in str(no.value)
    monkeypatch.setenv("SSL_CERT_FILE", str(tls.ca_pem))
    with Client(TOKEN, server.url, progress=False) as client:
        assert client._req.request("GET", "/wallet").data["id"] == "vm_1"
    assert _request_parts(server.requests[-1])[1]["x-api-key"] == TOKEN


def test_a_proxy_that_refuses_is_named_without_its_password(raw, monkeypatch):
    server = raw(_http(OK))
    with socket.create_server(("127.0.0.1", 0)) as sock:
        dead = sock.getsockname()[1]
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://ops:hunter2@127.0.0.1:{dead}")
    with (
        Client(TOKEN, server.url, progress=False, max_retries=1) as client,
        pytest.raises(TransportError, match=f"through the proxy http://127.0.0.1:{dead}") as e,
    ):
        client._req.request("GET", "/wallet")
    assert "hunter2" not in str(e.value) and "HTTP_PROXY" in str(e.value)
    assert server.requests == []
    # a host NO_PROXY names goes straight to the server
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with Client(TOKEN, server.url, progress=False) as client:
        assert client._req.request("GET", "/wallet").data["id"] == "vm_1"


def test_https_to_a_server_without_tls_says_to_check_the_scheme():
    # a plain HTTP server answers a TLS hello with a 400 in clear text, as uvicorn does
    sock = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = sock.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    url = f"https://127.0.0.1:{sock.getsockname()[1]}"
    try:
        with (
            Client(TOKEN, url, progress=False) as client,
            pytest.raises(TransportError, match="does not speak TLS there: check http://"),
        ):
            client._req.request("GET", "/wallet")
    finally:
        sock.close()


def test_a_tls_handshake_cut_short_is_retried_a_failed_certificate_is_not():
    from urllib3.exceptions import SSLError

    from svcnb.client._wire import _urllib3_error

    cut = SSLError("EOF occurred in violation of protocol (_ssl.c:1006)")
    bad = SSLError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed (_ssl.c:1006)")
    plain = SSLError("[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1006)")
    assert _urllib3_error(cut).retryable
    assert not _urllib3_error(bad).retryable and not _urllib3_error(plain).retryable


def test_a_compressed_body_that_inflates_past_the_cap_is_refused_on_the_default_wire(raw):
    # 80 MiB of zeros in about 80 KB of gzip: read chunk by chunk, refused at 64 MiB
    bomb = gzip.compress(b"\0" * (80 * 2**20), compresslevel=9)
    server = raw(_http(bomb, headers=("content-encoding: gzip",)))
    with (
        Client(TOKEN, server.url, progress=False) as client,
        pytest.raises(ApiError, match="larger than 67108864 bytes"),
    ):
        client._req.request("GET", "/wallet")
