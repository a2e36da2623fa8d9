"""Client test fixtures, and the session-wide token leak scan.

Every log record (svcnb, httpx, httpcore, at DEBUG), every warning, and every exception and
repr a test hands to ``leak_scan.add`` is kept; at the end of the session none of them may hold
any API token the tests used.
"""

from __future__ import annotations

import logging
import traceback

import pytest

from _fakeapi import BASE, TOKEN, FakeApi

import svcnb

_LOGGERS = ("svcnb", "httpx", "httpcore")


class LeakScan(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.tokens: set[str] = {TOKEN}
        self.texts: list[tuple[str, str]] = []  # (where it came from, text)

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += "".join(traceback.format_exception(*record.exc_info))
        self.texts.append((f"log {record.name}", text))

    def add(self, obj: object) -> object:
        """Keep ``str``, ``repr`` (and for exceptions the formatted traceback) of ``obj``."""
        self.texts.append(("str", str(obj)))
        self.texts.append(("repr", repr(obj)))
        if isinstance(obj, BaseException):
            self.texts.append(("traceback", "".join(traceback.format_exception(obj))))
        return obj

    def leaks(self) -> list[tuple[str, str]]:
        return [(where, text) for where, text in self.texts
                if any(token in text for token in self.tokens)]


_scan = LeakScan()


def pytest_warning_recorded(warning_message, when, nodeid, location):
    _scan.texts.append(("warning", str(warning_message.message)))


@pytest.fixture(scope="session", autouse=True)
def leak_scan():
    levels = {}
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        levels[name] = logger.level
        logger.setLevel(logging.DEBUG)
        logger.addHandler(_scan)
    yield _scan
    for name in _LOGGERS:
        logging.getLogger(name).removeHandler(_scan)
        logging.getLogger(name).setLevel(levels[name])
    assert len(_scan.texts) > 0, "the leak scan saw nothing: it is not wired up"
    leaks = _scan.leaks()
    assert not leaks, f"an API token appeared in {len(leaks)} text(s), first: {leaks[0][0]}"


@pytest.fixture
def fake() -> FakeApi:
    return FakeApi(vms=5)


@pytest.fixture
def make_client(leak_scan):
    """``make_client(api, **options)``: a Client on a FakeApi; its waits are recorded, not slept."""
    made = []

    def make(api: FakeApi, *, base_url: str = BASE, api_key: str | None = TOKEN, sleep=True,
             **options) -> svcnb.Client:
        options.setdefault("progress", False)
        client = svcnb.Client(api_key, base_url, transport=api.transport(), **options)
        client.slept = []
        if not sleep:
            client._req._sleep = client.slept.append
        leak_scan.add(client)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv("SVC_API_KEY", raising=False)
    monkeypatch.delenv("SVC_BASE_URL", raising=False)
