"""The sandbox logs every event as one human line, and the CLI shows them while the clock runs."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

from _life_fleet import add_vm, advance_to, at, empty_account


def test_every_event_is_logged_once_as_one_line(caplog):
    state = empty_account("100.00")
    vm = add_vm(state, "12.50", at(days=2))
    with caplog.at_level(logging.INFO, logger="svcnb.sandbox.events"):
        advance_to(state, at(days=3))
        state.emit("ticket.reply", {"ticketId": "t_42", "message": "we are\non it"})
    lines = [r.getMessage() for r in caplog.records if r.name == "svcnb.sandbox.events"]
    assert lines == [
        f"2026-11-03T00:00:00Z vm.renewed: {vm['name']} ({vm['id']}) now running, "
        "amount 12.50, balance 87.50, periodStart 2026-11-03T00:00:00Z, "
        "nextRenewalAt 2026-12-03T00:00:00Z",
        "2026-11-04T00:00:00Z ticket.reply: ticketId t_42, message we are\\non it",
    ]
    assert all("\n" not in line for line in lines)


def test_the_sandbox_command_logs_renewals_and_events_as_its_clock_runs(tmp_path):
    # 2 sandbox days per real second: a few seconds cover what a minute at 3600x shows
    command = [sys.executable, "-m", "svcnb", "sandbox", "--time-scale", "172800", "--vms", "40"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        try:
            first = proc.stdout.readline()
            assert first.startswith("http://127.0.0.1:"), first
            time.sleep(5)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    log = err_path.read_text()
    assert "vm.renewed:" in log, log[-2000:]
    assert "vm.suspended:" in log
    assert "svc_" not in log  # no token in the log
