"""``vms.all``: concurrent pages and details, incremental refresh, progress and announcement."""

from __future__ import annotations

import asyncio
import logging

import pandas as pd
import pytest
from _fakeapi import FakeApi, envelope

from svcnb.errors import PagingWarning, ScopeError


def _one_by_one(api):
    return [api.vms[i] for i in sorted(api.vms)]


def test_full_pull_returns_every_vm_with_details_in_list_order(make_client):
    api = FakeApi(vms=230)
    client = make_client(api)
    rows = client.vms.all(details=True, workers=8)
    assert rows == _one_by_one(api)
    pages = [r for r in api.requests if r.url.path.endswith("/vms")]
    assert len(pages) == 3 and len(api.requests) == 3 + 230
    assert client.stats["requests"] == 233


def test_summaries_only(make_client):
    api = FakeApi(vms=30)
    rows = make_client(api).vms.all(details=False)
    assert [r["id"] for r in rows] == sorted(api.vms)
    assert all("sshKeys" not in r for r in rows)
    assert len(api.requests) == 1


def test_refresh_reads_details_only_where_updated_at_moved(make_client):
    api = FakeApi(vms=150)
    client = make_client(api)
    before = client.vms.all()
    for vm_id in ("vm_0003", "vm_0077", "vm_0149"):
        api.touch(vm_id)
    api.requests.clear()
    after = client.vms.all(previous=before)
    assert after == _one_by_one(api)
    details = sorted(
        r.url.path.rsplit("/", 1)[1] for r in api.requests if not r.url.path.endswith("/vms")
    )
    assert details == ["vm_0003", "vm_0077", "vm_0149"]
    # 2 pages, read twice: no detail read checks the unchanged VMs, so a second read of the
    # list that agrees proves the set; and 3 details
    assert len(api.requests) == 2 * 2 + 3


def test_refresh_from_a_snapshot_with_timestamps_and_new_and_gone_vms(make_client):
    api = FakeApi(vms=20)
    client = make_client(api)
    before = client.vms.all()
    # As a snapshot gives them back: updatedAt as a pandas Timestamp.
    previous = [{**r, "updatedAt": pd.Timestamp(r["updatedAt"])} for r in before]
    api.vms["vm_9999"] = {**api.vms["vm_0001"], "id": "vm_9999"}
    del api.vms["vm_0005"]
    api.requests.clear()
    after = client.vms.all(previous=previous)
    assert [r["id"] for r in after] == sorted(api.vms)
    fetched = [r.url.path for r in api.requests if not r.url.path.endswith("/vms")]
    assert fetched == ["/api/public/v1/vms/vm_9999"]
    with pytest.raises(ValueError, match="full VM dicts"):
        client.vms.all(previous=pd.DataFrame(before))


def test_a_vm_deleted_during_the_pull_is_left_out_and_reported(make_client):
    api = FakeApi(vms=10)
    api.fault = lambda r: envelope("VM not found", 404) if r.url.path.endswith("vm_0004") else None
    with pytest.warns(PagingWarning, match="1 VM.*deleted while the fleet was read.*vm_0004"):
        rows = make_client(api).vms.all()
    assert "vm_0004" not in [r["id"] for r in rows] and len(rows) == 9


def test_a_failure_stops_the_pull_with_its_own_error(make_client):
    api = FakeApi(vms=50)
    api.fault = lambda r: (
        envelope("token lacks vms:read", 403) if r.url.path.endswith("vm_0020") else None
    )
    with pytest.raises(ScopeError, match="vms:read"):
        make_client(api).vms.all()


def test_works_inside_a_running_event_loop(make_client):
    api = FakeApi(vms=25)
    client = make_client(api)

    async def in_notebook_cell():
        return client.vms.all()

    assert asyncio.run(in_notebook_cell()) == _one_by_one(api)


def test_states_requests_and_time_first_and_shows_a_bar(make_client, caplog, capsys):
    api = FakeApi(vms=120, limit=600, window=60)
    client = make_client(api)
    with caplog.at_level(logging.INFO, logger="svcnb"):
        client.vms.all(progress=True)
    announce = [r.getMessage() for r in caplog.records if "requests (" in r.getMessage()]
    assert announce[0].startswith("vms.all: 122 requests (2 page(s) + 120 VM details)")
    assert "600 per 60s" in announce[0]
    bar = capsys.readouterr().err
    assert "VMs: 122 req" in bar and "122/122" in bar and "req/s" in bar
    assert "waited" in bar and "on the limit" in bar
    client.vms.all(progress=False)
    assert capsys.readouterr().err == ""
    client.progress = False
    client.vms.all()
    assert capsys.readouterr().err == ""


def test_bad_arguments_name_the_parameter(make_client):
    client = make_client(FakeApi(vms=1))
    with pytest.raises(ValueError, match="workers"):
        client.vms.all(workers=0)
    with pytest.raises(ValueError, match="previous is only used with details=True"):
        client.vms.all(details=False, previous=[])


def test_items_without_updated_at_read_every_detail_on_refresh_and_say_so_once(make_client, caplog):
    api = FakeApi(vms=12)
    for record in api.vms.values():
        del record["updatedAt"]
    client = make_client(api)
    before = client.vms.all()
    assert before == _one_by_one(api)
    with caplog.at_level(logging.INFO, logger="svcnb"):
        api.requests.clear()
        assert client.vms.all(previous=before) == _one_by_one(api)
        assert len(api.requests) == 1 + 12  # every detail: nothing tells what changed
        client.vms.all(previous=before)
    told = [r for r in caplog.records if "carry no updatedAt" in r.getMessage()]
    assert len(told) == 1 and told[0].levelno == logging.INFO


def test_full_list_items_need_no_detail_reads(make_client):
    api = FakeApi(vms=30)
    api.extra[("GET", "/vms")] = lambda r: envelope(
        _one_by_one(api), meta={"page": 1, "perPage": 100, "total": 30, "totalPages": 1}
    )
    client = make_client(api)
    assert client.vms.all() == _one_by_one(api)
    assert len(api.requests) == 1
    before = client.vms.all()
    api.touch("vm_0003")
    assert client.vms.all(previous=before) == _one_by_one(api)
    assert len(api.requests) == 3
