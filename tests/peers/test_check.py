"""The harness itself, where a fleet changes while it is read: a reader that reads every VM
present throughout is right whatever it did with the VMs created or deleted meanwhile, and one
that skips a VM present throughout is silent wrong, however well its count matches."""

from __future__ import annotations

from decimal import Decimal

from _loopback import loopback_client  # tests/ is on sys.path (pytest rootdir insertion)

from . import cobalt, sable
from .check import Outcome, _Fleet, _monthly_truth, _set

BEFORE = {"vms": [{"id": i} for i in "abc"]}
AFTER = {"vms": [{"id": i} for i in "acd"]}  # b deleted and d created during the read


def _judge(read: set, before: dict, after: dict, state: str = "ok") -> Outcome:
    out = Outcome()
    fleet = _Fleet(before, after)
    _set(out, "vm ids", read, fleet.ids, state, frozenset(fleet.changed))
    return out


def test_a_vm_created_or_deleted_during_the_read_may_be_read_or_not():
    for read in ({"a", "c"}, {"a", "b", "c"}, {"a", "c", "d"}, {"a", "b", "c", "d"}):
        out = _judge(read, BEFORE, AFTER)
        assert (out.passed, out.silent_wrong) == (1, []), read


def test_a_vm_present_throughout_must_be_read_and_no_other_may_appear():
    skipped = _judge({"a", "b", "d"}, BEFORE, AFTER)  # c skipped: the count still matches
    assert skipped.silent_wrong == ["vm ids: 3 read of 3, stored as ok"]
    stranger = _judge({"a", "c", "e"}, BEFORE, AFTER)
    assert len(stranger.silent_wrong) == 1
    said = _judge({"a", "d"}, BEFORE, AFTER, state="incomplete")
    assert said.flagged and not said.silent_wrong
    unchanged = _judge({"a", "c"}, AFTER, AFTER)
    assert len(unchanged.silent_wrong) == 1, "without a change every VM must be read"


def test_the_run_rate_may_count_a_changed_vm_or_not():
    def vm(id_, amount):
        return {
            "id": id_,
            "status_class": "running",
            "price_monthly": {"amount": amount, "currency": "EUR"},
        }

    before = {"vms": [vm("a", "10"), vm("b", "2.50"), vm("c", "1")]}
    after = {"vms": [vm("a", "10"), vm("c", "1"), vm("d", "0.25")]}
    end, may = _monthly_truth(_Fleet(before, after))["EUR"]
    assert end == Decimal("11.25")
    assert may == {Decimal(x) for x in ("11", "13.50", "11.25", "13.75")}
    assert _monthly_truth(_Fleet(after, after))["EUR"] == (Decimal("11.25"), {Decimal("11.25")})


def _ids(peer, pages) -> set[str]:
    with loopback_client(peer.base_url, headers={"x-api-key": peer.token}) as http:
        return {v["id"] for body in pages(http) for v in body["data"]}


def test_a_reader_following_cobalts_links_is_right_while_its_fleet_changes():
    def pages(http):  # every rel=next, empty pages included
        url = cobalt.CANON + "/vms"
        while url:
            body = http.get(url).json()
            yield body
            url = next((lk["href"] for lk in body["links"] if lk["rel"] == "next"), None)

    with cobalt.serve() as peer:
        before = peer.truth()
        read = _ids(peer, pages)
        after = peer.truth()
    assert {v["id"] for v in before["vms"]} != {v["id"] for v in after["vms"]}
    out = _judge(read, before, after)
    assert (out.passed, out.silent_wrong) == (1, [])


def test_a_reader_walking_sables_offsets_skips_a_vm_and_is_judged_wrong():
    def pages(http):  # offset += what came, until a short page; the count comes out right
        offset = 0
        while True:
            body = http.get(sable.PREFIX + "/vms", params={"offset": offset}).json()
            yield body
            offset += len(body["data"])
            if len(body["data"]) < sable.PAGE:
                assert offset == body["meta"]["total"]
                return

    with sable.serve() as peer:
        before = peer.truth()
        read = _ids(peer, pages)
        after = peer.truth()
    out = _judge(read, before, after)
    assert len(out.silent_wrong) == 1 and len(read) == len(after["vms"])
