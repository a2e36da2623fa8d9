"""What every backend shares: the 404 of a record that is not there, and the ordered table of
records by id that serves any page of them in time independent of where the page starts."""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, MutableMapping, ValuesView

from .._envelopes import ApiFailure


def find(table: MutableMapping[str, dict], record_id: str, what: str) -> dict:
    """The record, or a 404 naming what was looked for."""
    record = table.get(record_id)
    if record is None:
        shown = record_id if len(record_id) <= 80 else record_id[:80] + "..."
        raise ApiFailure(404, f"{what} {shown!r} not found")
    return record


class Table(MutableMapping[str, dict]):
    """Records by id in the order they were added, with the ids also kept in a list (and each
    id's position in a map), so page N is a slice of that list: O(page size), not a walk over
    the N-1 pages before it. A dict keeps the same order but can only be walked from its start.

    Adding and replacing are O(1); removing is O(n) in the records after the removed one
    (removals are rare: detaching a network, deleting a token)."""

    __slots__ = ("_ids", "_positions", "_records")

    def __init__(self) -> None:
        self._records: dict[str, dict] = {}
        self._ids: list[str] = []
        self._positions: dict[str, int] = {}

    # -- reads: the dict's own, so walking a 50k fleet costs what walking a dict does --
    def __getitem__(self, record_id: str) -> dict:
        return self._records[record_id]

    def get(self, record_id: str, default: dict | None = None) -> dict | None:  # type: ignore[override]
        return self._records.get(record_id, default)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._records

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def keys(self) -> KeysView[str]:
        return self._records.keys()

    def values(self) -> ValuesView[dict]:
        return self._records.values()

    def items(self) -> ItemsView[str, dict]:
        return self._records.items()

    def newest_first(self) -> Iterator[dict]:
        """The records from the last added back to the first."""
        return reversed(self._records.values())

    def window(self, start: int, stop: int) -> list[dict]:
        """The records at positions ``start`` to ``stop - 1`` in order."""
        records = self._records
        return [records[i] for i in self._ids[max(0, start) : max(0, stop)]]

    def records(self) -> Records:
        """Every record in order, as a sized iterable that also pages in O(page)."""
        return Records(self)

    # -- writes --
    def __setitem__(self, record_id: str, record: dict) -> None:
        if record_id not in self._records:
            self._positions[record_id] = len(self._ids)
            self._ids.append(record_id)
        self._records[record_id] = record

    def __delitem__(self, record_id: str) -> None:
        del self._records[record_id]
        position = self._positions.pop(record_id)
        del self._ids[position]
        positions = self._positions
        for later in range(position, len(self._ids)):
            positions[self._ids[later]] = later

    def clear(self) -> None:
        self._records.clear()
        self._ids.clear()
        self._positions.clear()

    def __repr__(self) -> str:
        return f"Table({len(self)} records)"


class Records:
    """The records of a :class:`Table` in order: ``len``, iteration and ``window``."""

    __slots__ = ("_table",)

    def __init__(self, table: Table) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    def __iter__(self) -> Iterator[dict]:
        return iter(self._table.values())

    def window(self, start: int, stop: int) -> list[dict]:
        return self._table.window(start, stop)
