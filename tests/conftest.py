"""Shared fixtures: a loopback sandbox (one server per session, reset per test), a factory for
sandboxes of other sizes or settings, a throwaway CA for HTTPS on loopback, and cleaners for the
environment and matplotlib."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
import trustme
from hypothesis import HealthCheck, settings

from svcnb import vocab
from svcnb.sandbox import Sandbox, serve

SEED = 7
VMS = 40
# the buckets of the session's S3 server: the store tests', and those the README and the help
# examples name
S3_BUCKETS = ("svcnb-test", "svcnb", "team")

# The settings the suite's fuzzers share (``settings(settings.get_profile("svcnb"),
# max_examples=N)``): no per-example deadline, since what they test is svcnb's own deadlines and
# a shared CI box makes an example's time meaningless; big or slow draws are what they are for.
settings.register_profile(
    "svcnb",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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
def sandbox_server() -> Iterator[Sandbox]:
    """One sandbox on 127.0.0.1 (port 0) for the whole session; use ``sandbox`` in tests."""
    with serve(vms=VMS, seed=SEED, time_scale=0.0) as sb:
        yield sb


@pytest.fixture
def sandbox(sandbox_server: Sandbox) -> Sandbox:
    """The session sandbox reset to seed 7, 40 VMs, faults off, default settings and tokens."""
    sandbox_server.control.reset(seed=SEED, vms=VMS)
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
def s3_server() -> Iterator[dict[str, str]]:
    """An S3 server on loopback (moto's server mode) with the buckets ``S3_BUCKETS``, one per
    session: the environment that points S3 clients at it (no real credentials)."""
    boto3 = pytest.importorskip("boto3")
    server_mod = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
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


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory) -> None:
    """No test may reach a real account, a user's store or a user's config file through the
    environment; each test starts from the built-in vocabulary."""
    for name in ("SVC_API_KEY", "SVC_BASE_URL", "SVCNB_STORE", "SVCNB_SANDBOX"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path_factory.mktemp("config") / "config.toml"
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    # where `svcnb sandbox` writes its connection file unless told: never the user's
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    # the cross-process rate budget too: a test's waits must not reach the next test or run
    monkeypatch.setenv("SVCNB_BUDGET", str(tmp_path_factory.mktemp("budget") / "budget.sqlite"))
    vocab.reload()


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


# Files that run whole notebooks, minutes each, or every CLI example in turn: started first, so
# that on several workers (pytest-xdist hands out whole files in this order) no worker is left
# with one at the end.
_LONG = (
    "tests/panels/test_notebook_stories.py",
    "tests/test_notebooks_dialects.py",
    "notebooks/",
    "tests/install/test_cli_examples.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The real-browser tests go last: a browser left open by one of them must never change the
    # event-loop state the rest of the suite runs in.
    def order(item: pytest.Item) -> int:
        if "tests/browser/" in item.nodeid:
            return 2
        return 0 if item.nodeid.startswith(_LONG) else 1

    items.sort(key=order)
