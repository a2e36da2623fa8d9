"""GET /wallet: the balance served in the wallet's own form (number, string or object)."""

from __future__ import annotations

from ._catalog import price_value
from ._routes import Call, Route
from ._state import State
from ._wire import ok


def wallet_public(state: State) -> dict:
    w = state.wallet
    return {
        "id": w["id"],
        "createdAt": w["createdAt"],
        "updatedAt": w["updatedAt"],
        "balance": price_value(w["_balance"], w["_balance_form"]),
    }


def get_wallet(state: State, call: Call) -> tuple[int, dict]:
    return 200, ok(wallet_public(state))


ROUTES = [
    Route(
        "GET",
        "/wallet",
        "billing:read",
        get_wallet,
        200,
        "The account wallet",
        "Wallet",
        failures=(403,),
    ),
]
