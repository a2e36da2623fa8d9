"""Envelopes and headers on every response; bad input of any kind gets a clear failure and
changes nothing."""

from __future__ import annotations

from email.utils import parsedate_to_datetime

import httpx
import pytest
from sandbox_support import account_view, failure

RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


def _check_headers(response: httpx.Response, sandbox) -> None:
    for name in RATE_HEADERS:
        assert response.headers[name].isdigit(), (name, response.headers)
    assert parsedate_to_datetime(response.headers["date"]) == sandbox.control.now()
    assert "server" not in response.headers
    body = response.json()
    assert body["success"] in (True, False)
    assert set(body) in ({"success", "data"}, {"success", "data", "meta"}, {"success", "error"})


def test_headers_and_envelope_on_every_kind_of_answer(api, sandbox):
    vm = next(v for v in api.data("/vms", params={"perPage": 100}) if v["status"] == "running")
    fw = api.data("/firewalls")[0]
    rule = api.data(f"/firewalls/{fw['id']}/rules")[0]
    rule_path = f"/firewalls/{fw['id']}/rules/{rule['id']}"
    answers = {
        200: api.get("/vms"),
        201: api.post("/webhooks", json={"url": "https://a.example/h", "events": ["vm.created"]}),
        202: api.post(f"/vms/{vm['id']}/stop"),
        400: api.patch(rule_path, content=b"{not json"),
        401: api.get("/vms", token=None),
        403: api.get("/wallet", token="none"),
        404: api.get("/vms/vm_nope"),
        405: api.request("PUT", "/vms"),
        409: api.post(f"/vms/{vm['id']}/stop"),
        413: api.patch(rule_path, content=b"{" + b" " * 70_000 + b"}"),
        422: api.patch(rule_path, json={"position": 1001}),
    }
    sandbox.control.set_faults(errorRate=1.0, errorRoutes=["GET /wallet"])
    answers[500] = api.get("/wallet")
    sandbox.control.set_faults(upstreamSyncFail=True)
    answers[502] = api.patch(rule_path, json={"description": "sync me"})
    sandbox.control.set_faults()
    sandbox.control.settings(defaultRateLimit=1)
    api.get("/vms")
    answers[429] = api.get("/vms")
    for status, response in answers.items():
        assert response.status_code == status, (status, response.text)
        _check_headers(response, sandbox)
        assert (response.json()["success"] is True) == (status < 400)


def test_date_header_follows_the_sandbox_clock(api, sandbox):
    sandbox.control.advance(3 * 86400 + 5)
    date = parsedate_to_datetime(api.get("/wallet").headers["date"])
    assert date.isoformat() == "2026-11-04T00:00:05+00:00"


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/nope",
        "/api/public/v2/vms",
        "/api/public/v1",
        "/api/public/v1/vms/x/y/z",
        "/favicon.ico",
    ],
)
def test_unknown_routes_get_a_404_envelope(api, path):
    response = api.http.get(path, headers={"x-api-key": api.sandbox.tokens["admin"]})
    failure(response, 404)
    assert all(name in response.headers for name in RATE_HEADERS)


@pytest.mark.parametrize("method", ["PUT", "DELETE", "OPTIONS", "HEAD", "TRACE"])
def test_wrong_method_gets_405_with_allow(api, method):
    response = api.request(method, "/wallet")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"
    if method != "HEAD":
        failure(response, 405)


def test_control_unknown_route_and_method_use_envelopes(api):
    failure(api.http.get("/_sandbox/nope"), 404)
    failure(api.http.delete("/_sandbox/clock"), 405)
    failure(api.http.post("/_sandbox/clock/advance", content=b"[1"), 400)


def _rule_path(api) -> str:
    fw_id = api.data("/firewalls")[0]["id"]
    rule_id = api.data(f"/firewalls/{fw_id}/rules")[0]["id"]
    return f"/firewalls/{fw_id}/rules/{rule_id}"


BAD_BODIES = [
    (b"{not json", 400, "malformed JSON"),
    (b"", 400, "required"),
    (b"[1, 2]", 400, "JSON object"),
    (b'"text"', 400, "JSON object"),
    (b"\xff\xfe", 400, "malformed"),
    (b'{"position": "10"}', 422, "position"),
    (b'{"position": 10.5}', 422, "position"),
    (b'{"position": true}', 422, "position"),
    (b'{"position": null}', 422, "position"),
    (b'{"port": 22}', 422, "port"),
    (b'{"sourceIps": "0.0.0.0/0"}', 422, "sourceIps"),
    (b'{"sourceIps": [1]}', 422, "sourceIps[0]"),
    (b'{"destIps": {"a": 1}}', 422, "destIps"),
    (b'{"description": ["x"]}', 422, "description"),
    (b'{"direction": "OUT"}', 422, "direction"),
    (b'{"protocol": "TCP"}', 422, "protocol"),
    (b'{"colour": "red"}', 422, "colour"),
    (b"{}", 422, "at least one"),
    # infinity once parsed: a number that could not be served back is refused before any rule
    (b'{"position": 1e400}', 400, "1e400 is out of range"),
]


@pytest.mark.parametrize(("body", "status", "names"), BAD_BODIES)
def test_bad_rule_bodies_get_a_clear_failure_and_change_nothing(api, body, status, names):
    path = _rule_path(api)
    before = account_view(api)
    error = failure(
        api.patch(path, content=body, headers={"content-type": "application/json"}), status
    )
    assert names in error
    assert account_view(api) == before


def test_huge_bodies_are_refused_with_413_and_change_nothing(api):
    before = account_view(api)
    huge = {"url": "https://a.example/" + "x" * 70_000, "events": ["vm.created"]}
    assert "65536" in failure(api.post("/webhooks", json=huge), 413)
    # a body streamed without a declared length is cut off as well
    chunks = (b"x" * 8192 for _ in range(20))
    failure(api.post("/webhooks", content=chunks), 413)
    assert account_view(api) == before


@pytest.mark.parametrize(
    "odd_id",
    [
        "..",
        "%2e%2e",
        "vm%2Fx",
        "' OR 1=1 --",
        "\u00e9\u00e8",
        "x" * 5000,
        "%00",
        "vm_eca2d91cff2db54d ",
        "null",
    ],
)
def test_odd_path_ids_get_404_envelopes(api, odd_id):
    response = api.get(f"/vms/{odd_id}")
    assert response.status_code in (404, 405), response.text
    body = response.json()
    assert body["success"] is False and len(body["error"]) < 300


def test_unknown_and_repeated_query_parameters_are_refused(api):
    assert "sort" in failure(api.get("/vms", params={"sort": "name"}), 422)
    assert "page" in failure(api.get("/vms?page=1&page=2"), 422)
    assert "verbose" in failure(api.get("/wallet", params={"verbose": "1"}), 422)


def test_stop_refuses_a_body(api):
    vm = next(v for v in api.data("/vms", params={"perPage": 100}) if v["status"] == "running")
    assert "no request body" in failure(
        api.post(f"/vms/{vm['id']}/stop", json={"force": True}), 422
    )
    assert api.data(f"/vms/{vm['id']}")["status"] == "running"
    assert api.post(f"/vms/{vm['id']}/stop", json={}).status_code == 202
