"""Hostile servers and impatient users: every call ends by its deadline, no server wait is
longer than ``max_wait``, pacing survives any header, an interrupted call releases what it held,
and whatever httpx or the body throws ends as an svcnb error."""

from __future__ import annotations

import gzip
import itertools
import math
import pickle
import re
import socket
import threading
import time
import tracemalloc
import zlib

import httpx
import pytest
from _fakeapi import TOKEN, FakeApi, envelope
from _loopback import close_listener, start_accepting

import svcnb
from svcnb.client import Client, Governor, Secret, redact, server_seconds
from svcnb.errors import ApiError, PagingError, RateLimited, SvcnbError, TransportError


class Trickle(httpx.SyncByteStream):
    """A body that never ends: one byte every ``gap`` seconds."""

    def __init__(self, gap: float = 0.01) -> None:
        self.gap = gap

    def __iter__(self):
        yield b'{"success": true, "data": '
        while True:
            time.sleep(self.gap)
            yield b" "


class Wire(httpx.SyncByteStream):
    """A body as it comes off the network: read (and decoded) by the client, not by httpx's
    Response constructor as ``content=`` would be."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def __iter__(self):
        yield self.body


def _timed(fn):
    start = time.monotonic()
    try:
        fn()
    except SvcnbError as exc:
        return exc, time.monotonic() - start
    raise AssertionError("the call did not fail")


# -- hangs ---------------------------------------------------------------------------------


def test_a_trickling_body_ends_with_a_transport_error_at_the_deadline(fake, make_client):
    fake.extra[("GET", "/wallet")] = lambda r: httpx.Response(200, stream=Trickle())
    client = make_client(fake, deadline=0.5)
    exc, took = _timed(client.wallet.get)
    assert isinstance(exc, TransportError)
    assert 0.5 <= took < 1.0
    assert "deadline of 0.5 s" in str(exc) and "Client(deadline=" in str(exc)


class _SocketServer:
    """A real loopback server: sends headers, then the body one byte every ``gap`` s (or
    nothing, ``gap=None``), for as long as the client listens."""

    def __init__(self, gap: float | None, stall_after: float | None = None) -> None:
        self.gap, self.stall_after = gap, stall_after
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()
        self._accepting = start_accepting(self._serve)

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:  # closed
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
            conn.sendall(b"content-length: 100000\r\n\r\n")
            started = time.monotonic()
            try:
                while not self.stop.wait(self.gap if self.gap is not None else 0.05):
                    late = self.stall_after is not None
                    if late and time.monotonic() - started > self.stall_after:
                        continue  # sent for a while, now silent
                    if self.gap is not None:
                        conn.sendall(b" ")
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        close_listener(self.sock, self._accepting)


@pytest.mark.parametrize("gap", [0.02, None], ids=["trickle", "stall"])
def test_a_real_socket_that_trickles_or_stalls_ends_by_the_deadline(gap):
    server = _SocketServer(gap)
    try:
        client = svcnb.Client(
            TOKEN, server.url + "/api/public/v1", progress=False, deadline=0.6, max_retries=3
        )
        exc, took = _timed(client.wallet.get)
    finally:
        server.close()
    assert isinstance(exc, TransportError), exc
    # The per-step timeout is cut to what is left of the deadline, so even a stall ends by it.
    assert took < 1.2


def test_a_body_that_stalls_late_ends_by_the_deadline_not_a_read_timeout_after_it():
    # Bytes every 0.1 s for 1 s, then silence: each read of the body may wait only what is left
    # of the 1.5 s deadline, not the whole 1.2 s read timeout the call started with.
    server = _SocketServer(0.1, stall_after=1.0)
    try:
        client = svcnb.Client(
            TOKEN, server.url + "/api/public/v1", progress=False, deadline=1.5, timeout=1.2,
            max_retries=3,
        )  # fmt: skip
        exc, took = _timed(client.wallet.get)
    finally:
        server.close()
    assert isinstance(exc, TransportError), exc
    assert "deadline of 1.5 s" in str(exc)
    assert took < 1.8, took


@pytest.mark.parametrize(
    "retry_after", ["86400", "1e999", "inf", "Fri, 31 Dec 9999 23:59:59 GMT", "99999999999999"]
)
def test_a_429_asking_for_a_long_wait_raises_at_once_naming_the_wait(
    fake, make_client, retry_after
):
    fake.fault = lambda r: envelope("slow down", 429, headers={"retry-after": retry_after})
    client = make_client(fake)
    exc, took = _timed(lambda: client.vms.get("vm_0001"))
    assert isinstance(exc, RateLimited) and took < 0.5
    assert "max_wait=90 s" in str(exc)
    assert ("86400 s" in str(exc)) or ("more than a day" in str(exc))
    assert math.isfinite(exc.retry_after) and exc.retry_after <= 86400
    # Another Client on the token is told the same at once, and never waits past its own cap.
    other = make_client(fake, max_wait=0.2)
    exc, took = _timed(lambda: other.vms.get("vm_0001"))
    assert isinstance(exc, RateLimited) and took < 0.5


def test_a_wait_that_would_pass_the_deadline_raises_naming_both(fake, make_client):
    fake.fault = lambda r: envelope("slow down", 429, headers={"retry-after": "5"})
    client = make_client(fake, deadline=1.0)
    exc, took = _timed(lambda: client.vms.get("vm_0001"))
    assert isinstance(exc, RateLimited) and took < 0.5
    assert "deadline of 1 s" in str(exc) and "5.0 s" in str(exc)


def test_a_200_saying_the_budget_is_spent_for_a_day_does_not_sleep_a_day(fake, make_client):
    spent = {"x-ratelimit-limit": "600", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "86000"}
    fake.extra[("GET", "/wallet")] = lambda r: envelope({"id": "w"}, headers=spent)
    client = make_client(fake)
    assert client.wallet.get()["id"] == "w"
    exc, took = _timed(client.wallet.get)
    assert isinstance(exc, RateLimited) and took < 0.5
    assert "rate-limit reset" in str(exc) and "86000 s" in str(exc)


# -- crashes -------------------------------------------------------------------------------

GARBAGE = ["1e999", "-1e999", "nan", "-5", "inf", "abc", "", "1e400", "9" * 5000, "0x10", "١٢"]


@pytest.mark.parametrize("value", GARBAGE)
def test_pacing_state_stays_valid_whatever_the_headers_hold(value):
    gov = Governor()
    for name in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"):
        assert gov.acquire(within=1) is None
        valid = {"x-ratelimit-limit": "5", "x-ratelimit-remaining": "3", "x-ratelimit-reset": "30"}
        gov.release({**valid, name: value})
        assert gov.acquire(within=1) is None  # neither raises nor waits
        gov.release(None)
    gov.pause(float("inf"))
    assert gov.acquire(within=0.1) == pytest.approx(86400, abs=1)  # told, not held
    gov.pause(float("nan"))
    assert gov.acquire(within=1) is None
    gov.release(None)
    seconds = server_seconds(value)
    assert seconds is None or seconds >= 0


@pytest.mark.parametrize(
    "value",
    [*(g for g in GARBAGE if g.isascii()), "Wed, 21 Oct 2015 07:28:00 GMT", "Mon, 99 Foo"],
)
def test_any_retry_after_ends_in_a_result_or_rate_limited(fake, make_client, value):
    answers = iter([envelope("slow down", 429, headers={"retry-after": value})])
    fake.fault = lambda r: next(answers, None)
    client = make_client(fake, sleep=False)
    try:
        assert client.vms.get("vm_0001")["id"] == "vm_0001"
    except RateLimited as exc:
        assert "max_wait" in str(exc)
    assert all(0 <= s < 90 for s in client.slept)
    # The shared state of the token is still usable by a new Client.
    assert make_client(fake, max_wait=90).vms.get("vm_0002")["id"] == "vm_0002"


def test_a_list_announcing_a_billion_pages_fails_before_reading_on(fake, make_client):
    huge = {"page": 1, "perPage": 1, "total": 10**30, "totalPages": 10**400}
    fake.extra[("GET", "/firewalls")] = lambda r: envelope([{"id": "fw_1"}], meta=huge)
    client = make_client(fake)
    with pytest.raises(PagingError, match="announces"):
        client.firewalls.list()
    assert len(fake.requests) == 1


@pytest.mark.parametrize("count", ["²", "9" * 5000, -3, "1e9", None, [], {"n": 1}])
def test_announced_counts_that_are_not_counts_are_ignored(fake, make_client, count):
    meta = {"page": 1, "perPage": 5, "total": count, "totalPages": count}
    fake.extra[("GET", "/firewalls")] = lambda r: envelope([{"id": "fw_1"}], meta=meta)
    assert [f["id"] for f in make_client(fake).firewalls.list()] == ["fw_1"]


@pytest.mark.parametrize(
    ("body", "headers", "why"),
    [
        (b"\x1f\x8b\x08garbage-not-gzip", {"content-encoding": "gzip"}, "does not decode"),
        (b"not gzip at all", {"content-encoding": "gzip"}, "does not decode"),
        (b'{"success": true, "data": {"id": "w"', {}, "not the API's JSON envelope"),
        (b"[" * 100_000, {}, "not the API's JSON envelope"),
        (b"\xff\xfe\x00garbage", {"content-type": "application/json"}, "JSON envelope"),
    ],
    ids=["gzip-garbage", "gzip-plain", "truncated", "deep", "bytes"],
)
def test_a_body_that_does_not_decode_is_an_api_error(fake, make_client, body, headers, why):
    fake.extra[("GET", "/wallet")] = lambda r: httpx.Response(
        200, stream=Wire(body), headers=headers
    )
    with pytest.raises(ApiError, match=why) as info:
        make_client(fake).wallet.get()
    assert info.value.status == 200
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_a_gzip_body_is_read(fake, make_client):
    body = gzip.compress(b'{"success": true, "data": {"id": "w"}}')
    fake.extra[("GET", "/wallet")] = lambda r: httpx.Response(
        200, stream=Wire(body), headers={"content-encoding": "gzip"}
    )
    assert make_client(fake).wallet.get()["id"] == "w"


@pytest.mark.parametrize(
    "error",
    [
        httpx.ConnectError,
        httpx.ReadTimeout,
        httpx.RemoteProtocolError,
        httpx.LocalProtocolError,
        httpx.UnsupportedProtocol,
        httpx.ProxyError,
        httpx.DecodingError,
        httpx.TooManyRedirects,
    ],
)
def test_every_httpx_failure_becomes_a_transport_error_with_no_context(
    fake, make_client, leak_scan, error
):
    def fault(request):
        raise error(f"failed with x-api-key: {TOKEN}", request=request)

    fake.fault = fault
    with pytest.raises(TransportError) as info:
        make_client(fake, sleep=False, max_retries=1).wallet.get()
    leak_scan.add(info.value)
    assert error.__name__ in str(info.value) and TOKEN not in str(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None


# -- interrupted calls ---------------------------------------------------------------------


def _must_finish_within(seconds: float, fn) -> object:
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"the call did not finish within {seconds} s: something was left held"
    return done[0]


@pytest.mark.parametrize("where", ["transport", "sleep", "body"])
def test_ctrl_c_during_the_first_call_on_a_token_leaves_later_calls_free(where):
    api = FakeApi(vms=2)
    interrupts = iter([True])

    def fault(request):
        if where == "transport" and next(interrupts, False):
            raise KeyboardInterrupt
        if where == "sleep" and next(interrupts, False):
            return envelope("busy", 503)
        if where == "body" and next(interrupts, False):
            return httpx.Response(200, stream=_Interrupting())
        return None

    api.fault = fault
    first = svcnb.Client(TOKEN, api.base, transport=api.transport(), progress=False)
    if where == "sleep":

        def interrupt(seconds):
            raise KeyboardInterrupt

        first._req._sleep = interrupt
    with pytest.raises(KeyboardInterrupt):
        first.vms.get("vm_0001")
    gov = first._req.governor
    assert gov._inflight == 0
    second = svcnb.Client(TOKEN, api.base, transport=api.transport(), progress=False)
    vm = _must_finish_within(1.0, lambda: second.vms.get("vm_0001"))
    assert vm["id"] == "vm_0001"
    # The first Client is usable too.
    assert _must_finish_within(1.0, lambda: first.vms.get("vm_0000"))["id"] == "vm_0000"


class _Interrupting(httpx.SyncByteStream):
    def __iter__(self):
        yield b"{"
        raise KeyboardInterrupt


def test_ctrl_c_while_waiting_for_the_rate_limit_holds_nothing():
    gov = Governor()
    assert gov.acquire() is None
    gov.release({"x-ratelimit-limit": "1", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "30"})
    assert gov.acquire(within=0.05) == pytest.approx(30, abs=1)
    assert gov._inflight == 0


# -- the token -----------------------------------------------------------------------------


def test_the_token_is_a_secret_that_never_prints(fake, make_client):
    secret = Secret(TOKEN)
    shown = [repr(secret), str(secret), f"{secret}", f"{secret!r:>40}", "%s" % secret]  # noqa: UP031
    assert all(TOKEN not in text and TOKEN[-4:] in text for text in shown)
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(secret)
    client = make_client(fake)
    client.vms.get("vm_0001")
    assert fake.requests[-1].headers["x-api-key"] == TOKEN  # sent as it should be
    http = client._req._wire._http  # a test's transport: the httpx wire
    assert "x-api-key" not in http.headers  # but not kept as a default header
    assert isinstance(client._req._token, Secret)
    assert TOKEN not in repr(http.auth)
    # the default wire (urllib3's pool) keeps no token among the headers it sends every time
    with Client(TOKEN, "http://127.0.0.1:9") as default:
        assert TOKEN not in repr(vars(default._req._wire))


@pytest.mark.parametrize(
    ("key", "why"),
    [(" " + TOKEN, "whitespace"), (TOKEN[:6] + "é" + TOKEN[6:], "header"), (123, "string")],
)
def test_a_bad_token_is_refused_without_quoting_it(key, why):
    with pytest.raises(ValueError, match=why) as info:
        svcnb.Client(key, "http://bad-token.test")
    assert str(key) not in str(info.value)
    frames = []
    tb = info.value.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").startswith("svcnb"):
            frames.append(tb.tb_frame)
        tb = tb.tb_next
    assert frames and all(key not in f.f_locals.values() for f in frames)


def test_one_pattern_masks_tokens_everywhere():
    from svcnb.panels import describe
    from svcnb.store import scrub

    text = f"key {TOKEN}. short svc_ab, sandbox svc_{'x' * 40}-_.y and svc_… done"
    masked = redact(text)
    assert TOKEN not in masked and "svc_" + "x" * 40 not in masked
    assert masked.startswith(f"key svc_…{TOKEN[-4:]}. short svc_…,")
    assert masked.endswith("and svc_… done")
    assert scrub(text) == masked
    # a panel's status line masks with the same pattern
    assert describe(ValueError(text), "reading") == ("error", f"Cannot go on reading: {masked}.")
    odd = "svc_has spaces?!"  # outside the alphabet: masked because it is the known secret
    assert redact(f"echo {odd}", odd) == "echo svc_…es?!"
    assert redact(f"echo {odd}", Secret(odd)) == "echo svc_…es?!"


# -- ids are path segments -------------------------------------------------------------------

# every call that puts an id into a URL path (or a body that names one), and the argument named
ID_CALLS = {
    "vms.get": ("vm_id", lambda c, x: c.vms.get(x)),
    "vms.stop": ("vm_id", lambda c, x: c.vms.stop(x)),
    "vms.wait_stopped": ("vm_id", lambda c, x: c.vms.wait_stopped(x, timeout=1)),
    "firewalls.rules": ("fw_id", lambda c, x: c.firewalls.rules(x)),
    "update_rule fw": ("fw_id", lambda c, x: c.firewalls.update_rule(x, "r_1", port="22")),
    "update_rule rule": ("rule_id", lambda c, x: c.firewalls.update_rule("fw_1", x, port="22")),
    "networks.attachments": ("net_id", lambda c, x: c.networks.attachments(x)),
    "attach net": ("net_id", lambda c, x: c.networks.attach(x, "vm_1")),
    "attach vm": ("vm_id", lambda c, x: c.networks.attach("net_1", x)),
    "detach net": ("net_id", lambda c, x: c.networks.detach(x, "vm_1")),
    "detach vm": ("vm_id", lambda c, x: c.networks.detach("net_1", x)),
    "webhooks.set_active": ("wh_id", lambda c, x: c.webhooks.set_active(x, True)),
    "webhooks.deliveries": ("wh_id", lambda c, x: c.webhooks.deliveries(x)),
}
# each would be another path once a URL normaliser or a decoding server has read it
HOSTILE_IDS = [
    "..", ".", "", "a/b", "/", "vm\x00", "%2e%2e", "%2E.", "%252e%252e", "a%2Fb", "..\\x",
    "vm\n1", "\ud800", None, 5,
]  # fmt: skip


@pytest.mark.parametrize("call", sorted(ID_CALLS))
@pytest.mark.parametrize("vm_id", HOSTILE_IDS, ids=repr)
def test_an_id_that_is_not_one_path_segment_is_refused_naming_the_argument(
    fake, make_client, call, vm_id
):
    argument, invoke = ID_CALLS[call]
    client = make_client(fake)
    with pytest.raises(ValueError, match=rf"^{argument} ") as info:
        invoke(client, vm_id)
    assert not isinstance(info.value, SvcnbError)  # a bad argument, as Python code raises
    assert fake.requests == []  # nothing was sent


def test_an_id_is_sent_as_one_percent_encoded_segment(fake, make_client):
    client = make_client(fake)
    with pytest.raises(SvcnbError):
        client.vms.get("vm 1?x=#y%2")
    sent = {r.url.raw_path for r in fake.requests}  # under each base path it tried
    assert sent == {
        prefix + b"/vms/vm%201%3Fx%3D%23y%252"
        for prefix in (b"/api/public/v1", b"/api/v1/api/public/v1")
    }


# -- the httpx wire (proxies) ------------------------------------------------------------------


class _OneAnswer:
    """A loopback server that answers every request with the same bytes (headers and body),
    then closes; as an HTTP proxy it answers for any host asked through it."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._accepting = start_accepting(self._serve)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed
                return
            with conn:
                try:
                    conn.recv(65536)
                    conn.sendall(self.answer)
                except OSError:
                    pass

    def close(self) -> None:
        close_listener(self.sock, self._accepting)


