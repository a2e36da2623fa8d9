"""``svcnb lab``: JupyterLab with a sandbox beside it, a login kept, and nothing left behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from svcnb._lab import free_port, wait_for_http

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
            + ["--vms", "5", "--notebooks", str(tmp_path), "--store", str(tmp_path / "store")],
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
