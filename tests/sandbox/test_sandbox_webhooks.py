"""Webhook subscriptions: HTTPS only, the cap of 10 active, the secret shown once, re-enabling,
and the deliveries list."""

from __future__ import annotations

import pytest
from sandbox_support import failure

GOOD = {"url": "https://receiver.example.com/hook", "events": ["vm.stopped"], "description": "test"}


@pytest.mark.parametrize(
    "url",
    [
        "http://receiver.example.com/hook",
        "ftp://x.example/h",
        "receiver.example.com/hook",
        "https://",
        "https:///path",
        "",
        "javascript:alert(1)",
    ],
)
def test_only_https_urls_are_accepted(api, url):
    before = api.data("/webhooks")
    assert failure(api.post("/webhooks", json={**GOOD, "url": url}), 422).startswith("url")
    assert api.data("/webhooks") == before


def test_secret_is_returned_only_by_the_creation_response(api):
    created = api.post("/webhooks", json=GOOD)
    assert created.status_code == 201
    data = created.json()["data"]
    assert data["secret"] and data["isActive"] is True and data["consecutiveFailures"] == 0
    listed = api.get("/webhooks")
    assert data["secret"] not in listed.text
    assert all("secret" not in w for w in listed.json()["data"])
    patched = api.patch(f"/webhooks/{data['id']}", json={"description": "renamed"})
    assert data["secret"] not in patched.text and "secret" not in patched.json()["data"]
    assert data["secret"] not in api.get(f"/webhooks/{data['id']}/deliveries").text


def test_at_most_ten_active_subscriptions(api):
    active = sum(w["isActive"] for w in api.data("/webhooks"))
    for i in range(10 - active):
        assert api.post("/webhooks", json={**GOOD, "description": str(i)}).status_code == 201
    error = failure(api.post("/webhooks", json=GOOD), 409)
    assert "10 active" in error
    assert sum(w["isActive"] for w in api.data("/webhooks")) == 10
    # re-enabling a disabled one would pass the cap too
    disabled = next(w for w in api.data("/webhooks") if not w["isActive"])
    failure(api.patch(f"/webhooks/{disabled['id']}", json={"isActive": True}), 409)
    # deactivating one makes room again
    first_active = next(w for w in api.data("/webhooks") if w["isActive"])
    assert api.patch(f"/webhooks/{first_active['id']}", json={"isActive": False}).is_success
    assert api.post("/webhooks", json=GOOD).status_code == 201


def test_patch_is_active_true_re_enables_and_clears_failures(api):
    disabled = next(w for w in api.data("/webhooks") if not w["isActive"])
    assert disabled["consecutiveFailures"] >= 50
    response = api.patch(f"/webhooks/{disabled['id']}", json={"isActive": True})
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["isActive"] is True and data["consecutiveFailures"] == 0
    assert data["updatedAt"] > disabled["updatedAt"]
    listed = next(w for w in api.data("/webhooks") if w["id"] == disabled["id"])
    assert listed == data


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({"url": GOOD["url"]}, "events"),
        ({"events": ["vm.stopped"]}, "url"),
        ({**GOOD, "events": []}, "events"),
        ({**GOOD, "events": ["vm.exploded"]}, "events[0]"),
        ({**GOOD, "events": "vm.stopped"}, "events"),
        ({**GOOD, "description": 5}, "description"),
        ({**GOOD, "description": "x" * 256}, "description"),
        ({**GOOD, "secret": "mine"}, "secret"),
    ],
)
def test_bad_creation_bodies_are_refused(api, body, names):
    assert failure(api.post("/webhooks", json=body), 422).startswith(names)


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({}, "body"),
        ({"isActive": "yes"}, "isActive"),
        ({"url": "http://x.example"}, "url"),
        ({"consecutiveFailures": 0}, "consecutiveFailures"),
    ],
)
def test_bad_patch_bodies_are_refused(api, body, names):
    webhook = api.data("/webhooks")[0]
    assert failure(api.patch(f"/webhooks/{webhook['id']}", json=body), 422).startswith(names)
    assert api.data("/webhooks")[0] == webhook


def test_unknown_subscription_is_404(api):
    failure(api.patch("/webhooks/whk_none", json={"isActive": True}), 404)
    failure(api.get("/webhooks/whk_none/deliveries"), 404)


def test_deliveries_are_one_record_per_attempt_with_the_contract_fields(api):
    webhook = next(w for w in api.data("/webhooks") if not w["isActive"])
    page = api.get(f"/webhooks/{webhook['id']}/deliveries", params={"perPage": 2}).json()
    assert page["meta"]["total"] > 2 and len(page["data"]) == 2
    deliveries = api.all(f"/webhooks/{webhook['id']}/deliveries")
    for d in deliveries:
        assert list(d) == [
            "id",
            "eventId",
            "event",
            "url",
            "statusCode",
            "success",
            "attempts",
            "createdAt",
            "lastAttemptAt",
            "error",
        ]
        assert d["url"] == webhook["url"] and d["success"] is False and d["error"]
    assert sorted({d["attempts"] for d in deliveries}) == [1, 2, 3]
    assert len({d["id"] for d in deliveries}) == len(deliveries)
