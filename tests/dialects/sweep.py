"""One dialect sweep step: pull an account spoken in some dialect through svcnb and hold every
figure against the sandbox's own ground truth.

The truth is ``GET /_sandbox/truth``: the same account rendered by the default dialect, whatever
dialect the public API speaks. For each dialect the sweep compares

- the records svcnb read (ids, status classes, money, times, delivery fields) with the truth,
- every report computed from the store svcnb wrote with the same report computed from the
  truth as this service *said* it (its status words, its delivery field names, its money forms
  with the currency it stated), and
- that report on the canonical truth, where every word is one svcnb knows.

A difference is *flagged* when svcnb said it could not read that value (a warning naming it, an
``unknown`` class, an NA where the service stated nothing), and *silent wrong* otherwise.
``bench/dialects.py`` prints the totals; the tests assert no silent wrong result anywhere.
"""

from __future__ import annotations

import copy
import re
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from svcnb import frames, vocab
from svcnb.client import Client
from svcnb.reports import bandwidth, billing, firewall, sharing, webhooks
from svcnb.store import Store

# the same resource groups svcnb.store pulls
FRAME_BUILDERS: dict[str, Callable[[Any], pd.DataFrame]] = {
    "vms": frames.vms,
    "firewall_rules": frames.firewall_rules,
    "networks": frames.networks,
    "attachments": frames.attachments,
    "wallet": frames.wallet,
    "webhooks": frames.webhooks,
    "deliveries": frames.deliveries,
}
TIME_COLUMNS = ("created_at", "updated_at", "next_renewal_at")
ACCOUNT_CURRENCY = "EUR"  # the sandbox's account currency, whatever a dialect states
DELIVERY_COLUMNS = {"statusCode": "status_code", "success": "success", "attempts": "attempts"}


@dataclass
class Outcome:
    """What one dialect gave: checks run, and which passed, were flagged or were silently wrong."""

    dialect: str
    checks: int = 0
    passed: int = 0
    flagged: int = 0
    silent_wrong: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def ok(self) -> None:
        self.checks += 1
        self.passed += 1

    def flag(self, why: str) -> None:
        self.checks += 1
        self.flagged += 1
        self.notes.append(why)

    def wrong(self, why: str) -> None:
        self.checks += 1
        self.silent_wrong.append(why)


def _said(truth: dict, choices: dict) -> dict:
    """The truth as this dialect's service said it: its words and field names, its money forms'
    stated currency. Everything else (paging, time forms, number forms) svcnb must undo."""
    said = copy.deepcopy(truth)
    vm_words, billing_words = choices["vm_words"], choices["billing_words"]
    form = choices["money"]
    for vm in said["vms"]:
        vm["status"] = vm_words.get(vm["status"], vm["status"])
        if isinstance(vm.get("billing"), dict):
            vm["billing"]["status"] = billing_words.get(
                vm["billing"]["status"], vm["billing"]["status"]
            )
        for holder in (vm.get("billing"), vm.get("plan")):
            if isinstance(holder, dict) and "priceMonthly" in holder:
                holder["priceMonthly"] = _money_as_said(holder["priceMonthly"], form)
    said["wallet"]["balance"] = _money_as_said(said["wallet"]["balance"], form)
    names = choices["delivery_fields"]
    said["deliveries"] = [{names.get(k, k): v for k, v in d.items()} for d in said["deliveries"]]
    return said


# money forms that state the currency with every amount (all but number, string and mixed)
CURRENCY_FORMS = frozenset(
    {
        "object",
        "minor",
        "text",
        "code",
        "nanos",
        "minor_amount",
        "minor_exponent",
        "minor_scale",
        "minor_decimals",
    }
)


def _money_as_said(value: Any, form: str) -> Any:
    """A canonical money value with the currency this dialect states: every record's in the
    forms that carry one (object, minor, text, code, nanos and the other minor-unit forms),
    none in the number and string forms, as seeded in ``mixed``."""
    if form == "mixed" or value is None:
        return value
    amount = value["amount"] if isinstance(value, dict) else value
    if form in CURRENCY_FORMS:
        return {"amount": str(amount), "currency": ACCOUNT_CURRENCY}
    return amount


