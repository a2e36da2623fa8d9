"""A sandbox in a process of its own, so a bench's process time is the client's alone."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path


def start(folder: str, vms: int, *options: str) -> tuple[subprocess.Popen, dict, str]:
    """``svcnb sandbox --vms VMS OPTIONS...``; returns the process, its connection info and the
    connection file's path. Stop it with ``proc.terminate(); proc.wait()``."""
    connection = Path(folder) / f"sandbox-{vms}-{time.monotonic_ns()}.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "svcnb", "sandbox", "--vms", str(vms), *options, "--quiet",
         "--connection-file", str(connection)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 600
    while not connection.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"the sandbox with {vms} VMs did not start")
        time.sleep(0.2)
    time.sleep(0.2)  # the file is written before the server answers its first request
    return proc, json.loads(connection.read_text()), str(connection)
