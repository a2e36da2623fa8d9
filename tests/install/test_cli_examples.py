"""Every example in svcnb's help texts runs as written.

The examples are read from the help (``svcnb --help`` and each ``svcnb COMMAND --help``), not
copied here, so a new one is run too. They run in order, in one empty folder, as a user would
type them in a terminal where ``SVCNB_SANDBOX`` names the sandbox the first example starts (the
top-level help says so). What the examples refer to is put in that folder first: the
certificate, key and secret file of ``svcnb listen``, a store of the first format for
``svcnb migrate-store``, a config file whose ``[alerts] ca_bundle`` trusts a local receiver, and
``s3://team/history`` (account ``prod``) on the session's S3 server on loopback.

Two substitutions keep every byte on this machine and the run repeatable: a fixed ``--port N``
becomes a free port, and an https URL of another host (the Slack webhook of ``svcnb check
--deliver``) becomes that local receiver. Servers (``svcnb sandbox``, ``listen``, ``lab``) run
until they answer and are then stopped with Ctrl-C. ``svcnb demo`` and ``svcnb lab`` are slow.
"""

from __future__ import annotations

import argparse
import http.server
import os
import re
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from svcnb import cli
from svcnb.webhooks import free_port

REPO = Path(__file__).resolve().parents[2]
LEGACY_STORE = REPO / "tests" / "store" / "data" / "legacy_store"
# exit codes an example may end with besides 0, by command: check exits 1 when an alert fired,
# doctor 3 when it saw words svcnb cannot classify
ALSO_FINE = {"check": {1}, "doctor": {3}}
SERVERS = {"sandbox", "listen", "lab"}


def _example_lines(epilog: str | None) -> list[str]:
    """The commands of the paragraphs headed ``example:``/``examples...:`` (up to a blank line),
    with trailing comments dropped and backslash continuations joined."""
    found: list[str] = []
    inside, heading, pending = False, None, ""
    for line in (epilog or "").splitlines():
        if not line.strip():
            inside, heading = False, None
            continue
        if not line.startswith(" "):
            heading = heading or line
            inside = heading.lower().startswith("example") and line.rstrip().endswith(":")
            continue
        if not inside:
            continue
        text = re.sub(r"\s{2,}#.*$", "", line).strip()
        if text.endswith("\\"):
            pending += text[:-1].strip() + " "
            continue
        found.append(pending + text)
        pending = ""
    return found


def _epilog(name: str) -> str | None:
    parser = cli.build_parser(name)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices[name].epilog


def all_examples() -> list[str]:
    seen: list[str] = []
    for epilog in [cli.build_parser().epilog, *map(_epilog, cli.COMMANDS)]:
        for line in _example_lines(epilog):
            if line not in seen:
                seen.append(line)
    return seen


EXAMPLES = all_examples()


def _split(example: str) -> tuple[dict[str, str], list[str]]:
    """``VAR=value ... svcnb ARGS`` as the environment it sets and svcnb's arguments."""
    words = shlex.split(example)
    env = {}
    while words and re.match(r"[A-Z_][A-Z0-9_]*=", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words and words[0] == "svcnb", example
    return env, words[1:]


def _command(example: str) -> str:
    return _split(example)[1][0]


def _params() -> list:
    out = []
    for example in EXAMPLES:
        # every example together takes minutes: `make test-all` runs them (make test stays
        # under its 5 minutes)
        marks = [pytest.mark.slow]
        out.append(pytest.param(example, marks=marks, id=example[:70]))
    return out


class _Receiver(http.server.BaseHTTPRequestHandler):
    received: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        self.received.append(self.rfile.read(length))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def _team_history(s3_env: dict[str, str]) -> None:
    """``s3://team/history``, the store of several accounts an example copies one of: account
    ``prod`` on the session's S3 server."""
    from unittest import mock

    from svcnb import Client, Store
    from svcnb.sandbox import serve

    with (
        mock.patch.dict(os.environ, s3_env),
        serve(vms=6, seed=11) as sb,
        Client(sb.tokens["admin"], sb.base_url, progress=False) as client,
    ):
        Store("s3://team/history").take(client, account="prod")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory, s3_server: dict) -> Iterator[dict]:
    trustme = pytest.importorskip("trustme")
    home = tmp_path_factory.mktemp("examples")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    ca.cert_pem.write_to_path(home / "ca.pem")
    cert.private_key_pem.write_to_path(home / "key.pem")
    cert.cert_chain_pems[0].write_to_path(home / "cert.pem")
    for pem in cert.cert_chain_pems[1:]:
        pem.write_to_path(home / "cert.pem", append=True)
    (home / "secret.txt").write_text("whsec_examples_" + "s" * 24 + "\n")
    shutil.copytree(LEGACY_STORE, home / "data" / "store-old")
    (home / "config.toml").write_text(f'[alerts]\nca_bundle = "{home / "ca.pem"}"\n')

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(home / "cert.pem", home / "key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SVC_API_KEY", "SVC_BASE_URL", "SVCNB_STORE", "SVCNB_ALERT_URL")
    }
    _team_history(s3_server)
    # the S3 server as a user points svcnb at it: an http:// endpoint on this machine and keys
    env.update({k: v for k, v in s3_server.items() if k != "AWS_ALLOW_HTTP"})
    env.update(
        SVCNB_SANDBOX=str(home / "sandbox.json"),
        SVCNB_CONFIG=str(home / "config.toml"),
        SVCNB_BUDGET="off",
        BROWSER="true",  # `svcnb lab` opens "a browser" that does nothing
        COLUMNS="120",
    )
    state = {"home": home, "env": env, "receiver": server.server_address[1], "servers": []}
    try:
        yield state
    finally:
        for proc in state["servers"]:
            _stop(proc)
        server.shutdown()


