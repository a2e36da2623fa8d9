"""Findings with a life: stable ids, what is new, open and resolved between snapshots, and
accepted risks kept (and audited) in the store, expiring at the exact boundary.

The sandbox story (seed 7, 8 VMs) was worked out by hand from its rules: nine findings at first;
opening the Redis rule (6379, only 203.0.113.7/32) to 0.0.0.0/0 adds exactly one (nothing in its
firewall covers it or is covered by it); moving the RDP rule of the same firewall from 40 to 5
and back changes no finding; narrowing the Redis rule to 203.0.113.0/24 resolves it.
"""

from __future__ import annotations

import pandas as pd
import pytest
from _firewall_rules import rule
from _tiers import dialects

from svcnb.client import Client
from svcnb.reports import firewall
from svcnb.sandbox import serve
from svcnb.store import Store, StoreError
from svcnb.times import TimeError


def ids_by_rule(findings: pd.DataFrame) -> dict[tuple[str, str], str]:
    return {
        (c, r): f
        for c, r, f in zip(
            findings["check"], findings["rule_id"], findings["finding_id"], strict=True
        )
    }


# -- ids from frames -----------------------------------------------------------------------------


def test_ids_stay_when_positions_and_other_rules_change(frame):
    before = frame(
        "firewall_rules",
        [
            rule("ssh", 10, src=["0.0.0.0/0"]),
            rule("web", 20, port="443", src=["0.0.0.0/0"]),
            rule("dup", 30, port="443", src=["0.0.0.0/0"]),
            rule("bad", 40, port="ssh"),
        ],
    )
    # ssh moves to the end, web changes port, dup goes, a new rule arrives in front
    after = frame(
        "firewall_rules",
        [
            rule("new", 1, port="80", src=["0.0.0.0/0"]),
            rule("web", 20, port="8443", src=["0.0.0.0/0"]),
            rule("bad", 50, port="ssh"),
            rule("ssh", 900, src=["0.0.0.0/0"]),
        ],
    )
    a, b = firewall.audit(before), firewall.audit(after)
    ids_a, ids_b = ids_by_rule(a), ids_by_rule(b)
    assert set(ids_a) == {
        ("exposed_sensitive_port", "ssh"),
        ("duplicate", "dup"),
        ("unparsed_port", "bad"),
    }
    assert set(ids_b) == {("exposed_sensitive_port", "ssh"), ("unparsed_port", "bad")}
    for key in ids_b:
        assert ids_a[key] == ids_b[key], key
    assert a["finding_id"].is_unique and b["finding_id"].is_unique
    # the existing columns stay, in their order, with the id after them
    assert list(a.columns) == firewall.FINDING_COLUMNS
    assert list(a.columns)[-1] == "finding_id"


def test_a_different_risk_on_the_same_rule_is_a_different_finding(frame):
    def exposure(**changes):
        rules = frame("firewall_rules", [rule("r1", 10, src=["0.0.0.0/0"]) | changes])
        found = firewall.audit(rules)
        return found.loc[found["check"] == "exposed_sensitive_port", "finding_id"].item()

    ssh = exposure()
    assert exposure(position=999) == ssh
    assert exposure(src=["::/0"]) == ssh  # still from anywhere, still SSH
    assert exposure(port="22,3389") != ssh  # RDP now too: nobody accepted that
    assert exposure(protocol="ANY") != ssh
    assert exposure(id="r2") != ssh


def test_vm_and_firewall_findings_have_ids_from_their_subject(frame):
    vms = frame("vms", [{"id": "v1", "name": "a", "status": "running"}])
    firewalls = frame("firewalls", [{"id": "fw9", "name": "spare"}])
    rules = frame("firewall_rules", [])
    links = frame("vm_firewalls", [])
    found = firewall.audit(rules, links, firewalls, vms)
    assert sorted(found["check"]) == ["firewall_unattached", "vm_without_firewall"]
    again = firewall.audit(
        rules,
        links,
        firewalls,
        frame(
            "vms",
            [
                {"id": "v0", "name": "z", "status": "terminated"},
                {"id": "v1", "name": "renamed", "status": "running"},
            ],
        ),
    )
    assert sorted(found["finding_id"]) == sorted(again["finding_id"])


