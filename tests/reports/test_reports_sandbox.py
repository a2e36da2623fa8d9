"""Reports over a real snapshot store of a sandbox played forward: replay, ``at=``, 60 days."""

from __future__ import annotations

import pandas as pd
import pytest
from _fuzz import fuzz
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from svcnb.client import Client
from svcnb.reports import bandwidth, billing, firewall, replay, webhooks
from svcnb.sandbox import will_exceed_pack
from svcnb.store import Store

# Seed 13 with 6 VMs: every VM states its price, none is provisioning or owing at the start, and
# the wallet runs dry within 60 days (checked against the sandbox's own events below).
SEED = 13
FLEET = 6


def _history(seen: list[dict], upto: int) -> pd.DataFrame:
    cols = ["id", "bandwidth_used_bytes", "bandwidth_pack_bytes"]
    return pd.concat(
        [s["vms"][cols].assign(server_time=s["now"]) for s in seen[: upto + 1]],
        ignore_index=True,
    )


# report -> how to run it on the frames read from the API at snapshot i
DIRECT = {
    "billing.runway": (
        billing.runway,
        lambda seen, i: billing.runway(seen[i]["vms"], seen[i]["wallet"], now=seen[i]["now"]),
    ),
    "billing.renewals_due": (
        billing.renewals_due,
        lambda seen, i: billing.renewals_due(seen[i]["vms"], seen[i]["wallet"], now=seen[i]["now"]),
    ),
    "bandwidth.projection": (
        bandwidth.projection,
        lambda seen, i: bandwidth.projection(seen[i]["vms"], _history(seen, i), now=seen[i]["now"]),
    ),
    "firewall.audit": (
        firewall.audit,
        lambda seen, i: firewall.audit(
            seen[i]["rules"],
            seen[i]["vm_firewalls"],
            seen[i]["firewalls"],
            seen[i]["vms"],
            now=seen[i]["now"],
        ),
    ),
    "webhooks.health": (
        webhooks.health,
        lambda seen, i: webhooks.health(seen[i]["webhooks"], seen[i]["deliveries"]),
    ),
}


@fuzz(15, HealthCheck.function_scoped_fixture)
@given(name=st.sampled_from(sorted(DIRECT)), index=st.integers(0, 4))
def test_replay_at_a_snapshot_equals_the_report_on_its_frames(played, name, index):
    store, seen = played
    report, direct = DIRECT[name]
    replayed = _replays(store, name)
    at = seen[index]["now"]
    got = replayed[replayed["at"] == at].drop(columns=["at", "snapshot_time"])
    want = direct(seen, index)
    pd.testing.assert_frame_equal(
        _comparable(got), _comparable(want), check_dtype=False, check_exact=False
    )


_REPLAYS: dict[str, pd.DataFrame] = {}


def _replays(store: Store, name: str) -> pd.DataFrame:
    if name not in _REPLAYS:
        _REPLAYS[name] = replay(DIRECT[name][0], store, every="1D")
    return _REPLAYS[name]


