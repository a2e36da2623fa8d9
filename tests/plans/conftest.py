"""Stop plans against the loopback sandbox, reset to a small seeded fleet in a given dialect."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from _tiers import dialects

import svcnb
from svcnb.store import Store

DIALECTS = ["default", "acme", "linkhdr", "cursor"]


@pytest.fixture(params=dialects(DIALECTS))
def dialect(request) -> str:
    return request.param


@pytest.fixture
def fleet(sandbox, dialect):
    """The session sandbox reset to seed 7 with 12 VMs, speaking ``dialect``."""
    sandbox.control.reset(seed=7, vms=12, dialect=dialect)
    return sandbox


@pytest.fixture
def admin(fleet) -> Iterator[svcnb.Client]:
    with svcnb.Client(
        api_key=fleet.tokens["admin"], base_url=fleet.base_url, progress=False
    ) as client:
        yield client


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "store")


@pytest.fixture
def once_stops_queued(fleet) -> Callable[..., object]:
    """``with once_stops_queued(n, then):`` runs ``then(control)`` in a thread as soon as the
    sandbox holds ``n`` stop actions more than when the block started (the frozen sandbox
    clock moves only when ``then`` advances it)."""

    @contextmanager
    def watch(count: int, then: Callable[[object], None]) -> Iterator[None]:
        before = {a["id"] for a in fleet.control.actions()}
        done = threading.Event()

        def run() -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not done.is_set():
                new = [
                    a
                    for a in fleet.control.actions()
                    if a["type"] == "stop" and a["id"] not in before
                ]
                if len(new) >= count:
                    then(fleet.control)
                    return
                time.sleep(0.05)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join(timeout=60)

    return watch
