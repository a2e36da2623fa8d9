"""Hold svcnb's reading of a blind peer against the peer's own truth.

A peer (``tests/peers/<name>.py``) is a server written from the spec alone by someone who has
not read svcnb's code; its ``truth()`` states the account in canonical terms (status classes,
exact money with currency, MiB, UTC times, every delivery attempt and the ones it still serves).
``run(peer)`` takes a snapshot through svcnb, unchanged, and checks every value a user would
read: each equals the truth (*passed*), or svcnb said it could not read it (*flagged*: an NA
or ``unknown`` with a warning, a resource stored as incomplete or missing, a report whose
``complete`` is False, a bound instead of a count), or it is *silent wrong*.

A peer's fleet may change while svcnb reads it (a VM deleted, another created between two page
reads). ``truth()`` is therefore asked before and after the snapshot, and the VMs are held
against the truth at the end: a VM in only one of the two truths was created or deleted during
the read, and may be read or not (a deleted one is checked against the truth before); every
VM present in both must be read, and none present in neither may appear. The run rate may count
such a VM or not. Peers whose truth does not change during the read are checked as before.
"""

from __future__ import annotations

import tempfile
import warnings
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pandas as pd

from svcnb import vocab
from svcnb.client import Client
from svcnb.errors import ScopeError, SvcnbError
from svcnb.reports import billing, webhooks
from svcnb.store import Store


@dataclass
class Outcome:
    checks: int = 0
    passed: int = 0
    flagged: list[str] = field(default_factory=list)
    silent_wrong: list[str] = field(default_factory=list)

    def ok(self) -> None:
        self.checks += 1
        self.passed += 1

    def flag(self, why: str) -> None:
        self.checks += 1
        self.flagged.append(why)

    def wrong(self, why: str) -> None:
        self.checks += 1
        self.silent_wrong.append(why)

    def __str__(self) -> str:
        return (
            f"{self.checks} checks: {self.passed} passed, {len(self.flagged)} flagged, "
            f"{len(self.silent_wrong)} silent wrong"
        )


def _na(value: Any) -> bool:
    return value is None or (not isinstance(value, list | tuple) and bool(pd.isna(value)))


def _time(text: str | None) -> pd.Timestamp | None:
    return None if text is None else pd.Timestamp(text).tz_convert("UTC")


def _compare(out: Outcome, what: str, read: Any, true: Any, *, flagged_if_na: bool = True):
    if _na(true) and _na(read):
        out.ok()
    elif _na(read) and flagged_if_na:
        out.flag(f"{what}: not read (NA), truth {true!r}")
    elif _na(true) or _na(read):
        out.wrong(f"{what}: read {read!r}, truth {true!r}")
    elif isinstance(true, float | Decimal) or isinstance(read, float):
        (out.ok if abs(float(read) - float(true)) < 1e-6 else out.wrong)(
            f"{what}: read {read!r}, truth {true!r}"
        ) if abs(float(read) - float(true)) >= 1e-6 else out.ok()
    elif read == true:
        out.ok()
    else:
        out.wrong(f"{what}: read {read!r}, truth {true!r}")


def run(peer: Any) -> Outcome:
    """Snapshot ``peer`` through svcnb and check every figure against its truth."""
    out = Outcome()
    truth = peer.truth()
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = Store(tmp)
        with Client(peer.token, peer.base_url, progress=False) as client:
            try:
                store.take(client)
            except SvcnbError as exc:
                out.flag(f"snapshot refused: {type(exc).__name__}: {exc}")
                return out
        after = peer.truth()
        status = store.resources().set_index("resource")
        _vms(out, store, status, truth, after)
        _wallet(out, store, status, truth)
        _rules(out, store, status, truth)
        _deliveries(out, store, status, truth)
        _reports(out, store, status, truth, after)
    _scopes(out, peer)
    out.warnings = [str(w.message) for w in caught]  # type: ignore[attr-defined]
    return out


def _state(status: pd.DataFrame, resource: str) -> str:
    return str(status.loc[resource, "status"])


def _load(store: Store, resource: str) -> pd.DataFrame | None:
    try:
        return store.load(resource)
    except SvcnbError:
        return None


@dataclass
class _Fleet:
    """The VMs of the truth after the read, and those created or deleted while it ran."""

    before: dict
    after: dict

    def __post_init__(self) -> None:
        old = {v["id"]: v for v in self.before["vms"]}
        new = {v["id"]: v for v in self.after["vms"]}
        self.ids = set(new)
        self.changed = set(old) ^ set(new)
        self.vms = list(new.values()) + [v for k, v in old.items() if k not in new]


