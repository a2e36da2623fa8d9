"""The mutation sweep: spec-legal variants of the sandbox's default answers, and svcnb held
against the truth on each.

A variant is drawn from a seed: a page size the service serves at most (honestly stated in
``meta.perPage``, so every list pages), and 1-3 mutations from a small grammar (:data:`GRAMMAR`),
each changing something the spec leaves "not shown": where the paging keys stand and what
they are called, how money is written, how much delivery history is kept, how status words are
spelled, which extra fields records carry, the unit of ram. :class:`MutatingProxy` stands on
loopback between svcnb's ``Client`` and a sandbox speaking the default dialect: it forwards
every request, rewrites the answers (and headers) by the variant, and pages lists itself.

:func:`check_variant` pulls the account through the proxy into a store, unchanged svcnb, and
holds every value against ``GET /_sandbox/truth`` as the variant's service meant it: the same
records, the currency each money value states, the delivery records it still serves, the
webhook's own failure counter. It reuses the peers' checks (``tests/peers/check.py``: VMs,
wallet, rules, delivery fields, run rate, failure runs) and the dialect sweep's report
comparison (``tests/dialects/sweep.py``): each value equals the truth (*passed*), or svcnb said
it could not read it (*flagged*: NA, ``unknown``, a resource stored as incomplete or missing, a
report that says what it left out or bounds a figure), or it is *silent wrong*.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
import socket
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta, timezone
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pandas as pd
from _loopback import loopback_client
from peers import check  # tests/ is on sys.path (pytest's rootdir insertion, bench/)

from svcnb import vocab
from svcnb.assumptions import Pin
from svcnb.client import Client
from svcnb.errors import SvcnbError
from svcnb.reports import bandwidth, billing, firewall, webhooks
from svcnb.reports.firewall import ANY_WORDS, SENTINELS
from svcnb.store import Store

from .sweep import _as_classes, _canon, _equal, same_frame, truth_frames

ACCOUNT_CURRENCY = "EUR"  # the sandbox account's currency: what a form that states one states
VMS = 25  # a small fleet: every list pages at the variants' page sizes, a variant takes ~1 s
PAGE_SIZES = (3, 4, 5, 7)
ACCOUNTS = 16

# -- the grammar ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    """One change to the default answers: a grammar entry's name and its drawn arguments."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    def arg(self, key: str) -> Any:
        return dict(self.args)[key]

    def __str__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.args)
        return f"{self.name}({shown})" if shown else self.name


def _m(kind: str, /, **args: Any) -> Mutation:
    return Mutation(kind, tuple(args.items()))


VM_WORDS = ("running", "stopped", "suspended", "terminated", "stopping", "provisioning")
BILLING_WORDS = ("active", "overdue", "suspended")
# a synonym the vocabulary knows, written with a space as a service might
SPACED = {
    "vm": {"stopped": "powered off", "running": "powered on"},
    "billing": {"overdue": "past due"},
}
UNKNOWN_WORD = {"vm": "zombie", "billing": "limbo"}
EXTRA_FIELDS = {
    "vm": (
        ("labels", {"team": "web", "tier": "gold"}),
        ("tags", ["prod", "eu"]),
        ("projectId", "prj_7f3a"),
        ("backupWindow", "02:00-04:00"),
        ("ipv6Address", "2001:db8::17"),
    ),
    "rule": (
        ("hits", 1234),
        ("comment", "managed by terraform"),
        ("managedBy", "terraform"),
        ("ruleVersion", 3),
    ),
    "webhook": (
        ("format", "json"),
        ("version", 2),
        ("retryPolicy", {"maxAttempts": 3, "backoff": "exponential"}),
        ("headers", {"X-Team": "ops"}),
    ),
}
# delivery field -> names a service may give it (known synonyms and names svcnb does not know)
DELIVERY_RENAMES = (
    ("attempts", "tryCount"),
    ("attempts", "attemptCount"),
    ("statusCode", "httpCode"),
    ("statusCode", "responseStatus"),
    ("success", "outcome"),
    ("success", "delivered"),
    ("eventId", "event_id"),
)
MONEY_KEYS = (
    ("precision", 2),
    ("exponent", 2),
    ("exponent", -2),
    ("vat", 0.19),
    ("taxRate", "20%"),
    ("multiplier", 1),
    ("unit", "EUR/month"),
)


def _entries() -> list[tuple[str, Any]]:
    """(slot, draw(rng) -> Mutation): one line per grammar entry; a variant holds at most one
    mutation per slot."""
    return [
        # paging
        (
            "paging.total",
            lambda r: _m(
                "total_moved",
                to=r.choice(("meta.totalCount", "total", "X-Total-Count", "meta.totalItems")),
            ),
        ),
        ("paging.total", lambda r: _m("total_dropped")),
        ("paging.pages", lambda r: _m("total_pages_dropped")),
        ("paging.meta", lambda r: _m("meta_renamed", to="pagination")),
        (
            "paging.cursor",
            lambda r: _m(
                "cursor_unknown",
                name=r.choice(("nextPageKey", "next_key", "continuation", "after")),
                page=r.choice(("honoured", "ignored")),
            ),
        ),
        (
            "paging.cap",
            lambda r: _m(
                "page_capped_silently",
                cap=r.choice((2, 3, 4, 6)),
                perPage=r.choice(("echo", "drop")),
            ),
        ),
        ("paging.base", lambda r: _m("pages_from_zero")),
        (
            "paging.extra",
            lambda r: _m(
                "meta_extra_key",
                key=r.choice(("nextPageKey", "hasNext", "generatedAt", "cacheKey")),
            ),
        ),
        # money
        (
            "money.key",
            lambda r: _m(
                "money_key_added", **dict(zip(("key", "value"), r.choice(MONEY_KEYS), strict=True))
            ),
        ),
        ("money.currency", lambda r: _m("currency_renamed", to=r.choice(("currencyCode", "ccy")))),
        (
            "money.form",
            lambda r: _m(
                "money_form", form=r.choice(("text", "minor_value", "minor_amount", "nanos"))
            ),
        ),
        # history
        ("history.keep", lambda r: _m("deliveries_kept_last", n=r.randint(3, 15))),
        # a history cut by events: every attempt of the newest N events, nothing older
        ("history.keep", lambda r: _m("deliveries_kept_events", n=r.randint(1, 4))),
        ("history.counter", lambda r: _m("failure_counter_dropped")),
        # what a record means: attempts served without the event they belong to, or one record
        # per event (its attempt count, its final outcome) in place of one per attempt
        ("meaning.records", lambda r: _m("event_id_dropped")),
        ("meaning.records", lambda r: _m("records_are_events")),
        (
            "history.time",
            lambda r: _m(
                "delivery_time_renamed", field=r.choice(("createdAt", "lastAttemptAt")), to="sentAt"
            ),
        ),
        # words
        (
            "words.style",
            lambda r: _m(
                "words_restyled",
                kind=r.choice(("vm", "billing")),
                style=r.choice(("title", "upper", "padded")),
            ),
        ),
        ("words.spaced", lambda r: _m("word_spaced", **_spaced(r))),
        ("words.unknown", lambda r: _m("word_unknown", **_unknown_word(r))),
        # fields
        ("fields.extra", lambda r: _m("extra_field", **_extra_field(r))),
        (
            "fields.delivery",
            lambda r: _m(
                "delivery_field_renamed",
                **dict(zip(("field", "to"), r.choice(DELIVERY_RENAMES), strict=True)),
            ),
        ),
        # units
        ("units.ram", lambda r: _m("ram_unit", unit=r.choice(("GiB", "bytes")))),
        # meaning swaps: the shape stays, what it means changes (svcnb.assumptions)
        (
            "money.scale",
            lambda r: _m(
                "money_scale",
                to=r.choice(("minor_int", "minor_string", "minor_object", "major_integers")),
            ),
        ),
        ("units.disk", lambda r: _m("disk_unit", unit=r.choice(("MiB", "bytes")))),
        ("times.zone", lambda r: _m("zone_dropped", offset=r.choice((0, 2, -5)))),
    ]


