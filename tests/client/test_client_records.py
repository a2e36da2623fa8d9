"""Tolerant parsing: unknown keys kept with one warning per resource; needed keys enforced."""

from __future__ import annotations

import warnings

import pytest
from _fakeapi import FakeApi, envelope

from svcnb.errors import MissingFieldError, SchemaDriftWarning


def test_unknown_keys_are_kept_and_named_once_per_resource(make_client):
    api = FakeApi(vms=3)
    for record in api.vms.values():
        record["carbonGrams"] = 12
    client = make_client(api)
    with pytest.warns(SchemaDriftWarning, match="vm records carry key.*carbonGrams") as seen:
        rows = client.vms.list()
    assert len([w for w in seen if w.category is SchemaDriftWarning]) == 1
    assert all(row["carbonGrams"] == 12 for row in rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert client.vms.get("vm_0001")["carbonGrams"] == 12  # already told: no second warning
    api.vms["vm_0002"]["tier"] = "gold"
    with pytest.warns(SchemaDriftWarning, match=r"key\(s\) the API spec does not list: tier;"):
        client.vms.get("vm_0002")


def test_a_missing_needed_key_names_resource_id_and_key(make_client):
    api = FakeApi()
    api.extra[("GET", "/wallet")] = lambda r: envelope({"balance": "1.00"})
    with pytest.raises(MissingFieldError) as info:
        make_client(api).wallet.get()
    assert (info.value.resource, info.value.record_id, info.value.key) == ("wallet", None, "id")
    assert "a wallet record has no 'id' key" in str(info.value)
    assert isinstance(info.value, KeyError)


def test_a_vm_without_updated_at_is_still_a_vm(make_client):
    api = FakeApi(vms=2)
    del api.vms["vm_0001"]["updatedAt"]
    client = make_client(api)
    assert "updatedAt" not in client.vms.get("vm_0001")
    assert [v["id"] for v in client.vms.list()] == ["vm_0000", "vm_0001"]


def test_stop_without_an_action_id_is_an_error_not_a_none(make_client):
    api = FakeApi(vms=1)
    api.extra[("POST", "/vms/vm_0000/stop")] = lambda r: envelope({"queued": True}, 202)
    with pytest.raises(MissingFieldError, match="'actionId'"):
        make_client(api).vms.stop("vm_0000")


def test_webhook_creation_returns_the_secret_and_requires_it(make_client):
    api = FakeApi()
    answers = iter(
        [
            {
                "id": "wh_1",
                "url": "https://h.example",
                "events": ["vm.stopped"],
                "secret": "whsec_1",
            },
            {"id": "wh_2", "url": "https://h.example", "events": ["vm.stopped"]},
        ]
    )
    api.extra[("POST", "/webhooks")] = lambda r: envelope(next(answers), 201)
    client = make_client(api)
    assert client.webhooks.create("https://h.example", ["vm.stopped"])["secret"] == "whsec_1"
    with pytest.raises(MissingFieldError, match="'secret'"):
        client.webhooks.create("https://h.example", ["vm.stopped"])
    with pytest.raises(ValueError, match="list of event names"):
        client.webhooks.create("https://h.example", "vm.stopped")
