"""Reports over a snapshot that could not read one of their inputs say so, never answer from
nothing: from_store raises naming the report, the resource, the snapshot and why; replay shows
those times as NA rows with a ``missing`` column."""

from __future__ import annotations

import pandas as pd
import pytest

from svcnb.client import Client
from svcnb.reports import bandwidth, billing, replay
from svcnb.sandbox import serve
from svcnb.store import MissingResourceError, Store

NO_BILLING = ["vms:read", "firewalls:read", "networks:read", "webhooks:read"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Four daily snapshots: complete, without the wallet (token lacks billing:read), complete,
    without the wallet again. Taken once for the module: its tests only read it."""
    store = Store(tmp_path_factory.mktemp("missing") / "store")
    with serve(vms=40, seed=7, time_scale=0.0) as sandbox:
        limited = sandbox.control.create_token(name="no-billing", scopes=NO_BILLING)["secret"]
        with (
            Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as admin,
            Client(limited, sandbox.base_url, progress=False) as partial,
        ):
            for day, client in enumerate([admin, partial, admin, partial]):
                if day:
                    sandbox.control.advance(86400)
                store.take(client)
    return store


def test_from_store_says_which_report_needs_what_and_why(store):
    snaps = store.snapshots()
    latest = snaps["snapshot_id"].iloc[-1]
    with pytest.raises(MissingResourceError) as info:
        billing.runway.from_store(store)
    message = str(info.value)
    assert message.startswith(f"billing.runway needs 'wallet', which snapshot {latest} could not")
    assert "ScopeError" in message and "billing:read" in message
    assert snaps["snapshot_id"].iloc[2] in message  # the latest snapshot that has it
    assert info.value.needed_by == "billing.runway"
    with pytest.raises(MissingResourceError, match="billing.renewals needs 'wallet'"):
        billing.renewals.inputs(store)


def test_reports_that_need_only_what_was_read_still_answer(store):
    snaps = store.snapshots()
    overdue = billing.overdue.from_store(store)
    assert list(overdue.columns)  # computed from the VMs of the partial snapshot
    usage = bandwidth.usage.from_store(store)
    pd.testing.assert_frame_equal(usage, bandwidth.usage(store.load("vms")))
    # as of a complete snapshot the wallet reports answer as ever
    at = snaps["server_time"].iloc[2]
    got = billing.runway.from_store(store, at=at)
    want = billing.runway(store.load("vms", at=at), store.load("wallet", at=at), now=at)
    pd.testing.assert_frame_equal(got, want)


def test_balance_history_has_gaps_not_zeros(store):
    snaps = store.snapshots()
    got = billing.balance_history.from_store(store)
    assert got["server_time"].tolist() == snaps["server_time"].iloc[[0, 2]].tolist()
    assert (got["balance"] > 0).all()


def test_replay_shows_the_times_it_could_not_compute(store):
    snaps = store.snapshots()
    got = replay(billing.runway, store, every="1D")
    assert got["at"].tolist() == snaps["server_time"].tolist()
    assert list(got.columns[:3]) == ["at", "snapshot_time", "missing"]
    assert got["missing"].tolist() == ["", "wallet", "", "wallet"]
    computed, unanswered = got.iloc[[0, 2]], got.iloc[[1, 3]]
    assert unanswered.drop(columns=["at", "snapshot_time", "missing"]).isna().all().all()
    assert computed["balance"].notna().all()
    for i in (0, 2):
        want = billing.runway.from_store(store, at=snaps["server_time"].iloc[i])
        row = got.iloc[[i]].drop(columns=["at", "snapshot_time", "missing"])
        pd.testing.assert_frame_equal(row.reset_index(drop=True), want, check_dtype=False)
    # the dtypes of the computed times are kept where the others are NA
    assert got["runway_at"].dtype == computed["runway_at"].dtype


def test_replay_of_a_report_that_reads_nothing_missing_is_unchanged(store):
    got = replay(billing.overdue, store, every="1D")
    assert "missing" not in got.columns
    got = replay(billing.runway, store, every="1D", until=store.snapshots()["server_time"].iloc[0])
    assert "missing" not in got.columns and len(got) == 1


def test_replay_when_no_time_can_be_computed(sandbox, tmp_path):
    store = Store(tmp_path / "store")
    limited = sandbox.control.create_token(name="no-billing", scopes=NO_BILLING)["secret"]
    with Client(limited, sandbox.base_url, progress=False) as client:
        store.take(client)
        sandbox.control.advance(86400)
        store.take(client)
    got = replay(billing.runway, store, every="1D")
    assert got.columns.tolist() == ["at", "snapshot_time", "missing"]
    assert got["missing"].tolist() == ["wallet", "wallet"]
    with pytest.raises(MissingResourceError, match="(?i)no earlier snapshot has it"):
        billing.runway.from_store(store)