def _spaced(r: random.Random) -> dict[str, str]:
    kind = r.choice(("vm", "billing"))
    word = r.choice(sorted(SPACED[kind]))
    return {"kind": kind, "word": word, "as": SPACED[kind][word]}


def _unknown_word(r: random.Random) -> dict[str, str]:
    kind = r.choice(("vm", "billing"))
    word = r.choice(VM_WORDS[:4] if kind == "vm" else BILLING_WORDS)
    return {"kind": kind, "word": word, "as": UNKNOWN_WORD[kind]}


def _extra_field(r: random.Random) -> dict[str, Any]:
    on = r.choice(("vm", "rule", "webhook"))
    key, value = r.choice(EXTRA_FIELDS[on])
    return {"on": on, "key": key, "value": value}


# Meaning swaps: a word or a port sentinel one provider means otherwise than the sandbox's
# default does. Not drawn (the seeded variants and their cover stay as they are): each is held
# against the truth on its own (test_mutation_sweep.py), and must be flagged or read right,
# never read as the other meaning.
MEANING_SWAPS = (
    # Scaleway: "locked" is suspended; Vultr and Hetzner: held during an operation
    Mutation("word_meaning_swapped", (("kind", "vm"), ("word", "suspended"), ("as", "locked"))),
    # Stripe: "unpaid" is past due; WHMCS: an invoice issued and not yet due
    Mutation("word_meaning_swapped", (("kind", "billing"), ("word", "overdue"), ("as", "unpaid"))),
    # DigitalOcean's firewall API: port "0" is every port; elsewhere port 0 itself
    Mutation("port_sentinel", (("was", "any"), ("as", "0"))),
    # "all" is every port at every service that uses it: read right, not flagged
    Mutation("port_sentinel", (("was", "any"), ("as", "all"))),
)

GRAMMAR = _entries()
# mutation name -> its slot ("paging.total", ...): what a variant holds at most one of
SLOTS = {make(random.Random(0)).name: slot for slot, make in GRAMMAR}


def _conflict(a: Mutation, b: Mutation) -> bool:
    """Pairs that cannot both hold: a text amount has no keys; a minor-unit form states its
    digits already; an unknown cursor and an extra key of one name are one key; two word
    changes of one kind would undo each other."""
    pair = {a.name, b.name}
    if "money_scale" in pair and pair & {"money_form", "money_key_added", "currency_renamed"}:
        return True  # one rewrite of each amount: its scale, not its form or keys too
    if "money_form" in pair and len(pair) == 2:
        form = (a if a.name == "money_form" else b).arg("form")
        other = b if a.name == "money_form" else a
        if form == "text" and other.name in ("money_key_added", "currency_renamed"):
            return True
        if form.startswith("minor") and other.name == "money_key_added":
            return other.arg("key") in ("precision", "exponent")
    cursors = [m for m in (a, b) if m.name in ("cursor_unknown", "meta_extra_key")]
    if len(cursors) == 2 and all(m.args[0][1] == "nextPageKey" for m in cursors):
        return True  # one key, said twice
    words = ("words_restyled", "word_spaced", "word_unknown")
    if a.name in words and b.name in words:
        return a.arg("kind") == b.arg("kind")
    return False


@dataclass(frozen=True)
class Variant:
    """A seeded variant: the sandbox account's seed, the page size served, the mutations."""

    seed: int
    page_size: int
    mutations: tuple[Mutation, ...]

    def __str__(self) -> str:
        said = "; ".join(map(str, self.mutations)) or "no mutation"
        return f"variant seed={self.seed} (pages of {self.page_size}): {said}"

    def get(self, name: str) -> Mutation | None:
        return next((m for m in self.mutations if m.name == name), None)

    def all(self, name: str) -> list[Mutation]:
        return [m for m in self.mutations if m.name == name]


def draw(seed: int) -> Variant:
    """The variant of ``seed``: same seed, same variant."""
    rng = random.Random(f"mutation-sweep-{seed}")
    page_size = rng.choice(PAGE_SIZES)
    wanted = rng.randint(1, 3)
    chosen: list[tuple[str, Mutation]] = []
    while len(chosen) < wanted:
        slot, make = rng.choice(GRAMMAR)
        mutation = make(rng)
        if any(s == slot or _conflict(mutation, m) for s, m in chosen):
            continue
        chosen.append((slot, mutation))
    return Variant(seed, page_size, tuple(m for _, m in chosen))


def account_seed(seed: int) -> int:
    """The sandbox account a variant is said over: 16 accounts, so the truth's own reports
    are computed once per account and form rather than once per variant."""
    return seed % ACCOUNTS


def identity(seed: int = 0, page_size: int = 5) -> Variant:
    """The default answers, only paged at ``page_size``: nothing may be flagged."""
    return Variant(seed, page_size, ())


# -- what a variant does to records (the same on the wire and in the expected truth) ----------


def _meaning(value: Any) -> tuple[Decimal, str | None]:
    """(amount, stated currency) of a default-dialect money value."""
    if isinstance(value, dict):
        return Decimal(str(value["amount"])), value.get("currency")
    if isinstance(value, float):
        return Decimal(repr(value)), None
    return Decimal(str(value)), None


def _digits(amount: Decimal) -> int:
    return max(2, -int(amount.as_tuple().exponent))


def stated_currency(variant: Variant, value: Any) -> str | None:
    """The currency the variant's service states beside ``value`` (None: it states none)."""
    if value is None:
        return None
    if variant.get("money_form") is not None:
        return ACCOUNT_CURRENCY
    scale = variant.get("money_scale")
    if scale is not None and scale.arg("to") != "major_integers":
        return ACCOUNT_CURRENCY if scale.arg("to") == "minor_object" else None
    return _meaning(value)[1]


def money(variant: Variant, value: Any) -> Any:
    """A default-dialect money value as the variant writes it."""
    if value is None:
        return None
    amount, currency = _meaning(value)
    scale = variant.get("money_scale")
    if scale is not None:
        return _rescaled(scale.arg("to"), value, amount)
    form = variant.get("money_form")
    obj: dict[str, Any]
    if form is not None:
        cur = currency or ACCOUNT_CURRENCY
        kind, digits = form.arg("form"), _digits(amount)
        minor = int(amount.scaleb(digits))
        if kind == "text":
            return f"{amount:.{digits}f} {cur}"
        if kind == "minor_value":
            obj = {"value": minor, "currency": cur, "precision": digits}
        elif kind == "minor_amount":
            obj = {"amount": minor, "currency": cur, "precision": digits}
        else:  # Google's money: units and nanos of the same sign, units as an int64 string
            units = int(amount)  # towards zero
            nanos = int((amount - units).scaleb(9))
            obj = {"currencyCode": cur, "units": str(units), "nanos": nanos}
    elif isinstance(value, dict):
        obj = dict(value)
    else:
        return value  # numbers and numeric strings: no object to add to
    renamed = variant.get("currency_renamed")
    if renamed is not None:
        for key in ("currency", "currencyCode"):
            if key in obj:
                obj = {(renamed.arg("to") if k == key else k): v for k, v in obj.items()}
                break
    added = variant.get("money_key_added")
    if added is not None:
        obj[added.arg("key")] = added.arg("value")
    return obj


