"""List pages (DESIGN section 3): page from 1, perPage 1..100 (default 20), meta."""

from __future__ import annotations

import pytest
from sandbox_support import failure


def test_default_page_is_20_with_meta(api):
    body = api.get("/vms").json()
    assert len(body["data"]) == 20
    assert body["meta"] == {"page": 1, "perPage": 20, "total": 40, "totalPages": 2}


def test_pages_partition_the_list_in_a_stable_order(api):
    pages = [api.get("/vms", params={"page": p, "perPage": 7}).json() for p in range(1, 8)]
    ids = [vm["id"] for page in pages for vm in page["data"]]
    assert len(ids) == 40 == len(set(ids))
    assert pages[5]["meta"]["totalPages"] == 6 and len(pages[5]["data"]) == 5
    assert pages[6]["data"] == []  # past the last page: empty, not an error
    assert [vm["id"] for vm in api.get("/vms", params={"perPage": 40}).json()["data"]] == ids


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"perPage": 1}, 200),
        ({"perPage": 100}, 200),
        ({"perPage": 0}, 422),
        ({"perPage": 101}, 422),
        ({"page": 1}, 200),
        ({"page": 0}, 422),
        ({"page": -1}, 422),
        ({"page": "two"}, 422),
        ({"perPage": "1.5"}, 422),
        ({"page": ""}, 422),
    ],
)
def test_page_bounds(api, params, status):
    response = api.get("/vms", params=params)
    if status == 200:
        assert response.status_code == 200
        assert response.json()["meta"]["perPage"] == params.get("perPage", 20)
    else:
        assert failure(response, status).startswith(next(iter(params)))


@pytest.mark.parametrize("path", ["/firewalls", "/networks"])
def test_other_lists_page_the_same_way(api, path):
    body = api.get(path, params={"perPage": 1}).json()
    assert len(body["data"]) == 1 and body["meta"]["perPage"] == 1
    assert body["meta"]["totalPages"] == body["meta"]["total"]
