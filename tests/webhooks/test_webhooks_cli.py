"""``svcnb listen`` as a user runs it: a real process over HTTPS on loopback; what it refuses before
it listens (an exit code and a line on stderr), in this process."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time

import httpx
import pytest
from _webhooks_support import SECRET, event_body, signed_headers

from svcnb import cli
from svcnb.store import EventLog

STARTUP_SECONDS = 30


def start_listen(args, env_secret=SECRET, **popen):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVCNB_")}
    if env_secret is not None:
        env["SVCNB_WEBHOOK_SECRET"] = env_secret
    return subprocess.Popen(
        [sys.executable, "-m", "svcnb", "listen", *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def read_url(proc) -> str:
    deadline = time.monotonic() + STARTUP_SECONDS
    line = proc.stdout.readline()
    assert time.monotonic() < deadline, "svcnb listen did not start in time"
    assert "receiving webhooks at https://127.0.0.1:" in line, line + proc.stderr.read()
    return line.split(" at ", 1)[1].split(",", 1)[0]


def refused(args, monkeypatch, capsys, env_secret=SECRET) -> tuple[int, str, str]:
    """``svcnb listen ARGS`` run in this process: its exit code, stdout and stderr."""
    for name in [k for k in os.environ if k.startswith("SVCNB_")]:
        monkeypatch.delenv(name)
    if env_secret is not None:
        monkeypatch.setenv("SVCNB_WEBHOOK_SECRET", env_secret)
    try:
        code = cli.main(["listen", *map(str, args)])
    except SystemExit as exit:  # argparse's own refusals
        code = exit.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def listen_args(tls, tmp_path):
    return ["--port", 0, "--cert", tls.cert_pem, "--key", tls.key_pem, "--store", tmp_path]


def test_acknowledged_event_survives_kill_9(tls, tmp_path, listen_args):
    proc = start_listen(listen_args)
    try:
        url = read_url(proc)
        body = event_body("evt_cli")
        with httpx.Client(
            verify=ssl.create_default_context(cafile=tls.ca_pem), trust_env=False, timeout=10
        ) as http:
            response = http.post(url + "hook", content=body, headers=signed_headers(body))
            unsigned = http.post(url + "hook", content=event_body("evt_forged"))
        assert response.status_code == 200
        assert unsigned.status_code == 401
        proc.send_signal(signal.SIGKILL)  # no shutdown hooks, no buffers flushed
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    frame = EventLog(tmp_path).frame()
    assert frame["event_id"].tolist() == ["evt_cli"]
    assert SECRET not in proc.stdout.read() + proc.stderr.read()


def test_secret_file_is_used_and_sigterm_stops_cleanly(tls, tmp_path, listen_args):
    secret_file = tmp_path / "secret"
    secret_file.write_text("whsec_from_file\n")
    proc = start_listen([*listen_args, "--secret-file", secret_file], env_secret=None)
    try:
        url = read_url(proc)
        body = event_body("evt_file")
        headers = signed_headers(body, secret="whsec_from_file")
        with httpx.Client(
            verify=ssl.create_default_context(cafile=tls.ca_pem), trust_env=False, timeout=10
        ) as http:
            assert http.post(url, content=body, headers=headers).status_code == 200
        proc.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then re-raises the signal it caught
        assert proc.wait(20) in (0, -signal.SIGTERM)
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert EventLog(tmp_path).seen(event_id="evt_file")


def test_no_secret_is_a_clear_error(listen_args, monkeypatch, capsys):
    code, out, err = refused(listen_args, monkeypatch, capsys, env_secret=None)
    assert code == 2
    assert "SVCNB_WEBHOOK_SECRET" in err and "--secret-file" in err


def test_secret_is_not_accepted_on_the_command_line(listen_args, monkeypatch, capsys):
    code, out, err = refused([*listen_args, "--secret", SECRET], monkeypatch, capsys, None)
    assert code == 2
    assert "never taken from the command line" in err and "SVCNB_WEBHOOK_SECRET" in err
    assert SECRET not in err + out


def test_missing_certificate_is_a_clear_error(tmp_path, tls, monkeypatch, capsys):
    args = ["--port", 0, "--cert", tmp_path / "nope.pem", "--key", tls.key_pem]
    code, out, err = refused([*args, "--store", tmp_path], monkeypatch, capsys)
    assert code == 2
    assert "nope.pem" in err and "does not exist" in err


def test_a_store_on_object_storage_is_refused_before_anything_is_written(
    tls, tmp_path, monkeypatch, capsys
):
    # the event log is local only: "s3://b/x" must not become a folder "s3:" beside the cwd
    args = ["--port", 0, "--cert", tls.cert_pem, "--key", tls.key_pem, "--store", "s3://b/x"]
    monkeypatch.chdir(tmp_path)
    code, out, err = refused(args, monkeypatch, capsys)
    assert code == 2
    assert "kept in a local folder" in err and "s3://b/x is on object storage" in err
    assert list(tmp_path.iterdir()) == []
