"""`svcnb lab` on your own data: `--store`, `--account` or a service in the environment open
the notebooks on the user's store with no sandbox, and say so; the kernels' `svcnb.connect()`
and `Store()` then read that account, and never fall back to a sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import svcnb
from svcnb.cli import lab as lab_cli
from svcnb.cli import main
from svcnb.config import ConfigError, write_section
from svcnb.store import Store

pytest.importorskip("jupyterlab")


class _Started:
    """What `svcnb lab` started instead of JupyterLab: its command and environment."""

    def __init__(self) -> None:
        self.runs: list[tuple[list[str], dict[str, str]]] = []

    def popen(self, argv: list[str], env: dict[str, str], **_: Any) -> Any:
        self.runs.append((argv, env))
        return type("Lab", (), {"wait": lambda self, timeout=None: 0})()


@pytest.fixture
def started(monkeypatch, tmp_path) -> _Started:
    seen = _Started()
    monkeypatch.setattr(lab_cli.subprocess, "Popen", seen.popen)

    def no_sandbox(*a: Any, **k: Any) -> Any:
        raise AssertionError("svcnb lab started a sandbox on the user's data")

    monkeypatch.setattr(lab_cli, "SandboxProcess", no_sandbox)
    monkeypatch.chdir(tmp_path)
    return seen


def test_lab_on_a_store_starts_no_sandbox_and_says_so(started, tmp_path, capsys):
    assert main(["lab", "--store", "history", "--no-browser"]) == 0
    out = capsys.readouterr().out
    store = str((tmp_path / "history").resolve())
    assert f"svcnb lab: your data, no sandbox: the store {store}" in out
    [(argv, env)] = started.runs
    assert env["SVCNB_STORE"] == store and env["SVCNB_NO_SANDBOX"] == "1"
    assert "SVCNB_SANDBOX" not in env and "jupyter" in argv


def test_lab_on_an_account_hands_the_kernels_that_account(started, monkeypatch, capsys):
    monkeypatch.setenv("SVC_BASE_URL", "https://api.example.com")  # a loose pair: not used
    write_section("accounts.prod", {"base_url": "https://api.example.com", "token_env": "T_P"})
    assert main(["lab", "--account", "prod", "--no-browser"]) == 0
    out = capsys.readouterr().out
    assert "your data, no sandbox" in out and "account prod of" in out
    [(_, env)] = started.runs
    assert env["SVCNB_ACCOUNT"] == "prod" and "SVC_BASE_URL" not in env
    assert env["SVCNB_STORE"].endswith(str(Path("data") / "store"))
    # an account the config file does not name: a mistake, said, nothing started
    assert main(["lab", "--account", "nope", "--no-browser"]) == 2
    assert "names no account 'nope'" in capsys.readouterr().err


def test_lab_with_a_service_exported_opens_on_it_unless_a_sandbox_is_asked(
    started, monkeypatch, capsys
):
    monkeypatch.setenv("SVC_BASE_URL", "https://api.example.com")
    monkeypatch.setenv("SVC_API_KEY", "svc_" + "k" * 24)
    assert main(["lab", "--no-browser"]) == 0
    assert "the service SVC_BASE_URL names" in capsys.readouterr().out
    [(_, env)] = started.runs
    assert env["SVC_BASE_URL"] == "https://api.example.com" and "SVCNB_SANDBOX" not in env


def test_the_kernels_read_the_session_account(sandbox, make_sandbox, tmp_path, monkeypatch):
    other = make_sandbox(vms=5, seed=3)
    monkeypatch.setenv("T_PROD", sandbox.tokens["read"])
    monkeypatch.setenv("T_LAB", other.tokens["read"])
    write_section("accounts.prod", {"base_url": sandbox.base_url, "token_env": "T_PROD"})
    write_section("accounts.lab", {"base_url": other.base_url, "token_env": "T_LAB"})
    store = Store(tmp_path / "store")
    for name in ("prod", "lab"):
        with svcnb.connect(account=name, progress=False) as client:
            store.for_account(name).take(client)
    # the environment `svcnb lab --store ... --account lab` gives its kernels
    monkeypatch.setenv("SVCNB_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("SVCNB_ACCOUNT", "lab")
    monkeypatch.setenv("SVCNB_NO_SANDBOX", "1")
    assert Store().account == "lab" and len(Store().load("vms")) == 5
    with svcnb.connect(progress=False) as client:
        assert client.base_url.startswith(other.base_url)
    # no account named: no sandbox in its place, but a line saying what to name
    monkeypatch.delenv("SVCNB_ACCOUNT")
    with pytest.raises(ConfigError, match="no sandbox is started in its place"):
        svcnb.connect(progress=False)
