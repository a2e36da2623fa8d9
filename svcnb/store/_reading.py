"""The store a reading command (``svcnb report``, ``svcnb check``) is given, checked before use.

A typo in ``--store`` or ``--account`` must end in one line naming what is there, not in an
empty report that reads as "nothing to see".
"""

from __future__ import annotations

import os
from pathlib import Path

from ._layout import DEFAULT_PATH, ENV_PATH, StoreError
from ._store import Store

__all__ = ["check_readable", "store_origin"]


def store_origin(given: str | None) -> str:
    """Where the store path came from, for messages: --store, $SVCNB_STORE or the default."""
    if given is not None:
        return "--store"
    return f"${ENV_PATH}" if os.environ.get(ENV_PATH) else f"the default, {DEFAULT_PATH}"


def check_readable(
    store: Store, given: str | None, account: str | None, *, every: bool = False
) -> None:
    """StoreError when a local ``store`` does not exist (``given`` is the --store argument),
    holds no account ``account``, or holds several and none is named (``every``: the command
    runs for each in turn); an object-storage store answers for itself when read. Said in the
    command line's terms."""
    if isinstance(store.path, Path) and not store.path.exists():
        raise StoreError(
            f"no snapshot store at {store.path.resolve()} (from {store_origin(given)}); "
            f"pass --store PATH, set {ENV_PATH}, or take a snapshot with `svcnb snapshot`"
        )
    held = store.accounts()
    if account is not None and held and account not in held:
        raise StoreError(
            f"the store at {store.path} holds no account {account!r}; "
            f"its accounts: {', '.join(held)} (or --account '*' for each in turn)"
        )
    if account is None and not every and len(held) > 1:
        raise StoreError(
            f"the store at {store.path} holds accounts {', '.join(held)}: pass --account NAME, "
            "or --account '*' for each in turn"
        )