def _set(
    out: Outcome, what: str, read: set, true: set, state: str, either: frozenset = frozenset()
) -> None:
    """``either``: members that may be read or not (created or deleted during the read)."""
    if true - either <= read <= true | either:
        out.ok()
    elif state != "ok":
        out.flag(f"{what}: {len(read)} of {len(true)} read, stored as {state}")
    else:
        out.wrong(f"{what}: {len(read)} read of {len(true)}, stored as ok")


def _vms(
    out: Outcome, store: Store, status: pd.DataFrame, truth: dict, after: dict | None = None
) -> None:
    """``after``: the truth once the snapshot was taken, when it may differ from ``truth``."""
    fleet = _Fleet(truth, truth if after is None else after)
    state = _state(status, "vms")
    vms = _load(store, "vms")
    if vms is None:
        out.flag(f"vms: {state}")
        return
    _set(out, "vm ids", set(vms["id"]), fleet.ids, state, frozenset(fleet.changed))
    rows = vms.set_index("id")
    for v in fleet.vms:
        if v["id"] not in rows.index:
            continue
        r = rows.loc[v["id"]]
        # the truth's canonical word, classified the same way
        cls = vocab.vm_class(r["status"])
        if cls == "unknown":
            out.flag(f"vm {v['id']} status word {r['status']!r} unknown")
        else:
            _compare(out, f"vm {v['id']} status class", cls, vocab.vm_class(v["status_class"]))
        bcls = None if _na(r["billing_status"]) else vocab.billing_class(r["billing_status"])
        true_b = v["billing_status_class"]
        if bcls == "unknown":
            out.flag(f"vm {v['id']} billing word {r['billing_status']!r} unknown")
        else:
            true_b = None if true_b is None else vocab.billing_class(true_b)
            _compare(out, f"vm {v['id']} billing class", bcls, true_b)
        price = v["price_monthly"]
        amount, currency = r["price_monthly_amount"], r["price_monthly_currency"]
        if price is None:
            _compare(out, f"vm {v['id']} price", amount, None)
        else:
            _compare(out, f"vm {v['id']} price", amount, Decimal(price["amount"]))
            if not _na(amount):  # a currency the record does not state is NA, not a guess
                _compare(out, f"vm {v['id']} currency", currency, price["currency"])
        _compare(out, f"vm {v['id']} ram_mib", r["ram_mib"], v["ram_mib"])
        _compare(out, f"vm {v['id']} disk_gib", r["disk_gib"], v["disk_gib"])
        for col in ("next_renewal_at", "created_at", "updated_at"):
            _compare(out, f"vm {v['id']} {col}", r[col], _time(v[col]))
        for col in ("bandwidth_used_bytes", "bandwidth_pack_bytes"):
            _compare(out, f"vm {v['id']} {col}", r[col], v[col])
        _compare(out, f"vm {v['id']} is_protected", r["is_protected"], v["is_protected"])


def _wallet(out: Outcome, store: Store, status: pd.DataFrame, truth: dict) -> None:
    wallet = _load(store, "wallet")
    if wallet is None:
        out.flag(f"wallet: {_state(status, 'wallet')}")
        return
    balance = truth["wallet"]["balance"]
    amount = wallet["balance_amount"].iloc[0]
    _compare(out, "wallet balance", amount, Decimal(balance["amount"]))
    if not _na(amount):
        _compare(out, "wallet currency", wallet["balance_currency"].iloc[0], balance["currency"])


def _rules(out: Outcome, store: Store, status: pd.DataFrame, truth: dict) -> None:
    rules = _load(store, "firewall_rules")
    if rules is None:
        out.flag(f"firewall_rules: {_state(status, 'firewall_rules')}")
        return
    state = _state(status, "firewall_rules")
    _set(out, "rule ids", set(rules["id"]), {r["id"] for r in truth["rules"]}, state)


def _deliveries(out: Outcome, store: Store, status: pd.DataFrame, truth: dict) -> None:
    got = _load(store, "deliveries")
    if got is None:
        out.flag(f"deliveries: {_state(status, 'deliveries')}")
        return
    state = _state(status, "deliveries")
    served = {d["id"]: d for d in truth["deliveries_served"]}
    _set(out, "delivery ids", set(got["id"]), set(served), state)
    rows = got.set_index("id")
    for did, d in served.items():
        if did not in rows.index:
            continue
        r = rows.loc[did]
        for col in ("status_code", "success", "attempts"):
            _compare(out, f"delivery {did} {col}", r[col], d[col])


