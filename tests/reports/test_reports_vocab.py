"""Reports read status words as classes (svcnb.vocab): any service's words for the same states
give the same numbers, and words nobody knows are left out of every sum and counted exactly."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from _fuzz import fuzz
from hypothesis import given
from hypothesis import strategies as st

from svcnb import frames, vocab
from svcnb.reports import bandwidth, billing, firewall, webhooks

NOW = pd.Timestamp("2026-11-01T00:00:00Z")

# (id, status, billing, price, currency, renews, plan, used): one VM of every class and case
FLEET = [
    ("a", "running", "active", 30.0, "EUR", "2026-11-05", "small", 900),
    ("b", "running", "active", 50.0, None, "2026-11-10", "large", 100),
    ("c", "stopped", "active", 40.0, "EUR", "2026-11-20", "small", 1500),
    ("d", "provisioning", "active", 20.0, "EUR", None, "small", 0),
    ("e", "stopping", "active", 25.0, "EUR", "2026-11-03", "large", 300),
    ("f", "suspended", "suspended", 35.0, "EUR", "2026-10-01", "small", 200),
    ("g", "running", "overdue", 45.0, "EUR", "2026-10-20", "large", 950),
    ("h", "terminated", None, 10.0, "EUR", None, "small", 50),
    ("i", "stopped", "overdue", 15.0, None, "2026-10-25", "small", 10),
]
HISTORY_DAYS = ["2026-10-29", "2026-10-30", "2026-10-31", "2026-11-01"]


def _iso(day: str | None) -> str | None:
    return None if day is None else f"{day}T00:00:00Z"


def fleet_frames(vm_words: dict[str, str] | None = None, bill_words: dict[str, str] | None = None):
    """The fleet's frames, built from API-shaped records by svcnb.frames, with its status words
    relabelled through the two maps."""
    vm_words, bill_words = vm_words or {}, bill_words or {}
    records = [
        {
            "id": i,
            "name": f"vm-{i}",
            "status": vm_words.get(status, status),
            "billing": None
            if bill is None
            else {
                "status": bill_words.get(bill, bill),
                "nextRenewalAt": _iso(renew),
                "priceMonthly": price if cur is None else {"amount": price, "currency": cur},
            },
            "plan": {"slug": plan, "name": plan, "priceMonthly": price},
            "region": {"slug": "fra" if i < "e" else "ams", "name": "R"},
            "bandwidthUsedBytes": used,
            "bandwidthPackBytes": "1000",
            "firewalls": [{"id": "fw1", "name": "edge"}] if i in ("a", "b", "h") else [],
        }
        for i, status, bill, price, cur, renew, plan, used in FLEET
    ]
    vms = frames.vms(records)
    wallet = frames.wallet({"id": "w", "balance": {"amount": "100.00", "currency": "EUR"}})
    history = pd.DataFrame(
        [
            {
                "snapshot_id": f"s{n}",
                "server_time": pd.Timestamp(day, tz="UTC"),
                "id": i,
                "bandwidth_used_bytes": max(used - 100 * (3 - n), 0),
                "bandwidth_pack_bytes": 1000,
            }
            for n, day in enumerate(HISTORY_DAYS)
            for i, *_rest, used in FLEET
        ]
    )
    rule = {
        "id": "r1",
        "firewallId": "fw1",
        "position": 1,
        "direction": "IN",
        "action": "ACCEPT",
        "protocol": "TCP",
        "port": "22",
        "sourceIps": ["10.0.0.0/8"],
        "destIps": [],
    }
    return vms, wallet, history, frames.vm_firewalls(records), frames.firewall_rules([rule])


def every_report(vms, wallet, history, links, rules) -> dict[str, pd.DataFrame]:
    """Every report frame that reads a status, with the raw words dropped (they differ on
    purpose) and the counts kept in attrs turned into a frame of their own."""
    out = {
        "renewals": billing.renewals(vms, wallet, now=NOW, within="90D"),
        "renewals_due": billing.renewals_due(vms, wallet, now=NOW),
        "run_rate_plan": billing.run_rate(vms, wallet, now=NOW, by="plan_slug"),
        "run_rate_region": billing.run_rate(vms, wallet, now=NOW, by="region_slug"),
        "schedule": billing.renewal_schedule(vms, wallet, now=NOW, horizon="120D"),
        "runway": billing.runway(vms, wallet, now=NOW),
        "low_balance": billing.low_balance_forecast(vms, wallet, now=NOW),
        "overdue": billing.overdue(vms, now=NOW),
        "unknown": billing.unknown_status(vms, now=NOW),
        "usage": bandwidth.usage(vms, now=NOW),
        "projection": bandwidth.projection(vms, history, now=NOW),
        "audit": firewall.audit(rules, links, None, vms),
    }
    counts = {name: frame.attrs.get("unknown_status") for name, frame in out.items()}
    out = {n: f.drop(columns=["status", "billing_status"], errors="ignore") for n, f in out.items()}
    out["counts"] = pd.DataFrame([counts])
    return out


def assert_same(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for name in want:
        got[name].attrs, want[name].attrs = {}, {}
        pd.testing.assert_frame_equal(got[name], want[name], obj=name)


# the fleet's word for a VM held for non-payment, pinned as its user would: providers differ on
# "suspended" (OpenStack's is a VM its user suspended to disk), so it is no built-in word
FLEET_WORDS = {"suspended": "suspended"}


def pinned() -> vocab.Vocabulary:
    return vocab.Vocabulary(vm_status=FLEET_WORDS)


@pytest.fixture(autouse=True)
def _fleet_words():
    with vocab.using(pinned()) as v:
        yield v


with vocab.using(pinned()):
    CANONICAL = every_report(*fleet_frames())


def _synonyms(kind: str, canonical: str) -> list[str]:
    table = {**vocab.BUILTIN[kind], **(FLEET_WORDS if kind == "vm_status" else {})}
    cls = table[canonical]
    words = sorted(w for w, c in table.items() if c == cls)
    return words + [w.upper() for w in words] + [w.replace("_", " ").title() for w in words]


def _relabelling(kind: str, canonical: list[str]):
    # words within one kind stay distinct, as a service's would
    return st.fixed_dictionaries(
        {w: st.sampled_from(_synonyms(kind, w)) for w in canonical}
    ).filter(lambda m: len({vocab.normalise(v) for v in m.values()}) == len(m))


@fuzz(40)
@given(
    vm_words=_relabelling(
        "vm_status", ["running", "stopped", "provisioning", "stopping", "suspended", "terminated"]
    ),
    bill_words=_relabelling("billing_status", ["active", "overdue", "suspended"]),
)
def test_any_synonyms_for_the_same_states_give_every_report_frame_unchanged(vm_words, bill_words):
    with warnings.catch_warnings():
        warnings.simplefilter("error", vocab.UnknownWordWarning)  # every word is known
        got = every_report(*fleet_frames(vm_words, bill_words))
    assert_same(got, CANONICAL)


def test_words_providers_differ_on_give_the_canonical_numbers_once_pinned():
    vm_words = {"running": "active", "terminated": "deleted", "stopped": "halted"}
    bill_words = {"active": "paid", "overdue": "unpaid", "suspended": "blocked"}
    pins = vocab.Vocabulary(
        vm_status={"active": "running", **FLEET_WORDS},
        billing_status={"unpaid": "owing", "blocked": "suspended"},
    )
    with vocab.using(pins):
        got = every_report(*fleet_frames(vm_words, bill_words))
    assert_same(got, CANONICAL)
    vms = fleet_frames(vm_words, bill_words)[0]
    vocab.extend(
        vm_status={"active": "running"},
        billing_status={"unpaid": "owing", "blocked": "suspended"},
    )
    # unpaid is overdue: listed, and the run rate leaves only the deleted VM out
    assert set(billing.overdue(vms, now=NOW)["vm_id"]) == {"f", "g", "i"}
    rate = billing.run_rate(vms, now=NOW, by="plan_slug")
    assert int(rate["vms"].sum()) == 8 and int(rate["unknown_status"].sum()) == 0


def test_a_word_providers_differ_on_is_unknown_never_a_guessed_suspension():
    # "locked": a VM held during a backup at Vultr and Hetzner, a suspended one at Scaleway.
    # Read as suspended, the paid running VMs a and b were listed as overdue.
    vms = fleet_frames({"running": "locked"})[0]
    with pytest.warns(vocab.UnknownWordWarning, match="'locked' may mean held during"):
        overdue = billing.overdue(vms, now=NOW)
    assert {"a", "b"}.isdisjoint(overdue["vm_id"])
    assert overdue.attrs["unknown_status"] >= 2


def test_canonical_numbers_are_the_ones_worked_out_by_hand():
    runway = CANONICAL["runway"].iloc[0]
    # owed: f 35 (suspended) + g 45 + i 15 (i states no currency: the account's EUR);
    # renewals in order 11-03 e 25 -> 75, 11-05 a 30 -> 45, 11-10 b 50 cannot be paid
    assert runway["owed"] == 95
    assert runway["runway_at"] == pd.Timestamp("2026-11-10T00:00Z") and runway["vm_id"] == "b"
    assert runway["unknown_status"] == 0 and bool(runway["complete"])
    counts = {k: v for k, v in CANONICAL["counts"].iloc[0].items() if v is not None}
    assert counts == dict.fromkeys(["renewals", "schedule", "overdue", "usage", "projection"], 0)
    by_plan = CANONICAL["run_rate_plan"].set_index("plan_slug")
    # terminated h left out, nothing unknown
    assert by_plan["vms"].sum() == 8 and by_plan["unknown_status"].sum() == 0


def test_suspended_is_unknown_until_pinned_never_a_guessed_non_payment():
    # OpenStack's SUSPENDED: the user suspended a paid VM to disk. Read as the built-in
    # suspension (held for non-payment), the paid VMs a and b were listed as overdue.
    vms = fleet_frames({"running": "SUSPENDED", "suspended": "locked"})[0]
    with (
        vocab.using(vocab.Vocabulary()),
        pytest.warns(vocab.UnknownWordWarning, match="'SUSPENDED' may mean held by the provider"),
    ):
        overdue = billing.overdue(vms, now=NOW)
    assert {"a", "b"}.isdisjoint(overdue["vm_id"])
    assert overdue.attrs["unknown_status"] >= 2
    # pinned for this service's account as what it is there: counted again, and right
    with vocab.using(vocab.Vocabulary(vm_status={"suspended": "stopped", "locked": "suspended"})):
        again = billing.overdue(vms, now=NOW)
    assert {"a", "b"}.isdisjoint(again["vm_id"]) and again.attrs["unknown_status"] == 0


@pytest.fixture
def fresh_vocabulary():
    with vocab.using(pinned()) as v:
        yield v


def test_exotic_words_are_left_out_of_every_sum_and_counted_exactly(fresh_vocabulary):
    # a and b speak words nobody knows; c's billing word is unknown, which matters for
    # renewals but not for the run rate
    words = {"a": ("live", "active"), "b": ("dormant", "active"), "c": ("stopped", "cleared")}
    vms, wallet, history, links, rules = fleet_frames()
    for vm_id, (status, bill) in words.items():
        vms.loc[vms["id"] == vm_id, ["status", "billing_status"]] = [status, bill]
    with pytest.warns(vocab.UnknownWordWarning) as caught:
        runway = billing.runway(vms, wallet, now=NOW).iloc[0]
    said = " ".join(str(w.message) for w in caught)
    assert all(word in said for word in ("'live'", "'dormant'", "'cleared'"))
    assert runway["unknown_status"] == 3 and not runway["complete"]
    # the walk without a, b, c: 11-03 e 25 -> 75, then nothing else falls due unpaid before
    # e again on 12-03 (75 -> 50) and 01-03 (-> 25), 02-03 (-> 0), 03-03 cannot be paid
    known = vms[~vms["id"].isin(list(words))]
    want = billing.runway(known, wallet, now=NOW).iloc[0]
    assert runway["runway_at"] == want["runway_at"] and runway["owed"] == want["owed"]
    assert bool(want["complete"])

    low = billing.low_balance_forecast(vms, wallet, now=NOW).iloc[0]
    assert low["unknown_status"] == 3 and not low["complete"]
    due = billing.renewals_due(vms, wallet, now=NOW)
    assert set(due["unknown_status"]) == {3}
    assert billing.renewals(vms, wallet, now=NOW).attrs["unknown_status"] == 3

    rate = billing.run_rate(vms, wallet, now=NOW, by="plan_slug").set_index("plan_slug")
    # run rate needs the VM status only: a (small) and b (large) are out, c is in
    assert rate.loc["small", "unknown_status"] == 1 and rate.loc["large", "unknown_status"] == 1
    assert rate.loc["small", "vms"] == 4  # c, d, f, i (h terminated, a unknown)
    assert rate.loc["small", "monthly_amount"] == 40 + 20 + 35 + 15
    assert rate.loc["large", "monthly_amount"] == 25 + 45

    left = billing.unknown_status(vms, now=NOW)
    assert left["vm_id"].tolist() == ["a", "b", "c"]
    assert left["billing_class"].tolist() == ["paid", "paid", "unknown"]
    over = billing.overdue(vms, now=NOW)
    assert set(over["vm_id"]) == {"f", "g", "i"} and over.attrs["unknown_status"] == 3


def test_a_word_mapped_with_extend_is_counted_in_again(fresh_vocabulary):
    vms, wallet, *_ = fleet_frames({"running": "live"})
    with pytest.warns(vocab.UnknownWordWarning):
        assert billing.runway(vms, wallet, now=NOW)["unknown_status"].iloc[0] == 3
    fresh_vocabulary.add("vm_status", {"live": "running"})
    got = billing.runway(vms, wallet, now=NOW)
    got.attrs = {}
    pd.testing.assert_frame_equal(got, CANONICAL["runway"])


def test_bandwidth_grows_the_running_class_and_leaves_unknown_projections_unknown(
    fresh_vocabulary,
):
    vms, _, history, *_ = fleet_frames({"running": "up", "stopped": "off"})
    proj = bandwidth.projection(vms, history, now=NOW).set_index("vm_id")
    # a "up" grows 100/day to its renewal on 11-05: 900 + 400 passes 1000
    assert proj.loc["a", "status_class"] == "running" and proj.loc["a", "outlook"] == "will exceed"
    assert proj.loc["c", "outlook"] == "over" and proj.loc["i", "projected_bytes"] == 10
    assert "h" not in proj.index  # terminated
    vms.loc[vms["id"] == "a", "status"] = "spawning"
    vms.loc[vms["id"] == "c", "status"] = "on_ice"
    with pytest.warns(vocab.UnknownWordWarning):
        proj = bandwidth.projection(vms, history, now=NOW)
    assert proj.attrs["unknown_status"] == 2
    proj = proj.set_index("vm_id")
    assert proj.loc["a", "outlook"] == "unknown" and pd.isna(proj.loc["a", "projected_bytes"])
    assert proj.loc["c", "outlook"] == "over"  # already over: known whatever the status


def test_firewall_audit_leaves_out_the_terminated_class(fresh_vocabulary):
    vms, _, _, links, rules = fleet_frames({"terminated": "destroyed"})
    found = firewall.audit(rules, links, None, vms)
    bare = set(found.loc[found["check"] == "vm_without_firewall", "vm_id"])
    assert "h" not in bare and {"c", "d", "e", "f", "g", "i"} <= bare


# --- deliveries whose records name their fields otherwise -----------------------------------

T0 = "2026-11-01T00:00:{:02d}Z"
PLAN = [("e1", [True]), ("e2", [False, True]), ("e3", [False, False, False]), ("e4", [False])]


def delivery_records(names: dict[str, str | None]) -> list[dict]:
    """Attempt records under field names ``names`` (canonical -> name; None drops the field)."""
    out = []
    n = 0
    for event_id, outcomes in PLAN:
        for attempt, ok in enumerate(outcomes, start=1):
            n += 1
            record = {
                "id": f"d{n}",
                "event": "vm.stopped",
                "url": "https://a.example/h",
                "error": None,
                "statusCode": 200 if ok else 500,
                "success": ok,
                "attempts": attempt,
                "eventId": event_id,
                "createdAt": T0.format(n),
                "lastAttemptAt": T0.format(n),
            }
            for canonical, name in names.items():
                value = record.pop(canonical)
                if name is not None:
                    record[name] = value
            out.append(record)
    return out


HOOKS = frames.webhooks(
    [{"id": "h1", "url": "https://a.example/h", "events": ["vm.stopped"], "isActive": True}]
)


def _health(records):
    return webhooks.health(HOOKS, frames.deliveries(records, webhook_id="h1"), now=NOW)


@pytest.mark.parametrize(
    "names",
    [
        {"statusCode": "responseStatus", "success": "ok", "attempts": "attemptCount"},
        {
            "statusCode": "status_code",
            "success": "delivered",
            "attempts": "tries",
            "eventId": "event_id",
            "createdAt": "created_at",
            "lastAttemptAt": "last_attempt_at",
        },
        {"success": "succeeded", "attempts": "attempt", "lastAttemptAt": "updatedAt"},
    ],
)
def test_renamed_delivery_fields_give_the_same_health(names):
    want = _health(delivery_records({}))
    row = want.iloc[0]
    assert (row["delivered"], row["failed"], row["unknown"]) == (2, 2, 0)
    assert row["consecutive_failures"] == 4  # e3's three attempts and e4's one since e2
    pd.testing.assert_frame_equal(_health(delivery_records(names)), want)


def test_without_a_success_flag_every_outcome_is_unknown_and_nothing_crashes():
    records = delivery_records({"success": "passed", "attempts": "count"})
    got = _health(records).iloc[0]
    assert (got["events"], got["delivered"], got["failed"], got["unknown"]) == (4, 0, 0, 4)
    assert pd.isna(got["success_rate"]) and pd.isna(got["attempt_success_rate"])
    assert pd.isna(got["consecutive_failures"]) and pd.isna(got["failures_to_disable"])
    deliveries = frames.deliveries(records, webhook_id="h1")
    assert set(webhooks.attempts(deliveries)["outcome"]) == {"unknown"}
    mix = webhooks.event_mix(HOOKS, deliveries).iloc[0]
    assert (mix["events"], mix["delivered"], mix["unknown"]) == (4, 0, 4)
    assert pd.isna(mix["success_rate"])


def test_rates_are_over_the_outcomes_that_are_known():
    records = delivery_records({})
    for record in records:
        if record["eventId"] == "e4":
            del record["success"]  # this attempt's outcome is not said
    got = _health(records).iloc[0]
    assert (got["delivered"], got["failed"], got["unknown"]) == (2, 1, 1)
    assert got["success_rate"] == pytest.approx(2 / 3)
    assert got["attempt_success_rate"] == pytest.approx(2 / 6)  # e4's attempt not counted
    assert pd.isna(got["consecutive_failures"])  # the newest attempt's outcome is unknown
