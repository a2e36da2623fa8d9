"""A token read from a sandbox connection file goes only to the sandbox proven to be the one
that wrote it: a stale file whose port another program holds (answering 404, or accepting and
never answering) is refused in one line within the probe's bound, and no byte of the token
reaches that program. The file itself is written privately, never through a planted link."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import svcnb
from svcnb import cli, configured_client
from svcnb.config import ConfigError
from svcnb.jupyter.lab import SandboxProcess

TOKEN = "svc_stale_file_token_that_must_stay_home_7Qx2"
# the instance check's bound (PROBE_SECONDS), and a connection file's size limit
PROBE_SECONDS = 2.0
FILE_LIMIT = 64 * 1024


class _Squatter:
    """A program on the port a stale connection file names: ``answer`` 404 to everything, or
    accept and never answer. Keeps every byte it received."""

    def __init__(self, answer: bool) -> None:
        self.received = bytearray()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        if answer:
            outer = self

            class Handler(BaseHTTPRequestHandler):
                def do_GET(self) -> None:  # noqa: N802
                    with outer._lock:
                        outer.received += self.requestline.encode() + bytes(self.headers)
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

                do_POST = do_PUT = do_PATCH = do_DELETE = do_GET  # noqa: N815

                def log_message(self, *args: object) -> None:
                    pass

            self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            self.port = self._http.server_address[1]
            threading.Thread(target=self._http.serve_forever, daemon=True).start()
        else:
            self._http = None
            self._sock = socket.socket()
            self._sock.bind(("127.0.0.1", 0))
            self._sock.listen(16)
            self._sock.settimeout(0.2)
            self.port = self._sock.getsockname()[1]
            threading.Thread(target=self._hold, daemon=True).start()

    def _hold(self) -> None:
        held = []
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            conn.settimeout(0.2)
            held.append(conn)
            threading.Thread(target=self._drain, args=(conn,), daemon=True).start()
        for conn in held:
            conn.close()

    def _drain(self, conn: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                chunk = conn.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self.received += chunk

    def close(self) -> None:
        self._stop.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        else:
            self._sock.close()


@pytest.fixture(params=["answers_404", "never_answers"])
def squatter(request):
    held = _Squatter(answer=request.param == "answers_404")
    yield held
    held.close()


def _stale_file(tmp_path: Path, port: int) -> Path:
    base = f"http://127.0.0.1:{port}"
    path = tmp_path / "sandbox.json"
    path.write_text(
        json.dumps(
            {
                "base_url": base,
                "api_root": base + "/api/public/v1",
                "control_url": base + "/_sandbox",
                "tokens": {"admin": TOKEN, "read": TOKEN + "r"},
                "instance": "9f2c0a11b3d4e5f6",
            }
        )
    )
    path.chmod(0o600)
    return path


def test_a_stale_file_whose_port_another_program_holds_gets_no_token(
    squatter, tmp_path, monkeypatch
):
    path = _stale_file(tmp_path, squatter.port)
    monkeypatch.setenv("SVCNB_SANDBOX", str(path))
    for call in (svcnb.connect, configured_client, svcnb.sandbox_control):
        started = time.monotonic()
        with pytest.raises(ConfigError) as caught:
            call()
        took = time.monotonic() - started
        assert took < PROBE_SECONDS + 2, took
        said = str(caught.value)
        assert "\n" not in said and "sandbox.json" in said and "not sent" in said, said
        assert TOKEN not in said
    with pytest.raises(ConfigError):
        SandboxProcess(path).tokens()
    time.sleep(0.3)  # whatever was sent has arrived
    assert TOKEN.encode() not in squatter.received
    assert b"svc_" not in squatter.received


def test_svcnb_snapshot_on_a_stale_file_ends_in_one_line_within_seconds(
    squatter, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SVCNB_SANDBOX", str(_stale_file(tmp_path, squatter.port)))
    started = time.monotonic()
    code = cli.main(["snapshot", "--store", str(tmp_path / "store"), "--quiet"])
    took = time.monotonic() - started
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert took < PROBE_SECONDS + 5, took
    (line,) = err.splitlines()
    assert "sandbox.json" in line and TOKEN not in line
    time.sleep(0.3)
    assert TOKEN.encode() not in squatter.received


def test_a_file_without_an_instance_proves_nothing_and_gets_no_token(
    sandbox, tmp_path, monkeypatch
):
    info = json.loads(sandbox.write_connection_file(tmp_path / "old.json").read_text())
    del info["instance"]  # as an older svcnb wrote it
    (tmp_path / "old.json").write_text(json.dumps(info))
    monkeypatch.setenv("SVCNB_SANDBOX", str(tmp_path / "old.json"))
    before = sandbox.control.stats()["requests"]
    with pytest.raises(ConfigError, match="old.json.*names no sandbox instance"):
        svcnb.connect()
    assert sandbox.control.stats()["requests"] == before


def test_the_sandbox_of_the_file_is_still_used(sandbox, tmp_path, monkeypatch):
    monkeypatch.setenv("SVCNB_SANDBOX", str(sandbox.write_connection_file(tmp_path / "sb.json")))
    with svcnb.connect(progress=False) as client:
        assert client.vms.list()


# -- the file is written privately, never through a link --------------------------------------


def test_a_link_planted_at_the_old_fixed_temporary_name_receives_nothing(sandbox, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # a group-writable folder: others may plant names in it
    loot = tmp_path / "loot.txt"
    loot.write_text("")
    loot.chmod(0o644)
    # the fixed names a writer might use: beside the target, with this process's id
    for name in (f".sandbox.json.{os.getpid()}.tmp", ".sandbox.json.tmp", "sandbox.json.tmp"):
        (shared / name).symlink_to(loot)
    old = os.umask(0)
    try:
        written = sandbox.write_connection_file(shared / "sandbox.json")
    finally:
        os.umask(old)
    assert loot.read_text() == ""  # nothing went through a planted link
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert not written.is_symlink()
    assert json.loads(written.read_text())["tokens"]["admin"] == sandbox.tokens["admin"]


def test_a_connection_file_that_is_a_link_is_refused_and_its_target_kept(sandbox, tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("mine\n")
    link = tmp_path / "sandbox.json"
    link.symlink_to(elsewhere)
    with pytest.raises(OSError, match="symbolic link"):
        sandbox.write_connection_file(link)
    assert elsewhere.read_text() == "mine\n"
    assert sandbox.tokens["admin"] not in elsewhere.read_text()


@pytest.mark.parametrize("kind", ["fifo", "folder", "huge"])
def test_a_connection_file_that_is_no_regular_file_is_refused_at_once(kind, tmp_path, monkeypatch):
    path = tmp_path / "sandbox.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:  # a connection file in every other way
        info = {"base_url": "http://127.0.0.1:9", "tokens": {"admin": TOKEN}}
        path.write_text(json.dumps({**info, "pad": "x" * FILE_LIMIT}))
    monkeypatch.setenv("SVCNB_SANDBOX", str(path))
    done: list[BaseException] = []

    def call() -> None:
        try:
            svcnb.connect()
        except BaseException as exc:  # noqa: BLE001 - kept for the assertion below
            done.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive() and kind == "fifo":  # release the reader the old code left waiting
        with open(path, "w"):
            pass
    assert not worker.is_alive(), "connect() waited on the file"
    assert isinstance(done[0], ConfigError), done
    said = str(done[0])
    assert "sandbox.json" in said and "\n" not in said
    assert {"fifo": "a FIFO", "folder": "a folder", "huge": "larger than"}[kind] in said, said


def test_a_file_whose_control_url_proves_another_server_than_its_base_url_gets_no_token(
    sandbox, tmp_path, monkeypatch
):
    # the instance check asks control_url: the live sandbox would prove itself there, while the
    # tokens would go to base_url, another program
    held = _Squatter(answer=True)
    try:
        info = json.loads(sandbox.write_connection_file(tmp_path / "sb.json").read_text())
        info["base_url"] = f"http://127.0.0.1:{held.port}"
        info["api_root"] = info["base_url"] + "/api/public/v1"
        (tmp_path / "sb.json").write_text(json.dumps(info))
        monkeypatch.setenv("SVCNB_SANDBOX", str(tmp_path / "sb.json"))
        for call in (svcnb.connect, configured_client):
            with pytest.raises(ConfigError, match="sb.json.*not a readable sandbox connection"):
                call()
        time.sleep(0.3)
        assert sandbox.tokens["admin"].encode() not in held.received
        assert not held.received
    finally:
        held.close()
