"""One rate budget per token shared by processes: no 429 together, nothing held by the dead,
no token in the file, and local pacing alone (with one warning) when the file cannot be used."""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _fakeapi import TOKEN, FakeApi

import svcnb
from svcnb.client import (
    ENV_BUDGET,
    Governor,
    SharedBudget,
    TokenBudget,
    _shared_budget,
    budget_key,
    budget_path,
    governor_for,
)

KEY = budget_key("http://api.test", "d" * 64)


def _headers(remaining, reset, limit):
    return {
        "x-ratelimit-limit": str(limit),
        "x-ratelimit-remaining": str(remaining),
        "x-ratelimit-reset": str(reset),
    }


def _seed(budget: SharedBudget, remaining: int, reset: float, limit: int) -> None:
    """Make the shared window say ``remaining`` of ``limit`` left until ``reset`` seconds on."""
    grant, owed = budget.acquire(KEY, within=1)
    assert grant is not None and owed is None
    budget.release(KEY, grant, _headers(remaining, reset, limit), time.time())


def _as_if_another_process(client: svcnb.Client, path: Path) -> Governor:
    """Give ``client`` a governor of its own with its own connection to the budget file: all
    it shares with other such clients is the file, as separate processes would."""
    key = budget_key("http://api.test", "e" * 64)
    client._req.governor = Governor(shared=TokenBudget(SharedBudget(path), key))
    return client._req.governor


# -- where the budget lives --------------------------------------------------------------------


def test_the_budget_lives_in_the_user_cache_unless_told(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_BUDGET, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert budget_path() == tmp_path / "svcnb" / "budget.sqlite"
    monkeypatch.setenv(ENV_BUDGET, str(tmp_path / "elsewhere.sqlite"))
    assert budget_path() == tmp_path / "elsewhere.sqlite"
    monkeypatch.setenv(ENV_BUDGET, "off")
    assert budget_path() is None
    assert governor_for(FakeApi().base, TOKEN).shared is None


# -- shared pacing -----------------------------------------------------------------------------


def test_two_governors_that_share_only_the_file_never_see_a_429(make_client, tmp_path):
    api = FakeApi(vms=45, limit=12, window=0.25, latency=0.01)
    first, second = make_client(api), make_client(api)
    path = tmp_path / "budget.sqlite"
    gov_a, gov_b = _as_if_another_process(first, path), _as_if_another_process(second, path)
    assert gov_a is not gov_b and gov_a.shared.budget is not gov_b.shared.budget
    with ThreadPoolExecutor(2) as pool:
        pulls = [pool.submit(c.vms.all, details=True, workers=6) for c in (first, second)]
        results = [p.result() for p in pulls]
    assert sorted(set(api.statuses)) == [200]
    assert results[0] == results[1] and len(results[0]) == 45
    assert api.inflight_max > 1
    assert gov_a.shared.view()[1] == 0  # every grant was given back


def test_a_429_met_by_one_process_holds_the_others(tmp_path):
    path = tmp_path / "budget.sqlite"
    one = Governor(shared=TokenBudget(SharedBudget(path), KEY))
    other = Governor(shared=TokenBudget(SharedBudget(path), KEY))
    assert one.acquire() is None
    one.release(_headers(5, 30, 10))
    one.pause(2.0)
    owed = other.acquire(within=0.1)
    assert owed == pytest.approx(2.0, abs=0.3)  # told at once, holding nothing
    assert other._inflight == 0 and other.shared.view()[1] == 0


_PULL = textwrap.dedent(
    """
    import sys
    import svcnb

    client = svcnb.Client(progress=False)
    print("ready", flush=True)
    sys.stdin.readline()
    fleet = client.vms.all(details=True, workers=4)
    print(len(fleet), client.stats["rate_limited"], flush=True)
    """
)


def _start_together(env: dict[str, str], count: int, script: str) -> list[subprocess.Popen]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )  # fmt: skip
        for _ in range(count)
    ]
    for proc in procs:  # all have imported svcnb and made their Client before any pulls
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    return procs


def test_three_processes_pulling_with_one_token_never_see_a_429(make_sandbox, tmp_path):
    sandbox = make_sandbox(vms=25, rate_limit=60, rate_window_seconds=3, latency_ms=10)
    env = {**os.environ, "SVC_API_KEY": sandbox.tokens["read"], "SVC_BASE_URL": sandbox.base_url,
           ENV_BUDGET: str(tmp_path / "budget.sqlite")}  # fmt: skip
    procs = _start_together(env, 3, _PULL)
    outputs = [proc.communicate(timeout=120)[0].split() for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0]
    assert outputs == [["25", "0"]] * 3
    stats = sandbox.control.stats()
    assert stats["requests"] >= 3 * 26 > 60  # more than one window's budget together
    assert stats["byStatus"].get("429", 0) == 0


