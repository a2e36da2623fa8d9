"""Several accounts in one store: the config names them (never their tokens), `svcnb snapshot
--all` pulls them in parallel into one store partitioned by account, each account name is bound
to its server and wallet, and nothing reads or adds figures of several accounts unsaid."""

from __future__ import annotations

import copy
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import polars as pl
import pytest
from frames._samples import account

import svcnb
from svcnb import configured_client, frames
from svcnb.cli import main
from svcnb.config import ConfigError, accounts
from svcnb.panels import AccountTabs, BillingPanel, static_html
from svcnb.reports import billing, replay
from svcnb.store import Store, StoreError

from .readers import duckdb_as_of, polars_as_of
from .test_store_disk import DAY, T0, evolve, frames_of

# pairs of dialects the two accounts speak: each account may be on a different service flavour
PAIRS = [("default", "acme"), ("linkhdr", "cursor")]
# the second pair: make test-all (tests/_tiers.py)
_PAIRS = [
    pytest.param(p, id="+".join(p), marks=() if i == 0 else pytest.mark.slow)
    for i, p in enumerate(PAIRS)
]


def _config(path, **specs: tuple[str, str]) -> None:
    lines = []
    for name, (url, env) in specs.items():
        lines += [f"[accounts.{name}]", f'base_url = "{url}"', f'token_env = "{env}"', ""]
    path.write_text("\n".join(lines))


def _pins_toml(account: str, pins: dict[str, str]) -> str:
    tables: dict[str, list[str]] = {}
    for name, value in pins.items():
        table, key = name.rsplit(".", 1)
        said = value if value in ("true", "false") else f'"{value}"'
        tables.setdefault(table, []).append(f"{key} = {said}")
    return "".join(
        f"\n[accounts.{account}.{table}]\n" + "\n".join(lines) + "\n"
        for table, lines in tables.items()
    )


def _two_accounts(make_sandbox, monkeypatch, tmp_path, dialects):
    """Two sandboxes on loopback (5 and 8 VMs) as accounts 'north' and 'south'."""
    north = make_sandbox(vms=5, seed=11, time_scale=0.0, dialect=dialects[0])
    south = make_sandbox(vms=8, seed=12, time_scale=0.0, dialect=dialects[1])
    config = tmp_path / "config.toml"
    _config(
        config,
        north=(north.base_url, "SVC_TOKEN_NORTH"),
        south=(south.base_url, "SVC_TOKEN_SOUTH"),
    )
    # each account pinned as its user pins it after `svcnb doctor --write-config`: what the
    # answers do not prove (a disk unit, a paging end, a word) is the sandbox's own choice
    with config.open("a") as f:
        f.write(_pins_toml("north", north.pins) + _pins_toml("south", south.pins))
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    monkeypatch.setenv("SVC_TOKEN_NORTH", north.tokens["read"])
    monkeypatch.setenv("SVC_TOKEN_SOUTH", south.tokens["read"])
    return north, south, config


def _truth_vms(sb) -> int:
    return len(sb.control.truth()["vms"])


def _truth_balance(sb) -> Decimal:
    """The wallet balance as the sandbox holds it (its default-dialect rendering)."""
    return Decimal(str(frames.wallet([sb.control.truth()["wallet"]])["balance_amount"].iloc[0]))


# -- the config file ------------------------------------------------------------------------