def _rescaled(to: str, value: Any, amount: Decimal) -> Any:
    """``value`` in the same shape with another meaning: integer minor units (cents: 12.50 is
    1250) as a JSON number, a string or ``{amount, currency}``; or major units written as
    integers where whole (a JSON writer that drops ``.0``: 119.00 is 119)."""
    if to == "major_integers":
        if amount != amount.to_integral_value():
            return value
        whole = int(amount)
        if isinstance(value, dict):
            return {**value, "amount": str(whole) if isinstance(value["amount"], str) else whole}
        return str(whole) if isinstance(value, str) else whole
    cents = amount.scaleb(2)
    assert cents == cents.to_integral_value(), amount  # the sandbox's amounts: 2 decimals
    if to == "minor_int":
        return int(cents)
    if to == "minor_string":
        return str(int(cents))
    return {"amount": str(int(cents)), "currency": ACCOUNT_CURRENCY}


_ZULU = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})")


def _zones(variant: Variant, record: Any) -> Any:
    """Every time of ``record`` with its zone dropped: the same instant written in the local
    time of ``offset`` hours, and no zone said (a server that writes its local clock)."""
    dropped = variant.get("zone_dropped")
    if dropped is None:
        return record
    if isinstance(record, dict):
        return {k: _zones(variant, v) for k, v in record.items()}
    if isinstance(record, list):
        return [_zones(variant, v) for v in record]
    if isinstance(record, str) and _ZULU.fullmatch(record):
        local = pd.Timestamp(record).tz_convert(timezone(timedelta(hours=dropped.arg("offset"))))
        return local.tz_localize(None).isoformat()
    return record


def _word(variant: Variant, kind: str, word: Any) -> Any:
    if not isinstance(word, str):
        return word
    for m in variant.mutations:
        if m.name not in ("words_restyled", "word_spaced", "word_unknown", "word_meaning_swapped"):
            continue
        if m.arg("kind") != kind:
            continue
        if m.name == "words_restyled":
            style = m.arg("style")
            return {"title": word.title(), "upper": word.upper(), "padded": f" {word} "}[style]
        if word == m.arg("word"):
            return m.arg("as")
    return word


def vm_record(variant: Variant, vm: dict) -> dict:
    out = copy.deepcopy(vm)
    out["status"] = _word(variant, "vm", out.get("status"))
    for holder in (out.get("billing"), out.get("plan")):
        if isinstance(holder, dict) and "priceMonthly" in holder:
            holder["priceMonthly"] = money(variant, holder["priceMonthly"])
            if variant.get("price_period") is not None:
                holder["priceMonthly"] = _per_period(variant, holder["priceMonthly"])
    if isinstance(out.get("billing"), dict) and "status" in out["billing"]:
        out["billing"]["status"] = _word(variant, "billing", out["billing"]["status"])
    ram = variant.get("ram_unit")
    if ram is not None and isinstance(out.get("ram"), int):
        if ram.arg("unit") == "bytes":
            out["ram"] = out["ram"] * 2**20
        else:
            gib = out["ram"] / 1024
            out["ram"] = int(gib) if gib.is_integer() else gib
    disk = variant.get("disk_unit")
    if disk is not None and isinstance(out.get("disk"), int):
        out["disk"] = out["disk"] * (1024 if disk.arg("unit") == "MiB" else 2**30)
    _extra(variant, "vm", out)
    return _zones(variant, out)


# hours in a month as hosting providers bill them (DigitalOcean, Hetzner, Linode: 730 or 672)
HOURS = {"hour": Decimal(730), "day": Decimal(30)}


def _per_period(variant: Variant, value: Any) -> Any:
    """A monthly price as a provider that bills by the hour or day writes it: the price of one
    period, and the period stated beside it (``{"amount": "0.0329", "currency": "EUR",
    "period": "hour"}``): the same shape, another meaning."""
    if value is None:
        return None
    amount, currency = _meaning(value)
    period = variant.get("price_period").arg("period")  # type: ignore[union-attr]
    each = (amount / HOURS[period]).quantize(Decimal("0.000001"))
    return {"amount": str(each), "currency": currency or ACCOUNT_CURRENCY, "period": period}


def _extra(variant: Variant, kind: str, record: dict) -> None:
    for m in variant.all("extra_field"):
        if m.arg("on") == kind:
            record[m.arg("key")] = copy.deepcopy(m.arg("value"))


def wallet_record(variant: Variant, wallet: dict) -> dict:
    out = dict(wallet)
    if "balance" in out:
        out["balance"] = money(variant, out["balance"])
    return _zones(variant, out)


def rule_record(variant: Variant, rule: dict) -> dict:
    out = dict(rule)
    for m in variant.all("port_sentinel"):
        if out.get("port") == m.arg("was"):
            out["port"] = m.arg("as")
    _extra(variant, "rule", out)
    return _zones(variant, out)


def webhook_record(variant: Variant, hook: dict) -> dict:
    out = dict(hook)
    if variant.get("failure_counter_dropped") is not None:
        out.pop("consecutiveFailures", None)
    _extra(variant, "webhook", out)
    return _zones(variant, out)


def delivery_record(variant: Variant, record: dict) -> dict:
    names: dict[str, str] = {}
    for m in variant.mutations:
        if m.name in ("delivery_field_renamed", "delivery_time_renamed"):
            names[m.arg("field")] = m.arg("to")
    dropped = variant.get("event_id_dropped") or variant.get("records_are_events")
    kept = {names.get(k, k): v for k, v in record.items() if not (dropped and k == "eventId")}
    return _zones(variant, kept)


def as_events(variant: Variant, records: list[dict]) -> list[dict]:
    """The records of one subscription as the variant's service means them: one per attempt,
    or (``records_are_events``) one per event, in the order of their last attempt: the last
    attempt's id, status code and time, the first one's creation time, the attempts made and
    whether any got through."""
    if variant.get("records_are_events") is None:
        return list(records)
    by_event: dict[Any, list[dict]] = {}
    for record in records:
        by_event.setdefault(record.get("eventId") or record["id"], []).append(record)
    out = []
    for attempts in by_event.values():
        attempts = sorted(attempts, key=lambda r: r.get("attempts") or 0)
        last = attempts[-1]
        out.append(
            {
                **last,
                "success": any(a.get("success") for a in attempts),
                "attempts": last.get("attempts"),
                "createdAt": attempts[0].get("createdAt"),
            }
        )
    order = {r["id"]: i for i, r in enumerate(records)}
    return sorted(out, key=lambda r: order[r["id"]])


def _when(record: dict) -> tuple:
    return (record.get("lastAttemptAt") or "", record.get("createdAt") or "", record.get("id"))


