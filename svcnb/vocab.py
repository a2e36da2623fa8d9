"""The one vocabulary of status words: every word a service may use, mapped to a state class.

The spec leaves the allowed values of a VM's ``status`` and of ``billing.status`` "not shown", so
the real service may say ``active`` where the sandbox says ``running``, or ``unpaid`` where it says
``overdue``. Everything in svcnb that acts on a status (reports, ``stop(wait=True)``, panels)
asks this module for the word's class and never compares raw words.

VM classes: ``running``, ``stopped``, ``transitional`` (on its way somewhere: provisioning,
stopping, rebooting, ...), ``suspended``, ``terminated``. Billing classes: ``paid`` (in good
standing), ``owing`` (a renewal went unpaid), ``suspended`` (service held for non-payment). A word
the vocabulary does not know is the class ``unknown``: svcnb warns once, naming the words and how
to map them, and reports leave such rows out and say how many. A missing value (null) is
``unknown`` too, without a warning.

Words are matched case-insensitively, with spaces and hyphens read as underscores. The built-in
synonyms below can be extended by argument (:func:`extend`, :func:`using`) or in the config file
(``[vocabulary.vm_status]`` and ``[vocabulary.billing_status]``, see :mod:`svcnb.config`;
``svcnb doctor --write-config`` writes what it saw).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

from svcnb.config import ConfigError, config_path, read_config
from svcnb.errors import SvcnbError

__all__ = [
    "BILLING_CLASSES",
    "UNKNOWN",
    "VM_CLASSES",
    "UnknownWordWarning",
    "Vocabulary",
    "VocabularyError",
    "billing_class",
    "current",
    "extend",
    "normalise",
    "reload",
    "using",
    "vm_class",
]

Kind = Literal["vm_status", "billing_status"]
UNKNOWN = "unknown"
VM_CLASSES = ("running", "stopped", "transitional", "suspended", "terminated")
BILLING_CLASSES = ("paid", "owing", "suspended")
CLASSES: dict[str, tuple[str, ...]] = {"vm_status": VM_CLASSES, "billing_status": BILLING_CLASSES}
_WHAT = {"vm_status": "VM status", "billing_status": "billing status"}

# Common synonyms, each a word some hosting API really uses for that state.
BUILTIN: dict[str, dict[str, str]] = {
    "vm_status": {
        **dict.fromkeys(
            ["running", "active", "up", "online", "started", "on", "powered_on"], "running"
        ),
        **dict.fromkeys(
            [
                "stopped",
                "off",
                "halted",
                "shutoff",
                "shut_off",
                "powered_off",
                "poweroff",
                "inactive",
                "offline",
                "shutdown",
            ],
            "stopped",
        ),  # fmt: skip
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
                "shutting_down",
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
        **dict.fromkeys(["suspended", "locked", "frozen", "blocked"], "suspended"),
        **dict.fromkeys(
            ["terminated", "deleted", "destroyed", "removed", "terminating", "deleting"],
            "terminated",
        ),
    },
    "billing_status": {
        **dict.fromkeys(
            [
                "active",
                "paid",
                "current",
                "ok",
                "good",
                "good_standing",
                "in_good_standing",
                "settled",
                "up_to_date",
            ],
            "paid",
        ),  # fmt: skip
        **dict.fromkeys(
            [
                "overdue",
                "unpaid",
                "past_due",
                "due",
                "delinquent",
                "outstanding",
                "payment_due",
                "pending_payment",
                "in_arrears",
            ],
            "owing",
        ),  # fmt: skip
        **dict.fromkeys(["suspended", "blocked", "locked", "frozen", "on_hold"], "suspended"),
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
        warnings.warn(
            f"{_WHAT[kind]} word(s) {shown} are not in svcnb's vocabulary: rows with them are "
            f"classed 'unknown', and reports leave them out and count them. Map them with "
            f"svcnb.vocab.extend({kind}={{{example!r}: "
            f"'<one of {'|'.join(CLASSES[kind])}>'}}), or in [vocabulary.{kind}] of "
            f"{config_path()} (`svcnb doctor --write-config` proposes a mapping)",
            UnknownWordWarning,
            stacklevel=4,
        )


_active: Vocabulary | None = None
_active_lock = threading.Lock()


def _from_config() -> Vocabulary:
    """The built-in vocabulary plus the config file's; what is wrong in the file is a
    ConfigError naming it (every command reports those in one line)."""
    vocabulary = Vocabulary()
    where = config_path()
    section = read_config().get("vocabulary", {})
    if not isinstance(section, dict):
        raise ConfigError(
            f"{where}: 'vocabulary' must be a table of [vocabulary.vm_status] and "
            '[vocabulary.billing_status] tables, e.g. [vocabulary.vm_status] halted = "stopped"'
        )
    for kind in CLASSES:
        if kind in section:
            try:
                vocabulary.add(kind, section[kind], source=f"[vocabulary.{kind}] of {where}")  # type: ignore[arg-type]
            except VocabularyError as exc:
                raise ConfigError(f"{exc}; fix it in {where}") from None
    return vocabulary


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
