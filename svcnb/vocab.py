"""The one vocabulary of status words: every word a service may use, mapped to a state class.

The rules (which words are built in, which are ambiguous, how one is pinned): docs/contracts.md
§0, "Assumptions: status word classes". Everything in svcnb that acts on a status (reports,
``stop(wait=True)``, panels) asks this module for the word's class and never compares raw words,
because the real service may say ``active`` where the sandbox says ``running``.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

from svcnb.assumptions import BILLING_CLASSES, VM_CLASSES, Pins, assumption, split
from svcnb.config import config_path, pins
from svcnb.errors import SvcnbError

__all__ = [
    "AMBIGUOUS",
    "BILLING_CLASSES",
    "UNKNOWN",
    "VM_CLASSES",
    "UnknownWordWarning",
    "Vocabulary",
    "VocabularyError",
    "billing_class",
    "current",
    "extend",
    "for_account",
    "from_pins",
    "normalise",
    "reload",
    "using",
    "vm_class",
]

Kind = Literal["vm_status", "billing_status"]
UNKNOWN = "unknown"
# the classes a word may be pinned to: the registry's choices (svcnb.assumptions); a word's
# class is the keyed assumption vocabulary.<kind>.<word>, pinned in [vocabulary.<kind>]
PINNED_AS = {
    "vm_status": assumption("vocabulary.vm_status"),
    "billing_status": assumption("vocabulary.billing_status"),
}
CLASSES: dict[str, tuple[str, ...]] = {"vm_status": VM_CLASSES, "billing_status": BILLING_CLASSES}
_WHAT = {"vm_status": "VM status", "billing_status": "billing status"}

# Words that mean one thing at every provider looked at (AWS EC2, DigitalOcean, Hetzner, Linode,
# Vultr, OpenStack, Scaleway, Proxmox, Stripe, Chargebee, WHMCS), and the spec's own words
# (running, stopped, suspended, terminated: fixed points). docs/contracts.md, "Status words",
# says why each is kept. A word one provider uses for another class than another provider is in
# AMBIGUOUS instead: unknown until pinned.
BUILTIN: dict[str, dict[str, str]] = {
    "vm_status": {
        **dict.fromkeys(["running", "up", "online", "started", "on", "powered_on"], "running"),
        **dict.fromkeys(
            [
                "stopped",
                "off",
                "halted",
                "shutoff",
                "shut_off",
                "powered_off",
                "poweroff",
                "offline",
            ],
            "stopped",
        ),
        **dict.fromkeys(
            [
                "provisioning",
                "pending",
                "creating",
                "building",
                "new",
                "starting",
                "booting",
                "stopping",
                "rebooting",
                "restarting",
                "installing",
                "reinstalling",
                "migrating",
                "resizing",
                "restoring",
            ],
            "transitional",
        ),  # fmt: skip
        **dict.fromkeys(
            ["terminated", "deleted", "destroyed", "removed", "terminating", "deleting"],
            "terminated",
        ),
    },
    "billing_status": {
        **dict.fromkeys(
            ["active", "paid", "good_standing", "in_good_standing", "settled", "up_to_date"],
            "paid",
        ),
        **dict.fromkeys(["overdue", "past_due", "delinquent", "in_arrears"], "owing"),
        "suspended": "suspended",
    },
}

# Words real providers use for different things: what each may mean, so a warning and the
# doctor can say why svcnb does not guess. Never classed until pinned (config, per account).
AMBIGUOUS: dict[str, dict[str, str]] = {
    "vm_status": {
        "suspended": "held by the provider, for example for non-payment (the spec's "
        "vm.suspended event), or suspended to disk by its user at OpenStack (Nova SUSPENDED: "
        "powered off, paid, nothing held)",
        "active": "running at DigitalOcean and OpenStack; at Vultr any installed VM, powered "
        "off too (power_status tells)",
        "inactive": "stopped, or not yet activated, or disabled for billing",
        "shutdown": "stopped, or a shutdown in progress",
        "shutting_down": "stopping at Linode; terminating at AWS EC2 (shutting-down)",
        "locked": "held during an operation at Vultr and Hetzner (a backup, an image); "
        "suspended at Scaleway",
        "held": "held during an operation, or suspended",
        "on_hold": "held during an operation, or suspended",
        "frozen": "a file-system freeze during a backup, or suspended",
        "blocked": "network blocked for abuse while running, or suspended",
        "paused": "paused by the user (OpenStack, Proxmox: memory kept), or suspended",
        "archive": "powered off and archived at DigitalOcean, or deleted",
    },
    "billing_status": {
        "current": "paid up, or the current period's invoice is open",
        "ok": "a server health word as often as a billing one",
        "good": "a server health word as often as a billing one",
        "unpaid": "past due (Stripe), or an invoice issued and not yet due (WHMCS)",
        "due": "payment due soon (not late), or past due",
        "payment_due": "an invoice open and not yet late (Chargebee), or past due",
        "outstanding": "an open invoice not yet due, or past due",
        "pending_payment": "a payment being processed (paid), or awaiting payment (owing)",
        "pending": "a payment being processed (paid), or awaiting payment (owing)",
        "blocked": "suspended for non-payment, or blocked for fraud or abuse while paid",
        "locked": "suspended for non-payment, or held during an operation",
        "frozen": "suspended, or a price or plan frozen",
        "on_hold": "suspended, or an order held for review before it runs",
        "held": "suspended, or an order held for review before it runs",
        "paused": "a subscription paused by the customer (Stripe, Chargebee), or suspended",
    },
}


class VocabularyError(SvcnbError, ValueError):
    """A mapping names a class that does not exist, or is not a mapping of words to classes."""


class UnknownWordWarning(UserWarning):
    """Status words svcnb cannot classify were seen; their rows are ``unknown``."""


def normalise(word: Any) -> str | None:
    """``word`` as the vocabulary compares it, None for a missing or non-text value."""
    if not isinstance(word, str):
        return None
    text = word.strip().lower().replace("-", "_").replace(" ", "_")
    return text or None


class Vocabulary:
    """Words to classes for each kind. ``vm_status`` and ``billing_status`` add to (and win
    over) the built-in synonyms; ``builtin=False`` starts from nothing."""

    def __init__(
        self,
        vm_status: Mapping[str, str] | None = None,
        billing_status: Mapping[str, str] | None = None,
        *,
        builtin: bool = True,
    ) -> None:
        self.words: dict[str, dict[str, str]] = {
            kind: dict(BUILTIN[kind]) if builtin else {} for kind in CLASSES
        }
        # word -> where its class was pinned (the built-in words are not listed: they need none)
        self.pinned: dict[str, dict[str, str]] = {kind: {} for kind in CLASSES}
        self._warned: dict[str, set[str]] = {kind: set() for kind in CLASSES}
        self._lock = threading.Lock()
        self.add("vm_status", vm_status or {})
        self.add("billing_status", billing_status or {})

    def add(self, kind: Kind, mapping: Mapping[str, str], source: str = "argument") -> None:
        """Map more words of ``kind``; raises VocabularyError naming a bad class."""
        if kind not in CLASSES:
            raise VocabularyError(f"kind={kind!r}: choose 'vm_status' or 'billing_status'")
        if not isinstance(mapping, Mapping):
            raise VocabularyError(
                f"{kind} ({source}) must map words to classes, got {type(mapping).__name__}"
            )
        for word, cls in mapping.items():
            key = normalise(word)
            if key is None or cls not in CLASSES[kind]:
                raise VocabularyError(
                    f"{kind} ({source}): {word!r} -> {cls!r} is not a mapping svcnb can use; "
                    f"map a word to one of {', '.join(CLASSES[kind])}"
                )
            self.words[kind][key] = cls
            self.pinned[kind][key] = source

    def source(self, kind: Kind, word: Any) -> str | None:
        """Where ``word``'s class comes from: ``"built-in"`` (a word that means one thing at
        every provider), the source that pinned it (``[vocabulary.vm_status] of PATH``,
        ``argument``), or None when the word is unknown."""
        key = normalise(word)
        if key is None or key not in self.words[kind]:
            return None
        return self.pinned[kind].get(key, "built-in")

    def classify(self, kind: Kind, word: Any, *, warn: bool = True) -> str:
        """The class of one word (``unknown`` for an unmapped word or a missing value)."""
        return self.classify_many(kind, [word], warn=warn)[0]

    def classify_many(self, kind: Kind, words: Iterable[Any], *, warn: bool = True) -> list[str]:
        """The class of each word, in order; warns once per new unmapped word."""
        table = self.words[kind]
        memo: dict[Any, str] = {}
        out = []
        strange: set[str] = set()
        for word in words:
            if not isinstance(word, str):
                out.append(UNKNOWN)  # a missing value: unknown, and nothing to warn about
                continue
            cls = memo.get(word)
            if cls is None:
                key = normalise(word)
                cls = memo[word] = UNKNOWN if key is None else table.get(key, UNKNOWN)
                if key is not None and cls == UNKNOWN:
                    strange.add(word)
            out.append(cls)
        if strange and warn:
            self._warn(kind, strange)
        return out

    def _warn(self, kind: str, strange: set[str]) -> None:
        with self._lock:
            new = sorted(strange - self._warned[kind])
            self._warned[kind].update(new)
        if not new:
            return
        shown = ", ".join(repr(w) for w in new[:10])
        example = new[0]
        doubts = [
            f"{w!r} may mean {AMBIGUOUS[kind][key]}"
            for w in new[:10]
            if (key := normalise(w)) is not None and key in AMBIGUOUS[kind]
        ]
        why = f" ({'; '.join(doubts)}: providers differ, so svcnb does not guess)" if doubts else ""
        warnings.warn(
            f"{_WHAT[kind]} word(s) {shown} are not in svcnb's vocabulary{why}: rows with them are "
            f"classed 'unknown', and reports leave them out and count them. Map them with "
            f"svcnb.vocab.extend({kind}={{{example!r}: "
            f"'<one of {'|'.join(CLASSES[kind])}>'}}), or pin it: "
            f"{PINNED_AS[kind].line('<class>', example)} in {config_path()} (one account: "
            f"[accounts.NAME.{PINNED_AS[kind].table}]; `svcnb doctor --write-config` proposes "
            "a mapping)",
            UnknownWordWarning,
            stacklevel=4,
        )


_active: Vocabulary | None = None
_active_lock = threading.Lock()


def _from_config(account: str | None = None) -> Vocabulary:
    """The built-in vocabulary plus the config file's pins (``svcnb.config.pins``: for
    ``account``, its ``[accounts.NAME.vocabulary.*]`` over the ``[vocabulary.*]`` ones); what is
    wrong in the file is a ConfigError naming it (every command reports those in one line)."""
    return from_pins(pins(account))


def from_pins(given: Pins, base: Vocabulary | None = None) -> Vocabulary:
    """The built-in vocabulary (and the words ``base`` pins) plus the words ``given`` pins
    (``vocabulary.vm_status.WORD``: the registry's keyed assumptions), each with where it was
    pinned: a client's pins (``Client.pins``, a sandbox's dialect among them) or the config
    file's."""
    vocabulary = Vocabulary()
    for kind in CLASSES if base is not None else ():
        for word, source in base.pinned[kind].items():  # type: ignore[union-attr]
            vocabulary.add(kind, {word: base.words[kind][word]}, source=source)  # type: ignore[arg-type,union-attr]
    for name, pin in given.items():
        if not name.startswith("vocabulary."):
            continue
        found, word = split(name)
        kind = found.name.partition(".")[2]
        if kind in CLASSES and word is not None:
            vocabulary.add(kind, {word: pin.value}, source=pin.where)  # type: ignore[arg-type]
    return vocabulary