def kept(variant: Variant, records: list[dict]) -> list[dict]:
    """The delivery records of one subscription the variant's service still serves: its
    newest N attempts (by attempt time), in the order it lists them."""
    events = variant.get("deliveries_kept_events")
    if events is not None:
        last: dict[Any, tuple] = {}
        for r in records:
            key = r.get("eventId") or r["id"]
            last[key] = max(last.get(key, ()), _when(r))
        newest = set(sorted(last, key=last.__getitem__, reverse=True)[: events.arg("n")])
        return [r for r in records if (r.get("eventId") or r["id"]) in newest]
    keep = variant.get("deliveries_kept_last")
    if keep is None:
        return list(records)
    newest = sorted(records, key=_when, reverse=True)[: keep.arg("n")]
    ids = {r["id"] for r in newest}
    return [r for r in records if r["id"] in ids]


RECORDS = {
    "vms": vm_record,
    "vm": vm_record,
    "wallet": wallet_record,
    "rules": rule_record,
    "webhooks": webhook_record,
    "deliveries": delivery_record,
}


# -- the proxy --------------------------------------------------------------------------------

_PREFIXES = ("/api/v1/api/public/v1", "/api/public/v1")
_ROUTES = (
    ("vms", re.compile(r"/vms"), True),
    ("vm", re.compile(r"/vms/[^/]+"), False),
    ("firewalls", re.compile(r"/firewalls"), True),
    ("rules", re.compile(r"/firewalls/[^/]+/rules"), True),
    ("networks", re.compile(r"/networks"), True),
    ("attachments", re.compile(r"/networks/[^/]+/attachments"), True),
    ("wallet", re.compile(r"/wallet"), False),
    ("webhooks", re.compile(r"/webhooks"), False),
    ("deliveries", re.compile(r"/webhooks/[^/]+/deliveries"), True),
)
_HOP = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "content-encoding"}
)
_UPSTREAM_PAGE = 100  # the sandbox's largest page: the proxy reads whole lists, then pages them
_SANDBOX_DEFAULT_PAGE = 20


def _route(path: str) -> tuple[str, bool] | None:
    for prefix in _PREFIXES:
        if path.startswith(prefix):
            rest = path[len(prefix) :]
            for name, pattern, paged in _ROUTES:
                if pattern.fullmatch(rest):
                    return name, paged
            return None
    return None


def _token(index: int) -> str:
    return base64.urlsafe_b64encode(f"page:{index}".encode()).decode().rstrip("=")


def _untoken(token: str) -> int | None:
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    match = re.fullmatch(r"page:(\d{1,6})", text)
    return int(match.group(1)) if match else None


Answer = tuple[int, list[tuple[str, str]], bytes]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # headers and body go in two writes: without this, Nagle holds the body for a delayed ACK
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        proxy = self.server.proxy
        try:
            status, headers, payload = proxy.answer(
                self.command, self.path, list(self.headers.items()), body
            )
        except Exception as exc:  # a fault of the proxy, never an answer of the service
            proxy.errors.append(f"{self.command} {self.path}: {exc!r}")
            status, headers, payload = _error(500, "mutating proxy failed")
        # not send_response: it would add a Date (the wall clock's) beside the sandbox's own
        self.send_response_only(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    proxy: MutatingProxy


class MutatingProxy:
    """A loopback reverse proxy to ``upstream`` (a sandbox) that says its answers the way
    ``variant`` does. Set ``variant`` between pulls; ``base_url`` is what a Client is given."""

    def __init__(self, upstream: str) -> None:
        self.variant: Variant = identity()
        self.requests = 0
        self.hidden: set[str] = set()  # VMs "deleted" while a list was read (list_churn)
        self.churned = False
        self.errors: list[str] = []  # the proxy's own faults: check_variant raises on them
        self._http = loopback_client(
            upstream.rstrip("/"),
            timeout=30.0,
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=64),
        )
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="mutating-proxy", daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._http.close()

    # -- answering ----------------------------------------------------------------------------

    def answer(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes):
        self.requests += 1
        variant = self.variant
        up = [(k, v) for k, v in headers if k.lower() not in _HOP | {"accept-encoding"}]
        up.append(("accept-encoding", "identity"))
        split = urlsplit(target)
        route = _route(split.path) if method == "GET" else None
        if route is not None and route[0] == "vm" and split.path.rsplit("/", 1)[1] in self.hidden:
            return _error(404, "VM not found")
        if route is not None and route[1]:
            return self._list(variant, route[0], split, up, target)
        status, out, payload = self._forward(method, target, up, body)
        if route is not None and 200 <= status < 300:
            doc = _json(payload)
            if isinstance(doc, dict) and "data" in doc:
                rewrite = RECORDS.get(route[0])
                if rewrite is not None:
                    data = doc["data"]
                    if isinstance(data, list):
                        doc["data"] = [
                            rewrite(variant, r) if isinstance(r, dict) else r for r in data
                        ]
                    elif isinstance(data, dict):
                        doc["data"] = rewrite(variant, data)
                payload = json.dumps(doc).encode()
        return status, out, payload

    def _forward(self, method: str, target: str, headers: list, body: bytes = b"") -> Answer:
        reply = self._http.request(method, target, headers=headers, content=body or None)
        out = [(k, v) for k, v in reply.headers.multi_items() if k.lower() not in _HOP]
        return reply.status_code, out, reply.content

    def _list(self, variant: Variant, kind: str, split, headers: list, target: str) -> Answer:
        """One page of a list, paged by the variant from the whole list the sandbox holds."""
        plan = Paging.of(variant)
        query = parse_qsl(split.query, keep_blank_values=True)
        names = [k for k, _ in query]
        accepted = {"page", "perPage"} | set(plan.tokens) | set(plan.extra_params)
        if len(set(names)) != len(names) or not set(names) <= accepted:
            return self._forward("GET", target, headers)  # the sandbox's own 422
        params = dict(query)
        asked = _SANDBOX_DEFAULT_PAGE
        if "perPage" in params:
            asked = _int(params["perPage"])
            if asked is None or not 1 <= asked <= _UPSTREAM_PAGE:
                return self._forward("GET", target, headers)
        index = 0
        token_key = next((k for k in plan.tokens if k in params), None)
        if token_key is not None:
            found = _untoken(params[token_key])
            if found is None:
                return _error(422, f"{token_key}: not a token this server gave")
            index = found
        elif "page" in params and not plan.ignores_page:
            number = _int(params["page"])
            if number is None or number - plan.base < 0:
                return self._forward("GET", target, headers)
            index = number - plan.base
        elif "offset" in params and "offset" in plan.extra_params:
            index = (_int(params["offset"]) or 0) // plan.page_size
        elif {"cursor", "start"} & set(params) & set(plan.extra_params):
            name = next(k for k in ("cursor", "start") if k in params)
            found = _untoken(params[name])
            if found is None:
                return _error(422, f"{name}: not a token this server gave")
            index = found
        if kind == "vms" and plan.churn is not None and index > 0 and not self.churned:
            self._churn(split.path, headers)
        items: list = []
        page, last = 1, None
        while True:  # the whole list, as the sandbox holds it
            status, out, payload = self._forward(
                "GET", f"{split.path}?page={page}&perPage={_UPSTREAM_PAGE}", headers
            )
            if not 200 <= status < 300:
                return status, out, payload
            doc = _json(payload)
            items += doc["data"]
            last = out
            if page >= doc["meta"]["totalPages"]:
                break
            page += 1
        if kind == "vms":
            items = [vm for vm in items if vm.get("id") not in self.hidden]
        if kind == "deliveries":
            items = as_events(variant, kept(variant, items))
        rewrite = RECORDS.get(kind)
        if rewrite is not None:
            items = [rewrite(variant, r) for r in items]
        if plan.shape is not None:
            body, extra = plan.render_shape(items, index, split.path)
        else:
            body, extra = plan.render(items, index, asked)
        out = [(k, v) for k, v in (last or []) if k.lower() != "content-type"]
        out += [("content-type", "application/json"), *extra]
        return 200, out, json.dumps(body).encode()

    def _churn(self, path: str, headers: list) -> None:
        """Between two page reads of the VM list: the first VM (already read) is deleted (the
        proxy hides it: gone from the list, 404 on its details) and a new one is created in
        the sandbox, so the total stays the same and the pages after shift."""
        self.churned = True
        status, _, payload = self._forward("GET", f"{path}?page=1&perPage=1", headers)
        first = (_json(payload) or {}).get("data") or []
        if 200 <= status < 300 and first:
            self.hidden.add(first[0]["id"])
        made = self._http.post("/_sandbox/vms", json={"name": "made-while-read"})
        if made.status_code >= 300:
            self.errors.append(f"create VM while a list is read: {made.status_code}")


