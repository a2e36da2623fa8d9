"""Pull every resource through the client's public API into typed frames, group by group.

A group is what one chain of reads gives; one that cannot be read is recorded as missing
(docs/contracts.md §5), so one unreadable wallet costs neither the fleet's snapshot nor is
stored as an empty wallet.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from svcnb import frames
from svcnb.assumptions import assumption
from svcnb.config import ConfigError, config_path
from svcnb.errors import AuthError, SvcnbError, TransportError

from ._scrub import scrub

_log = logging.getLogger("svcnb.store")

# After these, while nothing has been read yet, no other group can do better: the server is
# not answering, or the token itself is refused. Once a group was read they cost one group only.
_WHOLE_SESSION = (AuthError, TransportError)


@dataclass
class Pulled:
    """Frames of the resources read, and ``missing``: resource -> why it could not be read."""

    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


def _doubts(*lists: Any) -> str | None:
    """Why the lists read for one frame may be incomplete (None when each was proven whole:
    svcnb.client's lists carry ``complete`` and ``doubt``). A list complete only by an
    assumption nothing pins (``assumed``: the answers do not prove it) is not proven whole."""
    said = [getattr(x, "doubt", None) or "not proven complete" for x in lists]
    said = [d for x, d in zip(lists, said, strict=True) if getattr(x, "complete", True) is False]
    said += [_assumed(x) for x in lists if getattr(x, "complete", True) and _named(x)]
    return "; ".join(dict.fromkeys(said)) if said else None


def _named(listing: Any) -> str | None:
    found = getattr(listing, "assumed", None)
    return found if isinstance(found, str) and found else None


def _assumed(listing: Any) -> str:
    """Why a list complete only as assumed is not proven: its proof, and how to pin what it
    rests on (the registry's line)."""
    found = assumption(_named(listing) or "")
    return (
        f"complete only as assumed: {getattr(listing, 'proof', None)}; {found.name} ("
        f"{found.meaning}) is not proven by the answers and not pinned: "
        + found.hint(config_path(), "true")
    )


def _pins(client: Any) -> Any:
    """The client's pins (``Client.pins``: its account's, or a sandbox's dialect); None (the
    config file's) for a stand-in without them."""
    return getattr(client, "pins", None)


def _marked(frame: pd.DataFrame, doubt: str | None) -> pd.DataFrame:
    # the store records it: the rows are kept, the resource is "incomplete", never "ok"
    if doubt:
        frame.attrs["incomplete"] = doubt
    return frame


def _vms(client: Any, previous: list[dict[str, Any]] | None) -> dict[str, pd.DataFrame]:
    vms = client.vms.all(details=True, previous=previous)
    doubt = _doubts(vms)
    return {
        "vms": _marked(frames.vms(vms, pins=_pins(client)), doubt),
        "vm_ssh_keys": _marked(frames.vm_ssh_keys(vms), doubt),
        "vm_firewalls": _marked(frames.vm_firewalls(vms), doubt),
        "vm_private_networks": _marked(frames.vm_private_networks(vms), doubt),
    }


def _firewalls(client: Any) -> dict[str, pd.DataFrame]:
    firewalls = client.firewalls.list()
    each = [client.firewalls.rules(fw["id"]) for fw in firewalls]
    rules = [r for listed in each for r in listed]
    return {
        "firewalls": _marked(frames.firewalls(firewalls, pins=_pins(client)), _doubts(firewalls)),
        "firewall_rules": _marked(
            frames.firewall_rules(rules, pins=_pins(client)), _doubts(firewalls, *each)
        ),
    }


def _networks(client: Any) -> dict[str, pd.DataFrame]:
    networks = client.networks.list()
    each = [client.networks.attachments(n["id"]) for n in networks]
    attachments = [
        {**a, "networkId": a.get("networkId", n["id"])}
        for n, listed in zip(networks, each, strict=True)
        for a in listed
    ]
    return {
        "networks": _marked(frames.networks(networks, pins=_pins(client)), _doubts(networks)),
        "attachments": _marked(
            frames.attachments(attachments, pins=_pins(client)), _doubts(networks, *each)
        ),
    }


def _wallet(client: Any) -> dict[str, pd.DataFrame]:
    return {"wallet": frames.wallet(client.wallet.get(), pins=_pins(client))}


def _webhooks(client: Any) -> dict[str, pd.DataFrame]:
    hooks = client.webhooks.list()
    each = [client.webhooks.deliveries(h["id"]) for h in hooks]
    deliveries = [
        {**d, "webhookId": h["id"]} for h, listed in zip(hooks, each, strict=True) for d in listed
    ]
    return {
        "webhooks": _marked(frames.webhooks(hooks, pins=_pins(client)), _doubts(hooks)),
        "deliveries": _marked(
            frames.deliveries(deliveries, pins=_pins(client)), _doubts(hooks, *each)
        ),
    }


GROUPS: dict[str, tuple[str, ...]] = {
    "vms": ("vms", "vm_ssh_keys", "vm_firewalls", "vm_private_networks"),
    "firewalls": ("firewalls", "firewall_rules"),
    "networks": ("networks", "attachments"),
    "wallet": ("wallet",),
    "webhooks": ("webhooks", "deliveries"),
}


def reason_of(exc: BaseException) -> str:
    """``Type: message``; the client masks tokens already, this masks anything it missed."""
    return scrub(f"{type(exc).__name__}: {exc}")


def pull(client: Any, previous_vms: list[dict[str, Any]] | None) -> Pulled:
    """VMs with details (refreshing only those whose ``updatedAt`` moved since ``previous_vms``),
    firewalls with rules, networks with attachments, the wallet, webhooks with deliveries.

    A group whose read raises an ``SvcnbError`` or a ``ValueError`` (a record frames cannot read)
    lands in ``missing`` for each of its resources. Raises when no group could be read, and at
    once when the server is down or the token refused before anything was read.
    Secrets never reach a frame: no frame has a column for them.
    """
    readers: dict[str, Callable[[], dict[str, pd.DataFrame]]] = {
        "vms": lambda: _vms(client, previous_vms),
        "firewalls": lambda: _firewalls(client),
        "networks": lambda: _networks(client),
        "wallet": lambda: _wallet(client),
        "webhooks": lambda: _webhooks(client),
    }
    out = Pulled()
    first: BaseException | None = None
    for group, read in readers.items():
        try:
            out.frames.update(read())
        except (SvcnbError, ValueError) as exc:
            if isinstance(exc, ConfigError):
                # the config file's fault, not the group's: one fix for every group, said once
                raise
            if isinstance(exc, _WHOLE_SESSION) and not out.frames:
                raise
            first = first or exc
            reason = reason_of(exc)
            _log.warning("%s could not be read and is recorded as missing: %s", group, reason)
            out.missing.update(dict.fromkeys(GROUPS[group], reason))
    if first is not None and not out.frames:
        first.add_note("svcnb: no resource could be read, so no snapshot was stored")
        raise first
    return out
