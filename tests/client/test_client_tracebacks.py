"""Every error the client can raise, rendered as a user debugging would see it: IPython's
``%xmode Verbose`` (the variables of every frame) and ``%xmode Context`` (with chained
exceptions), plus the repr of every local of every svcnb frame (as a debugger or pytest's
``--showlocals`` would print). No text may hold the token, and no error may carry a context or a
cause, or an httpx request or response in a frame it keeps.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from _fakeapi import TOKEN, FakeApi, envelope
from IPython.core.ultratb import FormattedTB

import svcnb
from svcnb.errors import (
    ApiError,
    AuthError,
    Conflict,
    LimitExceeded,
    NotFound,
    PagingError,
    RateLimited,
    ScopeError,
    ServerError,
    SvcnbError,
    TransportError,
    UpstreamSyncError,
    ValidationError,
)

# Every failure the servers below answer quotes the token, as an echoing server would.
ECHO = f"(request had x-api-key: {TOKEN})"


class Trickle(httpx.SyncByteStream):
    def __iter__(self):
        import time

        while True:
            time.sleep(0.01)
            yield b" "


class Wire(httpx.SyncByteStream):
    def __init__(self, body: bytes) -> None:
        self.body = body

    def __iter__(self):
        yield self.body


def _raise(exc_type: type[BaseException]) -> Callable[[httpx.Request], httpx.Response]:
    def fault(request: httpx.Request) -> httpx.Response:
        raise exc_type(f"failed {ECHO}", request=request)

    return fault


def _answer(status: int, text: str, **headers: str) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: envelope(f"{text} {ECHO}", status, headers=headers)


# name: (fault for GET/PATCH calls, the call, the error class expected)
SCENARIOS: dict[str, tuple[Callable, str, type[SvcnbError]]] = {
    "connect refused": (_raise(httpx.ConnectError), "wallet", TransportError),
    "read timeout": (_raise(httpx.ReadTimeout), "wallet", TransportError),
    "dropped": (_raise(httpx.RemoteProtocolError), "wallet", TransportError),
    "bad protocol": (_raise(httpx.LocalProtocolError), "wallet", TransportError),
    "deadline": (lambda r: httpx.Response(200, stream=Trickle()), "wallet", TransportError),
    "gzip garbage": (
        lambda r: httpx.Response(200, stream=Wire(b"xx"), headers={"content-encoding": "gzip"}),
        "wallet",
        ApiError,
    ),
    "invalid json": (lambda r: httpx.Response(200, text=f"<html>{ECHO}"), "wallet", ApiError),
    "401": (_answer(401, "API token unknown"), "wallet", AuthError),
    "403 revoked": (_answer(403, "Token revoked"), "wallet", AuthError),
    "403 scope": (_answer(403, "token lacks billing:read"), "wallet", ScopeError),
    "403 limit": (_answer(403, "limit of 10 webhooks exceeded"), "webhook", LimitExceeded),
    "404": (_answer(404, "not found"), "wallet", NotFound),
    "409": (_answer(409, "VM is not running"), "stop", Conflict),
    "422": (_answer(422, "port: invalid"), "rule", ValidationError),
    "400": (_answer(400, "malformed body"), "rule", ApiError),
    "429 too long": (_answer(429, "slow down", **{"retry-after": "1e999"}), "wallet", RateLimited),
    "429 exhausted": (_answer(429, "slow down", **{"retry-after": "0"}), "wallet", RateLimited),
    "500": (_answer(500, "boom"), "wallet", ServerError),
    "502 rule": (_answer(502, "upstream sync failed"), "rule", UpstreamSyncError),
    "paging": (
        lambda r: envelope([{"id": "f"}], meta={"total": 10**12, "perPage": 1}),
        "firewalls",
        PagingError,
    ),
}

CALLS: dict[str, Callable[[svcnb.Client], object]] = {
    "wallet": lambda c: c.wallet.get(),
    "webhook": lambda c: c.webhooks.create("https://x.example/hook", ["vm.stopped"]),
    "stop": lambda c: c.vms.stop("vm_0001"),
    "rule": lambda c: c.firewalls.update_rule("fw_1", "r_1", port="22"),
    "firewalls": lambda c: c.firewalls.list(),
}


def _svcnb_tb(exc: BaseException):
    """The traceback from the first svcnb frame on: the test's own frames name the token."""
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_globals.get("__name__", "").startswith("svcnb"):
        tb = tb.tb_next
    return tb


def _renderings(exc: BaseException) -> dict[str, str]:
    tb = _svcnb_tb(exc)
    texts = {"str": str(exc), "repr": repr(exc), "attrs": repr(vars(exc))}
    for mode in ("Verbose", "Context"):
        formatter = FormattedTB(mode="Plain", theme_name="nocolor")
        formatter.set_mode(mode)
        texts[mode] = formatter.text(type(exc), exc, tb)
    assert "Traceback" in texts["Verbose"] and type(exc).__name__ in texts["Verbose"]
    local_reprs = []
    while tb is not None:
        for name, value in tb.tb_frame.f_locals.items():
            assert not isinstance(value, httpx.Request | httpx.Response), (
                f"{tb.tb_frame.f_code.co_name} keeps an httpx {type(value).__name__} ({name})"
            )
            local_reprs.append(f"{name}={value!r}")
        tb = tb.tb_next
    texts["all locals"] = "\n".join(local_reprs)
    return texts


@pytest.mark.parametrize("name", SCENARIOS)
def test_no_rendering_of_any_client_error_holds_the_token(name, leak_scan):
    fault, call, expected = SCENARIOS[name]
    api = FakeApi(vms=2)
    api.fault = fault
    options = {"deadline": 0.4} if name == "deadline" else {}
    client = svcnb.Client(
        TOKEN, api.base, transport=api.transport(), progress=False, max_retries=1, **options
    )
    client._req._sleep = lambda seconds: None
    with pytest.raises(SvcnbError) as info:
        CALLS[call](client)
    exc = info.value
    assert isinstance(exc, expected), f"{name}: {type(exc).__name__}: {exc}"
    assert exc.__context__ is None and exc.__cause__ is None, f"{name}: the chain holds more"
    for how, text in _renderings(exc).items():
        assert TOKEN not in text, f"{name}: the token appears in the {how} rendering"
    leak_scan.add(exc)
    client.close()


@pytest.mark.parametrize("problem", ["timeout", "whitespace", "non-ascii"])
def test_a_client_that_cannot_be_built_shows_no_token_either(problem):
    key, options = TOKEN, {}
    if problem == "timeout":
        options = {"timeout": -1}
    elif problem == "whitespace":
        key = TOKEN + "\n"
    else:
        key = TOKEN + "é"
    with pytest.raises(ValueError) as info:
        svcnb.Client(key, "http://x.test", **options)
    for how, text in _renderings(info.value).items():
        assert TOKEN not in text, f"{problem}: the token appears in the {how} rendering"