# -- a store with three snapshots, read over several dialects -------------------------------------


def _find(rules: pd.DataFrame, port: str, source: str) -> pd.Series:
    hit = rules[
        (rules["port"] == port).fillna(False).to_numpy(dtype=bool)
        & rules["source_ips"].map(lambda s: list(s) == [source]).to_numpy(dtype=bool)
    ]
    assert len(hit) == 1, hit
    return hit.iloc[0]


def _counts(changes: pd.DataFrame) -> dict[str, int]:
    return {s: int((changes["state"] == s).sum()) for s in firewall.FINDING_STATES}


@pytest.fixture(scope="module", params=dialects(["default", "acme", "linkhdr", "cursor"]))
def three(request, tmp_path_factory):
    """Snapshots s1 (as seeded), s2 (Redis opened to all, RDP rule moved 40 -> 5) and s3 (Redis
    narrowed, RDP rule back at 40), an hour apart, from a sandbox speaking ``param``."""
    with (
        serve(vms=8, seed=7, dialect=request.param, rate_limit=100_000) as sb,
        Client(api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False) as client,
    ):
        store = Store(tmp_path_factory.mktemp(f"life-{request.param}"))
        s1 = store.take(client)
        rules = store.load("firewall_rules")
        redis = _find(rules, "6379", "203.0.113.7/32")
        rdp = rules[
            (rules["firewall_id"] == redis["firewall_id"]).to_numpy(dtype=bool)
            & (rules["port"] == "3389").fillna(False).to_numpy(dtype=bool)
        ].iloc[0]
        assert rdp["position"] == 40
        fw = redis["firewall_id"]
        client.firewalls.update_rule(fw, redis["id"], sourceIps=["0.0.0.0/0"])
        client.firewalls.update_rule(fw, rdp["id"], position=5)
        sb.control.advance(3600)
        s2 = store.take(client)
        client.firewalls.update_rule(fw, redis["id"], sourceIps=["203.0.113.0/24"])
        client.firewalls.update_rule(fw, rdp["id"], position=40)
        sb.control.advance(3600)
        s3 = store.take(client)
        yield {
            "store": store,
            "ids": (s1, s2, s3),
            "redis": redis["id"],
            "rdp": rdp["id"],
            "times": list(store.snapshots()["server_time"]),
        }


def test_a_finding_appears_persists_and_is_fixed(three):
    store, (s1, s2, s3) = three["store"], three["ids"]

    first = firewall.finding_changes(store, at=s1)
    assert _counts(first) == {"new": 9, "open": 0, "accepted": 0, "resolved": 0}
    assert first["from_snapshot"].isna().all() and (first["to_snapshot"] == s1).all()

    second = firewall.finding_changes(store, at=s2)
    assert _counts(second) == {"new": 1, "open": 9, "accepted": 0, "resolved": 0}
    new = second[second["state"] == "new"].iloc[0]
    assert (new["check"], new["rule_id"], new["severity"]) == (
        "exposed_sensitive_port",
        three["redis"],
        "high",
    )
    assert new["reason"] == "open to any source: Redis (6379)"
    assert (second["from_snapshot"] == s1).all() and (second["to_snapshot"] == s2).all()
    # the RDP rule moved from 40 to 5: same finding, still open, position as now
    rdp = second[second["rule_id"] == three["rdp"]]
    assert list(rdp["state"]) == ["open"] and list(rdp["position"]) == [5]

    third = firewall.finding_changes(store)  # latest against the one before it
    assert _counts(third) == {"new": 0, "open": 9, "accepted": 0, "resolved": 1}
    gone = third[third["state"] == "resolved"].iloc[0]
    assert gone["finding_id"] == new["finding_id"] and gone["rule_id"] == three["redis"]
    # rows: new, open, accepted, resolved; worst first within each
    assert list(third["state"]) == ["open"] * 9 + ["resolved"]

    # any two: from s1 to s3 the Redis exposure came and went, so nothing changed
    span = firewall.finding_changes(store, since=s1, at=s3)
    assert _counts(span) == {"new": 0, "open": 9, "accepted": 0, "resolved": 0}
    by_time = firewall.finding_changes(store, since=three["times"][0], at=three["times"][2])
    pd.testing.assert_frame_equal(span, by_time)
    assert set(span["finding_id"]) == set(first["finding_id"])


