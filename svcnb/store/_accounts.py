"""``account=``: the one reading of which accounts a caller asks for.

Readers of the store, reports and panels take ``account=`` as one name, a list of names, or
``"*"`` for every account of the store; :func:`account_names` turns it into the names, checked
against the store's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ._layout import StoreError

# ``account=`` of the readers: one name, several, or "*" for every account of the store
Accounts = str | Sequence[str]
EVERY_ACCOUNT = "*"


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
