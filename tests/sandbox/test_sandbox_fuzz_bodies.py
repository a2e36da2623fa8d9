"""The body parser under arbitrary input: whatever bytes or JSON-ish text a PATCH of a rule or a
POST of a webhook carries, the answer is a JSON envelope with a status under 500, and afterwards
every list of the account still reads."""

from __future__ import annotations

import asyncio
import json

import httpx
from _fuzz import fuzz
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from svcnb.sandbox import SandboxConfig, create_app

PREFIX = "/api/public/v1"
# every code point, lone surrogates included: the escapes a hostile client can send
_ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
_TEXT = st.text(_ANY_CHAR, max_size=12)
_KEYS = (
    st.sampled_from(
        ["position", "port", "sourceIps", "destIps", "description", "url", "events", "isActive"]
    )
    | _TEXT
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
    | st.sampled_from(["https://example.com/hook", "vm.created", "22", "10.0.0.0/8"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)


def _text_of(value: object) -> bytes:
    return json.dumps(value).encode()  # ascii escapes: lone surrogates go out as \udXXX


@st.composite
def _jsonish(draw) -> bytes:
    """JSON objects, then the ways they go wrong: cut short, keys repeated, nested deep,
    NaN and huge numbers, bytes that are not UTF-8."""
    body = _text_of(draw(st.dictionaries(_KEYS, _VALUES, max_size=5)))
    how = draw(
        st.sampled_from(["whole", "cut", "duplicate", "deep", "constant", "latin1", "splice"])
    )
    if how == "cut":
        return body[: draw(st.integers(0, len(body)))]
    if how == "duplicate":
        key = _text_of(draw(_KEYS))
        return b"{" + key + b": 1, " + key + b": " + _text_of(draw(_VALUES)) + b"}"
    if how == "deep":
        depth = draw(st.integers(20, 3000))
        return b'{"description": ' + b"[" * depth + b"]" * depth + b"}"
    if how == "constant":
        word = draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e400"]))
        return b'{"position": ' + word + b"}"
    if how == "latin1":
        return b'{"description": "' + draw(st.binary(min_size=1, max_size=8)) + b'"}'
    if how == "splice":
        at = draw(st.integers(0, len(body)))
        return body[:at] + draw(st.binary(max_size=6)) + body[at:]
    return body


_BODIES = st.binary(max_size=200) | _jsonish()


def _app_and_targets():
    # limits raised: the examples send thousands of requests within a minute
    app = create_app(SandboxConfig(vms=4, seed=3, rate_limit=10**9, ip_rate_limit=10**9))
    state = app.state.sandbox
    rule = state.backends.firewalls.all_rules()[0]
    return app, state.default_secrets["admin"], rule


APP, TOKEN, RULE = _app_and_targets()
WRITES = [
    ("PATCH", f"{PREFIX}/firewalls/{RULE['firewallId']}/rules/{RULE['id']}"),
    ("POST", f"{PREFIX}/webhooks"),
]


async def _exchange(method: str, path: str, raw: bytes) -> tuple[httpx.Response, list]:
    transport = httpx.ASGITransport(app=APP, client=("127.0.0.1", 5000))
    headers = {"x-api-key": TOKEN, "content-type": "application/json"}
    async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as http:
        answer = await http.request(method, path, content=raw, headers=headers)
        reads = []
        for list_path in ("/vms", "/firewalls", "/networks", "/webhooks", "/wallet"):
            reads.append(await http.get(PREFIX + list_path, headers=headers))
        lists = {
            "/firewalls/{id}/rules": [f["id"] for f in reads[1].json()["data"]],
            "/networks/{id}/attachments": [n["id"] for n in reads[2].json()["data"]],
            "/webhooks/{id}/deliveries": [w["id"] for w in reads[3].json()["data"]],
        }
        for template, ids in lists.items():
            for some_id in ids:
                path_of = PREFIX + template.replace("{id}", some_id)
                reads.append(await http.get(path_of, headers=headers))
        reads.append(await http.get("/_sandbox/events"))
        reads.append(await http.get("/_sandbox/truth"))
    return answer, reads


def _envelope(response: httpx.Response) -> dict:
    assert response.headers["content-type"] == "application/json", response.headers
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("success"), bool), body
    if body["success"]:
        assert set(body) <= {"success", "data", "meta"}
    else:
        assert set(body) == {"success", "error"} and isinstance(body["error"], str), body
    return body


@given(target=st.sampled_from(WRITES), raw=_BODIES)
@fuzz(300, *HealthCheck, database=None)
def test_any_body_gets_an_envelope_under_500_and_the_account_still_reads(target, raw):
    method, path = target
    with APP.state.sandbox.lock:
        # keep the create path open: past the cap every valid create would only be a 409
        for sub in APP.state.sandbox.backends.webhooks.webhooks.values():
            sub["isActive"] = False
    answer, reads = asyncio.run(_exchange(method, path, raw))
    assert answer.status_code < 500, (answer.status_code, answer.text, raw)
    body = _envelope(answer)
    assert body["success"] is (answer.status_code < 300)
    for read in reads:
        assert read.status_code == 200, (read.request.url, read.status_code, read.text, raw)
        _envelope(read)
