"""How the sandbox speaks (docs/dialects.md): one frozen ``Dialect`` per family member.

Handlers render canonical envelopes (the default dialect); :mod:`._speak` then says them in the
active dialect. ``Dialect.parse(NAME)`` with NAME one of :data:`NAMED`, ``random:SEED``, or the
``file:PATH`` name of a dialect read from a dialect file (:mod:`._twin`) and registered here.

The word pools below copy the synonyms svcnb's own vocabulary knows, on purpose: the sandbox
plays services svcnb has never met, so it keeps its own list (and adds exotic words no
vocabulary knows) instead of importing the client's. They hold only words that mean one thing
at every provider: a named dialect is read with no pin, and a word providers use for different
states (``locked``, ``active`` for a VM) is one a real service's user must pin.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ._plans_regions import BILLING_STATUSES, GRACE_DAYS, VM_STATUSES

BASE_PATHS = ("both", "public", "prefixed")
PAGING = ("meta", "items", "cursor", "link", "offset", "token", "hal", "zero", "bare")
LINK_FORMS = ("absolute", "relative")
# (answer key, request parameter of the token, request parameter of the page size)
TOKEN_NAMES: tuple[tuple[str, str, str], ...] = (
    ("nextPageToken", "pageToken", "pageSize"),
    ("next_page_token", "page_token", "page_size"),
    ("nextToken", "nextToken", "maxResults"),
    ("continuationToken", "continuationToken", "limit"),
)
PAGE_DEFAULTS = (10, 20, 25, 50)
PAGE_MAXES = (25, 50, 100, 200)
OVER_MAX = ("reject", "clamp")
MONEY = (
    "mixed", "number", "string", "object", "minor", "text", "code", "nanos", "minor_amount",
    "minor_exponent", "minor_scale", "minor_decimals",
)  # fmt: skip
RAM_UNITS = ("MiB", "GiB")
TIMESTAMPS = ("z", "offset", "millis", "local")
CREATED_STATUS = (201, 200)
STOP_STATUS = (202, 200)
DELETE_STATUS = (200, 202)
VALIDATION_STATUS = (422, 400)
CONFLICT_STATUS = (409, 422, 400)
CAP_STATUS = (409, 403, 422)
REVOKED_STATUS = (401, 403)
WORDING = ("plain", "terse")
LIST_KEYS = ("summary", "no_updated", "full")
RATE_WINDOW = ("fixed", "sliding")

# canonical word -> words other services use for it (the canonical word first); the
# transitional class of the vocabulary is split so a stopping VM is never called "booting"
VM_POOLS: dict[str, tuple[str, ...]] = {
    "provisioning": (
        "provisioning", "pending", "creating", "building", "new", "starting", "booting",
        "installing",
    ),
    "running": ("running", "up", "online", "started", "on", "powered_on"),
    "stopping": ("stopping",),
    "stopped": (
        "stopped", "off", "halted", "shutoff", "shut_off", "powered_off", "poweroff", "offline",
    ),
    "suspended": ("suspended",),
    "terminated": ("terminated", "deleted", "destroyed", "removed"),
}  # fmt: skip
VM_EXOTIC = {
    "provisioning": "spawning",
    "running": "live",
    "stopping": "winding_down",
    "stopped": "dormant",
    "suspended": "on_ice",
    "terminated": "purged",
}
BILLING_POOLS: dict[str, tuple[str, ...]] = {
    "active": ("active", "paid", "good_standing", "in_good_standing", "settled", "up_to_date"),
    "overdue": ("overdue", "past_due", "delinquent", "in_arrears"),
    "suspended": ("suspended",),
}  # fmt: skip
BILLING_EXOTIC = {"active": "cleared", "overdue": "arrears", "suspended": "held"}
# the class svcnb reads each state in (svcnb.vocab's classes; the sandbox imports nothing of it)
_VM_CLASS = {"provisioning": "transitional", "stopping": "transitional"}
_BILLING_CLASS = {"active": "paid", "overdue": "owing", "suspended": "suspended"}
DELIVERY_POOLS: dict[str, tuple[str, ...]] = {
    "statusCode": ("statusCode", "status_code", "responseStatus", "httpStatus", "responseCode"),
    "success": ("success", "ok", "delivered", "succeeded", "successful"),
    "attempts": ("attempts", "attempt", "attemptCount", "tries"),
    "eventId": ("eventId", "event_id"),
    "createdAt": ("createdAt", "created_at"),
    "lastAttemptAt": ("lastAttemptAt", "last_attempt_at", "updatedAt"),
}
DELIVERY_EXOTIC = {"statusCode": "result", "success": "passed", "attempts": "count"}
EXOTIC_WORD_CHANCE = 0.15
EXOTIC_FIELD_CHANCE = 0.1

NAMED = ("default", "acme", "linkhdr", "cursor", "drf", "google", "hal", "zeropage", "capped")
# Dialects read from a dialect file (``svcnb sandbox --dialect-file``), by their ``file:PATH``
# name: a config names its dialect by a string, and a reset (``POST /_sandbox/reset``) parses it
# again, so the file is read once and the dialect looked up here, never read again by a request.
_FROM_FILES: dict[str, Dialect] = {}


def _same(words: tuple[str, ...] | list[str] | Mapping[str, object]) -> dict[str, str]:
    return {w: w for w in words}


@dataclass(frozen=True, eq=False)
class Dialect:
    """One way of saying the canonical answers; every field is a point the spec leaves open."""

    name: str = "default"
    base_paths: str = "both"
    paging: str = "meta"
    link_form: str = "absolute"
    token_names: tuple[str, str, str] = TOKEN_NAMES[0]
    page_default: int = 20
    page_max: int = 100
    over_max: str = "reject"
    vm_words: Mapping[str, str] = field(default_factory=lambda: _same(VM_STATUSES))
    billing_words: Mapping[str, str] = field(default_factory=lambda: _same(BILLING_STATUSES))
    money: str = "mixed"
    ram_unit: str = "MiB"
    timestamps: str = "z"
    created_status: int = 201
    stop_status: int = 202
    delete_status: int = 200
    validation_status: int = 422
    conflict_status: int = 409
    cap_status: int = 409
    revoked_status: int = 401
    wording: str = "plain"
    delivery_fields: Mapping[str, str] = field(default_factory=lambda: _same(DELIVERY_POOLS))
    list_keys: str = "summary"
    rate_window: str = "fixed"
    webhooks_paged: bool = False

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def parse(cls, text: object) -> Dialect:
        """One of :data:`NAMED`, ``random:SEED`` or a registered ``file:PATH`` name."""
        if isinstance(text, str) and text in _FROM_FILES:
            return _FROM_FILES[text]
        if isinstance(text, str) and text.startswith("random:"):
            seed = text[len("random:") :]
            if seed.lstrip("-").isdigit():
                return cls.random(int(seed))
        elif isinstance(text, str) and text in NAMED:
            return cls.named(text)
        raise ValueError(
            f"dialect {text!r} is not one the sandbox speaks; choose one of "
            f"{', '.join(NAMED)} or random:SEED (SEED an integer)"
        )

    @classmethod
    def named(cls, name: str) -> Dialect:
        if name == "default":
            return cls()
        if name == "acme":
            return cls(
                name="acme",
                paging="items",
                page_max=50,
                over_max="clamp",
                vm_words={
                    "provisioning": "pending",
                    "running": "online",
                    "stopping": "stopping",
                    "stopped": "off",
                    "suspended": "suspended",
                    "terminated": "deleted",
                },
                billing_words={"active": "paid", "overdue": "past_due", "suspended": "suspended"},
                money="minor",
                timestamps="millis",
                created_status=200,
                stop_status=200,
                validation_status=400,
                conflict_status=422,
                cap_status=403,
                wording="terse",
                delivery_fields={
                    **_same(DELIVERY_POOLS),
                    "statusCode": "responseStatus",
                    "success": "ok",
                    "attempts": "attemptCount",
                },
                list_keys="no_updated",
                rate_window="sliding",
            )
        if name == "linkhdr":
            return cls(
                name="linkhdr",
                base_paths="prefixed",
                paging="link",
                page_default=25,
                page_max=25,
                over_max="clamp",
                money="object",
                timestamps="local",
                revoked_status=403,
                delivery_fields={
                    "statusCode": "status_code",
                    "success": "delivered",
                    "attempts": "tries",
                    "eventId": "event_id",
                    "createdAt": "created_at",
                    "lastAttemptAt": "last_attempt_at",
                },
                list_keys="full",
                webhooks_paged=True,
            )
        if name == "cursor":
            return cls(
                name="cursor",
                paging="cursor",
                money="string",
                timestamps="offset",
                vm_words={
                    **_same(VM_STATUSES),
                    "running": "up",
                    "stopped": "halted",
                    "terminated": "destroyed",
                },
                conflict_status=409,
                wording="plain",
            )
        if name == "drf":
            return cls(
                name="drf", paging="offset", link_form="relative", money="code", ram_unit="GiB"
            )
        if name == "google":
            return cls(name="google", paging="token", token_names=TOKEN_NAMES[0], money="nanos")
        if name == "hal":
            return cls(name="hal", paging="hal", money="minor_exponent")
        if name == "zeropage":
            return cls(name="zeropage", paging="zero", money="minor_amount")
        if name == "capped":
            # bare pages cap the size silently whatever over_max says; the field says so too
            return cls(name="capped", paging="bare", page_max=25, over_max="clamp", money="text")
        raise ValueError(f"no dialect named {name!r}; named dialects are {', '.join(NAMED)}")

    @classmethod
    def random(cls, seed: int) -> Dialect:
        """Every field drawn from ``random.Random(seed)``: same seed, same dialect."""
        rng = random.Random(seed)
        page_default = rng.choice(PAGE_DEFAULTS)
        dialect = cls(
            name=f"random:{seed}",
            base_paths=rng.choice(BASE_PATHS),
            paging=rng.choice(PAGING),
            page_default=page_default,
            page_max=rng.choice([m for m in PAGE_MAXES if m >= page_default]),
            over_max=rng.choice(OVER_MAX),
            vm_words=_draw_words(rng, VM_POOLS, VM_EXOTIC),
            billing_words=_draw_words(rng, BILLING_POOLS, BILLING_EXOTIC),
            money=rng.choice(MONEY),
            timestamps=rng.choice(TIMESTAMPS),
            created_status=rng.choice(CREATED_STATUS),
            stop_status=rng.choice(STOP_STATUS),
            delete_status=rng.choice(DELETE_STATUS),
            validation_status=rng.choice(VALIDATION_STATUS),
            conflict_status=rng.choice(CONFLICT_STATUS),
            cap_status=rng.choice(CAP_STATUS),
            revoked_status=rng.choice(REVOKED_STATUS),
            wording=rng.choice(WORDING),
            delivery_fields=_draw_fields(rng),
            list_keys=rng.choice(LIST_KEYS),
            rate_window=rng.choice(RATE_WINDOW),
            webhooks_paged=rng.choice((False, True)),
            link_form=rng.choice(LINK_FORMS),
            token_names=rng.choice(TOKEN_NAMES),
            ram_unit=rng.choice(RAM_UNITS),
        )
        if dialect.paging == "bare":  # bare pages always clamp, silently
            dialect = replace(dialect, over_max="clamp")
        return dialect

    def registered(self) -> Dialect:
        """This dialect, findable by ``Dialect.parse(self.name)`` from now on (a dialect file's:
        its name is ``file:PATH``; one registered again under the same name replaces it)."""
        if not self.name.startswith("file:"):
            raise ValueError(f"only a dialect file's dialect is registered, not {self.name!r}")
        _FROM_FILES[self.name] = self
        return self

    def with_changes(self, **changes: Any) -> Dialect:
        """A copy with ``changes``; the name says it was changed."""
        name = changes.pop("name", None) or f"{self.name}+custom"
        return replace(self, name=name, **changes)

    # -- what it is -----------------------------------------------------------------------
    def choices(self) -> dict:
        """Every field but the name, JSON-ready (``GET /_sandbox/dialect``)."""
        out: dict = {}
        for f in fields(self):
            if f.name == "name":
                continue
            value = getattr(self, f.name)
            if isinstance(value, Mapping):
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The base paths that answer, longest first."""
        return {
            "both": ("/api/v1/api/public/v1", "/api/public/v1"),
            "public": ("/api/public/v1",),
            "prefixed": ("/api/v1/api/public/v1",),
        }[self.base_paths]

    @property
    def pins(self) -> dict[str, str]:
        """What this dialect means where its answers may not prove it, as the assumptions svcnb
        names them (``svcnb.assumptions``; plain strings: the sandbox imports nothing of svcnb).
        Every amount it writes without a point is in major units; ram in ``ram_unit``, disk in
        GiB. Its times always state their zone, so it pins none. Its lists continue (a next
        link, cursor or token) exactly while items follow, so an answer without a continuation
        is its last page. Each status word it says means the state it stands for here
        (``suspended``: held for non-payment), which another service may mean otherwise. It
        suspends a VM ``GRACE_DAYS`` after a renewal it could not take (``billing.grace``)."""
        return {
            "billing.grace": f"{GRACE_DAYS}D",
            "money.scale": "major",
            "units.ram": self.ram_unit,
            "units.disk": "GiB",
            "paging.no_continuation_is_end": "true",
            **{
                f"vocabulary.vm_status.{word}": _VM_CLASS.get(state, state)
                for state, word in self.vm_words.items()
            },
            **{
                f"vocabulary.billing_status.{word}": _BILLING_CLASS[state]
                for state, word in self.billing_words.items()
                if state in _BILLING_CLASS
            },
        }

    @property
    def plain_values(self) -> bool:
        """True when words, money and times are said as the canonical records hold them."""
        return (
            self.money == "mixed"
            and self.ram_unit == "MiB"
            and self.timestamps == "z"
            and all(k == v for k, v in self.vm_words.items())
            and all(k == v for k, v in self.billing_words.items())
        )

    def vm_word(self, status: object) -> object:
        return self.vm_words.get(status, status) if isinstance(status, str) else status

    def billing_word(self, status: object) -> object:
        return self.billing_words.get(status, status) if isinstance(status, str) else status

    def __repr__(self) -> str:
        return f"Dialect({self.name!r})"


def _draw_words(
    rng: random.Random, pools: dict[str, tuple[str, ...]], exotic: dict[str, str]
) -> dict[str, str]:
    used: set[str] = set()
    words: dict[str, str] = {}
    for canonical, pool in pools.items():
        free = [w for w in pool if w not in used]
        strange = rng.random() < EXOTIC_WORD_CHANCE
        word = exotic[canonical] if strange or not free else rng.choice(free)
        words[canonical] = word
        used.add(word)
    return words


def _draw_fields(rng: random.Random) -> dict[str, str]:
    names: dict[str, str] = {}
    for canonical, pool in DELIVERY_POOLS.items():
        strange = canonical in DELIVERY_EXOTIC and rng.random() < EXOTIC_FIELD_CHANCE
        names[canonical] = DELIVERY_EXOTIC[canonical] if strange else rng.choice(pool)
    return names
