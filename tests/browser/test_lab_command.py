"""``svcnb lab``: JupyterLab with a sandbox beside it, a login kept, and nothing left behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
from _loopback import wait_for_http

from svcnb.jupyter import notebooks as _notebooks
from svcnb.jupyter.lab import SandboxProcess, kernel_environment, session_store
from svcnb.webhooks import free_port

SANDBOX_LINE = re.compile(r"svcnb lab: sandbox at (http://127\.0\.0\.1:\d+)")


def _read_until(path: Path, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = pattern.search(path.read_text(encoding="utf-8", errors="replace"))
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{pattern.pattern!r} never appeared in the output:\n{path.read_text()}")


def test_svcnb_lab_serves_the_sandbox_keeps_the_login_and_stops_both(tmp_path: Path) -> None:
    port = free_port()
    out = tmp_path / "lab.out"
    env = dict(os.environ, SVC_API_KEY="svc_" + "x" * 32, SVC_BASE_URL="https://example.invalid")
    with open(out, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "svcnb", "lab", "--no-browser", "--port", str(port)]
            # a sandbox asked for: a store named, or a service exported, would open your data
            + ["--sandbox", "--vms", "5", "--notebooks", str(tmp_path)]
            + ["--store", str(tmp_path / "store")],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        sandbox_url = _read_until(out, SANDBOX_LINE, timeout=60).group(1)
        wait_for_http(f"http://127.0.0.1:{port}/api", timeout=90, proc=proc)
        assert httpx.get(f"{sandbox_url}/_sandbox/clock", timeout=5).json()["success"]
        # Jupyter's own login stays on: only the tests run a server without a token.
        assert httpx.get(f"http://127.0.0.1:{port}/api/kernels", timeout=5).status_code == 403
        text = out.read_text(encoding="utf-8")
        assert "ignoring SVC_API_KEY and SVC_BASE_URL" in text
        assert "svc_xxxx" not in text
        # the shipped notebooks were copied into the folder JupyterLab opened, and it said so
        shipped = sorted(p.name for p in _notebooks.shipped().glob("*.ipynb"))
        assert sorted(p.name for p in tmp_path.glob("*.ipynb")) == shipped
        assert f"svcnb lab: copied {len(shipped)} notebooks into {tmp_path}" in text
    finally:
        proc.terminate()
        code = proc.wait(timeout=60)
    assert code == 130
    try:
        httpx.get(f"{sandbox_url}/_sandbox/clock", timeout=2)
        still_up = True
    except httpx.HTTPError:
        still_up = False
    assert not still_up, "the sandbox outlived `svcnb lab`"


def test_kernels_get_the_sandbox_by_its_connection_file_and_no_token(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "sandbox.json", vms=3, seed=7, time_scale=0.0) as sandbox:
        secrets = list(sandbox.tokens().values())
        caller = {"SVC_API_KEY": "svc_" + "r" * 32, "SVC_BASE_URL": "https://api.example", "X": "1"}
        env = kernel_environment(sandbox.connection_file, tmp_path / "store", base=caller)
        assert "SVC_API_KEY" not in env and "SVC_BASE_URL" not in env
        assert env["SVCNB_SANDBOX"] == str((tmp_path / "sandbox.json").resolve())
        assert env["X"] == "1" and env["SVCNB_STORE"] == str(tmp_path / "store")
        assert secrets and not any(s in value for s in secrets for value in env.values())
        # What a kernel does with it: connect() and sandbox_control() reach this sandbox.
        code = (
            "import svcnb; c = svcnb.connect(progress=False); s = svcnb.sandbox_control(c); "
            "print(c.base_url, s.url, len(c.vms.list()), s.advance(60).isoformat())"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [
            sandbox.base_url,
            sandbox.control_url,
            "3",
            "2026-11-01T00:01:00+00:00",
        ]


def test_the_kernels_store_is_a_folder_made_absolute_or_a_url_kept_whole(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SVCNB_STORE", raising=False)
    assert session_store("rel/store") == tmp_path / "rel" / "store"
    # an object-storage store reaches the kernels as the URL, not as a folder named "s3:"
    assert session_store("s3://team-bucket/svcnb") == "s3://team-bucket/svcnb"
    monkeypatch.setenv("SVCNB_STORE", "gs://b/x")
    assert session_store(None) == "gs://b/x"
    monkeypatch.delenv("SVCNB_STORE")
    fresh = session_store(None)
    assert isinstance(fresh, Path) and fresh.is_relative_to(tmp_path / "data" / "lab")
