"""One attempt on the wire: send a request, hand back its status, headers and body chunks.

The request path (:mod:`svcnb.client._request`) decides what to send, when, how often and what
an answer means; a wire only moves bytes (the :class:`Wire` contract). Two wires keep it alike:

- :class:`Urllib3Wire`, the default: urllib3's connection pool, made for threads. A bulk pull is
  CPU-bound in the client (an answer costs the server about a third of what reading it costs the
  client), and httpx's client layer and its pure-Python HTTP/1.1 stack (httpcore, h11) cost about
  twice the CPU per request of urllib3, so most of what a big pull costs is this choice.
- :class:`HttpxWire`, an ``httpx.Client``: when a test brings an httpx transport (a mock, an app
  mounted in-process), or when the environment names a proxy (``HTTP(S)_PROXY``, ``ALL_PROXY``,
  honoured with ``NO_PROXY`` exactly as httpx does).

Both verify TLS as httpx does (certifi, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``), follow no
redirect, retry nothing, send ``Accept-Encoding: gzip, deflate`` and decode the body, and raise
only :class:`WireError` (no complete answer; whether another attempt may get one) and
:class:`BadEncoding`, never a library's exception: those hold the request, whose headers hold the
token. The token is written into the request's headers as it goes, from the :class:`Secret`.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import socket
import threading
import time
import urllib.request
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

import httpx
import urllib3
import urllib3.connection
from urllib3 import HTTPHeaderDict
from urllib3.exceptions import (
    DecodeError,
    HTTPError,
    LocationValueError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    SSLError,
)
from urllib3.exceptions import (
    TimeoutError as Urllib3Timeout,
)

from svcnb.client._redact import Secret
from svcnb.client._timebox import bound
from svcnb.config import ConfigError

_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
_CHUNK = 64 * 1024
# TLS failures another attempt would meet again, and what the user can do about each
_TLS_HINTS = {
    "CERTIFICATE_VERIFY_FAILED": "the server's TLS certificate could not be verified: if your "
    "own CA issued it, set SSL_CERT_FILE to that CA's PEM file",
    "WRONG_VERSION_NUMBER": "the server does not speak TLS there: check http:// against https://",
}
# What httpx sends by default, so the server sees the same request from either wire.
_ACCEPT_ENCODING = "gzip, deflate"
# No answer, but another attempt may get one (httpx's names for the same failures).
_HTTPX_RETRYABLE = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_HTTPX_ERRORS = (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError)


class WireError(Exception):
    """No (complete) answer on this attempt. ``text`` may echo what the socket or server said:
    the requester masks it before it goes anywhere. ``hint`` says what to do when the wire knows
    better than "check that the server is reachable"."""

    def __init__(self, text: str, retryable: bool, hint: str = "") -> None:
        super().__init__(text)
        self.text, self.retryable, self.hint = text, retryable, hint


class BadEncoding(Exception):
    """The body does not decode as its ``Content-Encoding`` says."""


@dataclass
class Opened:
    """An answer whose status and headers have come; ``chunks`` reads the (decoded) body and
    ``close`` gives the connection back (or drops it when the body was not read whole)."""

    status: int
    headers: HTTPHeaderDict  # case-insensitive, as every reader of an answer's headers expects
    url: str
    chunks: Iterator[bytes]
    close: Callable[[], None]


class Wire(Protocol):
    """The cut-off point between the request path and an HTTP library: one attempt, bytes only.

    ``open`` sends one request (JSON ``body`` if not None, the token written into its headers)
    and returns once the status and headers have come; the body is read through
    :attr:`Opened.chunks`, decoded, and ``Opened.close`` must be called whether or not it was
    read whole. ``timeout`` bounds each socket step and ``ends`` (``time.monotonic()``) the
    whole attempt, body included. It follows no redirect and retries nothing; it raises only
    :class:`WireError` and :class:`BadEncoding`, never the library's exception (which holds
    the request, and so the token). ``proxy`` names the proxy requests go through ("" for none),
    for messages; ``close`` gives back every connection.
    """

    proxy: str

    def open(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None,
        body: Any,
        headers: Mapping[str, str],
        timeout: float,
        ends: float,
    ) -> Opened: ...

    def close(self) -> None: ...


def wire_for(
    base_url: str,
    token: Secret | None,
    *,
    transport: httpx.BaseTransport | None,
    pool_size: int,
    default_headers: Mapping[str, str],
) -> Wire:
    """urllib3's pool, unless a test brings an httpx transport or a proxy is configured."""
    if transport is not None:
        return HttpxWire(base_url, token, transport, pool_size, default_headers)
    if any(os.environ.get(n) or os.environ.get(n.upper()) for n in _PROXY_VARIABLES):
        proxy = _proxy_for(base_url)
        return HttpxWire(base_url, token, None, pool_size, default_headers, proxy)
    return Urllib3Wire(base_url, token, pool_size, default_headers)