def _int(text: str) -> int | None:
    return int(text) if re.fullmatch(r"-?\d{1,9}", text.strip()) else None


def _json(payload: bytes) -> Any:
    try:
        return json.loads(payload)
    except ValueError:
        return None


def _error(status: int, message: str) -> Answer:
    body = json.dumps({"success": False, "error": message}).encode()
    return status, [("content-type", "application/json")], body


@dataclass
class Paging:
    """How a variant's lists are paged and what their answers say about it."""

    page_size: int
    cap: int | None = None  # a size served whatever was asked, not said
    per_page_shown: str = "served"  # served | echo (the size asked) | drop
    base: int = 1
    total_at: str | None = "meta.total"
    pages_shown: bool = True
    meta_key: str = "meta"
    cursor: str | None = None  # an unknown-named continuation token in meta
    ignores_page: bool = False
    numbered: bool = True  # page and totalPages said beside a cursor
    extras: tuple[str, ...] = ()
    tokens: tuple[str, ...] = ()  # query parameters that send a token back
    # the list variants (PAGING_VARIANTS): VM list churned between page reads, by page number
    # or by offset; or lists in another shape ("offset", "empty_pages", "links_array")
    churn: str | None = None
    shape: str | None = None
    extra_params: tuple[str, ...] = ()

    @classmethod
    def of(cls, variant: Variant) -> Paging:
        plan = cls(variant.page_size)
        for m in variant.mutations:
            if m.name == "total_moved":
                plan.total_at = m.arg("to")
            elif m.name == "total_dropped":
                plan.total_at = None
            elif m.name == "total_pages_dropped":
                plan.pages_shown = False
            elif m.name == "meta_renamed":
                plan.meta_key = m.arg("to")
            elif m.name == "cursor_unknown":
                plan.cursor = m.arg("name")
                plan.ignores_page = m.arg("page") == "ignored"
                plan.numbered = False
                plan.tokens += (m.arg("name"),)
            elif m.name == "page_capped_silently":
                plan.cap, plan.per_page_shown = m.arg("cap"), m.arg("perPage")
            elif m.name == "pages_from_zero":
                plan.base = 0
            elif m.name == "meta_extra_key":
                plan.extras += (m.arg("key"),)
                if m.arg("key") == "nextPageKey":
                    plan.tokens += ("nextPageKey",)
            elif m.name == "list_churn":
                plan.churn = m.arg("by")
                if m.arg("by") == "offset":
                    plan.shape, plan.extra_params = "offset", ("offset", "limit")
            elif m.name in ("empty_pages", "links_array"):
                # the links carry a token under a name svcnb does not guess: only they continue
                plan.shape, plan.ignores_page = m.name, m.name == "links_array"
                plan.extra_params = ("cursor",) if m.name == "empty_pages" else ("start",)
        return plan

    def render_shape(self, items: list, index: int, path: str) -> tuple[dict, list]:
        """A page of the list variants' shapes: DRF offsets (``{count, next, previous,
        results}``), a known cursor whose every other page is empty (filtered rows) yet
        continues, or a ``links`` array of ``{rel, href}`` without totals."""
        size = self.page_size
        if self.shape == "offset":
            start = index * size
            more = start + size < len(items)
            nxt = f"{path}?offset={start + size}&limit={size}" if more else None
            data = {"count": len(items), "next": nxt, "previous": None}
            return {"success": True, "data": {**data, "results": items[start : start + size]}}, []
        if self.shape == "empty_pages":  # odd virtual pages are empty, each with a cursor
            real, empty = divmod(index, 2)
            chunk = [] if empty else items[real * size : (real + 1) * size]
            more = (real + 1) * size < len(items)
            meta = {"nextCursor": _token(index + 1) if more else None, "perPage": size}
            return {"success": True, "data": chunk, "meta": meta}, []
        chunk = items[index * size : (index + 1) * size]
        links = [{"rel": "self", "href": f"{path}?start={_token(index)}"}]
        if (index + 1) * size < len(items):
            links.append({"rel": "next", "href": f"{path}?start={_token(index + 1)}"})
        return {"success": True, "data": chunk, "links": links}, []

    def render(self, items: list, index: int, asked: int) -> tuple[dict, list[tuple[str, str]]]:
        size = min(asked, self.cap if self.cap is not None else self.page_size)
        total = len(items)
        pages = (total + size - 1) // size
        more = (index + 1) * size < total
        meta: dict[str, Any] = {}
        if self.numbered:
            meta["page"] = index + self.base
        if self.per_page_shown == "served":
            meta["perPage"] = size
        elif self.per_page_shown == "echo":
            meta["perPage"] = asked
        meta["total"] = total
        if self.numbered and self.pages_shown:
            meta["totalPages"] = pages
        if self.cursor is not None:
            meta[self.cursor] = _token(index + 1) if more else None
        for key in self.extras:
            meta[key] = {
                "nextPageKey": _token(index + 1) if more else None,
                "hasNext": more,
                "generatedAt": "2026-11-01T00:00:00Z",
                "cacheKey": f"c{index:04x}{total:04x}",
            }[key]
        body: dict[str, Any] = {"success": True, "data": items[index * size : (index + 1) * size]}
        headers: list[tuple[str, str]] = []
        count = meta.pop("total")
        if self.total_at == "meta.total":
            meta["total"] = count
        elif self.total_at in ("meta.totalCount", "meta.totalItems"):
            meta[self.total_at.split(".")[1]] = count
        elif self.total_at == "total":
            body["total"] = count
        elif self.total_at == "X-Total-Count":
            headers.append(("X-Total-Count", str(count)))
        body[self.meta_key] = meta
        return body, headers


@contextmanager
def proxy_to(upstream: str) -> Iterator[MutatingProxy]:
    proxy = MutatingProxy(upstream)
    try:
        yield proxy
    finally:
        proxy.close()


# -- list variants beyond the grammar: a list that changes while read, other paging shapes ----

# Fixed variants (not drawn: the seeds of the grammar's sweep stay as they are), each over the
# default answers otherwise: the VM list churned between page reads (one VM deleted, one created,
# the total unchanged) by page number and by DRF offsets; cursor pages of which every other one
# is empty yet continues; a links array of {rel, href} without totals.
PAGING_VARIANTS = (
    Variant(1, 5, (_m("list_churn", by="page"),)),
    Variant(2, 4, (_m("list_churn", by="offset"),)),
    Variant(3, 5, (_m("empty_pages"),)),
    Variant(4, 3, (_m("links_array"),)),
    Variant(5, 7, (_m("list_churn", by="page"), _m("total_dropped"))),
)