def test_since_after_at_is_refused(three):
    s1, s2, _ = three["ids"]
    with pytest.raises(ValueError, match="later than at"):
        firewall.finding_changes(three["store"], since=s2, at=s1)


# -- accepted risks -------------------------------------------------------------------------------


@pytest.fixture
def two(sandbox, tmp_path):
    """Snapshots at T and T + 1 h of the default sandbox (the session one, 40 VMs)."""
    with Client(api_key=sandbox.tokens["admin"], base_url=sandbox.base_url, progress=False) as c:
        store = Store(tmp_path / "store")
        store.take(c)
        sandbox.control.advance(3600)
        store.take(c)
        yield store, sandbox, c


def test_an_acceptance_counts_until_the_exact_instant_it_ends(two):
    store, sandbox, client = two
    t2 = store.snapshots()["server_time"].iloc[-1]
    changes = firewall.finding_changes(store)
    target = changes[changes["severity"] == "high"].iloc[0]
    open_before = _counts(changes)["open"]
    until = t2 + pd.Timedelta(hours=1)
    store.journal.accept_finding(
        target["finding_id"],
        reason="bastion host, replaced next sprint",
        owner="sam@example.com",
        until=until,
        now=t2,
        firewall_id=target["firewall_id"],
        rule_id=target["rule_id"],
    )

    now_ = firewall.finding_changes(store)  # now = T2, an hour before the end
    row = now_[now_["finding_id"] == target["finding_id"]].iloc[0]
    assert row["state"] == "accepted"
    assert (row["accepted_by"], row["accepted_reason"]) == (
        "sam@example.com",
        "bastion host, replaced next sprint",
    )
    assert row["accepted_until"] == until
    assert _counts(now_) == {"new": 0, "open": open_before - 1, "accepted": 1, "resolved": 0}

    last_ns = firewall.finding_changes(store, now=until - pd.Timedelta(1, "ns"))
    assert last_ns.set_index("finding_id").loc[target["finding_id"], "state"] == "accepted"
    at_end = firewall.finding_changes(store, now=until)
    ended = at_end.set_index("finding_id").loc[target["finding_id"]]
    assert ended["state"] == "open" and pd.isna(ended["accepted_until"])

    # a snapshot taken exactly when it ends: its server time is the default now
    sandbox.control.advance(3600)
    store.take(client)
    assert store.snapshots()["server_time"].iloc[-1] == until
    latest = firewall.finding_changes(store).set_index("finding_id")
    assert latest.loc[target["finding_id"], "state"] == "open"


def test_acceptances_need_a_reason_an_owner_and_a_future_end(two):
    store, _, _ = two
    t2 = store.snapshots()["server_time"].iloc[-1]
    fid = firewall.finding_changes(store)["finding_id"].iloc[0]
    good = {"reason": "known", "owner": "sam", "until": t2 + pd.Timedelta(days=1), "now": t2}
    for bad, words in (
        ({"reason": "  "}, "reason is required"),
        ({"owner": ""}, "owner is required"),
        ({"until": t2}, "not in the future"),
        ({"until": t2 - pd.Timedelta(seconds=1)}, "not in the future"),
    ):
        with pytest.raises(StoreError, match=words):
            store.journal.accept_finding(fid, **(good | bad))
    # a time it cannot read is said as every door says it (svcnb.times.to_utc)
    with pytest.raises(TimeError, match="until='next week' is not a time"):
        store.journal.accept_finding(fid, **(good | {"until": "next week"}))
    with pytest.raises(StoreError, match="finding_id is required"):
        store.journal.accept_finding(" ", **good)
    assert store.journal.acceptances().empty
    assert store.journal.log().empty  # nothing refused was written


