"""The page iterator over every list shape and each of its stop rules."""

from __future__ import annotations

import warnings

import httpx
import pytest
from _fakeapi import BASE, FakeApi, envelope

from svcnb.client import _paging
from svcnb.errors import PagingError, PagingWarning


def _items(ids):
    return [{"id": i, "name": i, "createdAt": "x", "updatedAt": "y"} for i in ids]


def _paged(pages: dict[int, list[str]], total=None, per=2):
    """A /firewalls handler serving ``pages`` (number -> ids) with DESIGN meta."""

    def handler(request):
        n = int(request.url.params.get("page", 1))
        ids = pages.get(n, [])
        count = total(n) if callable(total) else (total or sum(len(v) for v in pages.values()))
        meta = {"page": n, "perPage": per, "total": count, "totalPages": -(-count // per)}
        return envelope(_items(ids), meta=meta)

    return handler


def test_design_shape_reads_every_page(make_client):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = _paged({1: ["a", "b"], 2: ["c", "d"], 3: ["e"]})
    client = make_client(api)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = client.firewalls.list()
    assert [r["id"] for r in rows] == ["a", "b", "c", "d", "e"]
    assert [r.url.params["page"] for r in api.requests] == ["1", "2", "3"]
    assert api.requests[0].url.params["perPage"] == "100"


def test_data_items_shape_with_inner_meta(make_client):
    api = FakeApi()

    def handler(request):
        n = int(request.url.params["page"])
        ids = {1: ["a", "b"], 2: ["c"]}[n]
        return envelope(
            {"items": _items(ids), "page": n, "perPage": 2, "total": 3, "totalPages": 2}
        )

    api.extra[("GET", "/firewalls")] = handler
    assert [r["id"] for r in make_client(api).firewalls.list()] == ["a", "b", "c"]


@pytest.mark.parametrize(
    "link",
    [
        BASE + "/api/public/v1/firewalls?cursor=2",  # absolute
        "/api/public/v1/firewalls?cursor=2",  # path
        "?cursor=2",  # query only
    ],
)
def test_next_link_shape_in_each_written_form(make_client, link):
    api = FakeApi()

    def handler(request):
        if request.url.params.get("cursor") == "2":
            return envelope(_items(["c"]))
        body = {"success": True, "data": _items(["a", "b"]), "links": {"next": link}}
        return httpx.Response(200, json=body)

    api.extra[("GET", "/firewalls")] = handler
    assert [r["id"] for r in make_client(api).firewalls.list()] == ["a", "b", "c"]
    assert len(api.requests) == 2


def test_an_empty_page_ends_the_list(make_client):
    api = FakeApi()
    # meta claims 3 pages but page 2 is empty: stop there, and say what is missing; the total
    # never changed, so nothing is blamed on a change.
    api.extra[("GET", "/firewalls")] = _paged({1: ["a", "b"], 2: [], 3: ["e"]}, total=6)
    with pytest.warns(PagingWarning, match="read 2 of 6 announced firewall records") as seen:
        rows = make_client(api).firewalls.list()
    assert [r["id"] for r in rows] == ["a", "b"]
    assert len(api.requests) == 2
    assert not any("changed" in str(w.message) for w in seen)


def test_a_repeated_page_stops_reading(make_client):
    api = FakeApi()

    def handler(request):  # ignores the page number and has no meta
        return envelope(_items(["a", "b"]))

    api.extra[("GET", "/firewalls")] = handler
    client = make_client(api)
    # perPage asked is 100 and 2 came back: a short page without meta ends the list.
    assert [r["id"] for r in client.firewalls.list()] == ["a", "b"]
    assert len(api.requests) == 1


def test_a_repeated_full_page_without_meta_is_caught(make_client):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = lambda r: envelope(_items(["a", "b"]))
    client = make_client(api)
    with pytest.warns(PagingWarning, match="repeats an earlier page"):
        rows = _paging.read_all(client._req, "/firewalls", "firewall", per_page=2)
    assert [r["id"] for r in rows] == ["a", "b"]
    assert len(api.requests) == 2


def test_missing_meta_reads_on_until_a_short_page(make_client):
    api = FakeApi()
    pages = {1: ["a", "b"], 2: ["c", "d"], 3: ["e"]}
    api.extra[("GET", "/firewalls")] = lambda r: envelope(
        _items(pages.get(int(r.url.params["page"]), []))
    )
    client = make_client(api)
    rows = _paging.read_all(client._req, "/firewalls", "firewall", per_page=2)
    assert [r["id"] for r in rows] == ["a", "b", "c", "d", "e"]


def test_the_page_cap_raises_instead_of_truncating(make_client):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = lambda r: envelope(
        _items([f"p{r.url.params['page']}a", f"p{r.url.params['page']}b"])
    )
    client = make_client(api)
    with pytest.raises(PagingError, match="more than 5 pages"):
        _paging.read_all(client._req, "/firewalls", "firewall", per_page=2, max_pages=5)


def test_duplicated_ids_are_dropped_with_a_warning(make_client):
    api = FakeApi()
    # An item was inserted before page 2 was read: "b" shifts onto page 2 as well.
    api.extra[("GET", "/firewalls")] = _paged({1: ["a", "b"], 2: ["b", "c"]}, total=4)
    with pytest.warns(PagingWarning) as seen:
        rows = make_client(api).firewalls.list()
    said = [str(w.message) for w in seen]
    assert "dropped 1 duplicated firewall id(s) (b)" in said[0]
    assert "read 3 of 4 announced" in said[1]
    assert [r["id"] for r in rows] == ["a", "b", "c"]


def test_a_list_whose_total_changed_is_reported(make_client):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = _paged(
        {1: ["a", "b"], 2: ["d"]}, total=lambda n: 4 if n == 1 else 3
    )
    with pytest.warns(PagingWarning, match=r"total reported 4→3, 3 read"):
        rows = make_client(api).firewalls.list()
    assert [r["id"] for r in rows] == ["a", "b", "d"]