# -- the truth as the variant's service meant it ----------------------------------------------


def _price(vm: dict) -> Any:
    billing = vm.get("billing") if isinstance(vm.get("billing"), dict) else {}
    plan = vm.get("plan") if isinstance(vm.get("plan"), dict) else {}
    if "priceMonthly" in billing:
        return billing["priceMonthly"]
    return plan.get("priceMonthly")


def expected(variant: Variant, truth: dict, now: pd.Timestamp) -> dict:
    """The truth in ``tests/peers/check.py``'s terms: status classes (canonical words), exact
    money with the currency the variant states, MiB, UTC times, and the delivery records it
    still serves beside the webhooks' own failure counters."""
    vms = []
    for v in truth["vms"]:
        billing = v.get("billing") if isinstance(v.get("billing"), dict) else {}
        price = _price(v)
        vms.append(
            {
                "id": v["id"],
                "status_class": v["status"],
                "billing_status_class": billing.get("status"),
                "price_monthly": None
                if price is None
                else {
                    "amount": str(_meaning(price)[0]),
                    "currency": stated_currency(variant, price),
                },
                "ram_mib": v["ram"],
                "disk_gib": v["disk"],
                "next_renewal_at": billing.get("nextRenewalAt"),
                "created_at": v.get("createdAt"),
                "updated_at": v.get("updatedAt"),
                "bandwidth_used_bytes": v.get("bandwidthUsedBytes"),
                "bandwidth_pack_bytes": int(v["bandwidthPackBytes"])
                if v.get("bandwidthPackBytes") is not None
                else None,
                "is_protected": v.get("isProtected"),
            }
        )
    balance = truth["wallet"]["balance"]
    served = served_deliveries(variant, truth)
    return {
        "now": now,
        "vms": vms,
        "wallet": {
            "balance": {
                "amount": str(_meaning(balance)[0]),
                "currency": stated_currency(variant, balance),
            }
        },
        "rules": truth["rules"],
        "deliveries_served": [
            {
                "id": d["id"],
                "status_code": d["statusCode"],
                "success": d["success"],
                "attempts": d["attempts"],
                # a service that does not say the event: svcnb must not make one up
                "event_id": None
                if variant.get("event_id_dropped") or variant.get("records_are_events")
                else d["eventId"],
                "created_at": d["createdAt"],
                "last_attempt_at": d["lastAttemptAt"],
            }
            for d in served
        ],
        "webhooks": [
            {"id": hook, "consecutive_failures": run}
            for hook, run in failure_runs(variant, truth).items()
        ],
    }


def failure_runs(variant: Variant, truth: dict) -> dict[str, int]:
    """Each webhook's run of consecutive failed attempts: its own counter while the variant's
    service states it; else what its whole delivery history shows (the failed attempts after
    the newest success), or the counter where that history holds no success (older attempts
    are gone). The sandbox seeds its counters apart from its records: a counter of 3 beside a
    success newer than every failure occurs, and no service without the counter could say 3."""
    runs = {h["id"]: h["consecutiveFailures"] for h in truth["webhooks"]}
    if variant.get("failure_counter_dropped") is None:
        return runs
    by_hook: dict[str, list[dict]] = {}
    for d in truth["deliveries"]:
        by_hook.setdefault(d["webhookId"], []).append(d)
    for hook, records in by_hook.items():
        newest_first = sorted(
            records, key=lambda d: (d["lastAttemptAt"], d["attempts"]), reverse=True
        )
        failed = 0
        for record in newest_first:
            if record["success"]:
                break
            failed += 1  # noqa: SIM113 (the count stops at the newest success)
        success = any(r["success"] for r in records)
        runs[hook] = failed if success else max(runs[hook], failed)
    return runs


def kept_deliveries(variant: Variant, truth: dict) -> list[dict]:
    """The attempts the variant's service still holds (what the truth's reports are of)."""
    by_hook: dict[str, list[dict]] = {}
    for d in truth["deliveries"]:
        by_hook.setdefault(d["webhookId"], []).append(d)
    return [d for records in by_hook.values() for d in kept(variant, records)]


def served_deliveries(variant: Variant, truth: dict) -> list[dict]:
    """The delivery records the variant's service serves, as it means them (one per event
    where its records are events)."""
    by_hook: dict[str, list[dict]] = {}
    for d in kept_deliveries(variant, truth):
        by_hook.setdefault(d["webhookId"], []).append(d)
    return [d for records in by_hook.values() for d in as_events(variant, records)]


def said_truth(variant: Variant, truth: dict) -> dict:
    """The canonical account (default words, MiB, field names, the webhooks' counters) with
    the money each variant's value means, stating the currency it states, and the delivery
    records it serves: what svcnb's reports must equal, or say they could not."""
    said = copy.deepcopy(truth)
    for vm in said["vms"]:
        for holder in (vm.get("billing"), vm.get("plan")):
            if isinstance(holder, dict) and holder.get("priceMonthly") is not None:
                holder["priceMonthly"] = _stated(variant, holder["priceMonthly"])
    said["wallet"]["balance"] = _stated(variant, said["wallet"]["balance"])
    said["deliveries"] = kept_deliveries(variant, truth)
    runs = failure_runs(variant, truth)
    for hook in said["webhooks"]:
        hook["consecutiveFailures"] = runs[hook["id"]]
    return said


def _stated(variant: Variant, value: Any) -> Any:
    amount, _ = _meaning(value)
    currency = stated_currency(variant, value)
    return {"amount": str(amount), "currency": currency} if currency else str(amount)


# -- the check --------------------------------------------------------------------------------

# what each report reads from the store, for "the store says an input is incomplete"
REPORT_INPUTS = {
    "billing.run_rate": ("vms",),
    "billing.renewals_due": ("vms", "wallet"),
    "billing.overdue": ("vms",),
    "billing.runway": ("vms", "wallet"),
    "billing.low_balance_forecast": ("vms", "wallet"),
    "bandwidth.usage": ("vms",),
    "webhooks.health": ("webhooks", "deliveries"),
    "firewall.audit": ("firewall_rules", "vm_firewalls", "firewalls", "vms"),
}
# where a report says where its figure came from or why it is not exact: wording, not figures
PROVENANCE = ("reason", "consecutive_failures_source")
LOADED = (
    "vms",
    "vm_firewalls",
    "firewalls",
    "firewall_rules",
    "networks",
    "attachments",
    "wallet",
    "webhooks",
    "deliveries",
)


@dataclass
class Result:
    """One variant's outcome: ``verdict`` is ``silent wrong``, ``loud`` or ``passed``."""

    variant: Variant
    outcome: check.Outcome
    seconds: float
    requests: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.outcome.silent_wrong:
            return "silent wrong"
        if self.outcome.flagged:
            return "loud"
        return "passed"

    def describe(self, lines: int = 12) -> str:
        """The variant (reproducible by its seed), the counts, and the first wrong values."""
        text = f"{self.variant}\n  {self.outcome} in {self.seconds:.2f} s"
        for why in self.outcome.silent_wrong[:lines]:
            text += f"\n  WRONG {why}"
        return text


