"""A list nothing proved whole is stored as incomplete, never "ok", and says so wherever it is
read: the store's status, its snapshot list, every load, every report from it, the CLI."""

from __future__ import annotations

import json
import warnings

import httpx
import pytest

from svcnb.client import Client
from svcnb.errors import IncompleteWarning
from svcnb.reports import billing, firewall
from svcnb.store import Store


class _Unproven(httpx.BaseTransport):
    """The sandbox, but its firewall list ignores the page asked for, states no total and
    carries a continuation key svcnb does not know (``meta.nextPageKey``)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        listing = request.method == "GET" and request.url.path.endswith("/firewalls")
        if listing:
            params = [(k, v) for k, v in request.url.params.multi_items() if k != "page"]
            request = httpx.Request(
                request.method, request.url.copy_with(params=params), headers=request.headers
            )
        response = self.inner.handle_request(request)
        if not listing:
            return response
        body = json.loads(response.read())
        body["meta"] = {"perPage": 100, "nextPageKey": "b64:Zmlyc3Q="}
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        headers.pop("content-encoding", None)
        return httpx.Response(response.status_code, headers=headers, json=body)


@pytest.fixture
def unproven(sandbox, tmp_path):
    store = Store(tmp_path / "store")
    with (
        Client(
            sandbox.tokens["admin"], sandbox.base_url, progress=False, transport=_Unproven()
        ) as client,
        pytest.warns(UserWarning, match=r"firewall list may be incomplete .*nextPageKey"),
    ):
        store.take(client)
    return store


def test_a_list_nothing_proved_whole_is_stored_as_incomplete_not_ok(unproven):
    status = unproven.resources().set_index("resource")
    assert status.loc["firewalls", "status"] == "incomplete"
    assert status.loc["firewall_rules", "status"] == "incomplete"  # read through that list
    assert "nextPageKey" in status.loc["firewalls", "reason"]
    assert status.loc["vms", "status"] == "ok" and status.loc["wallet", "status"] == "ok"
    row = unproven.snapshots().iloc[-1]
    assert row["incomplete"] == "firewalls, firewall_rules" and row["missing"] == ""


def test_every_load_of_it_warns_and_every_report_from_it_says_not_complete(unproven):
    with pytest.warns(IncompleteWarning, match="firewalls at snapshot .* may be incomplete"):
        rules = unproven.load("firewalls")
    assert "nextPageKey" in rules.attrs["incomplete"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteWarning)
        audit = firewall.audit.from_store(unproven)
        rate = billing.run_rate.from_store(unproven)
    assert audit.attrs["complete"] is False and "firewall_rules" in audit.attrs["incomplete"]
    assert rate.attrs.get("complete", True) is not False  # the VMs were proven whole


def test_a_proven_list_is_ok(sandbox, tmp_path):
    store = Store(tmp_path / "store")
    with (
        Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("error", UserWarning)
        store.take(client)
    assert set(store.resources()["status"]) == {"ok"}
    assert store.snapshots().iloc[-1]["incomplete"] == ""
