"""The page iterator over every list shape and each of its stop rules."""

from __future__ import annotations

import warnings

import httpx
import pytest
from _fakeapi import BASE, FakeApi, envelope

from svcnb.client import read_all
from svcnb.errors import PagingError, PagingWarning


@pytest.fixture
def strict():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PagingWarning)
        yield


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
    # the first page is asked without a number: its answer says whether pages count from 0 or 1
    # and a list read in more than one answer is read again: a matching total proves a count,
    # the second read that agrees proves the set
    assert [r.url.params.get("page") for r in api.requests] == [None, "2", "3"] * 2
    assert api.requests[0].url.params["perPage"] == "100"
    assert rows.complete and rows.proof == "its total (5) matched; a re-read agreed on all 5 ids"


def test_data_items_shape_with_inner_meta(make_client):
    api = FakeApi()

    def handler(request):
        n = int(request.url.params.get("page", 1))
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
    assert len(api.requests) == 2 * 2  # read, and read again to prove the set


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


def test_a_server_that_ignores_page_and_size_serves_a_proven_whole_list(make_client, strict):
    api = FakeApi()

    def handler(request):  # ignores the page number and the size, and has no meta
        return envelope(_items(["a", "b", "c"]))

    api.extra[("GET", "/firewalls")] = handler
    client = make_client(api)
    # 3 came back of 100 asked: the end, or a cap nobody stated. Page 2 repeats page 1, and a
    # smaller size (perPage=1) is not honoured either: the service does not page this list, it
    # serves it whole (the plainest server the spec allows), and that is a proof.
    rows = client.firewalls.list()
    assert [r["id"] for r in rows] == ["a", "b", "c"]
    assert rows.complete, rows.doubt
    assert "whatever page or size was asked" in rows.proof and "perPage=1" in rows.proof
    assert len(api.requests) == 4  # the first, page=1 (the base), page=2, perPage=1


def test_a_server_that_ignores_the_page_but_honours_the_size_may_be_incomplete(make_client):
    api = FakeApi()
    rows_held = _items(["a", "b", "c", "d", "e"])

    def handler(request):  # serves perPage items (at most 3) from the start, whatever page
        size = min(int(request.url.params.get("perPage", 3)), 3)
        return envelope(rows_held[:size])

    api.extra[("GET", "/firewalls")] = handler
    client = make_client(api)
    with pytest.warns(PagingWarning, match="may be incomplete .*repeats an earlier page"):
        rows = client.firewalls.list()
    assert [r["id"] for r in rows] == ["a", "b", "c"]
    assert rows.complete is False and "repeats" in rows.doubt


def test_a_repeated_full_page_without_meta_is_caught(make_client):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = lambda r: envelope(
        _items(["a", "b", "c"][: int(r.url.params.get("perPage", 3))])
    )
    client = make_client(api)
    with pytest.warns(PagingWarning, match="repeats an earlier page"):
        rows = read_all(client._req, "/firewalls", "firewall", per_page=2)
    assert [r["id"] for r in rows] == ["a", "b"]
    assert not rows.complete
    # the first, page=1 (the same: pages count from 1), page=2, and perPage=1 (honoured)
    assert len(api.requests) == 4


def test_missing_meta_reads_on_until_a_short_page(make_client):
    api = FakeApi()
    pages = {1: ["a", "b"], 2: ["c", "d"], 3: ["e"]}
    api.extra[("GET", "/firewalls")] = lambda r: envelope(
        _items(pages.get(int(r.url.params.get("page", 1)), []))
    )
    client = make_client(api)
    rows = read_all(client._req, "/firewalls", "firewall", per_page=2)
    assert [r["id"] for r in rows] == ["a", "b", "c", "d", "e"]
    # the short page is not taken for the end: the empty page after it proves it
    assert rows.complete and rows.proof.startswith("page 4 came back empty; a re-read agreed")


def test_the_page_cap_raises_instead_of_truncating(make_client):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = lambda r: envelope(
        _items([f"p{r.url.params.get('page', 1)}a", f"p{r.url.params.get('page', 1)}b"])
    )
    client = make_client(api)
    with pytest.raises(PagingError, match="more than 5 pages"):
        read_all(client._req, "/firewalls", "firewall", per_page=2, max_pages=5)


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