def user_pins(variant: Variant) -> dict[str, str]:
    """What the variant's user pinned: only what no answer of it can prove, and truly (a user
    who knows the service). The disk unit: no plan states a disk size; a unit svcnb cannot be
    pinned to (bytes) stays unpinned. Nothing else: money scale, ram and zones must be proven
    by the answers or stay unknown, so a meaning swap there is loud, never silent."""
    disk = variant.get("disk_unit")
    unit = "GiB" if disk is None else disk.arg("unit")
    # the sandbox's "suspended" is a hold for non-payment: its user pins it (providers differ)
    words = {"vocabulary.vm_status.suspended": "suspended"}
    if any(variant.get(name) for name in ("list_churn", "empty_pages", "links_array")):
        # these services continue a list (a link, an offset) exactly while items follow, as
        # their user knows: an answer without a continuation is the last page
        words["paging.no_continuation_is_end"] = "true"
    return {"units.disk": unit, **words} if unit in ("GiB", "MiB") else words


def check_variant(sandbox: Any, proxy: MutatingProxy, variant: Variant, vms: int = VMS) -> Result:
    """Reset ``sandbox`` (default dialect) to the variant's account, pull it through ``proxy``
    speaking ``variant``, and hold svcnb's store against the truth."""
    started = time.monotonic()
    sandbox.control.reset(seed=account_seed(variant.seed), vms=vms, dialect="default")
    truth = sandbox.control.truth()
    proxy.variant, proxy.requests, proxy.errors = variant, 0, []
    proxy.hidden, proxy.churned = set(), False
    out = check.Outcome()
    pinned = {n: Pin(v, "the variant's user") for n, v in user_pins(variant).items()}
    with (
        tempfile.TemporaryDirectory() as tmp,
        warnings.catch_warnings(record=True),
        vocab.using(vocab.from_pins(pinned, base=vocab.current())),
    ):
        warnings.simplefilter("always")
        store = Store(tmp)
        with Client(
            sandbox.tokens["admin"], proxy.base_url, progress=False, pins=user_pins(variant)
        ) as client:
            refused: SvcnbError | None = None
            try:
                store.take(client)
            except SvcnbError as exc:
                refused = exc
        if proxy.errors:
            raise RuntimeError(f"{variant}: the proxy failed: {proxy.errors[:3]}")
        if refused is not None:
            out.flag(f"snapshot refused: {type(refused).__name__}: {refused}")
            return Result(variant, out, time.monotonic() - started, proxy.requests)
        now = pd.Timestamp(store.snapshots()["server_time"].iloc[-1])
        status = store.resources().set_index("resource")
        if proxy.churned:  # the account as it is after the change: what a proven read holds
            truth = sandbox.control.truth()
            truth["vms"] = [v for v in truth["vms"] if v["id"] not in proxy.hidden]
        want = expected(variant, truth, now)
        check._vms(out, store, status, want)
        check._wallet(out, store, status, want)
        check._rules(out, store, status, want)
        check._deliveries(out, store, status, want)
        _resources(out, store, status, truth)
        _delivery_times(out, store, want)
        _failures(out, store, want)
        _reports(out, store, status, said_truth(variant, truth), now)
    return Result(variant, out, time.monotonic() - started, proxy.requests)


def _resources(out: check.Outcome, store: Store, status: pd.DataFrame, truth: dict) -> None:
    """Each other list read whole and stored as ok, or said to be incomplete or missing; a
    list read whole but stored as incomplete is loud (svcnb could not prove it)."""
    lists = {
        "firewalls": truth["firewalls"],
        "networks": truth["networks"],
        "attachments": truth["attachments"],
        "webhooks": truth["webhooks"],
    }
    for name, records in lists.items():
        frame = check._load(store, name)
        state = check._state(status, name)
        if frame is None:
            out.flag(f"{name}: {state}")
            continue
        check._set(out, f"{name} ids", set(frame["id"]), {r["id"] for r in records}, state)
    for name in ("vms", "firewall_rules", "deliveries", *lists):
        state = check._state(status, name)
        if state == "incomplete":
            reason = status.loc[name, "reason"]
            out.flag(f"{name}: stored as incomplete ({reason})")


def _failures(out: check.Outcome, store: Store, want: dict) -> None:
    """Each webhook's run of consecutive failures against its own counter: exact and equal,
    a lower bound not above it, or unknown (``check._failures`` of the peers, keyed by the
    health report's ``webhook_id``)."""
    try:
        health = webhooks.health.from_store(store)
    except SvcnbError as exc:
        out.flag(f"webhooks.health: {type(exc).__name__}")
        return
    rows = health.set_index("webhook_id")
    for h in want["webhooks"]:
        if h["id"] not in rows.index:
            out.flag(f"webhook {h['id']}: not in health")
            continue
        r = rows.loc[h["id"]]
        got, how, true = (
            r["consecutive_failures"],
            str(r["consecutive_failures_bound"]),
            h["consecutive_failures"],
        )
        if check._na(got):
            out.flag(f"webhook {h['id']} consecutive failures unknown")
        elif how == webhooks.AT_LEAST:
            (out.flag if got <= true else out.wrong)(
                f"webhook {h['id']} consecutive failures at least {got}, truth {true}"
            )
        elif how == webhooks.EXACT and got == true:
            out.ok()
        else:
            out.wrong(f"webhook {h['id']} consecutive failures {got} ({how}), truth {true}")


def _delivery_times(out: check.Outcome, store: Store, want: dict) -> None:
    got = check._load(store, "deliveries")
    if got is None:
        return
    rows = got.set_index("id")
    for d in want["deliveries_served"]:
        if d["id"] not in rows.index:
            continue
        r = rows.loc[d["id"]]
        check._compare(out, f"delivery {d['id']} event_id", r["event_id"], d["event_id"])
        for col in ("created_at", "last_attempt_at"):
            check._compare(out, f"delivery {d['id']} {col}", r[col], check._time(d[col]))


def _run_reports(f: dict[str, pd.DataFrame], now: pd.Timestamp) -> dict[str, Any]:
    """The dialect sweep's reports (``sweep.reports``), each on its own: a report that refuses
    (an exception naming what it cannot compute) is that exception, not the end of the check."""
    vms, wallet = f["vms"], f["wallet"]
    calls = {
        "billing.run_rate": lambda: billing.run_rate(vms, wallet, now=now),
        "billing.renewals_due": lambda: billing.renewals_due(vms, wallet, now=now),
        "billing.overdue": lambda: billing.overdue(vms, now=now),
        "billing.runway": lambda: billing.runway(vms, wallet, now=now),
        "billing.low_balance_forecast": lambda: billing.low_balance_forecast(vms, wallet, now=now),
        "bandwidth.usage": lambda: bandwidth.usage(vms, now=now),
        "webhooks.health": lambda: webhooks.health(f["webhooks"], f["deliveries"], now=now),
        "firewall.audit": lambda: firewall.audit(
            f["firewall_rules"], f["vm_firewalls"], f["firewalls"], vms, now=now
        ),
    }
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, call in calls.items():
            try:
                out[name] = call()
            except (SvcnbError, ValueError) as exc:
                out[name] = exc
    return out


