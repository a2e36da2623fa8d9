"""Properties: whatever a server answers (any status, any headers, any body, a body that never
ends, a dropped connection), every call ends within its deadline with a result or an svcnb
error; never a raw httpx, json, decoding or arithmetic error, never a hang. And whatever id a
caller passes, it is refused naming the argument or sent as exactly one path segment that
decodes back to it, on either wire."""

from __future__ import annotations

import gzip
import itertools
import json
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from _fakeapi import TOKEN
from _fuzz import fuzz
from hypothesis import given
from hypothesis import strategies as st

import svcnb
from svcnb.errors import SvcnbError

DEADLINE = 0.3
# Time a call may run past its deadline: one chunk of a trickle, the scheduler, a slow CI box.
SLACK = 0.4
_hosts = itertools.count(1)


class Trickle(httpx.SyncByteStream):
    def __iter__(self):
        yield b'{"success": true, "data": ['
        while True:
            time.sleep(0.01)
            yield b"1,"


class Wire(httpx.SyncByteStream):
    def __init__(self, body: bytes) -> None:
        self.body = body

    def __iter__(self):
        yield self.body


WEIRD_NUMBERS = [
    "1e999", "-1e999", "inf", "nan", "-1", "0", "0.001", "86400", "1e300", "9" * 400, "abc",
    "", " 5 ", "Wed, 21 Oct 2015 07:28:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 99 Foo",
]  # fmt: skip
header_value = st.one_of(
    st.sampled_from(WEIRD_NUMBERS),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=20),
)
headers = st.dictionaries(
    st.sampled_from(
        [
            "retry-after",
            "x-ratelimit-limit",
            "x-ratelimit-remaining",
            "x-ratelimit-reset",
            "x-total-count",
            "link",
            "date",
            "content-type",
            "idempotent-replayed",
        ]
    ),
    header_value,
    max_size=5,
)
json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**40), 10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=10),
)
counts = st.one_of(json_scalar, st.sampled_from([10**30, 10**12, 0, -1, "²", "1" * 50]))
meta = st.fixed_dictionaries(
    {},
    optional={
        "page": counts,
        "perPage": counts,
        "total": counts,
        "totalPages": counts,
        "nextCursor": st.one_of(st.none(), st.text(max_size=5)),
        "next": st.sampled_from(["http://[::1", "?page=2", "/api/public/v1/vms?page=2", "x:y"]),
    },
)
record = st.fixed_dictionaries(
    {"id": st.one_of(st.text(max_size=5), json_scalar)},
    optional={"status": json_scalar, "updatedAt": json_scalar, "actionId": json_scalar},
)
data = st.one_of(
    st.lists(record, max_size=4),
    record,
    json_scalar,
    st.fixed_dictionaries({"items": st.lists(record, max_size=3)}, optional={"total": counts}),
)
envelope = st.fixed_dictionaries(
    {"success": st.sampled_from([True, False, None, "yes"])},
    optional={"data": data, "meta": meta, "error": st.one_of(st.text(max_size=20), json_scalar)},
)


@st.composite
def bodies(draw) -> tuple[bytes, dict[str, str]]:
    kinds = ["valid", "valid", "json", "truncated", "gzip", "gzip-garbage", "deep", "bytes"]
    kind = draw(st.sampled_from(kinds))
    if kind == "valid":
        shape = st.fixed_dictionaries({"success": st.just(True), "data": data, "meta": meta})
        return json.dumps(draw(shape)).encode(), {}
    text = json.dumps(draw(envelope)).encode()
    if kind == "json":
        return text, {}
    if kind == "truncated":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))], {}
    if kind == "gzip":
        return gzip.compress(text), {"content-encoding": "gzip"}
    if kind == "gzip-garbage":
        return draw(st.binary(max_size=30)), {"content-encoding": "gzip"}
    if kind == "deep":
        return b'{"success": true, "data": ' + b"[" * draw(st.integers(1, 50_000)), {}
    return draw(st.binary(max_size=50)), {}


# 200 thrice: a call must also get through to a result often enough to be tested.
STATUSES = [200, 200, 200, 201, 202, 204, 301, 400, 401, 403, 404, 409, 422, 429, 500, 502]
STATUSES += [503, 504, 599, 101]

answer = st.one_of(
    st.tuples(
        st.just("respond"),
        st.sampled_from(STATUSES),
        headers,
        bodies(),
    ),
    st.tuples(
        st.just("raise"),
        st.sampled_from(
            [
                httpx.ConnectError,
                httpx.ReadTimeout,
                httpx.RemoteProtocolError,
                httpx.LocalProtocolError,
                httpx.ReadError,
            ]
        ),
    ),
    st.tuples(st.just("trickle")),
)

CALLS = {
    "wallet": lambda c: c.wallet.get(),
    "vm": lambda c: c.vms.get("vm_1"),
    "vms": lambda c: c.vms.list(),
    "firewalls": lambda c: c.firewalls.list(),
    "stop": lambda c: c.vms.stop("vm_1"),
    "rule": lambda c: c.firewalls.update_rule("fw_1", "r_1", port="22"),
    "webhook": lambda c: c.webhooks.create("https://x.example/h", ["vm.stopped"]),
}


def _server(answers: list[Any]):
    turns = itertools.chain(answers, itertools.repeat(answers[-1]))

    def handle(request: httpx.Request) -> httpx.Response:
        step = next(turns)
        if step[0] == "raise":
            raise step[1]("injected", request=request)
        if step[0] == "trickle":
            return httpx.Response(200, stream=Trickle())
        _, status, extra, (body, encoding) = step
        return httpx.Response(status, headers={**extra, **encoding}, stream=Wire(body))

    return handle


