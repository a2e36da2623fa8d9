"""Rate limits (DESIGN section 3): the token bucket, the per-IP fallback, headers, 429 text."""

from __future__ import annotations

import re
import time

from sandbox_support import failure


def test_token_bucket_counts_down_and_429_names_the_bucket_and_seconds(api, sandbox):
    sandbox.control.settings(defaultRateLimit=5)
    remaining = [int(api.get("/vms").headers["x-ratelimit-remaining"]) for _ in range(5)]
    assert remaining == [4, 3, 2, 1, 0]
    response = api.get("/vms")
    error = failure(response, 429)
    assert "per-token limit of 5 requests per minute" in error
    seconds = int(response.headers["retry-after"])
    assert 1 <= seconds <= 60
    assert re.search(rf"{seconds} seconds$", error), error
    assert response.headers["x-ratelimit-limit"] == "5"
    assert response.headers["x-ratelimit-remaining"] == "0"


def test_default_token_limit_is_600_per_minute(api):
    response = api.get("/vms")
    assert response.headers["x-ratelimit-limit"] == "600"
    assert response.headers["x-ratelimit-remaining"] == "599"
    assert 59 <= int(response.headers["x-ratelimit-reset"]) <= 60


def test_each_token_has_its_own_bucket_and_limits_can_be_raised_per_token(api, sandbox):
    sandbox.control.settings(defaultRateLimit=3)
    for _ in range(3):
        api.get("/vms", token="admin")
    failure(api.get("/vms", token="admin"), 429)
    assert api.get("/vms", token="read").status_code == 200
    raised = sandbox.control.create_token("raised", ["vms:read"], rate_limit=10)
    for _ in range(10):
        response = api.get("/vms", token=raised["secret"])
        assert response.status_code == 200
    assert response.headers["x-ratelimit-limit"] == "10"
    assert "limit of 10 requests" in failure(api.get("/vms", token=raised["secret"]), 429)
    admin_id = next(t["id"] for t in sandbox.control.tokens() if t["name"] == "admin")
    sandbox.control.update_token(admin_id, rateLimit=1000)
    assert api.get("/vms", token="admin").headers["x-ratelimit-limit"] == "1000"


def test_unauthenticated_requests_use_the_per_ip_bucket(api, sandbox):
    sandbox.control.settings(ipRateLimit=4)
    statuses = [api.get("/vms", token=None).status_code for _ in range(2)]
    statuses += [api.get("/vms", token="svc_bad" + str(i)).status_code for i in range(2)]
    assert statuses == [401, 401, 401, 401]
    response = api.get("/vms", token="svc_flood")
    error = failure(response, 429)  # a flood of bad keys gets 429, not 401
    assert "per-IP" in error and "limit of 4 requests per minute" in error
    assert int(response.headers["retry-after"]) >= 1
    assert re.search(r"\d+ seconds$", error)
    # a valid token is counted in its own bucket, not the exhausted IP bucket
    assert api.get("/vms").status_code == 200


def test_ip_bucket_default_is_100(api):
    assert api.get("/vms", token=None).headers["x-ratelimit-limit"] == "100"


def test_window_is_fixed_and_its_length_is_a_setting(api, sandbox):
    sandbox.control.settings(defaultRateLimit=2, rateWindowSeconds=1)
    api.get("/vms")
    api.get("/vms")
    response = api.get("/vms")
    failure(response, 429)
    assert "per 1 seconds" in response.json()["error"]
    time.sleep(1.1)
    response = api.get("/vms")
    assert response.status_code == 200
    assert response.headers["x-ratelimit-remaining"] == "1"


def test_both_base_paths_share_one_bucket(api, sandbox):
    sandbox.control.settings(defaultRateLimit=2)
    api.get("/vms")
    api.get("/vms", prefix="/api/v1/api/public/v1")
    failure(api.get("/vms"), 429)
    failure(api.get("/vms", prefix="/api/v1/api/public/v1"), 429)


def test_rejected_requests_change_nothing(api, sandbox):
    vm = next(v for v in api.data("/vms", params={"perPage": 100}) if v["status"] == "running")
    sandbox.control.settings(defaultRateLimit=1)
    api.get("/wallet")
    failure(api.post(f"/vms/{vm['id']}/stop"), 429)
    sandbox.control.settings(defaultRateLimit=600)
    assert api.data(f"/vms/{vm['id']}")["status"] == "running"
    assert sandbox.control.stats()["byStatus"]["429"] == 1
