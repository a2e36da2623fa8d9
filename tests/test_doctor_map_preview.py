"""`svcnb doctor` maps words by evidence, not by guess: each unknown status word shows what the
VMs carrying it also say (renewal dates against the server's time, prices), and `--map
WORD=CLASS` shows what the mapping changes in the billing figures before anything is written."""

from __future__ import annotations

import re

from svcnb.cli import main
from svcnb.config import config_path, read_config


def _doctor(sandbox, monkeypatch, capsys, *args: str) -> tuple[int, str]:
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["read"])
    code = main(["doctor", *args])
    return code, capsys.readouterr().out


def test_an_unknown_word_shows_the_renewal_dates_of_its_vms(make_sandbox, monkeypatch, capsys):
    service = make_sandbox(vms=40, seed=7, dialect="random:15")  # says 'live' for running
    code, out = _doctor(service, monkeypatch, capsys)
    assert code == 3
    line = next(x for x in out.splitlines() if "VM status" in x)
    evidence = re.search(r"live→UNKNOWN ×(\d+) \[([^\]]*)\]", line)
    assert evidence, line
    assert f"renewal date: ahead ×{evidence.group(1)}" in evidence.group(2)
    assert "a price stated ×" in evidence.group(2)


def test_map_shows_what_it_changes_in_the_figures_and_writes_nothing(
    make_sandbox, monkeypatch, capsys
):
    service = make_sandbox(vms=40, seed=7, dialect="random:15")
    code, out = _doctor(service, monkeypatch, capsys, "--map", "live=running")
    assert code == 3  # the disk unit is still not pinned
    assert "what --map live=running changes in the figures of the 40 VMs read, now:" in out
    left = re.search(r"VMs left out \(status word unknown\)\s+(\d+) -> 0", out)
    assert left and int(left.group(1)) > 0, out
    due = re.search(r"renewals due in 30 days\s+(\d+) \(.*\) -> (\d+) \(", out)
    assert due and int(due.group(2)) > int(due.group(1)), out
    assert re.search(r"monthly run rate\s+[\d,.]+ EUR -> [\d,.]+ EUR", out), out
    assert "nothing written: add --write-config to keep this mapping" in out
    assert "vocabulary" not in read_config(config_path())


def test_nothing_to_map_on_an_account_without_vms(make_sandbox, monkeypatch, capsys):
    service = make_sandbox(vms=0, seed=7, dialect="random:15")
    code, out = _doctor(service, monkeypatch, capsys, "--map", "live=running")
    assert re.search(r"^  VM status\s+none seen$", out, re.M), out
    assert "--map: no VM was read, so no figure changes yet" in out
    assert code == 0