def _proxy_for(base_url: str) -> str:
    """The variable and proxy httpx will send ``base_url``'s requests through ("" for none),
    for messages: a proxy that refuses looks like a server that does."""
    url = httpx.URL(base_url)
    # undocumented in the standard library and so missing from its stubs; httpx reads no_proxy
    # the same way
    if urllib.request.proxy_bypass_environment(url.host):  # type: ignore[attr-defined]
        return ""
    for name in (f"{url.scheme}_proxy", "all_proxy"):
        value = os.environ.get(name) or os.environ.get(name.upper())
        if value:
            shown = httpx.URL(value).copy_with(username=None, password=None)
            return f"{shown} ({name.upper()})"
    return ""


def _socks_variable() -> str:
    """``ALL_PROXY (socks5://host:1080)``: the variable naming a SOCKS proxy, and the proxy
    without its credentials ("" for none)."""
    for name in _PROXY_VARIABLES:
        for spelled in (name, name.upper()):
            value = os.environ.get(spelled, "")
            if value.lower().startswith("socks"):
                try:
                    shown = str(httpx.URL(value).copy_with(username=None, password=None))
                except (httpx.InvalidURL, ValueError, TypeError):
                    shown = "a SOCKS URL"
                return f"{spelled} ({shown})"
    return ""


def _json_body(body: Any) -> bytes:
    # httpx's encoding of json=..., so both wires send the same bytes
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class Urllib3Wire(Wire):
    """The default wire: a urllib3 pool per client, each read bounded by the request's deadline."""

    proxy = ""  # never used behind a proxy: wire_for gives those to httpx

    def __init__(
        self, base_url: str, token: Secret | None, pool_size: int, headers: Mapping[str, str]
    ) -> None:
        self._root = base_url.rstrip("/") + "/"
        self._token = token
        self._headers = {**headers, "accept-encoding": _ACCEPT_ENCODING}
        # Every request goes to the base URL's scheme and host (no redirects, no proxy), so a
        # TLS context (loading the CA bundle costs more CPU than a whole sandbox call) is made
        # only for an https base URL
        tls = httpx.create_ssl_context() if httpx.URL(self._root).scheme == "https" else None
        self._pool = urllib3.PoolManager(
            num_pools=4, maxsize=pool_size, block=False, retries=False, ssl_context=tls
        )
        # connections whose answers are read against the call's deadline (_TimedAnswer)
        self._pool.pool_classes_by_scheme = {"http": _TimedPool, "https": _TimedTlsPool}

    def close(self) -> None:
        self._pool.clear()

    def open(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None,
        body: Any,
        headers: Mapping[str, str],
        timeout: float,
        ends: float,
    ) -> Opened:
        """``timeout`` bounds each step; ``ends`` (a ``time.monotonic()`` instant) is the call's
        deadline, which every read of the body is cut to as well."""
        # Joined as httpx joins a path to its base URL; unsafe characters escaped, escapes kept.
        url = self._root + quote(path.lstrip("/"), safe="/%:@!$&'()*+,;=~")
        if params:
            url += "?" + str(httpx.QueryParams(params))
        sent = {**self._headers, **headers}
        data = None
        if body is not None:
            data = _json_body(body)
            sent["content-type"] = "application/json"
        if self._token:
            sent["x-api-key"] = self._token.reveal()
        _answer_ends.value = ends  # taken by the answer urlopen reads (_TimedAnswer)
        try:
            answer = self._pool.urlopen(
                method,
                url,
                body=data,
                headers=sent,
                redirect=False,
                retries=False,
                timeout=urllib3.Timeout(connect=timeout, read=timeout),
                preload_content=False,
                decode_content=True,
            )
        except (HTTPError, OSError) as exc:
            raise _urllib3_error(exc) from None
        finally:
            _answer_ends.value = None
            del sent
        read_whole = False

        def chunks() -> Iterator[bytes]:
            nonlocal read_whole
            try:
                # read1: what one read of the socket gave, so a trickling body reaches the
                # deadline check between reads instead of filling a whole chunk first (each
                # read waits at most what is left of the deadline: _DeadlineReader)
                while True:
                    chunk = answer.read1(_CHUNK)
                    if not chunk:
                        break
                    yield chunk
            except DecodeError as exc:
                raise BadEncoding(str(exc)) from None
            except (HTTPError, OSError) as exc:
                raise _urllib3_error(exc) from None
            read_whole = True

        def close() -> None:
            if not read_whole:
                answer.close()  # its connection holds unread bytes: never reuse it
            answer.release_conn()

        return Opened(answer.status, answer.headers, url, chunks(), close)


