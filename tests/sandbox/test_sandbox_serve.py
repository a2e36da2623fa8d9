"""serve(), the connection file, the CLI, and the same app mounted in-process."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import threading

import httpx

from svcnb.cli import build_parser
from svcnb.cli import sandbox as sandbox_cli
from svcnb.sandbox import SandboxConfig, create_app


def test_serve_writes_a_private_connection_file(make_sandbox, tmp_path):
    path = tmp_path / "conn" / "sandbox.json"
    sb = make_sandbox(vms=2, connection_file=str(path))
    info = json.loads(path.read_text())
    assert info == {
        "base_url": sb.base_url,
        "api_root": sb.base_url + "/api/public/v1",
        "control_url": sb.base_url + "/_sandbox",
        "tokens": sb.tokens,
        "instance": sb.control.instance(),
        # the sandbox knows its dialect: its client reads with these, no other client does
        "pins": sb.pins,
    }
    assert {
        "money.scale": "major",
        "units.ram": "MiB",
        "units.disk": "GiB",
    }.items() <= sb.pins.items()
    assert sb.pins["paging.no_continuation_is_end"] == "true"
    assert sb.pins["vocabulary.vm_status.suspended"] == "suspended"
    assert set(info["tokens"]) >= {"admin", "read"}
    assert all(t.startswith("svc_") for t in info["tokens"].values())
    assert os.stat(path).st_mode & 0o077 == 0
    assert sb.base_url.startswith("http://127.0.0.1:")


def test_cli_serves_until_stopped_and_prints_no_token(tmp_path, capsys):
    path = tmp_path / "c.json"
    args = build_parser("sandbox").parse_args(
        [
            "sandbox",
            "--vms",
            "3",
            "--seed",
            "5",
            "--time-scale",
            "0",
            "--rate-limit",
            "50",
            "--connection-file",
            str(path),
            "--ca-bundle",
            str(tmp_path / "ca.pem"),
        ]
    )
    stop = threading.Event()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(sandbox_cli.run(args, stop=stop)))
    thread.start()
    try:
        for _ in range(500):
            if path.exists() and path.stat().st_size:
                break
            threading.Event().wait(0.01)
        info = json.loads(path.read_text())
        response = httpx.get(
            info["api_root"] + "/vms", headers={"x-api-key": info["tokens"]["read"]}
        )
        assert response.json()["meta"]["total"] == 3
        assert response.headers["x-ratelimit-limit"] == "50"
    finally:
        stop.set()
        thread.join(10)
    assert result == [0]
    out = capsys.readouterr().out
    assert info["base_url"] in out
    assert not any(token in out for token in info["tokens"].values())


def test_cli_reports_bad_settings_without_a_traceback(capsys):
    args = argparse.Namespace(
        host="127.0.0.1",
        port=0,
        connection_file=None,
        vms=-1,
        seed=1,
        latency_ms=0.0,
        rate_limit=600,
        ip_rate_limit=100,
        rate_window=60.0,
        time_scale=1.0,
        ca_bundle=None,
    )
    assert sandbox_cli.serve_until_stopped(args) == 2
    assert "vms" in capsys.readouterr().err


def test_same_app_mounts_in_process():
    app = create_app(SandboxConfig(vms=5, seed=9))
    token = app.state.sandbox.default_secrets["read"]

    async def talk() -> tuple[dict, dict]:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as http:
            vms = await http.get("/api/public/v1/vms", headers={"x-api-key": token})
            clock = await http.get("/_sandbox/clock")
            return vms.json(), clock.json()

    vms, clock = asyncio.run(talk())
    assert vms["meta"]["total"] == 5
    assert clock["data"]["now"] == "2026-11-01T00:00:00Z"


def test_config_rejects_nonsense():
    for bad in ({"vms": -1}, {"time_scale": -1}, {"rate_limit": 0}, {"rate_window_seconds": 0}):
        try:
            SandboxConfig(**bad)
        except ValueError as exc:
            assert next(iter(bad)) in str(exc)
        else:
            raise AssertionError(f"{bad} was accepted")


def test_an_unexpected_error_is_a_500_envelope_and_the_server_keeps_serving(caplog):
    app = create_app(SandboxConfig(vms=2, seed=9))
    token = app.state.sandbox.default_secrets["admin"]
    del app.state.sandbox.backends.wallet.record[
        "_balance"
    ]  # a broken record stands in for a sandbox bug

    async def talk() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as http:
            broken = await http.get("/api/public/v1/wallet", headers={"x-api-key": token})
            fine = await http.get("/api/public/v1/vms", headers={"x-api-key": token})
            return broken, fine

    broken, fine = asyncio.run(talk())
    assert broken.status_code == 500
    assert broken.json() == {
        "success": False,
        "error": "internal server error in the sandbox while handling GET /wallet",
    }
    assert "x-ratelimit-limit" in broken.headers
    assert fine.status_code == 200
    assert token not in caplog.text


def test_the_app_answers_lifespan_and_stops_its_ticker():
    app = create_app(SandboxConfig(vms=1, time_scale=1.0))
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[dict] = []

    async def receive() -> dict:
        return messages.pop(0)

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send))
    assert [m["type"] for m in sent] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]
    assert app.state.ticker is not None and not app.state.ticker._thread.is_alive()


def test_a_stop_lets_an_answer_being_sent_finish_then_frees_the_port():
    from svcnb.sandbox import serve

    answers: list[httpx.Response] = []
    with serve(vms=3, seed=1, latency_ms=400) as sb:
        token, root = sb.tokens["read"], sb.api_root

        def ask() -> None:
            answers.append(httpx.get(root + "/vms", headers={"x-api-key": token}, timeout=10))

        asking = threading.Thread(target=ask)
        asking.start()
        # stopped once the request is counted (it is then waiting out its latency in the app)
        while not sb.state.rate_buckets:
            threading.Event().wait(0.005)
    asking.join(timeout=10)
    assert [a.status_code for a in answers] == [200]
    assert len(answers[0].json()["data"]) == 3
    # the stopped sandbox answers nothing more, and no connection is left to it
    try:
        httpx.get(root + "/vms", headers={"x-api-key": token}, timeout=2)
    except httpx.ConnectError:
        pass
    else:
        raise AssertionError("the stopped sandbox still answers")
