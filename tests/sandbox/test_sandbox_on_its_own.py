"""`svcnb sandbox` used on its own, as a user in two terminals would: it writes its connection
file where the next one finds it and prints the line to export; SIGTERM saves its state as Ctrl-C
does; restarted from that state it serves on the same port, so the store goes on; and a client
or command that meets a file of a stopped or a new sandbox says so in one line naming the file.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _docblocks import svcnb_in_process

import svcnb
from svcnb.config import ConfigError
from svcnb.sandbox import serve

EXPORT = re.compile(r"^export SVCNB_SANDBOX=(\S+)$", re.M)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SVC_API_KEY", "SVC_BASE_URL", "SVCNB_SANDBOX", "SVCNB_STORE")
    }
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), SVCNB_BUDGET="off", **extra)
    return env


class Running:
    """A `svcnb sandbox` process and what it printed."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.log = cwd / f"sandbox-{time.monotonic_ns()}.log"
        with open(self.log, "w") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "svcnb", "sandbox", "--quiet", "--time-scale", "0", *args],
                cwd=cwd,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while not EXPORT.search(self.text):
            assert self.proc.poll() is None, self.text
            assert time.monotonic() < deadline, self.text
            time.sleep(0.1)
        self.connection_file = Path(EXPORT.search(self.text).group(1))
        self.base_url = self.text.splitlines()[0]

    @property
    def text(self) -> str:
        return self.log.read_text()

    def stop(self, how: int = signal.SIGTERM) -> int:
        self.proc.send_signal(how)
        return self.proc.wait(timeout=60)