# The deadline of the call this thread is opening, for the answer urlopen is about to read: the
# answer is made inside urlopen (http.client's response_class), where no argument reaches.
_answer_ends = threading.local()
# Informational answers (102 Processing, 103 Early Hints) skipped before the answer, at most.
MAX_INFORMATIONAL = 20


class _DeadlineReader(io.RawIOBase):
    """The socket as an answer is read from it: each read waits at most the step timeout and
    what is left of the call's deadline. http.client reads the status line and headers line by
    line with no bound of its own (and skips ``100 Continue`` answers for as long as they come),
    so one header line every few seconds would otherwise hold a call for ever."""

    def __init__(self, sock: socket.socket, ends: float) -> None:
        super().__init__()
        self._sock, self._ends = sock, ends
        self._step = sock.gettimeout()  # the read timeout urllib3 set for this answer
        # the socket's own reader: it keeps the socket open while the answer is read after
        # the connection let go of it (an answer with "connection: close")
        self._raw = sock.makefile("rb", buffering=0)

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._raw.fileno()

    def readinto(self, buffer: Any) -> int | None:
        left = self._ends - time.monotonic()
        if left <= 0:
            raise TimeoutError("the call's deadline passed while its answer was being read")
        self._sock.settimeout(left if self._step is None else min(self._step, left))
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """What http.client's response is made from: ``makefile`` is all it asks of a socket."""

    def __init__(self, sock: socket.socket, ends: float) -> None:
        self._sock, self._ends = sock, ends

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._ends))


class _TimedAnswer(http.client.HTTPResponse):
    """An answer read against the call's deadline, informational answers skipped."""

    def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
        ends = getattr(_answer_ends, "value", None)
        # HTTPResponse only calls the socket's makefile(), which _DeadlineSocket has; the stub
        # asks for a real socket
        wrapped = sock if ends is None else _DeadlineSocket(sock, ends)
        super().__init__(wrapped, *args, **kwargs)  # type: ignore[arg-type]

    def begin(self) -> None:
        # http.client skips 100 Continue itself but takes 102 and 103 for the answer, whose
        # body then never comes: the real answer follows them on the same connection
        for _ in range(MAX_INFORMATIONAL + 1):
            super().begin()
            if not 100 <= self.status < 200 or self.status == 101:
                return
            self.headers = self.msg = None  # type: ignore[assignment]  # read the next one
        raise http.client.HTTPException(
            f"more than {MAX_INFORMATIONAL} informational (1xx) answers came before the answer"
        )


class _TimedConnection(urllib3.connection.HTTPConnection):
    response_class = _TimedAnswer


class _TimedTlsConnection(urllib3.connection.HTTPSConnection):
    response_class = _TimedAnswer


class _TimedPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _TimedConnection


class _TimedTlsPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _TimedTlsConnection


def _said(exc: BaseException) -> tuple[str, str]:
    """The exception's type and text, and the TLS hint its text calls for ("" for none)."""
    name = type(exc).__name__
    text = f"{name}: {exc}" if str(exc) else name
    return text, next((hint for mark, hint in _TLS_HINTS.items() if mark in text), "")


def _urllib3_error(exc: BaseException) -> WireError:
    text, hint = _said(exc)
    if isinstance(exc, LocationValueError):
        return WireError(text, False)  # a URL no attempt can reach
    if isinstance(exc, SSLError):
        # a certificate that fails verification, or a server without TLS, fails again; a
        # handshake cut short (EOF, reset) may not
        return WireError(text, not hint, hint)
    if isinstance(exc, Urllib3Timeout | NewConnectionError | ProtocolError | ProxyError):
        return WireError(text, True)
    if isinstance(exc, OSError):
        return WireError(text, True)  # the connection broke
    return WireError(text, False)


