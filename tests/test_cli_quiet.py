"""`svcnb snapshot` from cron: `--quiet` keeps what changed and every gap, and a gap the config
file accepts (`accept_gaps`, for every account or one) exits 0 as `--accept-gap` does."""

from __future__ import annotations

from svcnb.cli import main
from svcnb.config import write_section

READ_NO_BILLING = ["vms:read", "firewalls:read", "networks:read", "webhooks:read"]


def _no_wallet(sandbox, monkeypatch) -> None:
    token = sandbox.control.create_token(name="no-billing", scopes=READ_NO_BILLING)["secret"]
    monkeypatch.setenv("SVC_API_KEY", token)
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)


def test_quiet_prints_only_what_changed(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["read"])
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    argv = ["snapshot", "--store", str(tmp_path / "store"), "--quiet"]
    assert main(argv) == 0
    first = capsys.readouterr()
    assert first.out == ""  # the first snapshot: nothing to compare with, nothing to say
    assert main(argv) == 0
    assert capsys.readouterr().out == ""  # nothing changed: cron mails nothing
    sandbox.control.advance(3 * 86400)
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("changed since 2026110"), out
    assert "vms " in out[0] and "changed (" in out[0] and "bandwidth_used_bytes" in out[0]


def test_a_gap_the_config_file_accepts_exits_0_and_is_said(sandbox, tmp_path, monkeypatch, capsys):
    _no_wallet(sandbox, monkeypatch)
    argv = ["snapshot", "--store", str(tmp_path / "store"), "--quiet"]
    assert main(argv) == 3
    capsys.readouterr()
    write_section("snapshot", {"accept_gaps": ["wallet"]})
    assert main(argv) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if "wallet" in line]
    assert (
        len(lines) == 1
        and "accepted gap (accept_gaps, config file): wallet: not read" in (lines[0])
    )
    # another resource's gap is not accepted by it
    write_section("snapshot", {"accept_gaps": ["deliveries"]})
    assert main(argv) == 3
    capsys.readouterr()
    # a name that is no resource: a mistake in the config file, said before anything is pulled
    write_section("snapshot", {"accept_gaps": ["walet"]})
    assert main(argv) == 2
    assert "walet is no resource" in capsys.readouterr().err


def test_an_account_accepts_its_own_gap_only(sandbox, make_sandbox, tmp_path, monkeypatch, capsys):
    other = make_sandbox(vms=5, seed=3)
    token = sandbox.control.create_token(name="no-billing", scopes=READ_NO_BILLING)["secret"]
    other_token = other.control.create_token(name="no-billing", scopes=READ_NO_BILLING)["secret"]
    monkeypatch.setenv("SVC_TOKEN_PROD", token)
    monkeypatch.setenv("SVC_TOKEN_LAB", other_token)
    write_section("units", {"disk": "GiB"})
    write_section("accounts.prod", {"base_url": sandbox.base_url, "token_env": "SVC_TOKEN_PROD"})
    write_section(
        "accounts.lab",
        {"base_url": other.base_url, "token_env": "SVC_TOKEN_LAB", "accept_gaps": ["wallet"]},
    )
    assert main(["snapshot", "--all", "--store", str(tmp_path / "store"), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert "lab: accepted gap (accept_gaps, config file): wallet: not read" in err
    assert "prod: incomplete, 1 resource(s) could not be read" in err