def truth_frames(truth: dict) -> dict[str, pd.DataFrame]:
    """Frames of the truth records, as svcnb would build them from a default-dialect pull."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # exotic words in the "said" truth warn; counted below
        return {
            "vms": frames.vms(truth["vms"]),
            "vm_firewalls": frames.vm_firewalls(truth["vms"]),
            "firewalls": frames.firewalls(truth["firewalls"]),
            "firewall_rules": frames.firewall_rules(truth["rules"]),
            "networks": frames.networks(truth["networks"]),
            "attachments": frames.attachments(truth["attachments"]),
            "wallet": frames.wallet([truth["wallet"]]),
            "webhooks": frames.webhooks(truth["webhooks"]),
            "deliveries": frames.deliveries(truth["deliveries"]),
        }


@sharing
def reports(f: dict[str, pd.DataFrame], now: pd.Timestamp) -> dict[str, pd.DataFrame]:
    """Every report svcnb shows that reads one snapshot, on frames ``f``, sharing their answers
    as a view does (the same answers as each alone: ``tests/reports/test_reuse.py``)."""
    vms, wallet = f["vms"], f["wallet"]
    out = {
        "billing.run_rate": billing.run_rate(vms, wallet, now=now),
        "billing.renewals_due": billing.renewals_due(vms, wallet, now=now),
        "billing.overdue": billing.overdue(vms, now=now),
        "billing.runway": billing.runway(vms, wallet, now=now),
        "billing.low_balance_forecast": billing.low_balance_forecast(vms, wallet, now=now),
        "bandwidth.usage": bandwidth.usage(vms, now=now),
        "webhooks.health": webhooks.health(f["webhooks"], f["deliveries"], now=now),
        "firewall.audit": firewall.audit(
            f["firewall_rules"], f["vm_firewalls"], f["firewalls"], vms, now=now
        ),
    }
    return out


def _canon(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.reset_index(drop=True).copy()
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = out[col].map(lambda v: tuple(v) if isinstance(v, list | np.ndarray) else v)
    keys = [c for c in out.columns if not any(isinstance(v, tuple) for v in out[c])]
    if keys and len(out):
        # Any order both sides share will do: rows by their cells' text, joined. pandas' sort
        # on every column as text built a categorical per key column (a fifth of a sweep's CPU)
        text = [out[c].astype("string").fillna("").tolist() for c in keys]
        rows = ["\x1f".join(cells) for cells in zip(*text, strict=True)]
        out = out.iloc[sorted(range(len(rows)), key=rows.__getitem__)].reset_index(drop=True)
    return out


def same_frame(a: pd.DataFrame, b: pd.DataFrame) -> str | None:
    """None when equal (floats to 1e-9 relative), else the first difference in words."""
    if list(a.columns) != list(b.columns):
        return f"columns differ: {list(a.columns)} vs {list(b.columns)}"
    if len(a) != len(b):
        return f"{len(a)} rows vs {len(b)}"
    a, b = _canon(a), _canon(b)
    for col in a.columns:
        x, y = a[col], b[col]
        if x.equals(y):  # same values, NA where NA: what _equal says of every pair, at once
            continue
        for i, (u, v) in enumerate(zip(x, y, strict=True)):
            if _equal(u, v):
                continue
            return f"column {col!r} row {i}: {u!r} vs {v!r}"
    return None


def _equal(u: Any, v: Any) -> bool:
    u_na = u is None or (not isinstance(u, tuple) and bool(pd.isna(u)))
    v_na = v is None or (not isinstance(v, tuple) and bool(pd.isna(v)))
    if u_na or v_na:
        return u_na and v_na
    if isinstance(u, float | int | np.floating | np.integer) and not isinstance(u, bool):
        return bool(np.isclose(float(u), float(v), rtol=1e-9, atol=1e-9))
    return bool(u == v)


def sweep_one(
    sandbox: Any, dialect: str, vms: int, seed: int, vocabulary: vocab.Vocabulary | None = None
) -> Outcome:
    """Reset ``sandbox`` to ``dialect`` and hold svcnb's reading of it against the truth.

    ``vocabulary`` is the one svcnb reads with (the built-in one by default); the truth is
    always classified with the built-in one."""
    out = Outcome(dialect)
    control = sandbox.control
    control.reset(seed=seed, vms=vms, dialect=dialect)
    choices = control.dialect()["choices"]
    truth = control.truth()
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # the sandbox's "suspended" (a hold for non-payment) pinned, as its user would
        with vocab.using(vocabulary or vocab.Vocabulary(vm_status={"suspended": "suspended"})):
            store = Store(tmp)
            # the sandbox hands its client the pins of its dialect, as svcnb.connect() does
            client = Client(
                sandbox.tokens["admin"], sandbox.base_url, progress=False, pins=sandbox.pins
            )
            with client:
                store.take(client)
            pulled = {name: store.load(name) for name in (*FRAME_BUILDERS, "vm_firewalls")}
            pulled["firewalls"] = store.load("firewalls")
            now = pd.Timestamp(store.snapshots()["server_time"].iloc[-1])
            said = truth_frames(_said(truth, choices))
            canon = truth_frames(truth)
            # the reports first: classifying their words is what warns about unknown ones
            ours, theirs = reports(pulled, now), reports(said, now)
            _records(out, pulled, said, canon, choices, caught)
            for name, frame in ours.items():
                diff = same_frame(frame, theirs[name])
                if diff is None:
                    out.ok()
                else:
                    out.wrong(f"{name}: svcnb's report differs from the truth as said: {diff}")
            _vocabulary(out, said, canon, choices, now)
    return out


def _records(
    out: Outcome,
    pulled: dict[str, pd.DataFrame],
    said: dict[str, pd.DataFrame],
    canon: dict[str, pd.DataFrame],
    choices: dict,
    caught: list[warnings.WarningMessage],
) -> None:
    told = " ".join(str(w.message) for w in caught)
    for name in FRAME_BUILDERS:
        ids = set(pulled[name]["id"]) if "id" in pulled[name] else set()
        want = set(canon[name]["id"]) if "id" in canon[name] else set()
        if ids == want:
            out.ok()
        elif "of" in told and name == "vms":
            out.flag(f"{name}: read {len(ids)} of {len(want)}, with a paging warning")
        else:
            out.wrong(f"{name}: read {len(ids)} ids, the truth has {len(want)}")
    ours = pulled["vms"].set_index("id").sort_index()
    truth_vms = canon["vms"].set_index("id").sort_index()
    if not ours.index.equals(truth_vms.index):
        return
    current = vocab.current()
    for column, kind in (("status", "vm_status"), ("billing_status", "billing_status")):
        got = current.classify_many(kind, ours[column], warn=False)
        want = _truth_words().classify_many(kind, truth_vms[column], warn=False)
        for vm_id, g, w, word in zip(ours.index, got, want, ours[column], strict=True):
            if g == w:
                out.ok()
            elif g == vocab.UNKNOWN and word in told:
                out.flag(f"{vm_id}: {kind} word {word!r} unknown, warned")
            else:
                out.wrong(f"{vm_id}: {kind} {word!r} read as {g}, truth {w}")
    for column in ("price_monthly_amount", *TIME_COLUMNS):
        for vm_id, g, w in zip(ours.index, ours[column], truth_vms[column], strict=True):
            if _equal(g, w):
                out.ok()
            elif pd.isna(g) and column in told:
                out.flag(f"{vm_id}: {column} unreadable, warned")
            else:
                out.wrong(f"{vm_id}: {column} read as {g!r}, truth {w!r}")
    said_vms = said["vms"].set_index("id").sort_index()
    for vm_id, g, w, price in zip(
        ours.index,
        ours["price_monthly_currency"],
        said_vms["price_monthly_currency"],
        truth_vms["price_monthly_amount"],
        strict=True,
    ):
        # the currency as this service stated it; NA where it stated none (never guessed)
        if _equal(g, w) and (pd.isna(g) or g == ACCOUNT_CURRENCY or pd.isna(price)):
            out.ok()
        else:
            out.wrong(f"{vm_id}: currency read as {g!r}, the service stated {w!r}")
    balance = pulled["wallet"]["balance_amount"].iloc[0]
    if _equal(balance, canon["wallet"]["balance_amount"].iloc[0]):
        out.ok()
    else:
        out.wrong(f"wallet balance read as {balance!r}")
    got_d = pulled["deliveries"].set_index("id").sort_index()
    want_d = canon["deliveries"].set_index("id").sort_index()
    if got_d.index.equals(want_d.index):
        names = choices["delivery_fields"]
        for canonical, column in DELIVERY_COLUMNS.items():
            pairs = list(zip(got_d[column], want_d[column], strict=True))
            differ = [g for g, w in pairs if not _equal(g, w)]
            # NA where a key svcnb cannot place could be this field: unknown, and warned
            unplaced = any(
                column in could.split(", ") for could in re.findall(r"could be ([a-z_, ]+)\)", told)
            )
            if not differ:
                out.ok()
            elif all(pd.isna(g) for g in differ) and (
                names.get(canonical, canonical) in told or unplaced
            ):
                out.flag(f"deliveries: field {names.get(canonical)!r} not read, warned")
            else:
                out.wrong(f"deliveries.{column} differs from the truth")


def _vocabulary(
    out: Outcome,
    said: dict[str, pd.DataFrame],
    canon: dict[str, pd.DataFrame],
    choices: dict,
    now: pd.Timestamp,
) -> None:
    """The reports on the service's words equal those on the canonical words, unless a word is
    exotic: then the report must count exactly the rows it left out."""
    current = vocab.current()
    exotic = any(
        current.classify(kind, word, warn=False) == vocab.UNKNOWN
        for kind, key in (("vm_status", "vm_words"), ("billing_status", "billing_words"))
        for word in choices[key].values()
    )
    if exotic:
        vms = said["vms"]
        status = current.classify_many("vm_status", vms["status"], warn=False)
        paying = current.classify_many("billing_status", vms["billing_status"], warn=False)
        unknown = sum(c == vocab.UNKNOWN for c in status)
        # the runway also needs the billing class of every VM that is not terminated
        unknown_money = unknown + sum(
            s not in (vocab.UNKNOWN, "terminated") and b == vocab.UNKNOWN
            for s, b in zip(status, paying, strict=True)
        )
        rate = billing.run_rate(vms, said["wallet"], now=now)
        counted = int(rate["unknown_status"].sum())
        if counted == unknown:
            out.flag(f"run_rate leaves out and counts {counted} VM(s) of unknown status")
        else:
            out.wrong(f"run_rate counts {counted} VM(s) of unknown status, truth {unknown}")
        runway = billing.runway(vms, said["wallet"], now=now).iloc[0]
        if int(runway["unknown_status"]) == unknown_money and bool(runway["complete"]) == (
            unknown_money == 0
        ):
            out.flag(f"runway leaves out and counts {unknown_money} VM(s), complete flag set")
        else:
            out.wrong(
                f"runway counts {runway['unknown_status']} VM(s) of unknown status (truth "
                f"{unknown_money}), complete={runway['complete']}"
            )
        return
    said_reports, canon_reports = reports(said, now), reports(_with_said_money(canon, said), now)
    for name, frame in said_reports.items():
        # a report may show the words themselves: the service's and the canonical ones differ
        # by design, their classes must not
        diff = same_frame(_as_classes(frame), _as_classes(canon_reports[name]))
        if diff is None:
            out.ok()
        else:
            out.wrong(f"{name}: synonyms change the report: {diff}")


def _truth_words() -> vocab.Vocabulary:
    """The classes of the truth's canonical words: the sandbox's own, its "suspended" a hold
    for non-payment (no built-in word: providers differ on it)."""
    return vocab.Vocabulary(vm_status={"suspended": "suspended"})


def _as_classes(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column, kind in (("status", "vm_status"), ("billing_status", "billing_status")):
        if column in out:
            out[column] = _truth_words().classify_many(kind, out[column], warn=False)
    return out


def _with_said_money(canon: dict, said: dict) -> dict:
    # the canonical truth with the currency as the service stated it, so only words differ
    out = dict(canon)
    vms = canon["vms"].copy()
    vms["price_monthly_currency"] = said["vms"]["price_monthly_currency"].values
    vms["price_monthly_raw"] = said["vms"]["price_monthly_raw"].values
    out["vms"] = vms
    out["wallet"] = said["wallet"]
    out["deliveries"] = said["deliveries"]
    return out
