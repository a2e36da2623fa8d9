"""The pacing governor: shared per token, follows the headers, counts requests in flight."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from _fakeapi import BASE, TOKEN, FakeApi

import svcnb
from svcnb.client import Governor, governor_for


def _headers(remaining, reset, limit=10):
    return {
        "x-ratelimit-limit": str(limit),
        "x-ratelimit-remaining": str(remaining),
        "x-ratelimit-reset": str(reset),
    }


def test_one_governor_per_token_and_server():
    assert governor_for(BASE, TOKEN) is governor_for(BASE, TOKEN)
    assert governor_for(BASE, TOKEN) is not governor_for(BASE, "svc_other_token_0000")
    assert governor_for(BASE, TOKEN) is not governor_for("http://other.test", TOKEN)
    assert governor_for(BASE, TOKEN) is governor_for(BASE + "/api/v1", TOKEN)  # same server
    a = svcnb.Client(TOKEN, "http://shared.test", progress=False)
    b = svcnb.Client(TOKEN, "http://shared.test", progress=False)
    assert a._req.governor is b._req.governor


def test_answers_arriving_out_of_order_never_raise_remaining():
    gov = Governor()
    gov.acquire()
    gov.release(_headers(9, 30))
    gov.acquire(), gov.acquire()
    gov.release(_headers(7, 30))  # the later request answered first
    gov.release(_headers(8, 30))
    assert gov.remaining == 7
    gov.acquire()
    gov.release(_headers(3, 29.5))  # rounding of the same window's end: the same window
    assert gov.remaining == 3


def test_requests_in_flight_count_against_what_remains():
    gov = Governor()
    gov.acquire()
    gov.release(_headers(2, 30))
    gov.acquire()
    gov.acquire()  # 2 in flight, 2 remaining: the next one has to wait for an answer
    third = threading.Event()
    waiter = threading.Thread(target=lambda: (gov.acquire(), third.set()))
    waiter.start()
    assert not third.wait(0.2)
    gov.release(_headers(5, 30))  # the server had a larger budget than feared
    assert third.wait(5)
    waiter.join()


def test_a_429_pauses_every_thread_of_the_token():
    gov = Governor()
    gov.acquire()
    gov.release(_headers(5, 30))
    gov.pause(0.3)
    assert gov.remaining == 0
    done = threading.Event()
    threading.Thread(target=lambda: (gov.acquire(), done.set()), daemon=True).start()
    assert not done.wait(0.1)
    assert done.wait(5)  # after the pause, one probe goes out


def test_concurrent_pulls_on_one_token_never_see_a_429(make_client):
    api = FakeApi(vms=45, limit=12, window=0.25, latency=0.01)
    first = make_client(api)
    second = make_client(api)
    assert first._req.governor is second._req.governor
    with ThreadPoolExecutor(2) as pool:
        pulls = [pool.submit(c.vms.all, details=True, workers=6) for c in (first, second)]
        results = [p.result() for p in pulls]
    assert sorted(set(api.statuses)) == [200]
    assert results[0] == results[1] and len(results[0]) == 45
    assert api.inflight_max > 1  # it did run concurrently
    assert first.stats["rate_limited"] == second.stats["rate_limited"] == 0
    assert first.stats["waited_seconds"] + second.stats["waited_seconds"] > 0


def test_a_server_without_rate_limit_headers_is_not_probed_one_request_at_a_time(make_client):
    api = FakeApi(vms=40, latency=0.01)  # no limit: its answers carry no X-RateLimit-* headers
    client = make_client(api)
    assert len(client.vms.all(workers=8)) == 40
    assert api.inflight_max > 1
