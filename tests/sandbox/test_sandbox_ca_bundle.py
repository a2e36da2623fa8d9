"""The ``caBundle`` control setting: a running sandbox is told which CA its webhook deliveries
trust, and the next delivery to an HTTPS receiver with a certificate from that CA succeeds.

trustme makes the CA and a certificate for 127.0.0.1; a minimal ASGI app answering 204 serves
it on a free loopback port.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
import trustme
from sandbox_support import failure

from svcnb.sandbox import wait_idle
from svcnb.webhooks import free_port, serve

RATE_SETTINGS = {"rateWindowSeconds": 60.0, "ipRateLimit": 100, "defaultRateLimit": 600}


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    paths = {name: folder / f"{name}.pem" for name in ("ca", "cert", "key")}
    ca.cert_pem.write_to_path(paths["ca"])
    cert.private_key_pem.write_to_path(paths["key"])
    for i, pem in enumerate(cert.cert_chain_pems):
        pem.write_to_path(paths["cert"], append=i > 0)
    return paths


async def _accept(scope, receive, send) -> None:
    """Read the request and answer 204: the receiver side is not under test here."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def _deliver_one(sandbox, api, hook_id: str) -> dict:
    """Emit an event the subscription wants and return the record of its first attempt."""
    event = sandbox.control.emit("vm.renewed", {"vmId": "vm-ca-test"})
    assert wait_idle(sandbox.state, 30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        records = api.data(f"/webhooks/{hook_id}/deliveries", params={"perPage": 100})
        mine = [r for r in records if r["eventId"] == event["id"] and r["attempts"] == 1]
        if mine:
            return mine[0]
        time.sleep(0.05)
    pytest.fail(f"no delivery record for event {event['id']} within 30 s")


def test_a_running_sandbox_trusts_a_ca_bundle_from_the_next_delivery_on(sandbox, api, tls):
    port = free_port()
    made = api.post(
        "/webhooks", json={"url": f"https://127.0.0.1:{port}/hook", "events": ["vm.renewed"]}
    )
    assert made.status_code == 201, made.text
    hook = made.json()["data"]
    with serve(_accept, certfile=tls["cert"], keyfile=tls["key"], port=port):
        untrusted = _deliver_one(sandbox, api, hook["id"])
        assert untrusted["success"] is False and untrusted["statusCode"] is None
        assert "not trusted" in untrusted["error"]

        settings = sandbox.control.trust_ca_bundle(tls["ca"])
        assert settings == {**RATE_SETTINGS, "caBundle": str(tls["ca"].resolve())}
        assert sandbox.control.settings() == settings

        trusted = _deliver_one(sandbox, api, hook["id"])
        assert trusted["success"] is True and trusted["statusCode"] == 204

        # null forgets the bundle: deliveries trust the system store alone again
        assert sandbox.control.trust_ca_bundle(None) == RATE_SETTINGS
        assert _deliver_one(sandbox, api, hook["id"])["success"] is False


def test_a_reset_returns_to_the_bundle_the_sandbox_started_with(sandbox, tls):
    sandbox.control.trust_ca_bundle(tls["ca"])
    sandbox.control.reset(seed=7, vms=40)
    assert sandbox.control.settings() == RATE_SETTINGS


def test_trusting_a_bundle_leaves_the_rate_limits_alone(sandbox, tls):
    sandbox.control.settings(defaultRateLimit=7)
    assert sandbox.control.trust_ca_bundle(tls["ca"])["defaultRateLimit"] == 7


def test_unusable_bundles_are_refused_naming_the_setting(sandbox, tls, tmp_path):
    not_pem = tmp_path / "notes.txt"
    not_pem.write_text("not a certificate\n")
    cases = [
        ({"caBundle": "ca.pem"}, "not an absolute path"),
        ({"caBundle": str(tmp_path / "missing.pem")}, "no file at"),
        ({"caBundle": str(not_pem)}, "holds no PEM certificate"),
        ({"caBundle": 5}, "must be the absolute path of a PEM file"),
        ({"caBundle": str(tmp_path)}, "cannot read"),
    ]
    for body, message in cases:
        answer = failure(httpx.put(sandbox.control_url + "/settings", json=body), 422)
        assert "caBundle" in answer and message in answer, (body, answer)
    assert sandbox.control.settings() == RATE_SETTINGS  # nothing was half-applied
