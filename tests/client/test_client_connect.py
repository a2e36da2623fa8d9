"""``svcnb.sandbox_control()``: the control of the sandbox ``connect()`` uses, or None on the real
service; notebooks decide "may I change things and move the clock" with it."""

from __future__ import annotations

import pytest

import svcnb
import svcnb._connect as connecting


def test_the_background_sandbox_is_controlled_and_its_clock_moves(monkeypatch, capsys, leak_scan):
    monkeypatch.setattr(connecting, "_sandbox", None)
    control = svcnb.sandbox_control()  # asked first: starts the sandbox connect() will use
    assert control is not None
    client = svcnb.connect(progress=False)
    leak_scan.add(client)
    leak_scan.tokens.update(connecting._sandbox.tokens.values())
    assert svcnb.sandbox_control(client) is control
    assert control.url == client.base_url.rstrip("/") + "/_sandbox"
    client.wallet.get()
    before = client.server_time
    control.advance(3600)
    client.wallet.get()
    assert (client.server_time - before).total_seconds() == 3600
    out = capsys.readouterr().out
    assert out.count("local sandbox") == 1 and "svc_" not in out
    leak_scan.add(repr(control))


def test_the_sandbox_of_a_connection_file_is_controlled(sandbox, monkeypatch, tmp_path, leak_scan):
    monkeypatch.setattr(connecting, "_sandbox", None)
    monkeypatch.setenv("SVCNB_SANDBOX", str(sandbox.write_connection_file(tmp_path / "sb.json")))
    client = svcnb.connect(progress=False)
    leak_scan.add(client)
    control = svcnb.sandbox_control(client)
    assert control is not None and control.url == sandbox.control_url
    assert svcnb.sandbox_control() is control  # one helper per sandbox, however often asked
    control.advance(90)
    assert sandbox.control.now().isoformat() == "2026-11-01T00:01:30+00:00"
    assert connecting._sandbox is None, "no background sandbox may start beside the named one"


def test_on_a_server_named_by_the_environment_there_is_nothing_to_control(
    sandbox, monkeypatch, leak_scan
):
    monkeypatch.setattr(connecting, "_sandbox", None)
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["read"])
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    leak_scan.tokens.add(sandbox.tokens["read"])
    client = svcnb.connect(progress=False)
    assert svcnb.sandbox_control() is None
    assert svcnb.sandbox_control(client) is None
    assert connecting._sandbox is None


def test_a_client_on_another_server_is_not_controlled(sandbox, monkeypatch, tmp_path):
    monkeypatch.setattr(connecting, "_sandbox", sandbox)  # a background sandbox is running
    other = svcnb.Client("svc_" + "z" * 32, "https://api.example.invalid", progress=False)
    assert svcnb.sandbox_control(other) is None
    monkeypatch.setenv("SVCNB_SANDBOX", str(sandbox.write_connection_file(tmp_path / "sb.json")))
    assert svcnb.sandbox_control(other) is None


def test_a_broken_connection_file_is_named(monkeypatch, tmp_path):
    (tmp_path / "broken.json").write_text('{"base_url": "http://127.0.0.1:1"}')
    monkeypatch.setenv("SVCNB_SANDBOX", str(tmp_path / "broken.json"))
    with pytest.raises(ValueError, match="SVCNB_SANDBOX=.*broken.json.*svcnb sandbox"):
        svcnb.sandbox_control()
