"""Errors become one sentence in the status line: what went wrong and what to do, no token."""

from __future__ import annotations

import ipywidgets as widgets
import pytest

from svcnb import errors
from svcnb.panels import describe, shown_in

TOKEN = "svc_" + "A1b2C3d4E5f6G7h8I9j0K1l2"


@pytest.mark.parametrize(
    ("exc", "kind", "words"),
    [
        (
            errors.ScopeError(
                403, "full", "POST", "/vms/v1/stop", scope="vms:write", server_message="no"
            ),
            "error",
            ["Not allowed stopping web-1", "vms:write scope", "Create a token"],
        ),
        (
            errors.Conflict(409, "full", "POST", "/x", server_message="VM v1 is stopped"),
            "warn",
            ["409 conflict", "VM v1 is stopped", "Refresh"],
        ),
        (
            errors.RateLimited(
                429, "full", "GET", "/vms", retry_after=12.0, server_message="per-token limit"
            ),
            "warn",
            ["rate limit", "per-token limit", "wait 12 s"],
        ),
        (
            errors.AuthError(401, "full", "GET", "/vms", reason="rejected"),
            "error",
            ["401", "SVC_API_KEY"],
        ),
        (
            errors.NotFound(404, "full", "GET", "/vms/v9", server_message="VM v9 not found"),
            "error",
            ["404", "VM v9 not found", "refresh the list"],
        ),
        (
            # another service says a state conflict with 422: the page names the real status
            errors.Conflict(422, "full", "POST", "/x", server_message="VM is not running"),
            "warn",
            ["422 conflict", "VM is not running"],
        ),
        (
            errors.AuthError(403, "full", "GET", "/vms", server_message="Token revoked"),
            "error",
            ["403", "SVC_API_KEY"],
        ),
        (
            errors.LimitExceeded(403, "full", "POST", "/webhooks", server_message="limit reached"),
            "warn",
            ["account limit", "limit reached", "webhook"],
        ),
        (
            errors.TransportError("connection refused", "GET", "/vms"),
            "error",
            ["No answer", "connection refused"],
        ),
        (
            ValueError("port is at most 64 characters"),
            "error",
            ["Cannot go on stopping web-1", "at most 64"],
        ),
    ],
)
def test_each_error_is_described_in_words(exc, kind, words):
    got_kind, text = describe(exc, "stopping web-1")
    assert got_kind == kind
    for word in words:
        assert word in text


def test_a_token_in_an_error_never_reaches_the_page():
    status = widgets.HTML()
    with shown_in(status, "reading the VM list"):
        raise errors.ServerError(500, f"boom with {TOKEN}", "GET", "/vms")
    assert "The service failed reading the VM list (500)" in status.value
    assert TOKEN not in status.value and "svc_…" in status.value


def test_an_unexpected_exception_is_shown_not_raised():
    status = widgets.HTML()
    with shown_in(status, "drawing"):
        raise KeyError("price")
    assert "Unexpected KeyError drawing" in status.value
