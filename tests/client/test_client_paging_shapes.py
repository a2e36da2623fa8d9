"""Every paging shape of docs/dialects.md, with a server that serves fewer items than asked."""

from __future__ import annotations

import logging
import warnings

import httpx
import pytest
from _fakeapi import FakeApi, envelope
from _fakelists import SHAPES, paged

from svcnb.client import read_all
from svcnb.errors import PagingError, PagingWarning

CAPPED = [s for s in SHAPES if s != "bare"]  # a bare list cannot say that more exists


def _rows(n: int) -> list[dict]:
    return [{"id": f"fw_{i:03d}", "name": f"fw-{i}"} for i in range(n)]


def _summaries(api: FakeApi) -> list[dict]:
    nested = ("sshKeys", "firewalls", "privateNetworks")
    return [{k: v for k, v in api.vms[i].items() if k not in nested} for i in sorted(api.vms)]


@pytest.fixture
def strict():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PagingWarning)
        yield


@pytest.mark.parametrize("shape", CAPPED)
@pytest.mark.parametrize("cap", [50, 25])
def test_a_cap_below_the_asked_size_still_reads_everything(make_client, strict, shape, cap):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = paged(_rows(57), shape, cap=cap)
    rows = make_client(api).firewalls.list()
    assert [r["id"] for r in rows] == [r["id"] for r in _rows(57)]
    assert rows.complete
    # an answer that does not say its page number costs one probe: page=1 repeats the first
    # page on a server counting from 1 and is the second on one counting from 0
    probe = 1 if shape == "items-total" else 0
    # and each page once more: a second read that agrees proves the set, not only the count
    assert len(api.requests) == 2 * -(-57 // cap) + probe


@pytest.mark.parametrize("shape", CAPPED)
def test_the_bulk_pull_reads_every_vm_of_every_shape(make_client, strict, shape):
    api = FakeApi(vms=57)
    api.extra[("GET", "/vms")] = paged(lambda: _summaries(api), shape, cap=25)
    client = make_client(api)
    full = client.vms.all(details=True, workers=4)
    assert full == [api.vms[i] for i in sorted(api.vms)]
    assert [r["id"] for r in client.vms.all(details=False)] == sorted(api.vms)
    assert [r["id"] for r in client.vms.list()] == sorted(api.vms)


def test_pages_are_read_in_parallel_at_the_learned_size(make_client, strict):
    api = FakeApi(vms=57)
    api.extra[("GET", "/vms")] = paged(lambda: _summaries(api), "meta-total", cap=25)
    make_client(api).vms.all(details=False)
    asked = [(r.url.params.get("page"), r.url.params["perPage"]) for r in api.requests]
    assert asked[0] == (None, "100")
    assert sorted(asked[1:3]) == [("2", "25"), ("3", "25")]
    # a list of summaries (no detail read checks each VM) is read again to prove the set
    assert asked[3:] == [(None, "25"), ("2", "25"), ("3", "25")]


@pytest.mark.parametrize("form", ["absolute", "path", "query", "other-prefix"])
def test_a_link_header_is_followed_in_each_written_form(make_client, strict, form):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = paged(_rows(57), "link", cap=25, link_form=form)
    assert len(make_client(api).firewalls.list()) == 57
    assert all(r.url.path == "/api/public/v1/firewalls" for r in api.requests)


def test_a_cursor_is_sent_back_with_the_page_size(make_client, strict):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = paged(_rows(57), "cursor", cap=50)
    assert len(make_client(api).firewalls.list()) == 57
    second = api.requests[1].url.params
    assert second["cursor"] == "c50" and second["perPage"] == "50"


@pytest.mark.parametrize("shape", ["meta", "items", "cursor", "link"])
def test_a_list_that_ends_short_of_its_total_says_how_short(make_client, shape):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = paged(_rows(57), shape, cap=50, serve=50)
    with pytest.warns(PagingWarning) as seen:
        rows = make_client(api).firewalls.list()
    said = [str(w.message) for w in seen]
    assert len(rows) == 50
    assert len(said) == 1 and "read 50 of 57 announced firewall records" in said[0]
    assert "changed" not in said[0] and "read it again" in said[0]


def test_the_bulk_pull_says_how_short_too(make_client):
    api = FakeApi(vms=57)
    api.extra[("GET", "/vms")] = paged(lambda: _summaries(api), "meta", cap=50, serve=50)
    with pytest.warns(PagingWarning, match="read 50 of 57 announced vm records"):
        rows = make_client(api).vms.all()
    assert len(rows) == 50


def test_a_server_that_ignores_the_page_number_is_an_error(make_client):
    api = FakeApi()
    first = _rows(57)[:50]
    api.extra[("GET", "/firewalls")] = lambda r: envelope(first, meta={"total": 57})
    with pytest.raises(PagingError, match=r"announced 57 .* only its first page \(50\)"):
        make_client(api).firewalls.list()


def test_an_empty_first_page_of_a_non_empty_list_is_an_error(make_client):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = lambda r: envelope([], meta={"total": 3})
    with pytest.raises(PagingError, match="first page was empty"):
        make_client(api).firewalls.list()


def test_too_many_announced_pages_fail_before_anything_is_queued(make_client):
    api = FakeApi(vms=3)
    api.extra[("GET", "/vms")] = lambda r: envelope(
        _summaries(api)[:1], meta={"page": 1, "perPage": 1, "total": 2_000_000}
    )
    client = make_client(api)
    with pytest.raises(PagingError, match="announces 2000000 pages"):
        client.vms.all(details=False)
    assert len(api.requests) == 1
    with pytest.raises(PagingError, match="announces"):
        client.vms.list()


@pytest.mark.parametrize(
    "refusal",
    ["perPage: must be an integer from 1 to 25, got '100'", "Invalid value for perPage"],
)
def test_a_refused_page_size_is_lowered(make_client, strict, refusal, caplog):
    api = FakeApi()
    serve = paged(_rows(57), "meta", cap=25)

    def handler(request):
        if int(request.url.params.get("perPage", 20)) > 25:
            return envelope(refusal, 422)
        return serve(request)

    api.extra[("GET", "/firewalls")] = handler
    with caplog.at_level(logging.INFO, logger="svcnb"):
        assert len(make_client(api).firewalls.list()) == 57
    assert "refused perPage=100" in caplog.text


def test_a_server_that_knows_no_perpage_is_read_without_one(make_client, strict):
    # Stripe and others refuse a parameter they do not take; a size that names no number
    # is not guessed down step by step: the list is asked without one
    api = FakeApi()
    serve = paged(_rows(57), "meta", default=20)

    def handler(request):
        if "perPage" in request.url.params:
            return envelope("Received unknown parameter: perPage", 400)
        return serve(request)

    api.extra[("GET", "/firewalls")] = handler
    rows = make_client(api).firewalls.list()
    assert len(rows) == 57 and rows.complete
    # the refusal, then 3 pages at the server's own size, read twice (the set proven)
    assert len(api.requests) == 1 + 3 * 2


def test_an_unpaged_list_that_turns_out_paged_is_read_to_the_end(make_client, strict):
    api = FakeApi()
    hooks = [{"id": f"wh_{i}", "url": "https://h.example", "events": []} for i in range(30)]
    api.extra[("GET", "/webhooks")] = paged(hooks, "meta", default=20)
    assert [h["id"] for h in make_client(api).webhooks.list()] == [h["id"] for h in hooks]
    assert "page" not in api.requests[0].url.params  # the first call sends no page parameters
    assert api.requests[1].url.params["page"] == "2"


def test_a_short_page_ends_a_list_only_when_nothing_says_more(make_client, strict):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = paged(_rows(7), "bare", cap=50)
    client = make_client(api)
    rows = client.firewalls.list()
    assert len(rows) == 7 and rows.complete
    assert rows.proof == "page 2 came back empty; a re-read agreed on all 7 ids"
    # 7 of 100 asked: the end, or a cap nobody stated; page=1 at 7 per page shows pages count
    # from 1, and page 2 at that size comes back empty; then the same, read again
    assert [r.url.params.get("page") for r in api.requests] == [None, "1", "2", None, "2"]
    rows = read_all(client._req, "/firewalls", "firewall", per_page=5)
    assert len(rows) == 7 and rows.complete  # a full page of 5 asked: read on, the next is short


def _real_world(style: str, rows: list[dict], cap: int = 25):
    """List answers in the styles of real APIs, each serving at most ``cap`` per page and
    taking only its own parameters."""

    def handler(request: httpx.Request) -> httpx.Response:
        q = request.url.params
        url = request.url.copy_with(params={})
        if style == "stripe":  # {object, data, has_more, url}; starting_after=<last id>
            after = q.get("starting_after")
            start = 0 if after is None else [r["id"] for r in rows].index(after) + 1
            chunk = rows[start : start + cap]
            more = start + cap < len(rows)
            data = {"object": "list", "data": chunk, "has_more": more, "url": url.path}
            return envelope(data)
        start = int(q.get("offset", q.get("after", 0)))
        if style == "linode":  # {data, page, pages, results}, page from 1
            page = int(q.get("page", 1))
            start = (page - 1) * cap
        chunk = rows[start : start + cap]
        more = start + cap < len(rows)
        nxt = str(url.copy_with(params={"offset": start + cap})) if more else None
        body: dict = {"success": True}
        if style == "graph":  # paging.next (absent at the end), summary.totalCount
            paging = {"cursors": {"before": "b", "after": f"a{start}"}}
            if more:
                paging["next"] = nxt
            body |= {"data": chunk, "paging": paging, "summary": {"totalCount": len(rows)}}
        elif style == "odata":  # value, @odata.nextLink, @odata.count
            data = {"value": chunk, "@odata.count": len(rows)}
            if more:
                data["@odata.nextLink"] = nxt
            body["data"] = data
        elif style == "linode":
            pages = -(-len(rows) // cap)
            body |= {"data": chunk, "page": page, "pages": pages, "results": len(rows)}
        elif style == "hetzner":  # meta.pagination with page numbers of next/previous
            last = -(-len(rows) // cap)
            page = start // cap + 1
            pagination = {
                "page": page,
                "per_page": cap,
                "previous_page": page - 1 or None,
                "next_page": page + 1 if page < last else None,
                "last_page": last,
                "total_entries": len(rows),
            }
            body |= {"data": chunk, "meta": {"pagination": pagination}}
            if "page" in q:
                start = (int(q["page"]) - 1) * cap
                body["data"] = rows[start : start + cap]
                pagination["page"] = int(q["page"])
        return httpx.Response(200, json=body)

    return handler


@pytest.mark.parametrize("style", ["stripe", "graph", "odata", "linode", "hetzner"])
def test_list_styles_of_real_apis_are_read_whole_and_proven(make_client, strict, style):
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = _real_world(style, _rows(57))
    rows = make_client(api).firewalls.list()
    assert [r["id"] for r in rows] == [r["id"] for r in _rows(57)]
    assert rows.complete, rows.doubt