def test_accepting_and_revoking_is_on_the_audit_log(two):
    store, _, _ = two
    t2 = store.snapshots()["server_time"].iloc[-1]
    changes = firewall.finding_changes(store)
    target = changes.iloc[0]
    fid = target["finding_id"]
    until = t2 + pd.Timedelta(days=30)
    store.journal.accept_finding(fid, reason="first", owner="ana", until=until, now=t2)
    store.journal.accept_finding(
        fid, reason="extended", owner="sam", until=until + pd.Timedelta(days=30), now=t2
    )
    row = firewall.finding_changes(store).set_index("finding_id").loc[fid]
    # the later acceptance replaces the earlier one
    assert (row["state"], row["accepted_by"], row["accepted_reason"]) == (
        "accepted",
        "sam",
        "extended",
    )
    assert row["accepted_until"] == until + pd.Timedelta(days=30)

    store.journal.revoke_acceptance(fid, owner="lee", reason="the fix shipped", now=t2)
    assert firewall.finding_changes(store).set_index("finding_id").loc[fid, "state"] == "open"
    with pytest.raises(StoreError, match="no acceptance to revoke"):
        store.journal.revoke_acceptance(fid, owner="lee", reason="again")

    table = store.journal.acceptances()
    assert list(table["owner"]) == ["ana", "sam"]
    assert list(table["revoked_by"]) == ["lee", "lee"]
    assert (table["revoked_at"] == t2).all()
    wallet = store.load("wallet")["id"].iloc[0]
    assert (table["account"] == "default").all() and (table["wallet"] == wallet).all()

    log = store.journal.log()
    assert list(log["outcome"]) == ["finding accepted", "finding accepted", "acceptance revoked"]
    assert list(log["finding_id"]) == [fid] * 3
    assert list(log["owner"]) == ["ana", "sam", "lee"]
    assert list(log["reason"]) == ["first", "extended", "the fix shipped"]
    assert pd.Timestamp(log["until"].iloc[0]) == until
    assert (log["time"] == t2).all()
    # a fresh Store object on the same folder reads the same register: nothing lives in memory
    again = Store(store.path).journal.acceptances()
    pd.testing.assert_frame_equal(again, table)


def test_an_accepted_finding_that_is_fixed_shows_resolved(three):
    store = Store(three["store"].path)
    s1, s2, s3 = three["ids"]
    at_s2 = firewall.finding_changes(store, at=s2)
    redis = at_s2[at_s2["rule_id"] == three["redis"]]["finding_id"].item()
    t2 = three["times"][1]
    store.journal.accept_finding(
        redis, reason="demo", owner="sam", until=t2 + pd.Timedelta(days=9), now=t2
    )
    try:
        assert (
            firewall.finding_changes(store, at=s2).set_index("finding_id").loc[redis, "state"]
            == "accepted"
        )
        gone = firewall.finding_changes(store, at=s3).set_index("finding_id").loc[redis]
        assert gone["state"] == "resolved" and pd.isna(gone["accepted_by"])
    finally:
        # the module's store: the other tests see no acceptance standing
        store.journal.revoke_acceptance(redis, owner="sam", reason="test over", now=t2)


def test_an_acceptance_covers_its_own_account_only(make_sandbox, tmp_path):
    """Two accounts seeded alike have the same firewall ids, so the same finding ids: accepting
    one in account "prod" must leave "staging"'s finding open."""
    store = Store(tmp_path / "store")
    for name in ("prod", "staging"):
        sb = make_sandbox(vms=8, seed=7, rate_limit=100_000)
        with Client(api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False) as c:
            store.take(c, account=name)
    prod, staging = store.for_account("prod"), store.for_account("staging")
    fid = firewall.finding_changes(prod)["finding_id"].iloc[0]
    assert fid in set(firewall.finding_changes(staging)["finding_id"])
    t = prod.snapshots()["server_time"].iloc[-1]
    with pytest.raises(StoreError, match="holds accounts"):
        store.journal.accept_finding(
            fid, reason="r", owner="o", until=t + pd.Timedelta(days=1), now=t
        )
    store.journal.accept_finding(
        fid, reason="r", owner="o", until=t + pd.Timedelta(days=1), now=t, account="prod"
    )
    assert firewall.finding_changes(prod).set_index("finding_id").loc[fid, "state"] == "accepted"
    assert firewall.finding_changes(staging).set_index("finding_id").loc[fid, "state"] == "new"
    assert list(prod.journal.acceptances()["account"]) == ["prod"]
    assert staging.journal.acceptances().empty
    with pytest.raises(StoreError, match="no acceptance to revoke"):
        staging.journal.revoke_acceptance(fid, owner="o", reason="wrong account")