@fuzz(150)
@given(answers=st.lists(answer, min_size=1, max_size=4), call=st.sampled_from(sorted(CALLS)))
def test_every_call_ends_in_time_with_a_result_or_an_svcnb_error(answers, call):
    client = svcnb.Client(
        TOKEN,
        f"http://fuzz-{next(_hosts)}.test",
        transport=httpx.MockTransport(_server(answers)),
        progress=False,
        deadline=DEADLINE,
        max_wait=0.2,
        max_retries=2,
    )
    # Waits are real but short, so a call's retries and waits still run against its deadline.
    client._req._sleep = lambda seconds: time.sleep(min(seconds, 0.005))
    start = time.monotonic()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            CALLS[call](client)
    except SvcnbError as exc:
        assert exc.__context__ is None or isinstance(exc.__context__, SvcnbError)
        assert TOKEN not in str(exc)
    finally:
        took = time.monotonic() - start
        client.close()
    # One deadline for the whole call, the search for the base path included.
    assert took <= DEADLINE + SLACK, f"{call} took {took:.2f}s"


# -- ids -------------------------------------------------------------------------------------

# call -> (the argument named in a refusal, how to call it, the path under the prefix; {} is the id)
ID_CALLS = {
    "vms.get": ("vm_id", lambda c, x: c.vms.get(x), "/vms/{}"),
    "vms.stop": ("vm_id", lambda c, x: c.vms.stop(x), "/vms/{}/stop"),
    "firewalls.rules": ("fw_id", lambda c, x: c.firewalls.rules(x), "/firewalls/{}/rules"),
    "update_rule fw": (
        "fw_id",
        lambda c, x: c.firewalls.update_rule(x, "r_1", port="22"),
        "/firewalls/{}/rules/r_1",
    ),
    "update_rule rule": (
        "rule_id",
        lambda c, x: c.firewalls.update_rule("fw_1", x, port="22"),
        "/firewalls/fw_1/rules/{}",
    ),
    "attachments": ("net_id", lambda c, x: c.networks.attachments(x), "/networks/{}/attachments"),
    "attach": ("net_id", lambda c, x: c.networks.attach(x, "vm_1"), "/networks/{}/attachments"),
    "detach net": (
        "net_id",
        lambda c, x: c.networks.detach(x, "vm_1"),
        "/networks/{}/attachments/vm_1",
    ),
    "detach vm": (
        "vm_id",
        lambda c, x: c.networks.detach("net_1", x),
        "/networks/net_1/attachments/{}",
    ),
    "set_active": ("wh_id", lambda c, x: c.webhooks.set_active(x, True), "/webhooks/{}"),
    "deliveries": ("wh_id", lambda c, x: c.webhooks.deliveries(x), "/webhooks/{}/deliveries"),
}
PREFIX = "/api/public/v1"
# pieces that make dot segments, separators and escapes likelier than random text does
PIECES = list(".%2eEfF5cC0/\\a~ ?#;é+&=\x00\ud800") + [
    "..",
    "%2e",
    "%2E",
    "%2f",
    "%25",
    "%5c",
    "%00",
]
ids = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=8),  # any code point, surrogates too
    st.lists(st.sampled_from(PIECES), max_size=6).map("".join),
)


class _Paths(BaseHTTPRequestHandler):
    """Answers 404 to everything, and keeps the request target exactly as it came."""

    seen: list[str] = []

    def _answer(self) -> None:
        self.seen.append(self.path)
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        body = b'{"success": false, "error": "not found"}'
        self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_DELETE = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def id_clients():
    """One client per wire: urllib3's pool on a loopback server, httpx on a mock transport;
    each keeps the paths its server saw."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Paths)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    mocked: list[str] = []

    def mock(request: httpx.Request) -> httpx.Response:
        mocked.append(request.url.raw_path.decode("ascii"))
        return httpx.Response(404, json={"success": False, "error": "not found"})

    port = server.server_address[1]
    clients = {
        "urllib3": (
            svcnb.Client(TOKEN, f"http://127.0.0.1:{port}{PREFIX}", progress=False, max_retries=0),
            _Paths.seen,
        ),
        "httpx": (
            svcnb.Client(
                TOKEN, f"http://ids.test{PREFIX}", transport=httpx.MockTransport(mock),
                progress=False, max_retries=0,
            ),
            mocked,
        ),
    }  # fmt: skip
    yield clients
    for client, _ in clients.values():
        client.close()
    server.shutdown()
    server.server_close()


ID_EXAMPLES = 400


@fuzz(ID_EXAMPLES)
@given(
    vm_id=ids, call=st.sampled_from(sorted(ID_CALLS)), wire=st.sampled_from(["urllib3", "httpx"])
)
def test_any_id_is_refused_naming_its_argument_or_sent_as_one_segment(
    id_clients, vm_id, call, wire
):
    argument, invoke, template = ID_CALLS[call]
    client, seen = id_clients[wire]
    seen.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            invoke(client, vm_id)
    except ValueError as exc:
        assert not isinstance(exc, SvcnbError), exc
        assert str(exc).startswith(f"{argument} "), exc
        assert seen == []  # refused before anything was sent
        return
    except SvcnbError:
        pass  # the 404
    assert len(seen) == 1, seen
    sent = seen[0].partition("?")[0].split("/")
    wanted = (PREFIX + template).split("/")
    assert len(sent) == len(wanted), (vm_id, seen[0])
    for got, part in zip(sent, wanted, strict=True):
        if part == "{}":
            assert unquote(got, errors="strict") == vm_id, (vm_id, seen[0])
        else:
            assert got == part, (vm_id, seen[0])