class HttpxWire(Wire):
    """The wire behind a proxy (or on a test's httpx transport): an httpx client."""

    def __init__(
        self,
        base_url: str,
        token: Secret | None,
        transport: httpx.BaseTransport | None,
        pool_size: int,
        headers: Mapping[str, str],
        proxy: str = "",
    ) -> None:
        self.proxy = proxy  # "" or the proxy requests go through, for messages
        try:
            self._http = httpx.Client(
                base_url=base_url,
                headers=dict(headers),
                auth=_ApiKeyAuth(token),
                transport=transport,
                limits=httpx.Limits(max_connections=pool_size, max_keepalive_connections=pool_size),
                follow_redirects=False,
            )
            socks = ""
        except ImportError:
            # httpx sets up every proxy the environment names, and a SOCKS one needs a package
            # httpx does not install by itself
            socks = _socks_variable()
            if not socks:
                raise
        if socks:
            raise ConfigError(
                f"{socks} names a SOCKS proxy, which svcnb reaches only through httpx's SOCKS "
                "support: pip install 'httpx[socks]', or unset "
                f"{socks.partition(' ')[0]} (NO_PROXY does not help: httpx sets up every proxy "
                "the environment names, whichever host it is for)"
            )
        self._deadline = bound(self._http)

    def close(self) -> None:
        self._http.close()

    def open(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None,
        body: Any,
        headers: Mapping[str, str],
        timeout: float,
        ends: float,
    ) -> Opened:
        # every socket step of this request and its body waits at most what is left of ``ends``
        self._deadline.until(ends)
        try:
            request = self._http.build_request(
                method, path, params=params, json=body, headers=dict(headers), timeout=timeout
            )
            response = self._http.send(request, stream=True)
        except _HTTPX_ERRORS as exc:
            raise _httpx_error(exc) from None
        pairs = HTTPHeaderDict()
        for key, value in response.headers.multi_items():
            pairs.add(key, value)

        encoding = response.headers.get("content-encoding", "")

        def chunks() -> Iterator[bytes]:
            # raw, and decoded here: httpx inflates each piece the network gives whole, so two
            # gzip layers make one 6 KB piece a 512 MB one before any size check could stop it
            try:
                if response.is_stream_consumed:
                    # made whole in memory (a test's transport), and decoded by httpx then
                    yield response.content
                else:
                    yield from decoded(response.iter_raw(), encoding)
            except _HTTPX_ERRORS as exc:
                raise _httpx_error(exc) from None

        return Opened(
            response.status_code, pairs, str(response.request.url), chunks(), response.close
        )


def decoded(raw: Iterable[bytes], content_encoding: str) -> Iterator[bytes]:
    """``raw`` decoded as ``Content-Encoding`` says (``gzip, deflate``: deflate last applied, so
    undone first), in pieces of at most ``_CHUNK`` bytes however far a piece inflates: memory
    stays a few pieces per layer, and the reader can stop at its size cap. Encodings svcnb does
    not ask for are left as they came, as urllib3 leaves them; BadEncoding for a body that does
    not decode."""
    stream: Iterable[bytes] = raw
    for name in reversed([e.strip().lower() for e in content_encoding.split(",")]):
        if name in ("gzip", "x-gzip", "deflate"):
            stream = _inflated(stream, gzip=name != "deflate")
    return iter(stream)


def _inflated(chunks: Iterable[bytes], *, gzip: bool) -> Iterator[bytes]:
    wbits = 16 + zlib.MAX_WBITS if gzip else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    members = 1
    # "deflate" may come as a raw stream without its zlib header (servers send it, httpx and
    # urllib3 accept it): until the first output, what was fed is kept to feed again raw
    fed: bytearray | None = None if gzip else bytearray()
    for data in chunks:
        held = False  # output zlib keeps back for want of room in the last piece
        while data or held:
            if inflater.eof:
                if not gzip:
                    return  # what follows a deflate stream is not body
                inflater, members = zlib.decompressobj(wbits), members + 1
            if fed is not None:
                fed += data
            try:
                piece = inflater.decompress(data, _CHUNK)
            except zlib.error as exc:
                if fed is not None:
                    inflater, data, fed = zlib.decompressobj(-zlib.MAX_WBITS), bytes(fed), None
                    continue
                if members > 1:
                    return  # bytes after the last gzip member, which urllib3 ignores too
                raise BadEncoding(f"{'gzip' if gzip else 'deflate'}: {exc}") from None
            if piece or (fed is not None and len(fed) > _CHUNK):
                fed = None
            if piece:
                yield piece
            data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
            held = not inflater.eof and len(piece) == _CHUNK
    if not inflater.eof:
        rest = inflater.flush()
        if rest:
            yield rest


def _httpx_error(exc: BaseException) -> WireError:
    text, hint = _said(exc)
    return WireError(text, isinstance(exc, _HTTPX_RETRYABLE), hint)


class _ApiKeyAuth(httpx.Auth):
    """Writes ``x-api-key`` into each request as it is sent: no client default holds it."""

    def __init__(self, token: Secret | None) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._token:
            request.headers["x-api-key"] = self._token.reveal()
        yield request

    def __repr__(self) -> str:
        return f"_ApiKeyAuth({self._token!r})"
