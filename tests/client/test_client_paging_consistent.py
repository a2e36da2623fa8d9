"""A list read while it changes is proven as a set, not as a count; lists that page in shapes
the first reader did not follow (an empty page that continues, links arrays, an unpaged list)."""

from __future__ import annotations

import warnings

import httpx
import pytest
from _fakeapi import FakeApi, envelope, vm
from _fakelists import paged

from svcnb.client import MAX_EMPTY_PAGES
from svcnb.config import ConfigError
from svcnb.errors import PagingWarning


@pytest.fixture
def strict():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PagingWarning)
        yield


def _summaries(api: FakeApi) -> list[dict]:
    nested = ("sshKeys", "firewalls", "privateNetworks")
    return [{k: v for k, v in api.vms[i].items() if k not in nested} for i in sorted(api.vms)]


def _churn_before(api: FakeApi, asked: str, value: str) -> None:
    """Before the first request whose ``asked`` parameter is ``value``: VM 1 (already read) is
    deleted and VM 99 created, so the total stays the same and the pages after it shift."""
    done = []

    def fault(request: httpx.Request) -> None:
        if not done and request.url.params.get(asked) == value:
            done.append(True)
            del api.vms["vm_0001"]
            api.vms["vm_0099"] = vm(99)
        return None

    api.fault = fault


def _offset_handler(api: FakeApi, size: int):
    """DRF's offset paging: ``{count, next, previous, results}`` with offset links."""

    def handler(request: httpx.Request) -> httpx.Response:
        offset = int(request.url.params.get("offset", 0))
        rows = _summaries(api)
        chunk = rows[offset : offset + size]
        more = offset + size < len(rows)
        nxt = str(request.url.copy_with(params={"offset": offset + size, "limit": size}))
        body = {"count": len(rows), "next": nxt if more else None, "previous": None}
        return envelope({**body, "results": chunk})

    return handler


@pytest.mark.parametrize("by", ["page", "offset"])
def test_a_list_that_changes_between_pages_with_an_equal_total_is_read_again(make_client, by):
    api = FakeApi(vms=10)
    if by == "page":
        api.extra[("GET", "/vms")] = paged(lambda: _summaries(api), "meta", cap=4)
        _churn_before(api, "page", "2")
    else:
        api.extra[("GET", "/vms")] = _offset_handler(api, 4)
        _churn_before(api, "offset", "4")
    client = make_client(api)
    with pytest.warns(PagingWarning, match=r"changed while it was read \(added vm_0004"):
        rows = client.vms.list()
    # the first read kept the deleted VM 1 and missed VM 4 (it moved onto page 1 before page 2
    # was read): the count matched, the set did not; the re-reads agree on the set as it is now
    assert [r["id"] for r in rows] == sorted(api.vms)
    assert rows.complete and "a re-read agreed" in rows.proof
    assert rows.added == ("vm_0004",) and rows.removed == ("vm_0001",)


@pytest.mark.parametrize("by", ["page", "offset"])
def test_the_bulk_pull_reads_the_fleet_as_it_is_after_a_change_between_pages(make_client, by):
    api = FakeApi(vms=10)
    if by == "page":
        api.extra[("GET", "/vms")] = paged(lambda: _summaries(api), "meta", cap=4)
        _churn_before(api, "page", "2")
    else:
        api.extra[("GET", "/vms")] = _offset_handler(api, 4)
        _churn_before(api, "offset", "4")
    with pytest.warns(PagingWarning, match="vm_0001"):
        full = make_client(api).vms.all(details=True, workers=4)
    assert [v["id"] for v in full] == sorted(api.vms)  # vm_0099 in, vm_0001 out
    assert full.complete
    assert full == [api.vms[i] for i in sorted(api.vms)]


def test_a_list_that_never_settles_is_incomplete_and_says_what_changed(make_client):
    api = FakeApi(vms=10)
    api.extra[("GET", "/vms")] = paged(lambda: _summaries(api), "meta", cap=4)
    made = iter(range(100, 200))

    def fault(request: httpx.Request) -> None:  # a VM comes and one goes before every page 2
        if request.url.params.get("page") == "2":
            gone = sorted(api.vms)[0]
            del api.vms[gone]
            new = vm(next(made))
            api.vms[new["id"]] = new
        return None

    api.fault = fault
    with pytest.warns(PagingWarning, match="may be incomplete: the list changed"):
        rows = make_client(api).vms.list()
    assert not rows.complete and "reads did not agree" in rows.doubt
    assert rows.added and rows.removed


def test_a_vm_deleted_after_the_list_is_read_is_proven_gone_by_a_re_read(make_client):
    api = FakeApi(vms=6)
    read = []

    def fault(request: httpx.Request) -> None:
        # the list answers once; then, before the first detail read, VM 2 is deleted and
        # VM 50 created: the details find the deletion, a re-read of the list the creation
        if request.url.path.endswith("/vms"):
            read.append(True)
        elif read and "vm_0002" in api.vms:
            del api.vms["vm_0002"]
            api.vms["vm_0050"] = vm(50)
        return None

    api.fault = fault
    with pytest.warns(PagingWarning, match="vm_0002"):
        full = make_client(api).vms.all(details=True, workers=1)
    assert [v["id"] for v in full] == sorted(api.vms)  # the created VM is read, not missed
    assert full.complete and "vm_0002" in full.removed and "vm_0050" in full.added