def _gzip_bomb(inflated: int) -> bytes:
    """``inflated`` zero bytes, gzipped, and the result gzipped again: a few KB on the wire."""
    inner = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(4 << 20)
    layer = b"".join(inner.compress(block) for _ in range(inflated // len(block))) + inner.flush()
    return gzip.compress(layer)


BOMB_INFLATED = 512 << 20  # eight times the 64 MiB an answer may hold


@pytest.mark.parametrize("wire", ["httpx (a proxy)", "urllib3"])
def test_a_gzip_bomb_nested_twice_is_refused_without_inflating_it(monkeypatch, wire):
    bomb = _gzip_bomb(BOMB_INFLATED)
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip, gzip\r\n"
        f"content-length: {len(bomb)}\r\nconnection: close\r\n\r\n"
    ).encode()
    server = _OneAnswer(head + bomb)
    if wire == "urllib3":
        base = server.url + "/api/public/v1"
    else:
        # every request goes to the proxy, which answers for the service
        monkeypatch.setenv("HTTP_PROXY", server.url)
        base = "http://api.behind-a-proxy.test/api/public/v1"
    tracemalloc.start()
    try:
        client = svcnb.Client(TOKEN, base, progress=False, max_retries=0, deadline=30)
        assert type(client._req._wire).__name__.lower().startswith(wire[:5])
        tracemalloc.reset_peak()
        with pytest.raises(ApiError, match="larger than") as info:
            client.wallet.get()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        server.close()
    assert TOKEN not in str(info.value)
    # what the answer may hold (64 MiB) and a few pieces being decoded, never the bomb
    assert peak < 100 << 20, (
        f"peak {peak >> 20} MiB while refusing a {BOMB_INFLATED >> 20} MiB bomb"
    )


def test_a_socks_proxy_without_httpx_socks_is_one_config_error_saying_what_to_install(
    monkeypatch, capsys
):
    try:
        import socksio  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("httpx's SOCKS support is installed here")
    from svcnb.cli import main
    from svcnb.config import ConfigError

    monkeypatch.setenv("ALL_PROXY", "socks5://someone:hunter2@127.0.0.1:1080")
    with pytest.raises(ConfigError, match=r"pip install 'httpx\[socks\]'") as info:
        svcnb.Client(TOKEN, "http://api.example.test")
    text = str(info.value)
    assert "ALL_PROXY" in text and "hunter2" not in text and TOKEN not in text
    assert info.value.__cause__ is None and info.value.__context__ is None
    # a command says it in one line
    monkeypatch.setenv("SVC_BASE_URL", "http://api.example.test")
    monkeypatch.setenv("SVC_API_KEY", TOKEN)
    assert main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'httpx[socks]'" in err and "hunter2" not in err


# -- text a request cannot carry ----------------------------------------------------------------

LONE = "ssh from the office \ud83d"  # half of an emoji: a lone surrogate

TEXT_CALLS = {
    "description": lambda c: c.firewalls.update_rule("fw_1", "r_1", description=LONE),
    "url": lambda c: c.webhooks.create("https://x.example/" + LONE, ["vm.stopped"]),
    "events[1]": lambda c: c.webhooks.create("https://x.example/h", ["vm.stopped", LONE]),
    "description ": lambda c: c.webhooks.create("https://x.example/h", ["vm.stopped"], LONE),
    "private_ip": lambda c: c.networks.attach("net_1", "vm_1", private_ip="10.0.0.5" + LONE),
}


@pytest.mark.parametrize("field", sorted(TEXT_CALLS))
def test_a_lone_surrogate_is_a_validation_error_naming_the_field_before_anything_is_sent(
    fake, make_client, field
):
    client = make_client(fake)
    with pytest.raises(ValueError, match=rf"^{re.escape(field.strip())} holds a lone surrogate"):
        TEXT_CALLS[field](client)
    assert fake.requests == []


def test_a_body_json_cannot_send_is_refused_before_sending_naming_where(fake, make_client):
    client = make_client(fake)
    for body, where in [
        ({"a": {"b": ["ok", LONE]}}, "a.b[1]"),
        ({"n": float("nan")}, "n"),
        ({"s": {1, 2}}, "s"),
    ]:
        with pytest.raises(ValueError, match=re.escape(f"PATCH /x: {where} of the request body")):
            client._req.request("PATCH", "/x", json=body)
    assert fake.requests == []


# -- every wait inside the deadline: the status line and headers too ---------------------------


class _Scripted:
    """A loopback server whose every connection reads the request and then runs ``script(conn,
    stop)``; as an HTTP proxy it answers for any host asked through it."""

    def __init__(self, script) -> None:
        self.script = script
        self.stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._accepting = start_accepting(self._serve)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                self.script(conn, self.stop)
            except OSError:
                pass

    def close(self) -> None:
        self.stop.set()
        close_listener(self.sock, self._accepting)


def _trickled_headers(conn, stop) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    while not stop.wait(0.2):  # one header line every 0.2 s, never the blank line
        conn.sendall(b"x-still-coming: yes\r\n")


def _endless_continue(conn, stop) -> None:
    while not stop.wait(0.2):
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")


def _informational_first(conn, stop) -> None:
    body = b'{"success": true, "data": {"id": "w_1", "balance": "1.00"}}'
    conn.sendall(b"HTTP/1.1 102 Processing\r\n\r\n")
    conn.sendall(b"HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n")
    conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    conn.sendall(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
        + body
    )


WIRES = ["urllib3", "httpx (a proxy)"]
_proxied = itertools.count(1)
HEADER_DEADLINE = 3.0
MARGIN = 2.0  # generous: a loaded CI box, the scheduler; the bug ran 40-60 s past


def _client_on(server: _Scripted, wire: str, monkeypatch, **options) -> svcnb.Client:
    if wire == "urllib3":
        base = server.url + "/api/public/v1"
    else:
        monkeypatch.setenv("HTTP_PROXY", server.url)
        # a host of its own: a call an earlier test left running holds no slot of this one's
        base = f"http://api-{next(_proxied)}.behind-a-proxy.test/api/public/v1"
    client = svcnb.Client(TOKEN, base, progress=False, **options)
    assert type(client._req._wire).__name__.lower().startswith(wire[:5])
    return client


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("script", [_trickled_headers, _endless_continue], ids=["trickle", "100"])
def test_headers_that_never_end_end_the_call_by_its_deadline(monkeypatch, wire, script):
    server = _Scripted(script)
    try:
        client = _client_on(server, wire, monkeypatch, deadline=HEADER_DEADLINE, max_retries=2)
        exc, took = _must_finish_within(
            HEADER_DEADLINE + MARGIN + 5, lambda: _timed(client.wallet.get)
        )
    finally:
        server.close()
    assert took < HEADER_DEADLINE + MARGIN, f"ran {took:.1f} s with a deadline of 3 s"
    assert isinstance(exc, TransportError), exc
    assert "deadline of 3 s" in str(exc) and TOKEN not in str(exc)


@pytest.mark.parametrize("wire", WIRES)
def test_informational_answers_before_the_answer_are_skipped(monkeypatch, wire):
    server = _Scripted(_informational_first)
    try:
        client = _client_on(server, wire, monkeypatch, deadline=10, max_retries=0)
        wallet = _must_finish_within(10, client.wallet.get)
    finally:
        server.close()
    assert wallet["id"] == "w_1"


def test_informational_answers_without_end_are_bounded(monkeypatch):
    def flood(conn, stop):
        while not stop.is_set():
            conn.sendall(b"HTTP/1.1 103 Early Hints\r\n\r\n" * 50)

    server = _Scripted(flood)
    try:
        client = _client_on(server, "urllib3", monkeypatch, deadline=HEADER_DEADLINE, max_retries=0)
        exc, took = _must_finish_within(
            HEADER_DEADLINE + MARGIN + 5, lambda: _timed(client.wallet.get)
        )
    finally:
        server.close()
    assert isinstance(exc, TransportError) and took < HEADER_DEADLINE + MARGIN
    assert "informational" in str(exc)
