"""``svcnb doctor`` against services that answered the open points differently."""

from __future__ import annotations

import pytest

from svcnb import cli, vocab
from svcnb.config import read_config
from svcnb.sandbox import Sandbox


def doctor(sandbox: Sandbox, monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["admin"])
    code = cli.main(["doctor", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_default_dialect(sandbox, monkeypatch, capsys):
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 0
    assert "/api/public/v1" in out
    assert "meta: page/perPage" in out
    assert "default page 20" in out
    assert "rejected with 422" in out
    assert "running→running" in out and "overdue→owing" in out
    assert "statusCode→statusCode" in out
    assert "limit 600" in out
    assert "GET /wallet ok" in out
    assert sandbox.tokens["admin"] not in out


def test_acme_dialect_and_read_only(sandbox, monkeypatch, capsys):
    sandbox.control.reset(seed=7, vms=57, dialect="acme")
    before = sandbox.control.truth()
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert sandbox.control.truth() == before  # doctor changed nothing in the account
    assert code == 0
    assert "items: data.items" in out
    assert "clamps silently" in out
    assert "active→running" in out and "unpaid→owing" in out
    assert "minor units" in out
    assert "fractional seconds" in out
    assert "responseStatus→statusCode" in out and "attemptCount→attempts" in out
    assert "without updatedAt" in out
    assert "GET /firewalls/{id}/rules ok" in out and "GET /networks/{id}/attachments ok" in out


def test_linkhdr_dialect(sandbox, monkeypatch, capsys):
    sandbox.control.reset(seed=7, vms=57, dialect="linkhdr")
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 0
    assert "link: Link rel=next header + X-Total-Count" in out
    assert "/api/v1/api/public/v1" in out
    assert "status_code→statusCode" in out and "delivered→success" in out
    assert "offset +02:00" in out
    assert "57 VMs" in out


def exotic_dialect(sandbox: Sandbox) -> tuple[str, str]:
    """A random dialect whose VM words include one no vocabulary knows, and that word."""
    for seed in range(200):
        sandbox.control.reset(seed=7, vms=40, dialect=f"random:{seed}")
        words = sandbox.control.dialect()["choices"]["vm_words"]
        present = {vm["status"] for vm in sandbox.control.truth()["vms"]}
        strange = [
            word
            for state, word in words.items()
            if state in present
            and vocab.Vocabulary().classify("vm_status", word, warn=False) == vocab.UNKNOWN
        ]
        if strange:
            return f"random:{seed}", strange[0]
    pytest.fail("no random dialect among 200 drew an exotic VM word")


def test_unknown_words_exit_3_and_map_writes_the_config(sandbox, monkeypatch, capsys):
    _, word = exotic_dialect(sandbox)
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 3
    assert f"{word}→UNKNOWN" in out
    code, out, _ = doctor(
        sandbox, monkeypatch, capsys, "--map", f"{word}=running", "--write-config"
    )
    assert code == 0
    assert read_config()["vocabulary"]["vm_status"][word] == "running"
    assert vocab.reload().classify("vm_status", word) == "running"


def test_no_server_configured_is_an_error_not_a_sandbox(monkeypatch, capsys):
    assert cli.main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert "no server configured" in err and "SVC_BASE_URL" in err
    monkeypatch.setenv("SVC_API_KEY", "svc_abcdefgh12345678")
    assert cli.main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert "SVC_BASE_URL is not" in err and "svc_abcdefgh12345678" not in err


def test_a_bad_map_is_refused(sandbox, monkeypatch, capsys):
    code, _, err = doctor(sandbox, monkeypatch, capsys, "--map", "live=alive")
    assert code == 2
    assert "WORD=CLASS" in err