def test_config_names_accounts_and_refuses_tokens_and_unknown_keys(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    _config(path, prod=("https://api.example.com/", "SVC_TOKEN_PROD"))
    found = accounts(path)
    assert list(found) == ["prod"]
    assert found["prod"].base_url == "https://api.example.com"
    assert found["prod"].token_env == "SVC_TOKEN_PROD"

    path.write_text('[accounts.prod]\nbase_url = "https://x.test"\ntoken = "svc_abcdef"\n')
    with pytest.raises(ConfigError, match=r"token looks like a token.*token_env = \"SVC_TOKEN_"):
        accounts(path)
    path.write_text(
        '[accounts.prod]\nbase_url = "https://x.test"\n'
        'token_env = "a8f7d9e6c5b4a3928171605f4e3d2c1b"\n'
    )
    with pytest.raises(ConfigError, match="looks like a token"):
        accounts(path)
    path.write_text('[accounts.prod]\nbase_url = "https://x.test"\ntoken_env = "T"\nregion = 1\n')
    with pytest.raises(ConfigError, match=r"\[accounts.prod\]: unknown key\(s\) region"):
        accounts(path)
    path.write_text('[accounts.prod]\ntoken_env = "T"\n')
    with pytest.raises(ConfigError, match="base_url is missing"):
        accounts(path)
    path.write_text('[accounts.prod]\nbase_url = "https://x.test"\ntoken_env = "not a name"\n')
    with pytest.raises(ConfigError, match="token_env must be the name of the environment"):
        accounts(path)


def test_an_account_whose_token_variable_is_unset_is_a_config_error(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    _config(path, prod=("https://api.example.com", "SVC_TOKEN_UNSET_HERE"))
    monkeypatch.setenv("SVCNB_CONFIG", str(path))
    monkeypatch.delenv("SVC_TOKEN_UNSET_HERE", raising=False)
    with pytest.raises(ConfigError, match="SVC_TOKEN_UNSET_HERE.*is not set"):
        configured_client("prod", progress=False)
    with pytest.raises(ConfigError, match="names no account 'other'.*accounts: prod"):
        configured_client("other", progress=False)
    # svcnb.connect names an account the same way, and says the same
    with pytest.raises(ConfigError, match="SVC_TOKEN_UNSET_HERE.*is not set"):
        svcnb.connect(account="prod", progress=False)
    with pytest.raises(ConfigError, match="names no account 'other'.*accounts: prod"):
        svcnb.connect(account="other", progress=False)


def test_one_service_is_one_url_however_it_is_written():
    from svcnb.client import BASE_PATH_CANDIDATES
    from svcnb.config import API_PREFIXES, service_url

    same = [
        "https://api.example.com",
        "HTTPS://API.Example.COM:443/",
        "https://api.example.com/api/public/v1",
        "https://api.example.com/api/v1/api/public/v1/",
    ]
    assert {service_url(u) for u in same} == {"https://api.example.com"}
    assert service_url("http://127.0.0.1:80/api/public/v1/") == "http://127.0.0.1"
    # another port, scheme or path is another service
    assert service_url("https://api.example.com:8443/api/public/v1") == (
        "https://api.example.com:8443"
    )
    assert service_url("http://api.example.com") == "http://api.example.com"
    assert service_url("https://x.test/tenant-a/api/public/v1") == "https://x.test/tenant-a"
    # the prefixes left out are those the client tries after a base URL
    assert set(API_PREFIXES) == set(BASE_PATH_CANDIDATES)


def test_config_refuses_one_account_under_two_names_naming_both(tmp_path):
    path = tmp_path / "c.toml"
    _config(
        path,
        prod=("https://api.example.com/api/public/v1", "SVC_TOKEN_PROD"),
        live=("HTTPS://api.example.com:443/", "SVC_TOKEN_PROD"),
    )
    with pytest.raises(ConfigError) as caught:
        accounts(path)
    text = str(caught.value)
    assert "[accounts.prod] and [accounts.live] are one account" in text
    assert "https://api.example.com" in text and "remove" in text
    # the same service with another token may be another account: the store tells by the wallet
    _config(
        path,
        prod=("https://api.example.com/api/public/v1", "SVC_TOKEN_PROD"),
        test=("https://api.example.com", "SVC_TOKEN_TEST"),
    )
    assert list(accounts(path)) == ["prod", "test"]


def test_a_store_knows_one_account_whatever_its_url_spelling(tmp_path):
    store = Store(tmp_path / "store")
    url = "https://api.example.test/api/public/v1"
    store.write(frames_of(account(3)), server_time=T0, server=url, account="north")
    # the same name on the same service written another way is no other server
    store.write(frames_of(account(3)), server_time=T0 + DAY, server="HTTPS://Api.Example.Test:443/")
    assert store._entries()[-1]["server"] == "https://api.example.test"
    with pytest.raises(StoreError) as caught:
        store.write(
            frames_of(account(3)),
            server_time=T0 + DAY,
            server="https://api.example.test/api/v1/api/public/v1/",
            account="twin",
        )
    text = str(caught.value)
    assert "account names 'north' and 'twin' are one account" in text
    assert "as 'north'" in text and "[accounts.twin]" in text
    assert store.accounts() == ["north"] and len(store.snapshots()) == 2


def test_snapshot_all_stores_one_account_configured_twice_once(
    make_sandbox, monkeypatch, tmp_path, capsys
):
    sb = make_sandbox(vms=5, seed=11, time_scale=0.0)
    config = tmp_path / "config.toml"
    _config(
        config,
        north=(sb.base_url + "/api/public/v1", "SVC_TOKEN_NORTH"),
        twin=(sb.base_url.upper().replace("HTTP://", "http://") + "/", "SVC_TOKEN_TWIN"),
    )
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    monkeypatch.setenv("SVC_TOKEN_NORTH", sb.tokens["read"])
    monkeypatch.setenv("SVC_TOKEN_TWIN", sb.tokens["admin"])
    path = tmp_path / "store"
    assert main(["snapshot", "--all", "--store", str(path), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "account names" in err and "'north'" in err and "'twin'" in err
    stored = Store(path)
    assert len(stored.accounts()) == 1 and len(stored.snapshots()) == 1


# -- snapshot --all -------------------------------------------------------------------------


@pytest.mark.parametrize("dialects", _PAIRS)
def test_snapshot_all_pulls_every_account_into_one_partitioned_store(
    make_sandbox, monkeypatch, tmp_path, capsys, dialects
):
    north, south, _ = _two_accounts(make_sandbox, monkeypatch, tmp_path, dialects)
    path = tmp_path / "store"
    assert main(["snapshot", "--all", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "north: snapshot" in out and "south: snapshot" in out

    store = Store(path)
    assert sorted(store.accounts()) == ["north", "south"]
    snaps = store.snapshots()
    assert sorted(snaps["account"]) == ["north", "south"]
    assert len(store.load("vms", account="north")) == _truth_vms(north) == 5
    assert len(store.load("vms", account="south")) == _truth_vms(south) == 8
    # the store never reads two accounts as one without being told
    with pytest.raises(StoreError, match="holds accounts .*north.*name one"):
        store.load("vms")
    both = store.load("vms", account="*")
    assert both.groupby("account").size().to_dict() == {"north": 5, "south": 8}
    # a Delta partition: an engine without svcnb sees the account column
    table = pl.read_delta(str(path / "vms"))
    live = table.filter(~pl.col("_removed")).group_by("account").len()
    assert dict(zip(live["account"], live["len"], strict=True)) == {"north": 5, "south": 8}
    assert sorted(p.name for p in (path / "vms").iterdir() if p.is_dir())[:2] == [
        "_delta_log",
        "account=north",
    ]

    # a second round: each account's snapshot lands on top of its own history
    assert main(["snapshot", "--all", "--store", str(path)]) == 0
    counts = Store(path).snapshots().groupby("account").size().to_dict()
    assert counts == {"north": 2, "south": 2}


def test_one_failing_account_is_reported_and_the_others_land(
    make_sandbox, monkeypatch, tmp_path, capsys
):
    north, south, config = _two_accounts(make_sandbox, monkeypatch, tmp_path, ("default", "acme"))
    config.write_text(
        config.read_text()
        + '[accounts.gone]\nbase_url = "http://127.0.0.1:9"\ntoken_env = "SVC_TOKEN_GONE"\n'
        + '\n[accounts.nokey]\nbase_url = "http://127.0.0.1:9"\ntoken_env = "SVC_TOKEN_NOKEY"\n'
    )
    monkeypatch.setenv("SVC_TOKEN_GONE", "svc_not_a_real_token_1234")
    monkeypatch.delenv("SVC_TOKEN_NOKEY", raising=False)
    monkeypatch.setenv("SVCNB_BUDGET", "off")
    path = tmp_path / "store"
    code = main(["snapshot", "--all", "--store", str(path)])
    captured = capsys.readouterr()
    assert code == 1
    assert "gone: " in captured.err and "nokey: " in captured.err
    assert "SVC_TOKEN_NOKEY" in captured.err and "2 of 4 account(s) failed" in captured.err
    assert "svc_not_a_real_token_1234" not in captured.err + captured.out
    assert sorted(Store(path).accounts()) == ["north", "south"]


def test_when_every_account_failed_nothing_is_said_to_be_stored(monkeypatch, tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text(
        "".join(
            f'[accounts.{name}]\nbase_url = "http://127.0.0.1:9"\ntoken_env = "SVC_TOKEN_{name}"\n'
            for name in ("a", "b")
        )
    )
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    assert main(["snapshot", "--all", "--store", str(tmp_path / "store")]) == 1
    err = capsys.readouterr().err
    assert "2 of 2 account(s) failed (a, b); no account was stored" in err
    assert "the others" not in err


def test_snapshot_account_pulls_one_and_a_store_refuses_another_server_under_its_name(
    make_sandbox, monkeypatch, tmp_path, capsys
):
    north, south, config = _two_accounts(make_sandbox, monkeypatch, tmp_path, ("cursor", "linkhdr"))
    path = tmp_path / "store"
    assert main(["snapshot", "--account", "north", "--store", str(path), "--quiet"]) == 0
    assert Store(path).accounts() == ["north"]
    # the config now points north at south's server: the store refuses it under that name
    _config(config, north=(south.base_url, "SVC_TOKEN_SOUTH"))
    assert main(["snapshot", "--account", "north", "--store", str(path), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "holds the history of server" in err and "under account 'north'" in err
    assert len(Store(path).snapshots()) == 1
    # and the same server and wallet cannot come in twice under two names
    _config(config, north=(north.base_url, "SVC_TOKEN_NORTH"), twin=(north.base_url, "T2"))
    monkeypatch.setenv("T2", north.tokens["read"])
    assert main(["snapshot", "--account", "twin", "--store", str(path), "--quiet"]) == 1
    assert "already holds this account" in capsys.readouterr().err


# -- the single-account store ---------------------------------------------------------------


def test_a_store_that_named_no_account_keeps_working_as_the_default_one(tmp_path):
    store = Store(tmp_path / "store")
    store.write(frames_of(account(3)), server_time=T0)
    assert store.accounts() == ["default"]
    assert len(store.load("vms")) == len(store.load("vms", account="default")) == 3
    assert store.snapshots()["account"].tolist() == ["default"]
    assert not any(p.name.startswith("account=") for p in (tmp_path / "store/vms").iterdir())
    # another account needs the first one named: said with the command, nothing stored
    with pytest.raises(StoreError, match="keeps one account, unnamed.*--adopt NAME"):
        store.write(frames_of(account(3)), server_time=T0 + DAY, account="other")
    assert len(store.snapshots()) == 1


def test_a_store_that_named_no_account_adopts_a_name_and_takes_more_keeping_its_history(
    tmp_path, capsys
):
    # three snapshots with no account name, then `svcnb snapshots --adopt prod`: every one
    # reads as before under "prod", and the store takes a second account
    store = Store(tmp_path / "store")
    records = account(4)
    times = [T0 + DAY * i for i in range(3)]
    for i, when in enumerate(times):
        store.write(frames_of(evolve(records, i) if i else records), server_time=when)
    before = {(r, t): store.load(r, at=t) for r in ("vms", "firewall_rules") for t in times}
    finding = "fw-1:rule-1:open-ssh"
    store.journal.accept_finding(
        finding, reason="bastion", owner="ops", until=T0 + DAY * 30, now=T0
    )
    assert main(["snapshots", "--store", str(tmp_path / "store"), "--adopt", "prod"]) == 0
    assert "3 snapshot(s)" in capsys.readouterr().out
    store = Store(tmp_path / "store")
    store.write(frames_of(_in_usd(account(2))), server_time=T0 + DAY * 3, account="other")
    assert store.accounts() == ["prod", "other"]
    assert store.snapshots(account="prod")["server_time"].tolist() == times
    for (resource, when), frame in before.items():
        pd.testing.assert_frame_equal(store.load(resource, at=when, account="prod"), frame)
    assert len(store.load("vms", account="other")) == 2
    # what the journal says of the account before it was named stays its own
    assert store.for_account("prod").journal.acceptances()["finding_id"].tolist() == [finding]
    assert store.for_account("other").journal.acceptances().empty
    # readers without svcnb see both accounts, each row with its account
    theirs = duckdb_as_of(str(tmp_path / "store/vms"), T0 + DAY * 3, keys=("account", "id"))
    assert sorted(set(theirs["account"])) == ["other", "prod"]
    assert (theirs["account"] == "prod").sum() == len(before[("vms", times[-1])])
    # adopting again, or an empty store, is refused in one line
    with pytest.raises(StoreError, match="already names its accounts"):
        store.adopt("again")


# -- reports over several accounts ----------------------------------------------------------


def _in_usd(records: dict) -> dict:
    out = copy.deepcopy(records)
    for vm in out["vms"]:
        vm["billing"]["priceMonthly"] = {"amount": "10.00", "currency": "USD"}
        vm["plan"]["priceMonthly"] = {"amount": "10.00", "currency": "USD"}
    out["wallet"][0]["id"] = "wallet-us"
    out["wallet"][0]["balance"] = {"amount": "90.00", "currency": "USD"}
    return out


def test_a_report_over_two_accounts_in_two_currencies_adds_nothing_across_them(tmp_path):
    store = Store(tmp_path / "store")
    eu, us = account(4), _in_usd(account(3))
    for day in range(2):
        store.write(frames_of(eu), server_time=T0 + day * DAY, server="https://eu", account="eu")
        store.write(frames_of(us), server_time=T0 + day * DAY, server="https://us", account="us")
    with pytest.raises(StoreError, match="holds accounts eu, us"):
        billing.monthly_total.from_store(store)
    total = billing.monthly_total.from_store(store, account="*")
    assert "not added" not in total.columns and "never added" in total.attrs["note"]
    rows = {(r.account, r.currency): r for r in total.itertuples()}
    # by hand: 4 running VMs at 12.50 EUR; 3 at 10.00 USD; one row each, no sum row
    assert set(rows) == {("eu", "EUR"), ("us", "USD")}
    assert Decimal(str(rows["eu", "EUR"].monthly_amount)) == Decimal("50.00")
    assert Decimal(str(rows["us", "USD"].monthly_amount)) == Decimal("30.00")
    assert len(total) == 2
    one = billing.monthly_total.from_store(store, account="us")
    assert "account" not in one.columns and one["currency"].tolist() == ["USD"]
    runway = billing.runway.from_store(store, account=["eu", "us"])
    assert runway[["account", "currency"]].values.tolist() == [["eu", "EUR"], ["us", "USD"]]
    assert runway["balance"].tolist() == [150.0, 90.0]
    over_time = replay(billing.monthly_total, store, account="*")
    assert over_time.groupby(["account", "currency"]).size().to_dict() == {
        ("eu", "EUR"): 2,
        ("us", "USD"): 2,
    }
    # a panel shows one account; several make one panel per account, each in its own tab
    panel = BillingPanel(store, account="us")
    assert panel.store.account == "us"
    tabs = BillingPanel(store, account="*")
    assert isinstance(tabs, AccountTabs) and list(tabs.widget.titles) == ["eu", "us"]
    assert {name: p.store.account for name, p in tabs.panels.items()} == {"eu": "eu", "us": "us"}
    # each tab's summary names its own account's currency, never a sum of the two
    assert "EUR" in tabs.panels["eu"].summary.value and "USD" not in tabs.panels["eu"].summary.value
    assert "USD" in tabs.panels["us"].summary.value and "EUR" not in tabs.panels["us"].summary.value
    page = static_html(tabs.widget)  # a page without a kernel: each account under its name
    assert page.index("<h3>eu</h3>") < page.index("<h3>us</h3>")
    assert list(BillingPanel(store, account=["us"]).panels) == ["us"]
    with pytest.raises(StoreError, match="no account 'west'"):
        BillingPanel(store, account=["us", "west"])


@pytest.mark.parametrize("dialects", _PAIRS)
def test_balances_of_accounts_on_different_dialects_stay_per_account(
    make_sandbox, monkeypatch, tmp_path, dialects
):
    north, south, _ = _two_accounts(make_sandbox, monkeypatch, tmp_path, dialects)
    path = tmp_path / "store"
    assert main(["snapshot", "--all", "--store", str(path), "--quiet"]) == 0
    store = Store(path)
    runway = billing.runway.from_store(store, account="*").set_index("account")
    for name, sb in (("north", north), ("south", south)):
        truth = _truth_balance(sb)
        one = billing.runway.from_store(store, account=name)
        assert Decimal(str(one["balance"].iloc[0])) == truth
        assert Decimal(str(runway.loc[name, "balance"])) == truth
    assert runway.attrs["note"].startswith("one answer per account")
    assert not pd.isna(runway["balance"]).any()


# -- readers without svcnb, object storage, writers at once ---------------------------------


def _two_account_history(store: Store) -> None:
    north, south = account(5), copy.deepcopy(account(3))
    south["wallet"][0]["id"] = "wallet-south"
    for day in range(3):
        if day:
            north = evolve(north, day)
        store.write(frames_of(north), server_time=T0 + day * DAY, server="https://n", account="n")
        store.write(frames_of(south), server_time=T0 + day * DAY, server="https://s", account="s")


def test_duckdb_and_polars_read_each_account_as_of_a_date_without_svcnb(tmp_path):
    store = Store(tmp_path / "store")
    _two_account_history(store)
    at = T0 + DAY
    ours = store.load("vms", at=at, account="*").sort_values(["account", "id"])
    theirs = duckdb_as_of(str(tmp_path / "store/vms"), at, keys=("account", "id"))
    assert theirs["account"].tolist() == ours["account"].tolist()
    assert theirs["id"].tolist() == ours["id"].tolist()
    assert theirs["name"].tolist() == ours["name"].tolist()
    polar = polars_as_of(str(tmp_path / "store"), "vms", at, keys=("account", "id"))
    assert polar["id"].to_list() == ours["id"].tolist()


# make test runs the two writers on disk; on S3 (make test-all) the same code commits through the
# object store, whose concurrent writers make test still runs (test_two_writers_at_once_on_s3).
@pytest.mark.parametrize("where", ["disk", pytest.param("s3", marks=pytest.mark.slow)])
def test_writers_of_two_accounts_at_once_lose_nothing(where, tmp_path, request):
    url = str(tmp_path / "store") if where == "disk" else request.getfixturevalue("s3_url")

    def write(name: str) -> list[str]:
        store = Store(url, account=name)
        records = copy.deepcopy(account(4))
        records["wallet"][0]["id"] = f"wallet-{name}"
        return [
            store.write(frames_of(evolve(records, d) if d else records), server_time=T0 + d * DAY)
            for d in range(3)
        ]

    with ThreadPoolExecutor(2) as pool:
        written = dict(zip("ab", pool.map(write, "ab"), strict=True))
    store = Store(url)
    snaps = store.snapshots()
    assert sorted(snaps["snapshot_id"]) == sorted(written["a"] + written["b"])
    assert snaps.groupby("account").size().to_dict() == {"a": 3, "b": 3}
    for name in "ab":
        expected = frames_of(evolve(account(4), 2))["vms"]["id"].tolist()
        assert store.load("vms", account=name)["id"].tolist() == sorted(expected)
    assert store.history("wallet", ["balance_amount"], account="*")["account"].nunique() == 2


def test_svcnb_snapshots_says_whose_each_snapshot_is(tmp_path, capsys):
    store = Store(tmp_path / "store")
    _two_account_history(store)
    assert main(["snapshots", "--store", str(tmp_path / "store")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-1] == "account"
    assert [line.split()[-1] for line in lines[1:-1]] == ["n", "s"] * 3


# -- the commands that read a store of several accounts ---------------------------------------


def test_report_and_check_name_the_account_in_a_store_of_several(
    make_sandbox, monkeypatch, tmp_path, capsys
):
    north, south, _ = _two_accounts(make_sandbox, monkeypatch, tmp_path, ("default", "acme"))
    path = tmp_path / "store"
    assert main(["snapshot", "--all", "--store", str(path)]) == 0
    capsys.readouterr()

    # unnamed, the figures of two accounts are never read as one: one line naming them, exit 2
    assert main(["report", "firewall", "--store", str(path)]) == 2
    said = capsys.readouterr().err
    assert "holds accounts" in said and "north" in said and "south" in said
    # said in the command line's terms, with the way to read every account
    assert "--account '*'" in said and "account=" not in said and "Store(" not in said
    assert main(["report", "firewall", "--store", str(path), "--account", "*"]) == 0
    out = capsys.readouterr().out
    # in the store's order of accounts (that of their first snapshot)
    heads = [line for line in out.splitlines() if line.startswith("== account ")]
    assert heads == [f"== account {name} ==" for name in Store(path).accounts()]
    assert sorted(heads) == ["== account north ==", "== account south =="]
    assert out.count("(snapshot ") == 2
    assert main(["report", "firewall", "--store", str(path), "--account", "*", "--format", "csv"])
    assert "one account" in capsys.readouterr().err
    for name, sandbox in (("north", north), ("south", south)):
        argv = ["report", "firewall", "--store", str(path), "--account", name]
        assert main([*argv, "--table", "findings", "--format", "json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        truth = sandbox.control.truth()
        fw_ids = {fw["id"] for fw in truth["firewalls"]}
        # (account-wide findings name no firewall)
        named = {row["firewall_id"] for row in shown} - {None}
        assert named and named <= fw_ids
    assert main(["report", "firewall", "--store", str(path), "--account", "west"]) == 2
    assert "no account 'west'" in capsys.readouterr().err

    # alert state is kept per account: north's fire does not silence south's
    config = tmp_path / "alerts.toml"
    config.write_text(
        "[alerts]\nrunway_days = false\nlow_balance_days = false\nbandwidth_days = false\n"
        "webhook_failures_left = false\nhigh_findings = true\n"
    )
    argv = ["check", "--store", str(path), "--config", str(config), "--no-deliver"]
    assert main([*argv, "--account", "north"]) == 1
    assert main([*argv, "--account", "north"]) == 0  # fired once, standing
    assert main([*argv, "--account", "south"]) == 1
    assert main([*argv, "--account", "south"]) == 0
    capsys.readouterr()
    # every account in turn: nothing new in either, each under its name
    assert main([*argv, "--account", "*"]) == 0
    out = capsys.readouterr().out
    assert out.count("nothing new") == 2 and "== account south ==" in out
    # the same alert key in two accounts (ids can coincide across accounts) stands apart
    from svcnb.alerts import active
    from svcnb.store import AlertRecord

    store = Store(path)
    when = store.snapshots()["server_time"].max()
    fired = AlertRecord(
        time=when,
        account="north",
        outcome="alert fired",
        alert_key="runway",
        alert_rule="runway_days",
        snapshot_id="s",
        message="runway 3 days",
    )
    store.for_account("north").journal.append(fired)
    assert "runway" in set(active(store.for_account("north"))["alert_key"])
    assert "runway" not in set(active(store.for_account("south"))["alert_key"])


class _Garbage(BaseHTTPRequestHandler):
    """A service whose every list holds records whose id is an object."""

    def do_GET(self) -> None:
        meta = {"page": 1, "perPage": 20, "total": 1, "totalPages": 1}
        body = json.dumps(
            {"success": True, "data": [{"id": {"x": 1}, "status": {"y": 2}}], "meta": meta}
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_an_account_answering_garbage_costs_only_its_own_line(
    make_sandbox, monkeypatch, tmp_path, capsys
):
    north, south, config = _two_accounts(make_sandbox, monkeypatch, tmp_path, ("default", "acme"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Garbage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config.write_text(
            config.read_text() + f'[accounts.odd]\nbase_url = "http://127.0.0.1:'
            f'{server.server_address[1]}"\ntoken_env = "SVC_TOKEN_ODD"\n'
        )
        monkeypatch.setenv("SVC_TOKEN_ODD", "svc_odd_account_token_5678")
        monkeypatch.setenv("SVCNB_BUDGET", "off")
        path = tmp_path / "store"
        code = main(["snapshot", "--all", "--store", str(path)])
    finally:
        server.shutdown()
        server.server_close()
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert "Traceback" not in captured.err
    assert (
        captured.out.count("north: snapshot ") == 1 and captured.out.count("south: snapshot ") == 1
    )
    odd = [line for line in captured.err.splitlines() if line.startswith("svcnb snapshot: odd: ")]
    assert len(odd) == 1, captured.err
    assert "svcnb snapshot --account odd" in odd[0]
    assert "svc_odd_account_token_5678" not in captured.err + captured.out
    assert sorted(Store(path).accounts()) == ["north", "south"]
