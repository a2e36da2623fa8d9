"""``vms.pull``: the list at once, details in the background; bounded work; whole lists."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import CancelledError

import pytest
from _fakeapi import FakeApi, envelope

import svcnb
from svcnb.client import _progressive
from svcnb.errors import PagingWarning, ScopeError


def _one_by_one(api):
    return [api.vms[i] for i in sorted(api.vms)]


def _is_detail(request) -> bool:
    return not request.url.path.endswith("/vms")


def _hold_details(api: FakeApi) -> threading.Event:
    """Detail reads wait until the returned event is set (list pages pass)."""
    release = threading.Event()

    def fault(request):
        if _is_detail(request):
            assert release.wait(30), "the test never released the detail reads"
        return None

    api.fault = fault
    return release


def test_the_list_comes_first_and_the_details_fill_in(make_client):
    api = FakeApi(vms=250)
    release = _hold_details(api)
    client = make_client(api)
    pull = client.vms.pull(workers=4)
    try:
        assert [r["id"] for r in pull.summaries] == sorted(api.vms)
        assert not pull.done and not pull.wait(0.01)
        early = pull.records()
        assert [r["id"] for r in early] == sorted(api.vms)
        assert all("sshKeys" not in r for r in early)  # summaries until the details come
        assert pull.progress.done == 3 and pull.progress.total == 3 + 250
        with pytest.raises(TimeoutError, match="still being read"):
            pull.result(timeout=0.01)
        assert "reading details" in repr(pull)
    finally:
        release.set()
    assert pull.result() == _one_by_one(api)
    assert pull.done and pull.progress == (253, 253)
    assert pull.records() == _one_by_one(api)
    assert "done" in repr(pull)


def test_pages_are_read_before_details(make_client):
    api = FakeApi(vms=1500)
    make_client(api).vms.pull(workers=6).result()
    kinds = ["detail" if _is_detail(r) else "page" for r in api.requests]
    # No detail is read before the list is whole: the first frame waits for the pages only.
    assert kinds == ["page"] * 15 + ["detail"] * 1500


def test_in_flight_work_is_bounded_by_the_workers(make_client):
    api = FakeApi(vms=600, latency=0.002)
    before = threading.active_count()
    seen = []
    fault = lambda r: seen.append(threading.active_count())  # noqa: E731
    api.fault = fault
    assert make_client(api).vms.all(workers=3) == _one_by_one(api)
    assert api.inflight_max <= 3
    assert max(seen) <= before + 3


def test_the_pulls_threads_end_with_it(make_client):
    api = FakeApi(vms=120)
    before = {t.ident for t in threading.enumerate()}
    pull = make_client(api).vms.pull(workers=5)
    pull.result()
    for thread in threading.enumerate():
        if thread.ident not in before and thread.name.startswith("svcnb-vms"):
            thread.join(5)
            assert not thread.is_alive()


def test_a_detail_failure_is_raised_by_result_and_kept_on_the_pull(make_client):
    api = FakeApi(vms=60)
    api.fault = lambda r: (
        envelope("token lacks vms:read", 403) if r.url.path.endswith("vm_0030") else None
    )
    pull = make_client(api).vms.pull()
    assert len(pull.summaries) == 60  # the list was read
    assert pull.wait(30)
    assert isinstance(pull.error, ScopeError) and "failed" in repr(pull)
    with pytest.raises(ScopeError, match="vms:read"):
        pull.result()


def test_a_page_failure_is_raised_by_pull_itself(make_client):
    api = FakeApi(vms=300)
    api.fault = lambda r: (
        envelope("token lacks vms:read", 403) if r.url.params.get("page") == "2" else None
    )
    with pytest.raises(ScopeError):
        make_client(api).vms.pull()
    # Nothing goes on after it: the pull's threads ended before it raised.
    assert not [t for t in threading.enumerate() if t.name.startswith("svcnb-vms")]
    assert len(api.requests) < 303


def test_cancel_stops_queuing_and_keeps_what_was_read(make_client):
    api = FakeApi(vms=400)
    release = _hold_details(api)
    pull = make_client(api).vms.pull(workers=2)
    pull.cancel()
    release.set()
    assert pull.wait(30)
    details = sum(1 for r in api.requests if _is_detail(r))
    assert details <= 2  # only those already in flight
    with pytest.raises(CancelledError):
        pull.result()
    assert len(pull.records()) == 400 and "cancelled" in repr(pull)


def test_refresh_through_pull_reads_only_changed_vms(make_client):
    api = FakeApi(vms=150)
    client = make_client(api)
    before = client.vms.pull().result()
    api.touch("vm_0010")
    api.requests.clear()
    pull = client.vms.pull(previous=before)
    assert pull.result() == _one_by_one(api)
    assert [r.url.path.rsplit("/", 1)[1] for r in api.requests if _is_detail(r)] == ["vm_0010"]
    assert pull.progress == (3, 3)


def test_a_vm_deleted_during_the_pull_is_warned_about_on_result(make_client):
    api = FakeApi(vms=10)
    api.fault = lambda r: envelope("VM not found", 404) if r.url.path.endswith("vm_0004") else None
    pull = make_client(api).vms.pull()
    with pytest.warns(PagingWarning, match="vm_0004"):
        rows = pull.result()
    assert len(rows) == 9 and len(pull.records()) == 9


def test_the_bar_is_redrawn_a_few_times_not_per_request(make_client, capsys, monkeypatch):
    # With the redraw interval longer than the pull, the bar is drawn when it opens, once on
    # the first answer and once at the end, whatever the number of requests.
    monkeypatch.setattr(_progressive, "SHOW_EVERY_SECONDS", 1e9)
    api = FakeApi(vms=400)
    make_client(api).vms.all(progress=True)
    frames = [f for f in capsys.readouterr().err.split("\r") if "VMs:" in f]
    assert len(frames) <= 4
    assert "404/404" in frames[-1]


def test_attachments_are_read_whole_at_a_thousand_vms(make_sandbox):
    sb = make_sandbox(vms=1200, seed=7, time_scale=0.0)
    client = svcnb.Client(sb.tokens["admin"], sb.base_url, progress=False)
    truth = Counter(a["networkId"] for a in sb.control.truth()["attachments"])
    crowded = max(truth, key=truth.get)
    assert truth[crowded] > 61
    attached = client.networks.attachments(crowded)
    for gone in attached[61:]:
        client.networks.detach(crowded, gone["vmId"])
    assert len(client.networks.attachments(crowded)) == 61
    for network in client.networks.list():
        got = client.networks.attachments(network["id"])
        assert len(got) == len({a["vmId"] for a in got})
        assert len(got) == (61 if network["id"] == crowded else truth[network["id"]])
    client.close()
