"""The OpenAPI 3.1 document, and a schemathesis run against it: no server errors, and every
response conforms to the document (status, content type, headers, body schema)."""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from _fuzz import fuzz
from _loopback import loopback_client
from hypothesis import HealthCheck, given
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from svcnb.sandbox import ROUTES


def test_document_is_openapi_3_1_version_1_0_0_with_every_route(sandbox):
    doc = httpx.get(sandbox.base_url + "/openapi.json").json()
    assert doc["openapi"].startswith("3.1") and doc["info"]["version"] == "1.0.0"
    served = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert served == {(r.method, "/api/public/v1" + r.template) for r in ROUTES}
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            codes = set(op["responses"])
            assert {"401", "404", "405", "429", "500"} <= codes, (method, path)
            failure_refs = [r for c, r in op["responses"].items() if int(c) >= 400]
            assert all(
                r["content"]["application/json"]["schema"]["$ref"].endswith("/Failure")
                for r in failure_refs
            )
            assert "Retry-After" in op["responses"]["429"]["headers"]
    rule_patch = doc["paths"]["/api/public/v1/firewalls/{id}/rules/{ruleId}"]["patch"]
    assert "502" in rule_patch["responses"]
    vm_schema = doc["components"]["schemas"]["VM"]
    assert vm_schema["additionalProperties"] is False and len(vm_schema["required"]) == 24


def _real_ids(sandbox) -> dict[str, str]:
    """Ids of the seeded account, so generated bodies reach the handlers instead of a 404."""
    headers = {"x-api-key": sandbox.tokens["admin"]}
    with loopback_client(sandbox.api_root, headers=headers) as http:
        fw = http.get("/firewalls").json()["data"][0]
        rule = http.get(f"/firewalls/{fw['id']}/rules").json()["data"][0]
        net = http.get("/networks").json()["data"][0]
        att = http.get(f"/networks/{net['id']}/attachments").json()["data"][0]
        vm = http.get("/vms").json()["data"][0]
        webhook = http.get("/webhooks").json()["data"][0]
    return {
        "/vms": vm["id"],
        "/firewalls": fw["id"],
        "ruleId": rule["id"],
        "/networks": net["id"],
        "vmId": att["vmId"],
        "/webhooks": webhook["id"],
    }


def _path_parameters(route, ids: dict[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in route.regex.groupindex:
        if name == "id":
            found[name] = ids["/" + route.template.split("/")[1]]
        else:
            found[name] = ids[name]
    return found


_CASES = [
    (route, ids)
    for route in ROUTES
    for ids in ("random ids", "seeded ids")
    if ids == "random ids" or route.regex.groupindex
]


@pytest.mark.parametrize("mode", list(GenerationMode), ids=lambda m: m.value)
@pytest.mark.parametrize(("route", "ids"), _CASES, ids=[f"{r.name} {i}" for r, i in _CASES])
def test_every_operation_conforms_and_never_fails_on_the_server(sandbox, route, ids, mode):
    # driven through hypothesis directly: schemathesis' pytest plugin does not run on pytest 9
    sandbox.control.settings(defaultRateLimit=1_000_000)
    api_schema = schemathesis.openapi.from_url(sandbox.base_url + "/openapi.json")
    operation = api_schema["/api/public/v1" + route.template][route.method]
    fixed = _path_parameters(route, _real_ids(sandbox)) if ids == "seeded ids" else None
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
    ]

    @given(case=operation.as_strategy(generation_mode=mode, path_parameters=fixed))
    @fuzz(15, *HealthCheck, database=None)
    def run(case) -> None:
        case.call_and_validate(
            base_url=sandbox.base_url, headers={"x-api-key": sandbox.tokens["admin"]}, checks=checks
        )

    run()
