"""Error classes follow the status *and* the server's text; messages claim nothing the answer
does not support."""

from __future__ import annotations

import pytest
from _fakeapi import FakeApi, envelope

from svcnb.errors import (
    ApiError,
    AuthError,
    Conflict,
    Forbidden,
    LimitExceeded,
    ScopeError,
    ValidationError,
)

HOOK = ("POST", "/webhooks")  # sends a body: url, events, description
STOP = ("POST", "/vms/vm_0001/stop")  # sends no body
WALLET = ("GET", "/wallet")  # sends no body, no query
LIST = ("GET", "/firewalls")  # sends page and perPage
# the scope the spec's table gives each endpoint a 403 above comes from; the wallet's is "not shown"
SPEC_SCOPES = {HOOK: "webhooks:write", WALLET: None}

# (endpoint, status, server text, class, field, words the message must hold, words it must not)
TABLE = [
    # a 401, or a 403 that says the token is no longer valid
    (WALLET, 401, "API token unknown", AuthError, None, ["rejected (401)"], []),
    (WALLET, 403, "Token revoked", AuthError, None, ["rejected (403)", "no longer valid"], []),
    (WALLET, 403, "API token 'ci' expired at 2026-01-01", AuthError, None, ["expired"], []),
    (WALLET, 403, "invalid API key", AuthError, None, ["invalid API key"], ["scope"]),
    # a 403 naming a cap, at any of the statuses servers use for it
    (HOOK, 403, "Webhook limit reached", LimitExceeded, None, ["10 per account"], ["scope"]),
    (HOOK, 409, "webhook cap reached: at most 10 active", LimitExceeded, None, ["limit"], []),
    (HOOK, 422, "Maximum of 10 active webhooks", LimitExceeded, None, ["set_active"], []),
    (WALLET, 403, "quota exceeded", LimitExceeded, None, ["raise the limit"], ["webhook"]),
    # other 403s: the spec's reading, said as the spec's
    (
        WALLET,
        403,
        "Forbidden",
        ScopeError,
        None,
        ["per the API spec a 403 means a missing scope", "does not know which scope", "Forbidden"],
        [],
    ),
    (
        HOOK,
        403,
        "needs the scope 'webhooks:write', which token 'ro' does not have",
        ScopeError,
        None,
        ["needs webhooks:write"],
        ["no longer valid"],
    ),
    # state conflicts, whatever their status (.status stays the real one)
    (STOP, 409, "VM is not running", Conflict, None, ["conflict (409)"], ["body"]),
    (STOP, 422, "VM is not running", Conflict, None, ["current state", "(422)"], ["body"]),
    (STOP, 400, "VM vm_1 is stopped; only a running VM can be stopped", Conflict, None, [], []),
    (HOOK, 409, "busy", Conflict, None, ["busy"], ["state"]),
    # validation: a field we sent, or invalid/must/required
    (
        HOOK,
        422,
        "url: must be an HTTPS URL",
        ValidationError,
        "url",
        ["rejected url in the request body"],
        [],
    ),
    (HOOK, 400, "Invalid value for description", ValidationError, "description", [], []),
    (HOOK, 422, "description: at most 255 characters", ValidationError, "description", [], []),
    (LIST, 422, "perPage: must be from 1 to 0", ValidationError, "perPage", ["query"], ["body"]),
    (STOP, 422, "Invalid request", ValidationError, None, ["sent no body"], ["request body"]),
    (WALLET, 400, "required", ValidationError, None, ["sent no body"], ["request body"]),
    # nothing to go on: neutral, quoting the server
    (WALLET, 400, "malformed JSON", ApiError, None, ["failed with 400", "malformed JSON"], []),
    (STOP, 422, "nope", ApiError, None, ["failed with 422"], ["body", "state", "scope"]),
    (WALLET, 418, "teapot", ApiError, None, ["failed with 418"], []),
]


def _call(client, endpoint):
    method, path = endpoint
    if endpoint == HOOK:
        return client.webhooks.create("https://h.example/x", ["vm.stopped"], "d")
    if endpoint == STOP:
        return client.vms.stop("vm_0001")
    if endpoint == LIST:
        return client.firewalls.list()
    return client.wallet.get()


@pytest.mark.parametrize(("endpoint", "status", "text", "kind", "field", "says", "never"), TABLE)
def test_the_class_follows_status_and_text(
    make_client, leak_scan, endpoint, status, text, kind, field, says, never
):
    api = FakeApi(vms=2)
    api.extra[endpoint] = lambda r: envelope(text, status)
    client = make_client(api, sleep=False, max_retries=0)
    with pytest.raises(ApiError) as info:
        _call(client, endpoint)
    error = info.value
    leak_scan.add(error)
    assert type(error) is kind
    assert error.status == status and error.server_message == text
    assert (error.method, error.path) == endpoint
    assert text in str(error)  # the server is always quoted
    for word in says:
        assert word in str(error)
    for word in never:
        assert word not in str(error).replace(text, "")
    if kind is ValidationError:
        assert error.field == field
    if kind is ScopeError:
        # the scope the spec's table gives the endpoint; the wallet's is "not shown" and
        # "Forbidden" names none: unknown, never a guess
        assert isinstance(error, Forbidden) and error.scope == SPEC_SCOPES[endpoint]


def test_the_tree():
    assert issubclass(ScopeError, Forbidden) and issubclass(Forbidden, ApiError)
    assert issubclass(LimitExceeded, ApiError) and not issubclass(LimitExceeded, Conflict)


@pytest.mark.parametrize("status", [200, 201, 202])
def test_any_2xx_envelope_is_success(make_client, status):
    api = FakeApi(vms=2)
    api.extra[STOP] = lambda r: envelope({"actionId": "act_9"}, status)
    api.extra[("DELETE", "/networks/n_1/attachments/vm_1")] = lambda r: envelope(
        {"vmId": "vm_1", "networkId": "n_1"}, status
    )
    api.extra[HOOK] = lambda r: envelope({"id": "wh_1", "secret": "s"}, status)
    client = make_client(api)
    assert client.vms.stop("vm_0001") == "act_9"
    assert client.networks.detach("n_1", "vm_1")["vmId"] == "vm_1"
    assert client.webhooks.create("https://h.example/x", ["vm.stopped"])["id"] == "wh_1"
