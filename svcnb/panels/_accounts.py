"""Panels over several accounts: one panel per account, each in its own tab.

A panel draws one account, in that account's currency. Given several accounts (a list, or
``"*"`` for every account the store holds), a panel class builds an :class:`AccountTabs`
instead: the same panel once per account, side by side, so figures of different accounts (and
currencies) are never added or drawn on one axis.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from svcnb.panels._display import Displayed
from svcnb.store import Store, account_names

__all__ = ["AccountTabs", "PerAccount", "several"]


def several(account: Any) -> bool:
    """Whether ``account`` names more than one account (a list or ``"*"``)."""
    return account is not None and not (isinstance(account, str) and account != "*")


class AccountTabs(Displayed):
    """``panel_class`` once per account, one tab each (titled with the account's name).

    ``panels`` maps account name -> panel; ``widget`` is the ``ipywidgets.Tab``.
    """

    def __init__(self, panel_class: type, store: Store, account: Any, **options: Any) -> None:
        # a typo must not show an empty tab as if the account had nothing: StoreError
        names = account_names(account, store.accounts(), store.path)
        self.panels = {name: panel_class(store, account=name, **options) for name in names}
        self.widget = widgets.Tab(
            children=[panel.widget for panel in self.panels.values()], titles=names
        )
        self.widget.add_class("svcnb-account-tabs")


class PerAccount:
    """Mixin for panels taking ``account=``: several accounts make an :class:`AccountTabs`."""

    def __new__(cls, store: Any = None, *args: Any, account: Any = None, **options: Any) -> Any:
        if several(account):
            return AccountTabs(cls, store, account, **options)
        return super().__new__(cls)