def for_account(account: str | None) -> Vocabulary:
    """The vocabulary for reading account ``account`` of the config file: the built-in words,
    ``[vocabulary.*]``, then ``[accounts.NAME.vocabulary.*]`` (one service may say ``locked``
    for a suspension, another for a VM held during a backup). ``None``: :func:`current`'s.
    Use it with :func:`using`, e.g. ``with vocab.using(vocab.for_account("prod")): ...``."""
    return current() if account is None else _from_config(account)


def current() -> Vocabulary:
    """The vocabulary in use: built-in synonyms, the config file, then :func:`extend` calls."""
    global _active
    with _active_lock:
        if _active is None:
            _active = _from_config()
        return _active


def reload() -> Vocabulary:
    """Forget :func:`extend` calls and read the config file again."""
    global _active
    with _active_lock:
        _active = None
    return current()


def extend(
    vm_status: Mapping[str, str] | None = None, billing_status: Mapping[str, str] | None = None
) -> Vocabulary:
    """Map more words for the rest of this process, e.g.
    ``svcnb.vocab.extend(vm_status={"live": "running"})``."""
    vocabulary = current()
    vocabulary.add("vm_status", vm_status or {})
    vocabulary.add("billing_status", billing_status or {})
    return vocabulary


@contextmanager
def using(vocabulary: Vocabulary) -> Iterator[Vocabulary]:
    """Use ``vocabulary`` inside the ``with`` block (tests, or one notebook cell)."""
    global _active
    with _active_lock:
        before, _active = _active, vocabulary
    try:
        yield vocabulary
    finally:
        with _active_lock:
            _active = before


def vm_class(word: Any) -> str:
    """The class of one VM status word under the current vocabulary."""
    return current().classify("vm_status", word)


def billing_class(word: Any) -> str:
    """The class of one billing status word under the current vocabulary."""
    return current().classify("billing_status", word)