def _prepare(example: str, receiver_port: int) -> str:
    text = re.sub(r"--port \d+", lambda m: f"--port {free_port()}", example)
    return re.sub(
        r"https://(?!127\.0\.0\.1|localhost)[^\s'\"]+",
        f"https://127.0.0.1:{receiver_port}/services/examples",
        text,
    )


def _argv(example: str, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    # `svcnb` is this checkout's, run by the interpreter running the tests
    extra, args = _split(example)
    return [sys.executable, "-m", "svcnb", *args], {**env, **extra}


def _stop(proc: subprocess.Popen) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    return proc.returncode


def _ready(command: str, example: str, log: Path, home: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + (180 if command == "lab" else 90)
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{example} exited {proc.returncode}:\n{log.read_text()}"
        if command == "sandbox":
            if "export SVCNB_SANDBOX=" in log.read_text():  # its last line at start-up
                return
        elif command == "listen":
            port = int(re.search(r"--port (\d+)", example).group(1))
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return
        elif command == "lab":
            found = re.search(r"http://127\.0\.0\.1:(\d+)/lab", log.read_text())
            if found:
                try:
                    httpx.get(f"http://127.0.0.1:{found.group(1)}/api", timeout=2)
                    return
                except httpx.HTTPError:
                    pass
        time.sleep(0.3)
    raise AssertionError(f"{example} never became ready:\n{log.read_text()}")


def test_examples_are_found():
    commands = {_command(e) for e in EXAMPLES}
    assert commands == set(cli.COMMANDS), commands ^ set(cli.COMMANDS)
    assert EXAMPLES[0] == "svcnb sandbox --vms 40 --connection-file sandbox.json"


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("example", _params())
def test_example_runs(example: str, session: dict) -> None:
    home, env = session["home"], session["env"]
    if not (home / "sandbox.json").exists() and example != EXAMPLES[0]:
        pytest.skip("runs after the first example, which starts the sandbox")
    command = _command(example)
    text = _prepare(example, session["receiver"])
    log = home / f"example-{len(list(home.glob('example-*')))}.log"
    if command in SERVERS:
        argv, run_env = _argv(text, env)
        with open(log, "w", encoding="utf-8") as sink:
            proc = subprocess.Popen(
                argv, cwd=home, env=run_env, stdout=sink, stderr=subprocess.STDOUT
            )
        _ready(command, text, log, home, proc)
        if example == EXAMPLES[0]:  # the sandbox every later example uses: stopped at the end
            session["servers"].append(proc)
            return
        code = _stop(proc)
        # Ctrl-C is how a server is stopped: 0, or 130 from a command that reports it
        assert code in (0, 130), f"{text} exited {code}:\n{log.read_text()}"
        return
    argv, run_env = _argv(text, env)
    done = subprocess.run(argv, cwd=home, env=run_env, capture_output=True, text=True, timeout=1500)
    assert done.returncode in {0} | ALSO_FINE.get(command, set()), (
        f"{text} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    assert "Traceback" not in done.stderr, done.stderr
