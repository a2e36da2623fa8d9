"""Shared fixtures: a loopback sandbox (one server per session, reset per test), a factory for
sandboxes of other sizes or settings, a throwaway CA for HTTPS on loopback, and cleaners for the
environment and matplotlib."""

from __future__ import annotations

import functools
import gc
import itertools
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _fuzz  # noqa: F401 - loads the suite's Hypothesis profile before any test module
import _tiers
import pytest
import trustme

from svcnb import vocab
from svcnb.client import Client
from svcnb.config import write_section
from svcnb.sandbox import Sandbox, serve
from svcnb.store import Store

SEED = 7
VMS = 40
# the buckets of the session's S3 server: the store tests', and those the README and the help
# examples name
S3_BUCKETS = ("svcnb-test", "svcnb", "team")


@dataclass
class Tls:
    ca_pem: Path  # what a client (the sandbox, svcnb check) must trust
    cert_pem: Path  # server certificate chain for 127.0.0.1
    key_pem: Path


@pytest.fixture(scope="session")
def tls(tmp_path_factory) -> Tls:
    """A throwaway CA and a certificate for 127.0.0.1 issued by it (trustme), for the HTTPS
    receivers the webhook and alert tests start on loopback."""
    folder = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    paths = Tls(folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    ca.cert_pem.write_to_path(paths.ca_pem)
    cert.private_key_pem.write_to_path(paths.key_pem)
    for i, pem in enumerate(cert.cert_chain_pems):
        pem.write_to_path(paths.cert_pem, append=i > 0)
    return paths


@pytest.fixture(scope="session")
def three_days(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Three daily snapshots of a 20-VM sandbox in a store of their own, for the tests that
    only read one (a page, a panel drawn): taken once per worker."""
    store = Store(tmp_path_factory.mktemp("three-days") / "store")
    with (
        serve(vms=20, seed=7, time_scale=0.0) as sandbox,
        Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as admin,
    ):
        store.build_history(admin, 3, sandbox.control.advance)
    return store


@pytest.fixture(scope="session")
def sandbox_server() -> Iterator[Sandbox]:
    """One sandbox on 127.0.0.1 (port 0) for the whole session; use ``sandbox`` in tests."""
    with serve(vms=VMS, seed=SEED, time_scale=0.0) as sb:
        yield sb


@pytest.fixture
def sandbox(sandbox_server: Sandbox, _clean_environment: None) -> Sandbox:
    """The session sandbox reset to seed 7, 40 VMs, faults off, default settings and tokens.

    A test's clients on it are built as ``Client(token, sandbox.base_url)``, without the pins
    ``svcnb.connect()`` would hand over (``sandbox.pins``), so the test's own config file pins
    what no answer of the sandbox proves, as its user would: disk in GiB (no plan states a disk
    size; every dialect serves GiB), the class of its word ``suspended`` and its grace period
    (the spec states none). Money and ram its answers prove themselves."""
    sandbox_server.control.reset(seed=SEED, vms=VMS)
    write_section("units", {"disk": sandbox_server.pins["units.disk"]})
    write_section("billing", {"grace": sandbox_server.pins["billing.grace"]})
    # its "suspended" is a hold for non-payment; another service's may be a user's suspend
    write_section("vocabulary.vm_status", {"suspended": "suspended"})
    vocab.reload()
    return sandbox_server


@pytest.fixture
def make_sandbox() -> Iterator[Callable[..., Sandbox]]:
    """``make_sandbox(vms=..., seed=..., rate_limit=..., ...)`` starts another sandbox on
    loopback for this test only (stopped at teardown)."""
    with ExitStack() as stack:

        def start(**config: object) -> Sandbox:
            return stack.enter_context(serve(**config))

        yield start


@pytest.fixture(scope="session")
def _own_files(tmp_path_factory) -> Iterator[Path]:
    """Names of files no other test uses, in one folder: a numbered folder per test would cost
    a scan of all the others' (pytest's mktemp), thousands of times."""
    folder = tmp_path_factory.mktemp("own")
    return (folder / str(n) for n in itertools.count())


def _one_at_a_time(turn: threading.Lock, method: Any) -> Any:
    @functools.wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with turn:
            return method(self, *args, **kwargs)

    return locked


@pytest.fixture(scope="session")
def s3_server() -> Iterator[dict[str, str]]:
    """An S3 server on loopback (moto's server mode) with the buckets ``S3_BUCKETS``, one per
    session: the environment that points S3 clients at it (no real credentials)."""
    boto3 = pytest.importorskip("boto3")
    server_mod = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    # moto lists its package folder (a stat per service) on every request to route it: a sixth
    # of what an S3 test costs. The folder cannot change while the server runs.
    patch = pytest.MonkeyPatch()
    backends = pytest.importorskip("moto.backends")
    modules = tuple(backends.list_of_moto_modules())
    patch.setattr(backends, "list_of_moto_modules", lambda: modules)
    # S3 makes a conditional put atomic; moto's threaded server checks If-None-Match and then
    # stores, so two writers' puts of one commit file can both pass the check and the second
    # overwrites the first (a lost journal record, once in a few hundred runs). The server the
    # tests rely on must keep S3's promise: its writes take turns.
    responses = pytest.importorskip("moto.s3.responses")
    turn = threading.Lock()
    for name in ("put_object", "_key_response_post"):
        patch.setattr(
            responses.S3Response, name, _one_at_a_time(turn, getattr(responses.S3Response, name))
        )
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        # commits are put-if-absent: two writers never both write one version of a table log
        "AWS_CONDITIONAL_PUT": "etag",
    }
    client = boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    for bucket in S3_BUCKETS:
        client.create_bucket(Bucket=bucket)
    try:
        yield env
    finally:
        server.stop()
        patch.undo()


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, _own_files: Iterator[Path]) -> None:
    """No test may reach a real account, a user's store or a user's config file through the
    environment; each test starts from the built-in vocabulary."""
    for name in ("SVC_API_KEY", "SVC_BASE_URL", "SVCNB_STORE", "SVCNB_SANDBOX"):
        monkeypatch.delenv(name, raising=False)
    own = next(_own_files)
    monkeypatch.setenv("SVCNB_CONFIG", f"{own}-config.toml")
    # where `svcnb sandbox` writes its connection file unless told: never the user's
    monkeypatch.setenv("XDG_STATE_HOME", f"{own}-state")
    # the cross-process rate budget too: a test's waits must not reach the next test or run
    monkeypatch.setenv("SVCNB_BUDGET", f"{own}-budget.sqlite")
    vocab.reload()


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


# Files by what they cost, the longest first. pytest-xdist hands out whole files (``--dist
# loadfile``) in collection order (``--no-loadscope-reorder``), and the browser tests as one unit
# (one JupyterLab per run): started first, the long ones never leave one worker running alone at
# the end while the other idles. Measured with ``--durations=0``; a file not named here is short.
# The browser tests may go early: Playwright's event loop lives in a module-scoped fixture
# (tests/browser/conftest.py), closed before the next file's tests run.
_LONG = (
    "tests/panels/test_notebook_stories.py",  # make test-all only
    _tiers.BROWSER,
    "tests/test_demo_pages.py",
    "tests/dialects/test_dialect_sweep.py",
    "tests/store/test_store_damaged_commits.py",
    "tests/store/test_store_s3.py",
    "tests/store/test_store_accounts.py",
    "tests/test_readme.py",
    "tests/client/test_client_hardening.py",
    "tests/reports/test_views.py",
    "tests/plans/test_stop_plans.py",
    "tests/reports/test_reports_sandbox.py",
    "tests/alerts/test_alerts.py",
    "tests/store/test_store_migrate.py",
    "tests/sandbox/test_sandbox_on_its_own.py",
    "tests/dialects/test_mutation_sweep.py",
    "notebooks/",
    "tests/install/test_cli_examples.py",
)


def _rank(nodeid: str) -> int:
    return next((i for i, prefix in enumerate(_LONG) if nodeid.startswith(prefix)), len(_LONG))


def _interleaved(files: list[str]) -> dict[str, int]:
    """Each file's place when the folders take turns: one file of each folder, then the next
    of each. A folder's files tend to wait alike (the client's on deadlines and rate windows,
    the store's on nothing): handed out one after another, they ran at once on the workers and
    left the CPUs idle together."""
    folders: dict[str, list[str]] = {}
    for file in files:
        folders.setdefault(file.rpartition("/")[0], []).append(file)
    turns = sorted((i, folder) for folder, own in folders.items() for i in range(len(own)))
    return {folders[folder][i]: place for place, (i, folder) in enumerate(turns)}


@pytest.hookimpl(tryfirst=True)  # before ``-m 'not slow'`` deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    stale = _tiers.mark_costly(items)
    if stale and config.args_source is pytest.Config.ArgsSource.TESTPATHS:
        raise pytest.UsageError(
            f"{_tiers.LEDGER.name} names {len(stale)} test(s) no longer collected, "
            f"{stale[0]!r} first: run scripts/test_costs.py on a --durations=0 report"
        )
    files = list(dict.fromkeys(item.nodeid.split("::")[0] for item in items))
    place = _interleaved([f for f in files if _rank(f) == len(_LONG)])
    # stable: each file's tests stay in order
    items.sort(key=lambda item: (_rank(item.nodeid), place.get(item.nodeid.split("::")[0], 0)))


def pytest_collection_finish(session: pytest.Session) -> None:
    # What collection built (modules, test items, fixtures' definitions) lives until the end of
    # the session: frozen, the collector no longer walks it. Frozen objects no longer count as
    # old ones either, which alone made full collections twice as frequent; so a young
    # collection comes at 2,000 allocations instead of 700, and a full one after 40 of the
    # middle generation instead of 10. The collector took 8.5 s of the workers' CPU in a whole
    # run, against 18.8 s with Python's defaults and 16.6 s with the freeze alone (timed with
    # gc.callbacks, one run each).
    gc.freeze()
    gc.set_threshold(2000, 10, 40)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    # ``-n auto``: two workers more than there are CPUs. A share of the suite waits on real time
    # (deadlines, retries, rate windows, servers and kernels starting); the extra workers run
    # meanwhile. On 2 CPUs, 4 workers took 247 s against 258 s for 3 (alternating runs, mean of
    # 2), for 4 % more CPU: each worker collects the suite and starts its own servers.
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return (len(usable) if usable else os.cpu_count() or 1) + 2


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class BrowserTogether(LoadFileScheduling):
        """By file, as ``--dist loadfile``, but every browser test on one worker."""

        def _split_scope(self, nodeid: str) -> str:
            if _tiers.unit(nodeid) == _tiers.BROWSER:
                return _tiers.BROWSER
            return super()._split_scope(nodeid)

    return BrowserTogether(config, log)
