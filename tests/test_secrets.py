"""Secrets where a hostile user or a careless setting would put them: a ``token_env`` naming
some other variable, credentials or a token in a base URL, a token given as bytes to the audit
log, a config file or a budget file reached through a symbolic link. Each is refused (or
masked) with one line that says what to do, and the secret is never sent, printed or stored."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
import traceback
import uuid
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from _leaks import files_under, leaks

import svcnb
from svcnb import cli, configured_client
from svcnb.client import ENV_BUDGET, SharedBudget, budget_key
from svcnb.config import ConfigError, read_config, write_section
from svcnb.errors import SvcnbError
from svcnb.store import Store, StoreError


def _accounts(path: Path, monkeypatch, **accounts: tuple[str, str]) -> Path:
    lines = []
    for name, (url, env) in accounts.items():
        lines += [f"[accounts.{name}]", f'base_url = "{url}"', f'token_env = "{env}"', ""]
    path.write_text("\n".join(lines))
    monkeypatch.setenv("SVCNB_CONFIG", str(path))
    return path


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _traceback_with_locals(exc: BaseException) -> str:
    """What a verbose traceback (every frame's locals) would print of ``exc``, from svcnb's
    frames on (the test's own frame holds the secret it planted)."""
    tb = exc.__traceback__.tb_next if exc.__traceback__ else None
    return "".join(traceback.TracebackException(type(exc), exc, tb, capture_locals=True).format())


# -- 1. token_env names a variable that holds no token ----------------------------------------

NOT_TOKENS = {
    "PATH": None,  # whatever this machine's PATH is
    "HOME": "/home/someone-who-is-not-a-token",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
    "SVC_TOKEN_SPACED": "svc_abcdefghijkl mnopqrstuvwx",
    "SVC_TOKEN_SHORT": "svc_abc",
    "SVC_TOKEN_HUGE": "svc_" + "A" * 5000,
}


@pytest.mark.parametrize("variable", list(NOT_TOKENS))
def test_token_env_naming_a_variable_without_a_token_is_refused_and_its_value_never_sent(
    sandbox, monkeypatch, tmp_path, capsys, variable
):
    if NOT_TOKENS[variable] is not None:
        monkeypatch.setenv(variable, NOT_TOKENS[variable])
    value = os.environ[variable]
    _accounts(tmp_path / "config.toml", monkeypatch, prod=(sandbox.base_url, variable))

    code = cli.main(["snapshot", "--account", "prod", "--store", str(tmp_path / "s"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 2
    line = _one_line(captured.err)
    assert variable in line and "token_env" in line
    assert value not in captured.out + captured.err
    assert sandbox.control.stats()["requests"] == 0  # nothing went to the service

    with pytest.raises(SvcnbError) as raised:
        configured_client("prod", progress=False)
    assert value not in _traceback_with_locals(raised.value)


def test_token_env_naming_a_variable_with_a_token_still_works(sandbox, monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_TOKEN_PROD", sandbox.tokens["read"])
    _accounts(tmp_path / "config.toml", monkeypatch, prod=(sandbox.base_url, "SVC_TOKEN_PROD"))
    with configured_client("prod", progress=False) as client:
        assert len(client.vms.list()) == 40


# -- 2. credentials or a token in a base URL --------------------------------------------------

PASSWORD = "hunter2-correct-horse"


def test_a_password_in_svc_base_url_is_refused_by_snapshot_and_doctor(
    sandbox, monkeypatch, tmp_path, capsys
):
    url = sandbox.base_url.replace("http://", f"http://ops:{PASSWORD}@")
    monkeypatch.setenv("SVC_BASE_URL", url)
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["admin"])
    store = tmp_path / "store"
    for argv in (["snapshot", "--store", str(store), "--quiet"], ["doctor"]):
        code = cli.main(argv)
        captured = capsys.readouterr()
        assert code == 2, argv
        assert PASSWORD not in captured.out + captured.err
        line = _one_line(captured.err)
        assert "SVC_BASE_URL" in line and "credentials" in line
    assert sandbox.control.stats()["requests"] == 0
    assert not leaks(files_under(store), [PASSWORD])


def _secret_urls(base: str, token: str) -> dict[str, str]:
    return {
        "token in the query": f"{base}/?api_key={token}",
        "token in the path": f"{base}/api/{token}/",
        "percent-encoded token in the path": base + "/api/" + token.replace("_", "%5F", 1),
        "key parameter": f"{base}/?key=0123456789abcdef",
        "user and password": base.replace("://", f"://ops:{PASSWORD}@", 1),
        "user only": base.replace("://", f"://{PASSWORD}@", 1),
    }


@pytest.mark.parametrize("kind", list(_secret_urls("http://h", "svc_x")))
def test_an_account_base_url_with_a_secret_is_refused_and_never_used(
    sandbox, monkeypatch, tmp_path, capsys, kind
):
    token = sandbox.tokens["admin"]
    url = _secret_urls(sandbox.base_url, token)[kind]
    monkeypatch.setenv("SVC_TOKEN_PROD", sandbox.tokens["read"])
    _accounts(tmp_path / "config.toml", monkeypatch, prod=(url, "SVC_TOKEN_PROD"))
    store = tmp_path / "store"

    code = cli.main(["snapshot", "--account", "prod", "--store", str(store), "--quiet"])
    captured = capsys.readouterr()
    assert code == 2
    line = _one_line(captured.err)
    assert "[accounts.prod]" in line and "base_url" in line
    secret = token if "token" in kind else PASSWORD if "user" in kind else "0123456789abcdef"
    assert secret not in captured.out + captured.err
    assert token[4:] not in captured.out + captured.err  # not even past the percent-encoding
    assert sandbox.control.stats()["requests"] == 0
    assert not leaks(files_under(store), [token, PASSWORD])


@pytest.mark.parametrize("kind", list(_secret_urls("http://h", "svc_x")))
def test_a_client_refuses_a_base_url_with_a_secret_from_an_argument_or_the_environment(
    monkeypatch, kind
):
    token = "svc_" + uuid.uuid4().hex
    url = _secret_urls("https://api.example.com", token)[kind]
    with pytest.raises(SvcnbError) as raised:
        svcnb.Client("svc_" + "k" * 30, url, progress=False)
    assert isinstance(raised.value, ValueError)  # what `except ValueError` code caught before
    text = _one_line(str(raised.value))
    assert "base_url" in text
    for secret in (token, token[4:], PASSWORD, "0123456789abcdef"):
        assert secret not in _traceback_with_locals(raised.value)

    monkeypatch.setenv("SVC_BASE_URL", url)
    for make in (lambda: svcnb.Client("svc_" + "k" * 30, progress=False), svcnb.connect):
        with pytest.raises(SvcnbError, match="SVC_BASE_URL") as raised:
            make()
        for secret in (token[4:], PASSWORD, "0123456789abcdef"):
            assert secret not in _traceback_with_locals(raised.value)


def test_a_store_refuses_to_record_a_server_with_credentials(tmp_path):
    from svcnb import frames

    store = Store(tmp_path / "store")
    empty = {name: frames.empty(name) for name in svcnb.store.RESOURCES}
    with pytest.raises(StoreError) as raised:
        store.write(empty, server_time="2026-01-01T00:00Z", server=f"https://u:{PASSWORD}@h")
    assert PASSWORD not in str(raised.value)
    assert not leaks(files_under(tmp_path), [PASSWORD])


# -- 3. a token given as bytes to the audit log -----------------------------------------------


def test_a_token_given_as_bytes_in_an_audit_record_is_masked_in_the_parquet(tmp_path):
    token = "svc_" + uuid.uuid4().hex + "Zq9w"
    raw = token.encode()
    store = Store(tmp_path / "store")
    written = store.journal.append(
        {
            "firewall_id": "fw-1",
            "rule_id": "r-1",
            "outcome": b"ok " + raw,
            "note": raw,
            "nested": {"deeper": [raw, {"tuple": (raw, bytearray(raw))}], raw: "as a key"},
            b"api_key": raw,
        }
    )
    assert token not in repr(written)
    files = files_under(tmp_path / "store")
    assert any(f.suffix == ".parquet" for f in files)
    for path in files:
        assert raw not in path.read_bytes(), path
        if path.suffix == ".parquet":
            assert token not in str(pq.read_table(path).to_pylist()), path
    assert not leaks(files, [token])
    log = store.journal.log()
    assert log["note"].tolist() == ["svc_…Zq9w"]  # the mask, as for a token given as text
    assert log["outcome"].tolist() == ["ok svc_…Zq9w"]
    assert "api_key" not in log.columns


# -- 4. svcnb doctor --write-config through a symlinked config --------------------------------


def test_doctor_write_config_writes_through_a_symlink_and_keeps_the_mode(
    sandbox, monkeypatch, tmp_path, capsys
):
    (tmp_path / "dotfiles").mkdir()
    target = tmp_path / "dotfiles" / "svcnb.toml"
    target.write_text('[vocabulary.billing_status]\nunpaid = "owing"\n')
    target.chmod(0o600)
    link = tmp_path / "config.toml"
    link.symlink_to(target)
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["admin"])

    assert cli.main(["doctor", "--write-config", "--config", str(link)]) == 0
    capsys.readouterr()
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    written = read_config(target)
    assert written["vocabulary"]["vm_status"]["running"] == "running"
    assert written["vocabulary"]["billing_status"]["unpaid"] == "owing"  # kept
    left = [p.name for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink()]
    assert left == ["svcnb.toml"]  # no temporary file left beside either


def test_config_writes_keep_the_files_mode_and_new_files_are_private(tmp_path):
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "new" / "config.toml"
        write_section("vocabulary.vm_status", {"live": "running"}, fresh)
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
        shared = tmp_path / "shared.toml"
        shared.write_text("")
        shared.chmod(0o640)
        write_section("vocabulary.vm_status", {"live": "running"}, shared)
        assert stat.S_IMODE(shared.stat().st_mode) == 0o640
        assert read_config(shared)["vocabulary"]["vm_status"] == {"live": "running"}
    finally:
        os.umask(old)


# -- 5. a budget path that is a symlink, or another program's database ------------------------


def _foreign_database(path: Path) -> bytes:
    """A small SQLite database of some other program (rollback journal, its own tables)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.execute("INSERT INTO moz_places (url) VALUES ('https://example.org/')")
    conn.commit()
    conn.close()
    return path.read_bytes()


def _untouched(path: Path, before: bytes) -> None:
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name)) == [
        path.name
    ]  # no -wal, -shm or -journal beside it
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert names == ["moz_places"]
    finally:
        conn.close()


def _new_client() -> svcnb.Client:
    # a server no other test used: the client gets a governor (and opens the budget) of its own
    return svcnb.Client("svc_" + "b" * 30, f"http://budget-{uuid.uuid4().hex}.test", progress=False)


@pytest.mark.parametrize("through_a_link", [True, False], ids=["symlink", "direct"])
def test_a_budget_path_to_another_programs_database_is_refused_untouched(
    monkeypatch, tmp_path, through_a_link
):
    (tmp_path / "app").mkdir()
    foreign = tmp_path / "app" / "places.sqlite"
    before = _foreign_database(foreign)
    path = foreign
    if through_a_link:
        path = tmp_path / "budget.sqlite"
        path.symlink_to(foreign)
    monkeypatch.setenv(ENV_BUDGET, str(path))

    with pytest.raises(ConfigError) as raised:
        _new_client()
    line = _one_line(str(raised.value))
    assert str(path) in line and ENV_BUDGET in line
    assert ("symbolic link" in line) == through_a_link
    _untouched(foreign, before)

    # a SharedBudget made on it anyway (as the Governor holds one) only warns, and writes nothing
    with pytest.warns(RuntimeWarning, match=str(path)):
        SharedBudget(path).view(budget_key("http://api.test", "d" * 64))
    _untouched(foreign, before)


def test_a_symlink_to_a_budget_file_of_svcnb_is_refused_too(monkeypatch, tmp_path):
    real = tmp_path / "real.sqlite"
    SharedBudget(real).view(budget_key("http://api.test", "d" * 64))
    link = tmp_path / "budget.sqlite"
    link.symlink_to(real)
    monkeypatch.setenv(ENV_BUDGET, str(link))
    with pytest.raises(ConfigError, match="symbolic link"):
        _new_client()
    monkeypatch.setenv(ENV_BUDGET, str(real))
    assert _new_client()._req.governor.shared is not None


def test_a_budget_file_svcnb_made_before_it_was_marked_is_still_used(monkeypatch, tmp_path):
    from svcnb.client._shared_budget import _SCHEMA

    path = tmp_path / "budget.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(_SCHEMA)
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    monkeypatch.setenv(ENV_BUDGET, str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "cannot use the shared rate budget"
        budget = _new_client()._req.governor.shared
        grant, _ = budget.acquire(within=1)
        assert grant is not None
        said = {"x-ratelimit-limit": "60", "x-ratelimit-remaining": "59", "x-ratelimit-reset": "30"}
        budget.release(grant, said, time.time())
        assert budget.view()[0].remaining == 59


def test_a_new_budget_file_is_private_to_its_user(monkeypatch, tmp_path):
    path = tmp_path / "cache" / "budget.sqlite"
    monkeypatch.setenv(ENV_BUDGET, str(path))
    _new_client()._req.governor.shared.view()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
