"""One backend per resource, like moto: each holds its records and the rules that change them.

``State`` holds one of each (``state.backends``) with the clock, ids, events and the lock;
route handlers parse a call, ask a backend, and render. Backends raise ``ApiFailure`` with the
default dialect's status and a kind; the dialect says it on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._base import find
from .firewalls import FirewallBackend
from .networks import NetworkBackend
from .tokens import TokenBackend
from .vms import VmBackend
from .wallet import WalletBackend
from .webhooks import WebhookBackend

if TYPE_CHECKING:
    from .._state import State

__all__ = [
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
    def empty(cls, state: State) -> Backends:
        return cls(
            vms=VmBackend(state),
            firewalls=FirewallBackend(state),
            networks=NetworkBackend(state),
            wallet=WalletBackend(state),
            webhooks=WebhookBackend(state),
            tokens=TokenBackend(state),
        )
