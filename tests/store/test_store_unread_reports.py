"""A report from the store says what the same report from a live pull says: a listed VM whose
renewal date was served but could not be read leaves overdue incomplete, whether the frames
come from the pull, from one account of the store, or from several stacked."""

from __future__ import annotations

import warnings

import pandas as pd
from frames._samples import account

from store.test_store_disk import frames_of
from svcnb.reports import billing
from svcnb.store import Store

NOW = pd.Timestamp("2026-12-01T00:00:00Z")


def _pulled(unread: bool) -> dict[str, pd.DataFrame]:
    records = account(4)
    if unread:
        billing_of = records["vms"][1]["billing"]
        records["vms"][1]["billing"] = {
            **billing_of,
            "nextRenewalAt": "not a date",
            "status": "overdue",
        }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return frames_of(records)


def test_overdue_from_the_store_says_what_the_live_pull_says(tmp_path):
    live = billing.overdue(_pulled(True)["vms"], now=NOW)
    assert live.attrs["complete"] is False and "could not read" in live.attrs["reason"]
    Store(tmp_path, account="north").write(_pulled(True), server_time=NOW)
    Store(tmp_path, account="south").write(_pulled(False), server_time=NOW)
    store = Store(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = billing.overdue.from_store(store, account="north")
        stacked = billing.overdue(store.load("vms", account="*"), now=NOW)
        each = billing.overdue.from_store(store, account="*")
    assert one.attrs["complete"] is False and one.attrs["reason"] == live.attrs["reason"]
    assert stacked.attrs.get("complete") is False, stacked.attrs
    assert stacked.attrs["reason"] == live.attrs["reason"]
    assert each.attrs.get("complete") is False, each.attrs
    assert each.attrs["reason"] == f"north: {live.attrs['reason']}"
