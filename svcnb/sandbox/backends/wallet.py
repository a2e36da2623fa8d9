"""The account wallet: its balance (a Decimal, served in the wallet's own form) and top-ups."""

from __future__ import annotations

from decimal import Decimal

from .._plans_regions import price_value
from ._account import Account


class WalletBackend:
    """``record`` holds ``id``, ``createdAt``, ``updatedAt`` and the internal ``_balance``
    and ``_balance_form``."""

    def __init__(self, state: Account) -> None:
        self.state = state
        self.record: dict = {}

    def open(self, record: dict) -> dict:
        """The account's wallet, as seeded."""
        self.record.clear()
        self.record.update(record)
        return self.record

    @property
    def balance(self) -> Decimal:
        return self.record["_balance"]

    def debit(self, amount: Decimal) -> Decimal:
        """Take ``amount`` (the caller checked it is there); the balance after."""
        self.record["_balance"] -= amount
        self.state.touch(self.record)
        return self.record["_balance"]

    def view(self) -> dict:
        w = self.record
        return {
            "id": w["id"],
            "createdAt": w["createdAt"],
            "updatedAt": w["updatedAt"],
            "balance": price_value(w["_balance"], w["_balance_form"]),
        }

    def topup(self, amount: Decimal) -> dict:
        """Add ``amount`` and emit ``billing.payment_received`` (the life engine pays debts)."""
        wallet = self.record
        wallet["_balance"] += amount
        self.state.touch(wallet)
        self.state.emit(
            "billing.payment_received",
            {
                "amount": f"{amount:.2f}",
                "balance": f"{wallet['_balance']:.2f}",
                "currency": "EUR",
            },
        )
        return self.view()

    # -- saved state (``_saved``) --
    def export(self) -> dict:
        """The wallet record with its balance as a decimal string."""
        record = dict(self.record)
        if isinstance(record.get("_balance"), Decimal):
            record["_balance"] = str(record["_balance"])
        return {"wallet": record}

    def restore(self, saved: dict) -> None:
        record = dict(saved["wallet"])
        record["_balance"] = Decimal(str(record["_balance"]))
        record.setdefault("_balance_form", "string")
        self.open(record)
