"""``vms.stop(wait=True)`` reads status words through svcnb.vocab, never as raw words."""

from __future__ import annotations

import pytest
from _fakeapi import FakeApi, envelope

from svcnb import vocab
from svcnb.client import _vms
from svcnb.errors import SvcnbError, WaitTimeout


@pytest.fixture(autouse=True)
def _builtin_words(monkeypatch):
    """The built-in vocabulary only (no user config file), and polls that do not sleep long."""
    monkeypatch.setattr(_vms, "STOP_POLL_FIRST_SECONDS", 0.001)
    monkeypatch.setattr(_vms, "STOP_POLL_MAX_SECONDS", 0.002)
    with vocab.using(vocab.Vocabulary()):
        yield


def _statuses(api: FakeApi, words: list[str]) -> None:
    """GET /vms/vm_0001 answers each word in turn, then the last one for ever."""
    seen = iter(words)
    last = {"word": words[0]}

    def handler(request):
        last["word"] = next(seen, last["word"])
        return envelope({**api.vms["vm_0001"], "status": last["word"]})

    api.extra[("GET", "/vms/vm_0001")] = handler


@pytest.mark.parametrize("word", ["halted", "off", "Powered-Off", "stopped"])
def test_a_synonym_of_stopped_ends_the_wait(make_client, word):
    api = FakeApi(vms=2)
    _statuses(api, ["shutting_down", "stopping", word])
    assert make_client(api).vms.stop("vm_0001", wait=True, timeout=10) == "act_1"
    assert len([r for r in api.requests if r.method == "GET"]) == 3


def test_an_unknown_word_is_not_stopped_and_the_timeout_says_how_to_map_it(make_client):
    api = FakeApi(vms=2)
    _statuses(api, ["dormant"])
    unknown = pytest.warns(vocab.UnknownWordWarning, match="dormant")
    with unknown, pytest.raises(WaitTimeout) as info:
        make_client(api).vms.stop("vm_0001", wait=True, timeout=0.05)
    said = str(info.value)
    assert "did not reach 'stopped' within 0.05s" in said and "'dormant'" in said
    assert "svcnb.vocab.extend(vm_status={'dormant': 'stopped'})" in said
    assert isinstance(info.value, TimeoutError) and isinstance(info.value, SvcnbError)
    vocab.extend(vm_status={"dormant": "stopped"})  # mapped: the same answer ends the wait
    assert make_client(api).vms.stop("vm_0001", wait=True, timeout=10) == "act_2"


# ("locked" is not among them: a VM held during a backup at Vultr, a suspended one at Scaleway;
# nor "suspended": held for non-payment, or suspended to disk by its user at OpenStack)
@pytest.mark.parametrize("word", ["destroyed", "terminated", "deleted"])
def test_a_vm_that_will_never_stop_ends_the_wait_at_once(make_client, word):
    api = FakeApi(vms=2)
    _statuses(api, ["stopping", word])
    with pytest.raises(SvcnbError, match=f"is '{word}'.*will not reach 'stopped'"):
        make_client(api).vms.stop("vm_0001", wait=True, timeout=60)


def test_a_running_vm_past_the_timeout_says_the_stop_may_still_complete(make_client):
    api = FakeApi(vms=2)
    _statuses(api, ["running"])
    with pytest.raises(WaitTimeout, match="status now 'running', class running.*still complete"):
        make_client(api).vms.stop("vm_0001", wait=True, timeout=0.02)
