"""Frames of several accounts are stacked one way, whoever asks: a store read and a report say
the same of it (an ``account`` column first, each account's own attrs, and the note that
nothing was added across them)."""

from __future__ import annotations

from frames._samples import account

from svcnb.reports import billing, replay
from svcnb.store import SEVERAL_ACCOUNTS_NOTE, Store

from .test_store_disk import DAY, T0, frames_of


def test_a_store_read_and_a_report_stack_accounts_alike(tmp_path):
    store = Store(tmp_path / "store")
    for day in range(2):
        for name, vms in (("eu", 4), ("us", 3)):
            records = account(vms)
            records["wallet"][0]["id"] = f"wallet-{name}"
            store.write(
                frames_of(records),
                server_time=T0 + day * DAY,
                server=f"https://{name}",
                account=name,
            )
    stacks = {
        "Store.load": store.load("wallet", account="*"),
        "Store.history": store.history("wallet", ["balance_amount"], account=["eu", "us"]),
        "from_store": billing.runway.from_store(store, account="*"),
        "replay": replay(billing.runway, store, account="*"),
    }
    for who, frame in stacks.items():
        assert frame.columns[0] == "account", who
        assert list(dict.fromkeys(frame["account"])) == ["eu", "us"], who
        assert {"accounts", "note"} <= set(frame.attrs), who
        assert frame.attrs["note"] == SEVERAL_ACCOUNTS_NOTE, who
        assert list(frame.attrs["accounts"]) == ["eu", "us"], who
