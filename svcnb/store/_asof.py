"""``Store.at(when)``: "as of" decided once (docs/contracts.md §5), so a report, its view, a panel
or ``svcnb check`` never choose the snapshot again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from svcnb import vocab
from svcnb.assumptions import Pin
from svcnb.config import pins as config_pins
from svcnb.frames import ResourceName

from ._snapshots import RESOURCES, account_of, has, incomplete, reason

if TYPE_CHECKING:
    from ._store import Store, TimeLike


class Snapshot:
    """One published snapshot of one account, as ``store.at(when)`` chose it.

    ``id``, ``server_time`` (the report's ``now``), ``account`` (its name), ``store`` (the
    store bound to that account); ``missing`` and ``incomplete`` map the resources it could not
    read, or read without proof they are whole, to why; ``complete`` is neither.
    """

    def __init__(
        self, store: Store, entry: Mapping[str, Any], server_time: pd.Timestamp, upto: list
    ) -> None:
        self.store = store
        self._entry = entry
        # the catalog entries at or before this snapshot, in the order taken: loads fall back
        # through them (allow_stale, a damaged file) as Store.load does
        self._upto: list[dict[str, Any]] = upto
        self.server_time = server_time

    def __repr__(self) -> str:
        return f"<Snapshot {self.id} of {self.account!r} at {self.server_time.isoformat()}>"

    @property
    def id(self) -> str:
        return str(self._entry["snapshot_id"])

    @property
    def account(self) -> str:
        return account_of(self._entry)

    @property
    def missing(self) -> dict[str, str]:
        """Resources this snapshot could not read, and why."""
        return {r: reason(self._entry, r) or "" for r in RESOURCES if not has(self._entry, r)}

    @property
    def incomplete(self) -> dict[str, str]:
        """Resources stored although nothing proved their lists whole, and why."""
        return {r: why for r in RESOURCES if (why := incomplete(self._entry, r))}

    @property
    def pins(self) -> dict[str, Pin]:
        """The pins reports read as of this snapshot (``billing.grace``, status words): those
        it was taken with (the catalog entry's ``pins``: a sandbox's dialect's, an account's,
        as the client that took it had them), and over them the config file's for its
        account."""
        out: dict[str, Pin] = {}
        for name, pin in (self._entry.get("pins") or {}).items():
            if isinstance(pin, Mapping) and isinstance(pin.get("value"), str):
                out[name] = Pin(pin["value"], str(pin.get("where", "the snapshot")))
        # what the user pins now outranks what the snapshot was taken with: a mapping
        # corrected in the config file corrects the old snapshots' reports too
        out.update(config_pins(self.account))
        return out

    def vocabulary(self) -> vocab.Vocabulary:
        """The status words as of this snapshot: the vocabulary in use, with the words the
        snapshot was taken with (a sandbox's dialect pins its own) and the config file's for
        its account. Use it as ``with vocab.using(snap.vocabulary()): ...``."""
        return vocab.from_pins(self.pins, base=vocab.current())

    @property
    def complete(self) -> bool:
        return not self.missing and not self.incomplete

    def load(self, resource: ResourceName, *, allow_stale: bool = False) -> pd.DataFrame:
        """``store.load(resource)`` as of this snapshot (``MissingResourceError`` as there)."""
        return self.store._load(resource, self._upto, self.server_time, allow_stale)

    def history(
        self,
        resource: ResourceName,
        columns: Iterable[str] | None = None,
        since: TimeLike | None = None,
    ) -> pd.DataFrame:
        """``store.history(resource, columns, since, until=this snapshot's time)``."""
        return self.store._history(resource, columns, self._upto, since)