def _reports(
    out: check.Outcome, store: Store, status: pd.DataFrame, said: dict, now: pd.Timestamp
) -> None:
    """Every report of the dialect sweep on svcnb's store against the same report on the
    truth as said (status words as classes, provenance wording aside), cell by cell. A cell
    that differs is *flagged* when svcnb shows no value where NA means unknown (a currency
    column, an overdue VM's amount: :data:`NA_IS_UNKNOWN`; a status of class ``unknown``), or
    when the report itself says what it could not count (a figure bounded, rows left out and
    counted, ``complete`` False), or when the store holds an input as incomplete or missing;
    otherwise *silent wrong*. An NA where the truth has a value counts as unknown only in
    those cases: elsewhere NA has a meaning (no runway end, no success yet)."""
    pulled: dict[str, pd.DataFrame] = {}
    for name in LOADED:
        frame = check._load(store, name)
        if frame is None:
            out.flag(f"reports: {name} missing ({check._state(status, name)})")
            return
        pulled[name] = frame
    ours, theirs = _run_reports(pulled, now), _truth_reports(said, now)
    for name, frame in ours.items():
        inputs = [
            f"{r} stored {check._state(status, r)}"
            for r in REPORT_INPUTS[name]
            if check._state(status, r) != "ok"
        ]
        truth = theirs[name]
        if isinstance(frame, Exception) or isinstance(truth, Exception):
            if isinstance(frame, Exception) and isinstance(truth, Exception):
                out.ok()
            elif isinstance(frame, Exception):
                out.flag(f"{name}: refused: {type(frame).__name__}: {frame}")
            else:
                out.wrong(f"{name}: computed where the truth's report refuses ({truth})")
            continue
        doubts = _doubts(frame) + inputs
        diffs = _differences(
            _figures(frame), _figures(truth), NA_IS_UNKNOWN.get(name, ("currency",))
        )
        if not diffs:
            out.ok()
            continue
        silent = [d for d, unknown in diffs if not unknown]
        if silent and not doubts:
            out.wrong(f"{name}: differs from the truth and says nothing: {silent[0]}")
        else:
            said = ", ".join(doubts) or "NA where it could not read"
            out.flag(f"{name}: differs ({diffs[0][0]}); it says {said}")


# columns where a report's NA can only mean "not known" (elsewhere NA may mean none or never)
NA_IS_UNKNOWN = {
    "billing.overdue": ("currency", "amount"),  # an overdue VM's price: NA is an unread price
}


def _differences(
    ours: pd.DataFrame, truth: pd.DataFrame, unknown_when_na: tuple[str, ...] = ("currency",)
) -> list[tuple[str, bool]]:
    """(what differs, whether svcnb shows it as unknown) for each differing cell, after the
    dialect sweep's canonical row order; one entry when the shapes differ."""
    shape = same_frame(ours, truth)
    if shape is None:
        return []
    if list(ours.columns) != list(truth.columns) or len(ours) != len(truth):
        return [(shape, False)]
    a, b = _canon(ours), _canon(truth)
    found = []
    for column in a.columns:
        for i, (u, v) in enumerate(zip(a[column], b[column], strict=True)):
            if _equal(u, v):
                continue
            unknown = (column in unknown_when_na or column.endswith("_currency")) and _blank(u)
            unknown = unknown or (column in ("status", "billing_status") and u == "unknown")
            found.append((f"column {column!r} row {i}: {u!r} vs {v!r}", unknown))
    return found


def _blank(value: Any) -> bool:
    return value is None or (not isinstance(value, tuple) and bool(pd.isna(value)))


_TRUTH_REPORTS: dict[tuple[str, str], dict[str, Any]] = {}


def _truth_reports(said: dict, now: pd.Timestamp) -> dict[str, Any]:
    """The reports on the truth as said, computed once per account and form of saying it
    (variants share accounts: see :func:`account_seed`)."""
    key = (json.dumps(said, sort_keys=True), str(now))
    if key not in _TRUTH_REPORTS:
        if len(_TRUTH_REPORTS) >= 256:
            _TRUTH_REPORTS.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _TRUTH_REPORTS[key] = _run_reports(truth_frames(said), now)
    return _TRUTH_REPORTS[key]


def _figures(frame: pd.DataFrame) -> pd.DataFrame:
    out = _as_classes(frame.drop(columns=[c for c in PROVENANCE if c in frame]))
    if "port" in out:
        # a port's words for every port ("any", "all", "*") are one meaning, as status words
        # are one class
        out["port"] = out["port"].map(lambda p: "any" if _every_port(p) else p).astype("string")
    return out


def _every_port(port: Any) -> bool:
    return isinstance(port, str) and port.strip().lower() in ANY_WORDS


def _doubts(frame: pd.DataFrame) -> list[str]:
    """What a report frame itself says it could not count."""
    said = []
    if frame.attrs.get("complete") is False:
        said.append("complete=False")
    if frame.attrs.get("unknown_status"):
        said.append(f"{frame.attrs['unknown_status']} of unknown status")
    # the audit names the rules whose port sentinel ("0", "") it could not read (a port in no
    # known form, as the sandbox seeds on purpose, is a finding of its own, not a doubt)
    unread = [r for r, port in frame.attrs.get("unread_ports", {}).items() if port in SENTINELS]
    if unread:
        said.append(f"port sentinels not read: {', '.join(unread)}")
    for column in ("unpriced", "unknown_status", "unknown"):
        if column in frame and (pd.to_numeric(frame[column], errors="coerce").fillna(0) > 0).any():
            said.append(f"{column} > 0")
    if "complete" in frame and (frame["complete"].astype("boolean") == False).any():  # noqa: E712
        said.append("a row with complete=False")
    for column in frame.columns:
        if column.endswith("_bound") and (frame[column].astype("string") != "exact").any():
            said.append(f"{column} not exact")
    return said


# -- silent-wrong findings svcnb has today (reported; the tests keep them as strict xfails) -----


@dataclass(frozen=True)
class Finding:
    """A silent wrong result svcnb gives today: the reports and columns it shows in, and why."""

    key: str
    reason: str
    reports: tuple[str, ...]
    columns: tuple[str, ...] = ()  # () is any column
    rows: bool = False  # also a report with more or fewer rows than the truth's

    def explains(self, wrong: str) -> bool:
        report, _, rest = wrong.partition(": ")
        if report not in self.reports or "says nothing" not in rest:
            return False
        if self.rows and re.search(r"nothing: \d+ rows vs \d+$", rest):
            return True
        return not self.columns or any(f"column {c!r}" in rest for c in self.columns)


FINDINGS = {
    "health-times": Finding(
        "health-times",
        "webhooks.health shows last_success_at/last_failure_at NaT ('none') with complete=True "
        "when the delivery records' time key is one svcnb cannot place (sentAt): the times are "
        "unknown, and the row does not say so",
        ("webhooks.health",),
        ("last_success_at", "last_failure_at"),
    ),
    "runway-unpriced": Finding(
        "runway-unpriced",
        "billing.runway and low_balance_forecast leave out the renewals of VMs whose price is "
        "unreadable (a money key svcnb does not know) and still say complete=True: the runway "
        "comes out later than the truth's, or never",
        ("billing.runway", "billing.low_balance_forecast"),
    ),
    "audit-unknown-status": Finding(
        "audit-unknown-status",
        "firewall.audit keeps a VM of unknown status word as live (by design: not to hide a "
        "finding) but does not say so: a terminated VM said 'zombie' is in affected_vms and "
        "affected_vm_count (or has a vm_without_firewall finding), and the audit counts no VM "
        "of unknown status",
        ("firewall.audit",),
        ("affected_vms", "affected_vm_count", "vm_id"),
        rows=True,
    ),
}


def unexplained(result: Result, findings: tuple[str, ...]) -> list[str]:
    """The silent wrong values of ``result`` that none of ``findings`` explains."""
    known = [FINDINGS[k] for k in findings]
    return [w for w in result.outcome.silent_wrong if not any(f.explains(w) for f in known)]
