"""Client test fixtures, and the session-wide token leak scan.

Every log record (svcnb, httpx and httpcore opened down to DEBUG), every warning, every failed
test's report, and every exception and repr a test hands to ``leak_scan.add`` is kept; at the
end of the session none of them may hold any API token the tests used.
"""

from __future__ import annotations

import logging

import pytest
from _fakeapi import TOKEN, FakeApi
from _leakscan import LeakScan

import svcnb

_LOGGERS = ("svcnb", "httpx", "httpcore")


_scan = LeakScan()
_scan.tokens.add(TOKEN)


def pytest_warning_recorded(warning_message, when, nodeid, location):
    _scan.texts.append(("warning", str(warning_message.message)))


def pytest_runtest_logreport(report):
    if report.failed:  # a failing test's report prints exceptions and locals: scan it too
        _scan.texts.append((f"report {report.nodeid}", str(report.longrepr)))


@pytest.fixture(scope="session", autouse=True)
def leak_scan():
    # On the root logger, so records of every logger (uvicorn, the sandbox...) are seen.
    logging.getLogger().addHandler(_scan)
    yield _scan
    assert _scan in logging.getLogger().handlers, "something removed the leak scan's handler"
    logging.getLogger().removeHandler(_scan)
    leaks = _scan.leaks()
    assert not leaks, f"an API token appeared in {len(leaks)} text(s), first: {leaks[0][0]}"


@pytest.fixture(autouse=True)
def _debug_logs_of_the_client():
    """While a client test runs, the client's and httpx's loggers are opened down to DEBUG (only
    then, so other layers' failure reports are not flooded)."""
    levels = {name: logging.getLogger(name).level for name in _LOGGERS}
    for name in _LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG)
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


@pytest.fixture
def fake() -> FakeApi:
    return FakeApi(vms=5)


@pytest.fixture
def make_client(leak_scan):
    """``make_client(api, **options)``: a Client on a FakeApi; its waits are recorded, not slept."""
    made = []

    def make(
        api: FakeApi,
        *,
        base_url: str | None = None,
        api_key: str | None = TOKEN,
        sleep=True,
        **options,
    ) -> svcnb.Client:
        options.setdefault("progress", False)
        client = svcnb.Client(api_key, base_url or api.base, transport=api.transport(), **options)
        client.slept = []
        if not sleep:
            client._req._sleep = client.slept.append
        leak_scan.add(client)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
