"""The command line from cron: warnings one line each (the same one once, with its count, never
a Python file or source line), exit codes in `svcnb --help`, and a known gap accepted
(`--accept-gap`) still said but exiting 0."""

from __future__ import annotations

import warnings

import pytest

from svcnb.cli import main, one_line_errors
from svcnb.store import Store


def test_warnings_are_one_line_each_the_same_once_with_its_count(capsys):
    said = "wallet balance: currency not stated; pin it with `svcnb doctor`"

    def work() -> int:
        # the same warning from three places, and another one spread over lines
        warnings.warn(said, stacklevel=1)
        warnings.warn(said, stacklevel=1)
        warnings.warn(said, stacklevel=1)
        warnings.warn("units of ram\n   assumed MiB; pin [units] ram", UserWarning, stacklevel=1)
        return 0

    assert one_line_errors("snapshot", work) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "svcnb snapshot: warning (3 times): wallet balance: currency not stated; pin it with "
        "`svcnb doctor`",
        "svcnb snapshot: warning: units of ram assumed MiB; pin [units] ram",
    ]
    assert ".py" not in err and "warnings.warn" not in err


def test_svcnb_help_lists_the_exit_codes(capsys):
    with pytest.raises(SystemExit):  # argparse ends --help itself
        main(["--help"])
    out = capsys.readouterr().out
    assert "exit codes: 0 done; 1 failed" in out
    assert "3 done with a gap" in out and "--accept-gap" in out and "130 interrupted" in out


def test_an_accepted_gap_is_said_in_one_line_and_exits_0(sandbox, tmp_path, monkeypatch, capsys):
    scopes = ["vms:read", "firewalls:read", "networks:read", "webhooks:read"]
    token = sandbox.control.create_token(name="no-billing", scopes=scopes)["secret"]
    monkeypatch.setenv("SVC_API_KEY", token)
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    path = tmp_path / "store"
    argv = ["snapshot", "--store", str(path), "--quiet"]
    # unaccepted: exit 3, the wallet named
    assert main(argv) == 3
    capsys.readouterr()
    # accepted: said in one line, exit 0, the snapshot stored
    assert main([*argv, "--accept-gap", "wallet"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "wallet" in line]
    assert len(lines) == 1 and "accepted gap" in lines[0] and "not read" in lines[0]
    assert len(Store(path).snapshots()) == 2
    # another gap still counts: accepting deliveries does not accept the wallet
    assert main([*argv, "--accept-gap", "deliveries"]) == 3
    capsys.readouterr()
    # a name that is no resource is refused before anything is pulled
    with pytest.raises(SystemExit):
        main([*argv, "--accept-gap", "walet"])
    assert "walet is no resource" in capsys.readouterr().err
    assert len(Store(path).snapshots()) == 3
