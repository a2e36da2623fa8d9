"""webhooks.reconcile: hand-made snapshots and event logs, then the sandbox's own events."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from _tiers import dialects

import svcnb
from svcnb import frames, vocab
from svcnb.reports import webhooks
from svcnb.store import EventLog, Store


@pytest.fixture(autouse=True)
def _suspended_pinned():
    """This fleet's "suspended" is a hold for non-payment (the sandbox's word), pinned as its
    user would: providers differ on the word, so it is no built-in one."""
    vocab.extend(vm_status={"suspended": "suspended"})


T0 = pd.Timestamp("2026-11-01T00:00:00Z")
T1 = pd.Timestamp("2026-11-02T00:00:00Z")


def vm(i: int, status: str, renewal: str = "2026-11-20T00:00:00Z") -> dict:
    return {
        "id": f"vm-{i}",
        "name": f"web-{i}",
        "status": status,
        "billing": {"status": "active", "nextRenewalAt": renewal, "priceMonthly": "10.00"},
    }


HOOK = {
    "id": "whk-1",
    "url": "https://example.com/h",
    "events": ["vm.stopped", "vm.suspended", "vm.started", "vm.renewed"],
    "isActive": True,
}


def write(store: Store, when, vms: list[dict], hooks=(HOOK,)) -> None:
    store.write(
        {
            "vms": frames.vms(vms),
            "webhooks": frames.webhooks(list(hooks)),
            "deliveries": frames.deliveries([]),
        },
        server_time=when,
        partial=True,
    )


def event(store: Store, event_id: str, type_: str, vm_id: str | None, at: str) -> None:
    EventLog(store.path).append(
        {
            "event_id": event_id,
            "type": type_,
            "created_at": at,
            "data": {"vm": {"id": vm_id, "status": "x"}} if vm_id else {"reason": "?"},
        }
    )


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "s")
    # vm-1 suspended, vm-2 stopped, vm-3 renewed, vm-4 unchanged, vm-5 created (not subscribed)
    write(
        store,
        T0,
        [vm(1, "running"), vm(2, "running"), vm(3, "running"), vm(4, "running")],
    )
    write(
        store,
        T1,
        [
            vm(1, "suspended"),
            vm(2, "stopped"),
            vm(3, "running", renewal="2026-12-20T00:00:00Z"),
            vm(4, "running"),
            vm(5, "running"),
        ],
    )
    return store


def test_missing_and_unseen_events_are_named(store):
    event(store, "e1", "vm.stopped", "vm-2", "2026-11-01T06:00:00Z")  # matches vm-2
    event(store, "e2", "vm.stopped", "vm-4", "2026-11-01T07:00:00Z")  # vm-4 stopped ...
    event(store, "e3", "vm.started", "vm-4", "2026-11-01T08:00:00Z")  # ... and started again
    event(store, "e4", "vm.renewed", "vm-3", "2026-11-01T09:00:00Z")  # matches vm-3
    event(store, "e5", "vm.suspended", "vm-1", "2026-10-31T23:00:00Z")  # before the window
    event(store, "e6", "vm.stopped", None, "2026-11-01T10:00:00Z")  # names no VM
    event(store, "e7", "billing.low_balance", None, "2026-11-01T11:00:00Z")  # not compared
    out = webhooks.reconcile(store)
    assert list(out.columns) == webhooks.RECONCILE_COLUMNS
    rows = list(zip(out["finding"], out["event_type"], out["vm_id"].fillna("-"), strict=True))
    assert rows == [
        ("missing_event", "vm.suspended", "vm-1"),  # e5 came before the first snapshot
        ("unseen_change", "vm.started", "vm-4"),
        ("unseen_change", "vm.stopped", "vm-4"),
        ("unseen_change", "vm.stopped", "-"),
    ]
    missing = out.iloc[0]
    assert missing[["name", "before", "after"]].tolist() == ["web-1", "running", "suspended"]
    assert pd.isna(missing["event_created_at"]) and missing["from_time"] == T0
    assert out.loc[3, "after"] == "event without a VM" and out.loc[3, "event_id"] == "e6"
    assert out.attrs["matched"] == 2
    assert out.attrs["not_compared"] == {"billing.low_balance": 1}
    # vm-5 appeared, but nobody subscribed to vm.created: not expected
    assert "vm-5" not in set(out["vm_id"].dropna())


def test_everything_matched_gives_no_rows(store):
    event(store, "e1", "vm.stopped", "vm-2", "2026-11-01T06:00:00Z")
    event(store, "e2", "vm.suspended", "vm-1", "2026-11-01T07:00:00Z")
    event(store, "e3", "vm.renewed", "vm-3", "2026-11-02T00:00:00Z")  # at to_time: inside
    out = webhooks.reconcile(store, since=T0, at=T1)
    assert out.empty and out.attrs["matched"] == 3


def test_reconcile_needs_two_snapshots(tmp_path):
    store = Store(tmp_path / "s")
    write(store, T0, [vm(1, "running")])
    with pytest.raises(ValueError, match="needs two snapshots"):
        webhooks.reconcile(store)


@pytest.mark.parametrize("dialect", dialects(["default", "acme", "linkhdr", "cursor"]))
def test_the_sandbox_events_reconcile_and_a_dropped_one_is_found(dialect, make_sandbox, tmp_path):
    """The log holds every event the sandbox emitted but one vm.stopped: that one is missing."""
    sb = make_sandbox(vms=8, seed=3, dialect=dialect, rate_limit=100_000)
    store = Store(tmp_path / "s")
    with (
        svcnb.Client(api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False) as c,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # the dialects' odd words are not under test here
        c.webhooks.create("https://example.com/h", list(webhooks.COMPARED_EVENTS))
        store.take(c)
        running = [v["id"] for v in c.vms.list() if sb.control.vm(v["id"])["status"] == "running"]
        c.vms.stop(running[0])
        sb.control.advance(86_400)
        store.take(c)
    log = EventLog(store.path)
    dropped = None
    for e in sb.control.events():
        if e["type"] == "vm.stopped" and e["data"]["vm"]["id"] == running[0]:
            dropped = e["id"]
            continue
        record = {"event_id": e["id"], "type": e["type"], "created_at": e["createdAt"]}
        log.append({**record, "data": e["data"]})
    assert dropped is not None
    out = webhooks.reconcile(store)
    assert out[["finding", "event_type", "vm_id"]].values.tolist() == [
        ["missing_event", "vm.stopped", running[0]]
    ]


def _two_accounts(tmp_path) -> Store:
    """One store, accounts 'a' and 'b', each on its own server; the event log is the store's,
    shared by both. a: vm-a1 stops between T0 and T1, vm-a2 runs on. b: vm-b1 stops, vm-b2 is
    gone at T1."""
    store = Store(tmp_path / "s")
    fleets = {
        "a": (
            [_vm("a1", "running"), _vm("a2", "running")],
            [_vm("a1", "stopped"), _vm("a2", "running")],
        ),
        "b": ([_vm("b1", "running"), _vm("b2", "running")], [_vm("b1", "stopped")]),
    }
    for name, (before, after) in fleets.items():
        for when, vms in ((T0, before), (T1, after)):
            store.write(
                {
                    "vms": frames.vms(vms),
                    "webhooks": frames.webhooks([HOOK]),
                    "deliveries": frames.deliveries([]),
                },
                server_time=when,
                partial=True,
                server=f"https://{name}.example.test",
                account=name,
            )
    return store


def _vm(suffix: str, status: str) -> dict:
    return {**vm(0, status), "id": f"vm-{suffix}", "name": f"web-{suffix}"}


def test_reconciling_one_account_never_lists_another_accounts_vms(tmp_path):
    store = _two_accounts(tmp_path)
    event(store, "e1", "vm.stopped", "vm-a1", "2026-11-01T06:00:00Z")  # a's, matches
    event(store, "e2", "vm.stopped", "vm-b1", "2026-11-01T06:00:00Z")  # b's, matches
    event(store, "e3", "vm.started", "vm-b1", "2026-11-01T07:00:00Z")  # b's, unseen by b
    event(store, "e4", "vm.stopped", "vm-b2", "2026-11-01T08:00:00Z")  # b's (gone at T1)
    event(store, "e5", "vm.stopped", "vm-a2", "2026-11-01T09:00:00Z")  # a's, unseen by a
    a = webhooks.reconcile(store.for_account("a"))
    assert a[["finding", "event_type", "vm_id"]].values.tolist() == [
        ["unseen_change", "vm.stopped", "vm-a2"]
    ]
    assert a.attrs["matched"] == 1 and a.attrs["other_accounts"] == 3
    b = webhooks.reconcile(store.for_account("b"))
    assert b[["finding", "event_type", "vm_id"]].values.tolist() == [
        ["unseen_change", "vm.started", "vm-b1"],
        ["unseen_change", "vm.stopped", "vm-b2"],
    ]
    assert b.attrs["matched"] == 1 and b.attrs["other_accounts"] == 2


def test_events_no_account_can_be_tied_to_are_counted_not_listed_in_a_store_of_several(tmp_path):
    store = _two_accounts(tmp_path)
    event(store, "e1", "vm.stopped", None, "2026-11-01T06:00:00Z")  # names no VM
    event(store, "e2", "vm.stopped", "vm-zz", "2026-11-01T06:00:00Z")  # no account's VM
    for name in ("a", "b"):
        out = webhooks.reconcile(store.for_account(name))
        assert "vm-zz" not in set(out["vm_id"].dropna())
        assert "event without a VM" not in set(out["after"].dropna())
        assert out.attrs["unattributed"] == 2


def test_reconcile_on_a_store_of_several_accounts_needs_one_named(tmp_path):
    from svcnb.store import StoreError

    store = _two_accounts(tmp_path)
    with pytest.raises(StoreError, match=r"holds accounts a, b.*for_account"):
        webhooks.reconcile(store)


def test_a_store_of_one_account_counts_no_event_as_anothers(store):
    event(store, "e1", "vm.stopped", "vm-zz", "2026-11-01T06:00:00Z")  # no snapshot's VM
    out = webhooks.reconcile(store)
    assert "vm-zz" in set(out["vm_id"].dropna())  # one account: every event is its own
    assert out.attrs["other_accounts"] == 0 and out.attrs["unattributed"] == 0
