"""A resource that cannot be read is recorded as missing with its reason, never stored as empty."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from deltalake import DeltaTable
from frames._samples import account

from svcnb.client import Client
from svcnb.errors import AuthError, PagingError, ScopeError, TransportError
from svcnb.frames import KEYS
from svcnb.store import RESOURCES, MissingResourceError, Store, StoreError

from .test_store_disk import DAY, T0, evolve, frames_of

ALL_READ = [
    "vms:read",
    "firewalls:read",
    "networks:read",
    "billing:read",
    "webhooks:read",
]


def _client(sandbox, token: str, **options) -> Client:
    return Client(api_key=token, base_url=sandbox.base_url, progress=False, **options)


def _token(sandbox, *without: str) -> str:
    scopes = [s for s in ALL_READ if s not in without]
    return sandbox.control.create_token(name=f"no-{'-'.join(without)}", scopes=scopes)["secret"]


def _sorted(resource: str, frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(KEYS[resource])).reset_index(drop=True)


@pytest.fixture
def partial(sandbox, tmp_path):
    """A complete snapshot, then one a day later by a token without billing:read.

    Returns the store, the two ids, the wallet of the first, and the account's frames at the
    second as an admin reads them.
    """
    store = Store(tmp_path / "store")
    with _client(sandbox, sandbox.tokens["admin"]) as admin:
        first = store.take(admin)
        wallet = store.load("wallet")
        sandbox.control.topup(25)
        sandbox.control.advance(86400)
        with _client(sandbox, _token(sandbox, "billing:read")) as limited:
            second = store.take(limited)
        # the same moment read whole, as a snapshot of it stores it
        whole = Store(tmp_path / "admin")
        whole.take(admin)
        now = {resource: whole.load(resource) for resource in RESOURCES}
    return store, first, second, wallet, now


def test_a_token_without_billing_read_stores_everything_but_the_wallet(partial):
    store, first, second, wallet, now = partial
    snaps = store.snapshots().set_index("snapshot_id")
    assert snaps.loc[first, "missing"] == ""
    assert snaps.loc[second, "missing"] == "wallet"
    assert pd.isna(snaps.loc[second, "wallet_rows"])  # unknown, not zero
    assert snaps.loc[first, "wallet_rows"] == 1
    status = store.resources(second).set_index("resource")
    assert status.loc["wallet", "status"] == "missing"
    assert "ScopeError" in status.loc["wallet", "reason"]
    assert "billing:read" in status.loc["wallet", "reason"]
    assert (status.drop(index="wallet")["status"] == "ok").all()
    assert status["reason"].drop(index="wallet").isna().all()
    for resource in RESOURCES:
        if resource != "wallet":
            got = store.load(resource)
            pd.testing.assert_frame_equal(got, _sorted(resource, now[resource]))
            assert got.attrs["as_of_snapshot"] == second


def test_loading_a_missing_resource_raises_and_allow_stale_gives_the_last_known(partial):
    store, first, second, wallet, now = partial
    with pytest.raises(MissingResourceError) as info:
        store.load("wallet")
    err = info.value
    assert isinstance(err, StoreError)
    assert (err.resource, err.snapshot_id, err.latest) == ("wallet", second, first)
    assert "billing:read" in err.reason
    for text in ("'wallet'", second, first, "ScopeError", "billing:read", "allow_stale=True"):
        assert text in str(err)
    stale = store.load("wallet", allow_stale=True)
    pd.testing.assert_frame_equal(stale, wallet)
    assert stale.attrs["as_of_snapshot"] == first
    # the balance moved (a top-up, renewals) where the limited token could not see it: the stale
    # wallet is the first snapshot's, not today's
    assert now["wallet"]["balance_amount"].iloc[0] != wallet["balance_amount"].iloc[0]
    # as of the first snapshot the wallet is there as ever
    t1 = store.snapshots()["server_time"].iloc[0]
    pd.testing.assert_frame_equal(store.load("wallet", at=t1), wallet)


def _versions(store: Store, resource: str) -> list[int]:
    table = DeltaTable(str(store.path / resource)).to_pyarrow_table()
    return sorted(table.column("_snapshot").to_pylist())


def test_no_change_rows_are_written_for_a_missing_resource(partial, sandbox):
    store, first, second, wallet, now = partial
    assert _versions(store, "wallet") == [1]  # nothing written by snapshot 2
    entry = store._entries()[1]
    assert "wallet" not in entry["parts"] and "wallet" not in entry["rows"]
    # keys whose value would be None or {} are left out of the stored form
    assert entry["resources"]["wallet"] == {
        "status": "missing",
        "reason": store.resources(second).set_index("resource").loc["wallet", "reason"],
    }
    assert entry["resources"]["vms"] == {"status": "ok", "rows": len(now["vms"])}
    # a complete snapshot later compares the wallet with the last one that had it
    sandbox.control.advance(86400)
    with _client(sandbox, sandbox.tokens["admin"]) as admin:
        third = store.take(admin)
    assert _versions(store, "wallet") == [1, 3]  # one changed row, no new base
    assert store._entries()[-1]["parts"]["wallet"][0] == 1  # still the first segment
    d = store.diff("wallet", first, third)
    assert "balance_amount" in d["column"].tolist()


def test_history_leaves_out_snapshots_that_missed_the_resource(partial):
    store, first, second, wallet, now = partial
    history = store.history("wallet", ["balance_amount"])
    assert history["snapshot_id"].tolist() == [first]  # a gap, not a zero balance
    assert list(history.attrs["missing_snapshots"]) == [second]
    assert "billing:read" in history.attrs["missing_snapshots"][second]
    assert history.attrs["missing_snapshots"] == store.history("wallet").attrs["missing_snapshots"]
    vms = store.history("vms", ["name"])
    assert set(vms["snapshot_id"]) == {first, second}
    assert vms.attrs["missing_snapshots"] == {}


def test_diff_with_a_snapshot_that_missed_the_resource_raises(partial):
    store, first, second, wallet, now = partial
    with pytest.raises(MissingResourceError, match=f"missing from snapshot {second}"):
        store.diff("wallet", first, second)
    t2 = store.snapshots()["server_time"].iloc[1]
    with pytest.raises(MissingResourceError):
        store.diff("wallet", first, t2)
    assert store.diff("vms", first, second).columns[0] == "id"  # the others still compare


def test_a_failing_route_costs_only_its_group(sandbox, tmp_path):
    store = Store(tmp_path / "store")
    sandbox.control.set_faults(errorRate=1.0, errorRoutes=["GET /firewalls/{id}/rules"])
    with _client(sandbox, sandbox.tokens["admin"], max_retries=0) as client:
        snapshot = store.take(client)
    status = store.resources(snapshot).set_index("resource")
    assert status.index[status["status"] == "missing"].tolist() == ["firewalls", "firewall_rules"]
    assert status.loc["firewall_rules", "reason"].startswith("ServerError: ")
    assert store.snapshots()["missing"].iloc[0] == "firewalls, firewall_rules"
    with pytest.raises(MissingResourceError, match="(?i)no earlier snapshot has it"):
        store.load("firewalls")
    with pytest.raises(StoreError, match="has firewalls"):
        store.load("firewalls", allow_stale=True)
    assert len(store.load("vms")) == 40


def test_a_token_that_can_read_nothing_stores_nothing(sandbox, tmp_path):
    store = Store(tmp_path / "store")
    token = sandbox.control.create_token(name="nothing", scopes=["vms:write"])["secret"]
    with _client(sandbox, token) as client, pytest.raises(ScopeError) as info:
        store.take(client)
    assert any("no snapshot was stored" in note for note in info.value.__notes__)
    assert store.snapshots().empty


def test_a_refused_token_stops_at_the_first_group(sandbox, tmp_path):
    store = Store(tmp_path / "store")
    created = sandbox.control.create_token(name="revoked", scopes=ALL_READ)
    sandbox.control.revoke_token(created["id"])
    with _client(sandbox, created["secret"]) as client:
        with pytest.raises(AuthError):
            store.take(client)
        assert client.stats["requests"] == 1  # no other group was tried
    assert store.snapshots().empty


def test_a_server_down_stores_nothing(tmp_path):
    store = Store(tmp_path / "store")
    down = Client("svc_" + "x" * 40, "http://127.0.0.1:9", progress=False, max_retries=0)
    with down as client, pytest.raises(TransportError):
        store.take(client)
    assert store.snapshots().empty


class _Webhooks:
    """The webhooks of a real client, as a server with a broken list or odd records answers."""

    def __init__(self, real, records=None):
        self.real, self.records = real, records

    def list(self):
        if self.records is None:
            raise PagingError("GET /webhooks: page 3 of 5 came back empty; the list is unread")
        return self.records

    def deliveries(self, wh_id):
        return []


def test_a_list_not_read_to_its_end_costs_only_its_group(sandbox, tmp_path):
    store = Store(tmp_path / "store")
    with _client(sandbox, sandbox.tokens["admin"]) as client:
        client.webhooks = _Webhooks(client.webhooks)
        snapshot = store.take(client)
    status = store.resources(snapshot).set_index("resource")
    assert status.index[status["status"] == "missing"].tolist() == ["webhooks", "deliveries"]
    assert status.loc["deliveries", "reason"].startswith("PagingError: GET /webhooks: page 3")


def test_values_frames_could_not_read_are_counted_in_the_snapshot(sandbox, tmp_path):
    store = Store(tmp_path / "store")
    odd = [{"id": "wh-1", "url": "https://x.test", "events": "not a list", "isActive": True}]
    with _client(sandbox, sandbox.tokens["admin"]) as client:
        client.webhooks = _Webhooks(client.webhooks, odd)
        with pytest.warns(UserWarning, match="events"):
            snapshot = store.take(client)
    status = store.resources(snapshot).set_index("resource")
    assert (status["status"] == "ok").all()
    assert status.loc["webhooks", "unreadable"] == {"events": 1}
    assert store.snapshots()["unreadable"].iloc[0] == "webhooks.events (1)"
    loaded = store.load("webhooks")
    assert loaded.attrs["unreadable"] == {"events": 1}
    assert loaded["events"].isna().tolist() == [True]


# -- Store.write ----------------------------------------------------------------------------


def test_write_records_missing_resources_and_refuses_ambiguity(tmp_path):
    store = Store(tmp_path)
    pulled = frames_of(account(4))
    wallet = pulled.pop("wallet")
    with pytest.raises(ValueError, match=r"lacks \['wallet'\]"):
        store.write(pulled, server_time=T0)
    with pytest.raises(ValueError, match="choose one"):
        store.write({**pulled, "wallet": wallet}, missing={"wallet": "x"}, server_time=T0)
    with pytest.raises(ValueError, match="unknown resources"):
        store.write(pulled, missing={"wallet": "x", "walet": "y"}, server_time=T0)
    with pytest.raises(ValueError, match="every resource is missing"):
        store.write({}, server_time=T0, partial=True)
    assert store.snapshots().empty
    token = "svc_" + "a" * 36 + "WXYZ"
    snapshot = store.write(
        pulled, missing={"wallet": f"imported without it ({token})"}, server_time=T0
    )
    assert store.snapshots()["missing"].tolist() == ["wallet"]
    reason = store.resources(snapshot).set_index("resource").loc["wallet", "reason"]
    assert reason.startswith("imported without it (svc_") and reason.endswith("WXYZ)")
    assert not _holding(store.path, token.encode())


def _holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_unreadable_counts_from_frames_are_kept_and_given_back(tmp_path):
    store = Store(tmp_path)
    pulled = frames_of(account(4))
    pulled["wallet"].attrs["unreadable"] = {"balance_amount": 1}
    pulled["vms"].attrs["unreadable"] = {"price_monthly_amount": 2, "ram_mib": 0}
    snapshot = store.write(pulled, server_time=T0)
    row = store.snapshots().iloc[0]
    assert row["unreadable"] == "vms.price_monthly_amount (2), wallet.balance_amount (1)"
    status = store.resources(snapshot).set_index("resource")
    assert status.loc["vms", "unreadable"] == {"price_monthly_amount": 2}
    assert status.loc["firewalls", "unreadable"] == {}
    assert store.load("wallet").attrs["unreadable"] == {"balance_amount": 1}
    assert "unreadable" not in store.load("firewalls").attrs


def test_a_missing_resource_in_between_keeps_the_history_exact(tmp_path):
    store = Store(tmp_path)
    records = account(6)
    written = []
    for day in range(5):
        if day:
            records = evolve(records, day)
        pulled = frames_of(records)
        if day in (1, 2):
            missing = {r: "ScopeError: no" for r in ("vms", "vm_ssh_keys", "wallet")}
            store.write(
                {r: f for r, f in pulled.items() if r not in missing},
                missing=missing,
                server_time=T0 + day * DAY,
            )
        else:
            store.write(pulled, server_time=T0 + day * DAY)
        written.append(pulled)
    for day, pulled in enumerate(written):
        for resource in RESOURCES:
            at = T0 + day * DAY
            if day in (1, 2) and resource in ("vms", "vm_ssh_keys", "wallet"):
                with pytest.raises(MissingResourceError):
                    store.load(resource, at=at)
                stale = store.load(resource, at=at, allow_stale=True)
                pd.testing.assert_frame_equal(stale, _sorted(resource, written[0][resource]))
                continue
            pd.testing.assert_frame_equal(
                store.load(resource, at=at), _sorted(resource, pulled[resource])
            )
    # a new Store (nothing in memory) writes after the gap as well
    Store(tmp_path).write(frames_of(evolve(records, 9)), server_time=T0 + 9 * DAY)
    pd.testing.assert_frame_equal(
        store.load("vms"), _sorted("vms", frames_of(evolve(records, 9))["vms"])
    )


# -- the command line -----------------------------------------------------------------------


def test_cli_snapshot_names_what_is_missing_and_exits_3(sandbox, tmp_path, monkeypatch, capsys):
    from svcnb.cli import main

    token = _token(sandbox, "billing:read")
    monkeypatch.setenv("SVC_API_KEY", token)
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    path = tmp_path / "store"
    assert main(["snapshot", "--store", str(path)]) == 3  # not --quiet: its whole report
    out, err = capsys.readouterr()
    snapshot_id = Store(path).snapshots()["snapshot_id"].iloc[0]
    assert snapshot_id in out and "40 vms" in out
    assert "wallet: ScopeError" in err and "billing:read" in err
    listed = [line.split(":")[0].strip() for line in err.splitlines() if line.startswith("  ")]
    assert listed == ["wallet"]
    assert main(["snapshots", "--store", str(path)]) == 0
    assert "wallet" in capsys.readouterr().out
    # the reason kept in the catalog names the token only as the client masks it
    assert "billing:read" in Store(path).resources()["reason"].str.cat(sep=" ")
    assert not _holding(path, token.encode())
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["read"])
    assert main(["snapshot", "--store", str(path), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert token not in out + err and "missing" not in err