def _svcnb(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "svcnb", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_printed_export_line_is_all_another_shell_needs(tmp_path, monkeypatch):
    env = _env(tmp_path)
    first = Running(["--vms", "5"], env, tmp_path)
    try:
        default = tmp_path / "state" / "svcnb" / "sandbox.json"
        assert first.connection_file == default
        assert default.stat().st_mode & 0o777 == 0o600
        info = json.loads(default.read_text())
        assert first.base_url == info["base_url"]
        assert not any(token in first.text for token in info["tokens"].values())
        # the other shell: the exported line, and nothing else
        other = {**env, "SVCNB_SANDBOX": str(first.connection_file)}
        done = _svcnb(["snapshot", "--store", "store"], other, tmp_path)
        assert done.returncode == 0, done.stderr
        assert "5 vms" in done.stdout
        monkeypatch.setenv("SVCNB_SANDBOX", str(first.connection_file))
        with svcnb.connect(progress=False) as client:
            assert client.base_url == first.base_url and len(client.vms.list()) == 5
        # a second sandbox may not take the file of the first from under its users
        again = _svcnb(["sandbox", "--quiet", "--time-scale", "0"], env, tmp_path)
        assert again.returncode == 2
        (line,) = again.stderr.strip().splitlines()
        assert str(default) in line and first.base_url in line and "--connection-file" in line
        assert json.loads(default.read_text()) == info
    finally:
        assert first.stop(signal.SIGINT) == 0


def test_sigterm_saves_the_state_and_the_restart_keeps_port_account_and_store(tmp_path):
    env = _env(tmp_path)
    args = ["--vms", "6", "--state-file", "saved.json", "--save-state-on-exit", "saved.json"]
    first = Running(args, env, tmp_path)
    assert "saved.json does not exist yet: a seeded fleet" in first.text
    other = {**env, "SVCNB_SANDBOX": str(first.connection_file)}
    stop = _svcnb(
        ["stop", "--status", "running", "--limit", "6", "--plan-out", "p.json"], other, tmp_path
    )
    assert stop.returncode == 0, stop.stderr
    assert _svcnb(["snapshot", "--store", "store", "--quiet"], other, tmp_path).returncode == 0
    with svcnb.Client(
        json.loads(first.connection_file.read_text())["tokens"]["admin"], first.base_url
    ) as client:
        before = sorted((vm["id"], vm["status"], vm["name"]) for vm in client.vms.list())
    assert first.stop(signal.SIGTERM) == 0
    assert "state saved to saved.json" in first.text
    saved = json.loads((tmp_path / "saved.json").read_text())
    assert saved["listen"] == {"port": int(first.base_url.rsplit(":", 1)[1])}

    second = Running(args, env, tmp_path)
    try:
        assert second.base_url == first.base_url
        assert second.connection_file == first.connection_file
        assert "started from a saved state" in second.text
        info = json.loads(second.connection_file.read_text())
        with svcnb.Client(info["tokens"]["admin"], info["base_url"]) as client:
            assert sorted((vm["id"], vm["status"], vm["name"]) for vm in client.vms.list()) == (
                before
            )
        # the same server and account, its clock carried on: the store takes it as before
        done = _svcnb(["snapshot", "--store", "store", "--quiet"], other, tmp_path)
        assert done.returncode == 0, done.stderr
    finally:
        assert second.stop(signal.SIGINT) == 0


def test_a_stopped_or_a_new_sandbox_is_said_in_one_line(tmp_path, monkeypatch):
    # the sandboxes are processes; the commands run in this process (their exit code and the
    # line they print are what is checked): `python -m svcnb` as a process is held by the others
    env = _env(tmp_path)
    first = Running(["--vms", "4"], env, tmp_path)
    other = {**env, "SVCNB_SANDBOX": str(first.connection_file)}
    assert (
        svcnb_in_process(["snapshot", "--store", "store", "--quiet"], other, tmp_path).returncode
        == 0
    )
    assert first.stop() == 0

    # stopped: every command that reads a server, and connect(), name the file and say so
    for args in (
        ["snapshot", "--store", "store"],
        ["stop", "--status", "running", "--plan-out", "p.json"],
        ["doctor"],
    ):
        done = svcnb_in_process(args, other, tmp_path)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert str(first.connection_file) in line and "not running" in line, line
    monkeypatch.setenv("SVCNB_SANDBOX", str(first.connection_file))
    with pytest.raises(ConfigError, match="sandbox.json.*not running"):
        svcnb.connect()

    # new: a sandbox started afresh is another account; the store says so, not "check tokens"
    second = Running(["--vms", "4"], env, tmp_path)
    try:
        done = svcnb_in_process(["snapshot", "--store", "store", "--quiet"], other, tmp_path)
        assert done.returncode == 1
        (line,) = done.stderr.strip().splitlines()
        assert "names a new sandbox" in line and "--state-file" in line, line
        assert "token" not in line
    finally:
        second.stop()


def test_a_file_left_by_a_sandbox_whose_port_another_took_is_named(tmp_path, monkeypatch):
    with serve(vms=1) as sb:
        path = sb.write_connection_file(tmp_path / "old.json")
        info = json.loads(path.read_text())
        info["instance"] = "0" * 16  # the file of a sandbox that served here before
        path.write_text(json.dumps(info))
        monkeypatch.setenv("SVCNB_SANDBOX", str(path))
        with pytest.raises(ConfigError, match="old.json.*a new sandbox answers") as caught:
            svcnb.connect()
        assert "\n" not in str(caught.value)
        with pytest.raises(ConfigError, match="old.json.*a new sandbox answers"):
            svcnb.sandbox_control()


def test_a_missing_file_is_one_line_for_every_command_that_reads_a_server(tmp_path):
    # in this process: the exit code and the one line are what is checked
    path = tmp_path / "gone.json"
    env = _env(tmp_path, SVCNB_SANDBOX=str(path))
    for args in (
        ["snapshot"],
        ["stop", "--status", "running", "--plan-out", "p.json"],
        ["doctor"],
        ["report", "billing", "--snapshot", "--store", "store"],
    ):
        done = svcnb_in_process(args, env, tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert f"SVCNB_SANDBOX='{path}': no such file" in line and "svcnb sandbox" in line, line


@pytest.mark.parametrize("content", ["", "{}", "[1]", '{"base_url": "http://127.0.0.1:1"}'])
def test_a_file_that_is_no_connection_file_is_named(tmp_path, monkeypatch, content):
    from svcnb import configured_client

    path = tmp_path / "sandbox.json"
    path.write_text(content)
    monkeypatch.setenv("SVCNB_SANDBOX", str(path))
    for call in (svcnb.connect, configured_client, svcnb.sandbox_control):
        with pytest.raises(ConfigError, match="sandbox.json' is not a readable sandbox") as caught:
            call()
        assert "\n" not in str(caught.value) and "svcnb sandbox" in str(caught.value)
