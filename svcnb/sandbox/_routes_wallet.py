"""GET /wallet: the balance served in the wallet's own form (number, string or object)."""

from __future__ import annotations

from ._envelopes import ok
from ._routes import Call, Route
from ._state import State


def get_wallet(state: State, call: Call) -> tuple[int, dict]:
    return 200, ok(state.backends.wallet.view())


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