_HOLD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from svcnb.client import SharedBudget

    budget = SharedBudget(Path(sys.argv[1]))
    for _ in range(3):
        grant, owed = budget.acquire(sys.argv[2], within=1)
        assert grant is not None
    print("held", flush=True)
    sys.stdin.readline()  # killed here, holding its grants
    """
)


def test_grants_of_a_killed_process_stop_counting_when_their_window_ends(tmp_path):
    path = tmp_path / "budget.sqlite"
    budget = SharedBudget(path)
    _seed(budget, remaining=3, reset=1, limit=3)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path), KEY], text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert budget.view(KEY)[1] == 3
    started = time.monotonic()
    grant, owed = budget.acquire(KEY, within=10)
    # The window they were given in ended after ~1 s: the dead process's grants went with it.
    assert grant is not None and owed is None
    assert time.monotonic() - started < 3
    assert budget.view(KEY)[1] == 1


def test_grants_never_given_back_end_after_grant_seconds(monkeypatch, tmp_path):
    monkeypatch.setattr(_shared_budget, "GRANT_SECONDS", 0.3)
    path = tmp_path / "budget.sqlite"
    hung = SharedBudget(path)  # a live process that never answers
    _seed(hung, remaining=1, reset=30, limit=1)
    assert hung.acquire(KEY, within=1)[0] is not None
    other = SharedBudget(path)
    assert other.acquire(KEY, within=0)[1] == pytest.approx(30, abs=1)
    started = time.monotonic()
    # A slot frees once the grant ends, well before the window does.
    assert other.acquire(KEY, within=math.inf)[0] is not None
    assert time.monotonic() - started < 2


def test_threads_share_one_connection_to_the_file(tmp_path):
    budget = SharedBudget(tmp_path / "budget.sqlite")
    _seed(budget, remaining=40, reset=30, limit=40)

    def take(_):
        grant, owed = budget.acquire(KEY, within=1)
        return grant

    with ThreadPoolExecutor(8) as pool:
        grants = list(pool.map(take, range(40)))
    assert None not in grants and len(set(grants)) == 40
    assert budget.acquire(KEY, within=0.05)[1] == pytest.approx(30, abs=1)  # none left
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda g: budget.release(KEY, g, None, time.time()), grants))
    assert budget.view(KEY)[1] == 0


# -- the token never in the file -------------------------------------------------------------


def test_the_budget_file_holds_no_token(make_client, monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_BUDGET, str(tmp_path / "budget.sqlite"))
    api = FakeApi(vms=12, limit=50, window=5)  # a server never seen: a new governor
    client = make_client(api)
    assert client._req.governor.shared is not None
    assert len(client.vms.all(details=True, workers=4)) == 12
    window, held = client._req.governor.shared.view()
    assert window.remaining == 50 - 13 and held == 0  # the file did take in the answers
    files = list(tmp_path.glob("budget.sqlite*"))
    data = b"".join(f.read_bytes() for f in files)
    assert TOKEN.encode() not in data and b"svc_" not in data
    assert Path(tmp_path / "budget.sqlite").exists() and data


# -- a file that cannot be used ----------------------------------------------------------------


def test_a_corrupt_file_falls_back_to_local_pacing_with_one_warning(
    make_client, monkeypatch, tmp_path
):
    path = tmp_path / "budget.sqlite"
    path.write_bytes(b"this is no database, " * 200)
    monkeypatch.setenv(ENV_BUDGET, str(path))
    api = FakeApi(vms=20, limit=8, window=0.2, latency=0.005)
    client = make_client(api)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert len(client.vms.all(details=True, workers=4)) == 20
    shown = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(shown) == 1 and str(path) in str(shown[0].message)
    assert sorted(set(api.statuses)) == [200]  # paced by this process alone
    assert client._req.governor.shared.budget.broken


def test_a_file_locked_too_long_is_left_alone_a_while_with_one_warning(monkeypatch, tmp_path):
    monkeypatch.setattr(_shared_budget, "LOCK_SECONDS", 0.2)
    monkeypatch.setattr(_shared_budget, "LOCKED_PAUSE_SECONDS", 0.5)
    path = tmp_path / "budget.sqlite"
    SharedBudget(path).view(KEY)  # the file exists, with its schema
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    gov = Governor(shared=TokenBudget(SharedBudget(path), KEY))
    try:
        with pytest.warns(RuntimeWarning, match="shared rate budget"):
            assert gov.acquire(within=5) is None  # not held behind the lock
        gov.release(None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            started = time.monotonic()
            assert gov.acquire(within=5) is None
            assert time.monotonic() - started < 0.1  # the lock is not waited for again
            gov.release(None)
        assert caught == []  # one warning, not one per request
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    time.sleep(0.5)
    assert gov.acquire(within=5) is None
    assert gov.shared.view()[1] == 1  # shared again once the pause is over
    gov.release(None)
    assert gov.shared.budget.broken is None
