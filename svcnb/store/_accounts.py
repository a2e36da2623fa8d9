"""``account=``: the one reading of which accounts a caller asks for (docs/contracts.md §5)."""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ._layout import StoreError

# ``account=`` of the readers: one name, several, or "*" for every account of the store
Accounts = str | Sequence[str]
EVERY_ACCOUNT = "*"
# what a frame over several accounts says about its totals
SEVERAL_ACCOUNTS_NOTE = (
    "one answer per account (column 'account'); amounts are never added across accounts or "
    "currencies: compare them row by row, or convert first"
)


def account_names(
    account: Accounts, held: Sequence[str], store: str | os.PathLike[str] | Path
) -> list[str]:
    """The account names ``account`` asks for (one name, a list, repeats dropped, or ``"*"``:
    every name in ``held``, the accounts of the store at ``store``), in the order given.
    StoreError naming the store's accounts when one is not held or none is named."""
    if isinstance(account, str):
        wanted = list(held) if account == EVERY_ACCOUNT else [account]
    else:
        wanted = list(dict.fromkeys(account))
    unknown = [n for n in wanted if n not in held]
    if unknown or not wanted:
        raise StoreError(
            f"the store {store} holds no account {', '.join(map(repr, unknown))}; "
            f"its accounts: {', '.join(held) or 'none yet'}"
        )
    return wanted


def stack(names: Sequence[str], read: Callable[[str], pd.DataFrame]) -> pd.DataFrame:
    """``read(name)`` of each account, stacked in the order given with an ``account`` column
    first: the one way frames of several accounts are shown together (store reads and reports
    alike). ``attrs["accounts"]`` holds each account's own attrs, ``attrs["note"]`` says that
    nothing was added across them; an attr every account's frame holds alike stays as it is
    (pandas' ``concat`` keeps attrs all parts share). What one account could not read or prove
    is the stack's too: ``attrs["unreadable"]`` sums the accounts' counts, and one account's
    ``attrs["complete"] is False`` makes the stack's False, its reason naming the account."""
    parts, attrs = [], {}
    for name in names:
        part = read(name)
        attrs[name] = dict(part.attrs)
        part.insert(0, "account", pd.Series(name, index=part.index, dtype="string"))
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out.attrs.update(accounts=attrs, note=SEVERAL_ACCOUNTS_NOTE)
    out.attrs.update(_doubts(attrs))
    return out


def _doubts(attrs: Mapping[str, Mapping[Hashable, Any]]) -> dict[str, Any]:
    """What the accounts stacked could not read (summed) or prove (each named)."""
    out: dict[str, Any] = {}
    unread: dict[str, int] = {}
    for one in attrs.values():
        for column, n in (one.get("unreadable") or {}).items():
            unread[column] = unread.get(column, 0) + int(n)
    if unread:
        out["unreadable"] = unread
    doubts = [
        f"{name}: {one.get('reason') or 'not complete'}"
        for name, one in attrs.items()
        if one.get("complete") is False
    ]
    if doubts:
        out["complete"], out["reason"] = False, "; ".join(doubts)
    return out
