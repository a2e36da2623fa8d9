"""One backend per resource, like moto: each holds its records and the rules that change them.

``State`` holds one of each (``state.backends``) with the clock, ids, events and the lock, and
builds them with ``Backends.empty(state)``; a backend sees the state only as the ``Account`` of
``_account`` (so no backend imports ``State``), and a backend that needs another is handed it;
route handlers parse a call, ask a backend, and render. Backends raise ``ApiFailure`` with the
default dialect's status and a kind; the dialect says it on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._account import Account
from ._base import find
from .firewalls import FirewallBackend
from .networks import NetworkBackend
from .tokens import TokenBackend
from .vms import VmBackend
from .wallet import WalletBackend
from .webhooks import WebhookBackend

__all__ = [
    "Account",
    "Backends",
    "FirewallBackend",
    "NetworkBackend",
    "TokenBackend",
    "VmBackend",
    "WalletBackend",
    "WebhookBackend",
    "find",
]


@dataclass
class Backends:
    vms: VmBackend
    firewalls: FirewallBackend
    networks: NetworkBackend
    wallet: WalletBackend
    webhooks: WebhookBackend
    tokens: TokenBackend

    @classmethod
    def empty(cls, state: Account) -> Backends:
        """One empty backend per resource, all sharing ``state``'s clock, ids, events and lock
        (``State`` passes itself; the backends see it only as an :class:`Account`)."""
        vms = VmBackend(state)
        return cls(
            vms=vms,
            firewalls=FirewallBackend(state),
            networks=NetworkBackend(state, vms),
            wallet=WalletBackend(state),
            webhooks=WebhookBackend(state),
            tokens=TokenBackend(state),
        )