def test_a_quiet_detailed_pull_costs_no_re_read(make_client, strict):
    # every listed VM's detail read checks the set: a list that did not change is not re-read
    api = FakeApi(vms=10)
    api.extra[("GET", "/vms")] = paged(lambda: _summaries(api), "meta", cap=4)
    full = make_client(api).vms.all(details=True, workers=2)
    assert full.complete and "every listed VM answered its detail read" in full.proof
    pages = [r for r in api.requests if r.url.path.endswith("/vms")]
    assert len(pages) == 3


def test_an_empty_page_with_a_continuation_is_not_the_end(make_client, strict):
    api = FakeApi()
    rows = [{"id": f"fw_{i:02d}", "name": str(i)} for i in range(40)]
    # pages of 10, but pages 2 to 4 hold only soft-deleted rows: empty, each with a cursor
    chunks = {0: rows[:10], 1: [], 2: [], 3: [], 4: rows[10:40]}

    def handler(request: httpx.Request) -> httpx.Response:
        at = int(request.url.params.get("cursor", "0"))
        more = at < 4
        return envelope(chunks[at], meta={"nextCursor": str(at + 1) if more else None})

    api.extra[("GET", "/firewalls")] = handler
    listed = make_client(api).firewalls.list()
    assert [r["id"] for r in listed] == [r["id"] for r in rows]
    assert listed.complete and listed.proof.startswith("its nextCursor was null")


def test_empty_pages_that_continue_for_ever_are_a_doubt(make_client):
    api = FakeApi()

    def handler(request: httpx.Request) -> httpx.Response:
        at = int(request.url.params.get("cursor", "0"))
        items = [{"id": "fw_1", "name": "a"}] if at == 0 else []
        return envelope(items, meta={"nextCursor": str(at + 1)})

    api.extra[("GET", "/firewalls")] = handler
    with pytest.warns(PagingWarning, match="empty pages in a row"):
        listed = make_client(api).firewalls.list()
    assert not listed.complete and "empty pages in a row" in listed.doubt
    assert len(api.requests) == 2 + MAX_EMPTY_PAGES


@pytest.mark.parametrize("where", ["body", "meta"])
def test_a_links_array_of_rel_and_href_is_followed(make_client, strict, where):
    api = FakeApi()
    rows = [{"id": f"vm_{i:02d}", "name": str(i)} for i in range(70)]

    def handler(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params.get("page[number]", 1))
        chunk = rows[(page - 1) * 25 : page * 25]
        links = [{"rel": "self", "href": str(request.url)}]
        if page * 25 < len(rows):
            nxt = request.url.copy_with(params={"page[number]": page + 1})
            links.append({"rel": "next", "href": str(nxt)})
        if where == "body":
            return httpx.Response(200, json={"data": chunk, "links": links})
        return envelope(chunk, meta={"links": links})

    api.extra[("GET", "/firewalls")] = handler
    listed = make_client(api).firewalls.list()
    assert [r["id"] for r in listed] == [r["id"] for r in rows]
    assert listed.complete and "its links named no next page" in listed.proof


def test_a_links_array_svcnb_cannot_read_is_named(make_client):
    api = FakeApi()

    def handler(request: httpx.Request) -> httpx.Response:
        chunk = [{"id": "a", "name": "a"}]
        return httpx.Response(200, json={"data": chunk, "links": ["/firewalls?after=a"]})

    api.extra[("GET", "/firewalls")] = handler
    with pytest.warns(PagingWarning, match="links"):
        listed = make_client(api).firewalls.list()
    assert not listed.complete and "links" in listed.doubt


def _token_service(api: FakeApi) -> None:
    """Google's style: a token beside data while more follows, none on the last page."""
    rows = [{"id": f"fw_{i:02d}", "name": str(i)} for i in range(5)]

    def handler(request: httpx.Request) -> httpx.Response:
        at = int(request.url.params.get("pageToken", "0"))
        body = {"success": True, "data": rows[at : at + 3]}
        if at + 3 < len(rows):
            body["nextPageToken"] = str(at + 3)
        return httpx.Response(200, json=body)

    api.extra[("GET", "/firewalls")] = handler


@pytest.mark.parametrize("pin", [None, "true", "false"])
def test_an_end_without_a_continuation_is_assumed_unless_pinned(
    make_client, monkeypatch, tmp_path, pin
):
    config = tmp_path / "svcnb.toml"
    if pin is not None:
        config.write_text(f"[paging]\nno_continuation_is_end = {pin}\n")
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    api = FakeApi()
    _token_service(api)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        listed = make_client(api).firewalls.list()
    assert len(listed) == 5
    if pin is None:  # complete as before, the assumption named for the doctor
        assert listed.complete and listed.assumed == "paging.no_continuation_is_end"
    elif pin == "true":
        assert listed.complete and listed.assumed is None
        assert listed.pinned == f"{config} [paging] no_continuation_is_end"
    else:
        assert not listed.complete and "is false" in listed.doubt


def test_a_paging_pin_svcnb_does_not_know_is_a_config_error(make_client, monkeypatch, tmp_path):
    config = tmp_path / "svcnb.toml"
    config.write_text("[paging]\nlast_page_is_short = true\n")
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    api = FakeApi()
    _token_service(api)
    with pytest.raises(ConfigError, match="last_page_is_short.*no_continuation_is_end"):
        make_client(api).firewalls.list()