def _reports(
    out: Outcome, store: Store, status: pd.DataFrame, truth: dict, after: dict | None = None
) -> None:
    """Figures a user reads, against the same figure computed from the truth."""
    now = pd.Timestamp(truth["now"])
    _run_rate(out, store, _Fleet(truth, truth if after is None else after))
    _failures(out, store, truth, now)


def _monthly_truth(fleet: _Fleet) -> dict[str, tuple[Decimal, set[Decimal]]]:
    """Per currency: the run rate at the end of the read, and every total a reader may show
    (each VM created or deleted during the read counted or not)."""
    end: dict[str, Decimal] = {}
    may: dict[str, set[Decimal]] = {}
    for v in fleet.vms:
        p = v["price_monthly"]
        if p is None or v["status_class"] == "terminated":
            continue
        cur, add = p["currency"], Decimal(p["amount"])
        sums = may.setdefault(cur, {Decimal(0)})
        plus = {s + add for s in sums}
        may[cur] = sums | plus if v["id"] in fleet.changed else plus
        end[cur] = end.get(cur, Decimal(0)) + (add if v["id"] in fleet.ids else 0)
    return {cur: (end[cur], may[cur]) for cur in may}


def _run_rate(out: Outcome, store: Store, fleet: _Fleet) -> None:
    try:
        rate = billing.run_rate.from_store(store)
    except SvcnbError as exc:
        out.flag(f"billing.run_rate: {type(exc).__name__}")
        return
    truths = _monthly_truth(fleet)
    said: dict[Any, float] = {}
    doubted: set[Any] = set()
    for _, row in rate.iterrows():
        cur = None if _na(row["currency"]) else str(row["currency"])
        said[cur] = said.get(cur, 0.0) + (
            0.0 if _na(row["monthly_amount"]) else row["monthly_amount"]
        )
        if row["unpriced"] or row["unknown_status"] or rate.attrs.get("complete") is False:
            doubted.add(cur)
    for currency, (amount, may) in truths.items():
        got = said.get(currency)
        value = 0.0 if got is None else got  # no row is right only where nothing may be owed
        if (got is not None or Decimal(0) in may) and any(
            abs(value - float(s)) < 0.005 for s in may
        ):
            out.ok()
        elif got is None or currency in doubted or None in said:
            out.flag(
                f"run rate {currency}: {got} vs truth {amount} (the report says what it missed)"
            )
        else:
            out.wrong(f"run rate {currency}: {got} vs truth {amount}, nothing said")
    for currency, got in said.items():
        if currency not in truths and got and currency not in doubted:
            out.wrong(f"run rate: {got} in {currency!r}, where the truth has no price")


def _failures(out: Outcome, store: Store, truth: dict, now: pd.Timestamp) -> None:
    try:
        health = webhooks.health.from_store(store)
    except SvcnbError as exc:
        out.flag(f"webhooks.health: {type(exc).__name__}")
        return
    rows = health.set_index("webhook_id")
    bound = "consecutive_failures_bound" in health.columns
    for h in truth["webhooks"]:
        if h["id"] not in rows.index:
            out.flag(f"webhook {h['id']}: not in health")
            continue
        r = rows.loc[h["id"]]
        got = r["consecutive_failures"]
        how = str(r["consecutive_failures_bound"]) if bound else "exact"
        true = h["consecutive_failures"]
        if _na(got):
            out.flag(f"webhook {h['id']} consecutive failures unknown")
        elif how == "at least":
            (out.flag if got <= true else out.wrong)(
                f"webhook {h['id']} consecutive failures at least {got}, truth {true}"
            )
        elif got == true:
            out.ok()
        else:
            out.wrong(f"webhook {h['id']} consecutive failures {got} ({how}), truth {true}")


def _scopes(out: Outcome, peer: Any) -> None:
    """A 403 names the scope the call needs (webhooks:read, from the spec's table)."""
    with Client(peer.read_token, peer.base_url, progress=False) as client:
        try:
            client.webhooks.list()
        except ScopeError as exc:
            _compare(out, "ScopeError.scope of GET /webhooks", exc.scope, "webhooks:read")
        except SvcnbError as exc:
            out.flag(f"GET /webhooks with a read token: {type(exc).__name__}")
        else:
            out.wrong("GET /webhooks with a vms:read token did not fail")
