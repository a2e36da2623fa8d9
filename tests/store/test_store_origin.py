"""A store knows whose history it holds: the server and account of its first snapshot; it
refuses a snapshot from anywhere else, or one older than its latest unless asked."""

from __future__ import annotations

import copy

import pytest
from frames._samples import account

from svcnb.client import Client
from svcnb.store import Store, StoreError

from .test_store_disk import DAY, T0, frames_of

SERVER = "https://api.example.test"


def test_a_snapshot_of_another_account_is_refused_naming_both(tmp_path):
    store = Store(tmp_path)
    store.write(frames_of(account(3)), server_time=T0, server=SERVER)
    other = copy.deepcopy(account(3))
    other["wallet"][0]["id"] = "wallet-other"
    with pytest.raises(StoreError, match="account 'wallet-1'.*account 'wallet-other'"):
        store.write(frames_of(other), server_time=T0 + DAY, server=SERVER)
    with pytest.raises(StoreError, match=f"server '{SERVER}'.*server 'http://127.0.0.1:1'"):
        store.write(frames_of(account(3)), server_time=T0 + DAY, server="http://127.0.0.1:1/")
    assert len(store.snapshots()) == 1  # nothing was stored
    # a snapshot without the wallet cannot name its account: the server still has to match
    pulled = frames_of(account(3))
    del pulled["wallet"]
    store.write(pulled, missing={"wallet": "ScopeError"}, server_time=T0 + DAY, server=SERVER)
    assert len(store.snapshots()) == 2


def test_an_older_snapshot_is_refused_unless_asked_for(tmp_path):
    store = Store(tmp_path)
    store.write(frames_of(account(3)), server_time=T0 + DAY)
    with pytest.raises(StoreError, match="earlier than the latest.*allow_older=True"):
        store.write(frames_of(account(3)), server_time=T0)
    store.write(frames_of(account(3)), server_time=T0 + DAY)  # the same time is no step back
    store.write(frames_of(account(3)), server_time=T0, allow_older=True)
    assert len(store.snapshots()) == 3


def test_take_records_the_server_and_wallet_and_refuses_another_sandbox(
    sandbox, make_sandbox, tmp_path
):
    store = Store(tmp_path / "store")
    with Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client:
        store.take(client)
        wallet = client.wallet.get()
    entry = store._entries()[0]
    assert entry["server"] == sandbox.base_url.rstrip("/")
    assert entry["account"] == str(wallet["id"])
    other = make_sandbox(vms=3, seed=99, time_scale=0.0)
    with (
        Client(other.tokens["admin"], other.base_url, progress=False) as client,
        pytest.raises(StoreError, match="holds the history of server") as refused,
    ):
        store.take(client)
    assert len(store.snapshots()) == 1
    # both on loopback: what that most likely is, rather than advice about tokens
    assert "a sandbox started again without its saved state is a new one" in str(refused.value)
    assert "token" not in str(refused.value)


def test_cli_snapshot_with_no_server_configured_exits_2_and_starts_no_sandbox(tmp_path, capsys):
    from svcnb.cli import main

    path = tmp_path / "store"
    assert main(["snapshot", "--store", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no server configured" in err
    assert not path.exists()