def _comparable(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.reset_index(drop=True).copy()
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = out[col].map(
                lambda v: list(v) if hasattr(v, "__len__") and not isinstance(v, str) else v
            )
    return out


def test_at_answers_from_the_latest_snapshot_before(played):
    store, seen = played
    between = seen[2]["now"] + pd.Timedelta(hours=5)
    got = billing.renewals.from_store(store, at=between)
    want = billing.renewals(seen[2]["vms"], seen[2]["wallet"], now=seen[2]["now"])
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    with pytest.raises(ValueError, match="no snapshot at or before"):
        billing.runway.from_store(store, at=seen[0]["now"] - pd.Timedelta(days=1))


# two months of the sandbox's life: make test-all (the life rules' own tests run in make test)
@pytest.mark.slow
def test_sixty_days_on_the_sandbox(make_sandbox, tmp_path):
    # a generous rate limit: 61 snapshots would otherwise wait out the 600/min bucket
    sb = make_sandbox(vms=FLEET, seed=SEED, rate_limit=100_000)
    store = Store(tmp_path / "store")
    with Client(api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False) as client:
        store.build_history(client, days=60, advance=sb.control.advance)
    snaps = store.snapshots().sort_values("server_time")
    start, end = snaps["server_time"].iloc[0], snaps["server_time"].iloc[-1]
    assert end - start >= pd.Timedelta(days=59)
    events = sb.control.events()

    # Billing: the runway seen at the start is the renewal the sandbox failed to charge.
    run = billing.runway.from_store(store, at=start).iloc[0]
    assert not pd.isna(run["runway_at"]), "the wallet should run dry within 60 days"
    failed = [
        e["data"]
        for e in events
        if e["type"] == "vm.suspended"
        and e["data"].get("reason") == "nonpayment"
        and pd.Timestamp(e["data"]["overdueSince"]) > start
    ]
    assert failed, "the sandbox should suspend a VM for non-payment within 60 days"
    assert run["runway_at"] == pd.Timestamp(failed[0]["overdueSince"])
    assert run["vm_id"] == failed[0]["vm"]["id"]
    owing = store.history("vms", ["billing_status"])
    owing = owing[(owing["id"] == run["vm_id"]) & owing["billing_status"].isin(["overdue"])]
    assert owing["server_time"].min() == run["runway_at"]

    # ... and the low-balance forecast is the moment the sandbox warned.
    low = billing.low_balance_forecast.from_store(store, at=start).iloc[0]
    warned = [
        pd.Timestamp(e["createdAt"])
        for e in events
        if e["type"] == "billing.low_balance" and pd.Timestamp(e["createdAt"]) > start
    ]
    assert low["low_at"] == warned[0]

    # Bandwidth: the running VMs named as exceeding are exactly the seeded fast ones.
    vms = store.load("vms")
    running = vms[vms["status"] == "running"]
    expected = {
        vm_id
        for vm_id, pack in zip(running["id"], running["bandwidth_pack_bytes"], strict=True)
        if will_exceed_pack(SEED, vm_id, int(pack))
    }
    assert expected, "seed 13 has a fast VM running at the end"
    named = bandwidth.exceeding.from_store(store)
    assert set(named.loc[named["status"] == "running", "vm_id"]) == expected
    over = named[named["outlook"] == "over"]
    assert (over["used_bytes"] >= over["pack_bytes"]).all()

    # Balance history follows the wallet through the snapshots.
    hist = billing.balance_history.from_store(store)
    assert len(hist) == len(snaps)
    assert hist["balance"].iloc[0] > hist["balance"].iloc[-1]


def test_rule_changes_between_two_snapshots(make_sandbox, tmp_path):
    sb = make_sandbox(vms=4, seed=SEED, rate_limit=100_000)
    store = Store(tmp_path / "store")
    with Client(api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False) as client:
        store.take(client)
        fw = client.firewalls.list()[0]
        rule = client.firewalls.rules(fw["id"])[0]
        sb.control.advance(3600)
        client.firewalls.update_rule(fw["id"], rule["id"], port="2222", description="moved")
        store.take(client)
    got = firewall.changes(store)
    assert got["rule_id"].tolist() == [rule["id"]]
    row = got.iloc[0]
    assert row["change"] == "changed"
    assert row["firewall_id"] == fw["id"]
    assert "port" in row["columns"] and "description" in row["columns"]
    assert f"port: {rule['port']!r} -> '2222'" in row["detail"]


def test_replay_grid_between_snapshots(played):
    store, seen = played
    got = replay(billing.runway, store, every="12h", horizon="60D")
    first, last = seen[0]["now"], seen[-1]["now"]
    assert got["at"].tolist() == list(pd.date_range(first, last, freq="12h"))
    # a time between two daily snapshots is answered by the one before it
    assert (got["snapshot_time"] <= got["at"]).all()
    assert (got["at"] - got["snapshot_time"] < pd.Timedelta(days=1)).all()
    assert (got["now"] == got["snapshot_time"]).all()
    assert (got["horizon_end"] - got["now"] == pd.Timedelta(days=60)).all()
    with pytest.raises(ValueError, match="from_store"):
        replay(lambda **kw: None, store)
    with pytest.raises(ValueError, match="every 'soon' is not a duration"):
        replay(billing.runway, store, every="soon")


def test_two_snapshots_at_one_sandbox_time_count_the_fleet_once(make_sandbox, tmp_path):
    sb = make_sandbox(vms=FLEET, seed=SEED, rate_limit=100_000)  # the clock stays frozen
    store = Store(tmp_path / "store")
    with Client(api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False) as client:
        store.take(client)
        store.take(client)
    snaps = store.snapshots()
    assert len(snaps) == 2 and snaps["server_time"].nunique() == 1
    vms = store.load("vms")
    total = bandwidth.fleet_total.from_store(store)
    assert len(total) == 1
    assert total["vms"].iloc[0] == len(vms)
    assert total["used_bytes"].iloc[0] == vms["bandwidth_used_bytes"].sum()
    assert len(billing.balance_history.from_store(store)) == 1
