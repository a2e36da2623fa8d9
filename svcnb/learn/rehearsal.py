"""Rehearse on a copy: a sandbox whose account is the one a store snapshot holds.

What a copy keeps, notes and anonymizes: docs/contracts.md section 2; README, "Rehearsing on a
copy". Addresses are mapped prefix-preserving so that a network still contains the same addresses
and firewall rules match the same VMs: reachability asked with the source's pseudonym
(:meth:`Rehearsal.address`) gives the answers the account would. This module imports the store
(pandas) and the sandbox; ``svcnb sandbox`` imports it only when ``--from-store`` is given.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import math
import secrets
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from svcnb.client import Client
    from svcnb.frames import ResourceName
    from svcnb.sandbox import Control, Sandbox
    from svcnb.store import Store

__all__ = ["Rehearsal", "StoredCopy", "rehearse", "state_from_store"]

# sandbox-side words for each class of the one vocabulary (svcnb.vocab)
_VM_WORD = {
    "running": "running",
    "stopped": "stopped",
    "suspended": "suspended",
    "terminated": "terminated",
}
_BILLING_WORD = {"paid": "active", "owing": "overdue", "suspended": "suspended"}
_SANDBOX_VM_WORDS = ("provisioning", "running", "stopping", "stopped", "suspended", "terminated")
# a transitional word naming a stop (shutting_down, stopping, halting, powering_off, ...)
_STOP_HINTS = ("stop", "shut", "halt", "off")
_ANY_WORDS = {"any", "*", "all", "anywhere"}


def _rehearsal_error(message: str) -> Exception:
    """A copy that cannot be made from what the store holds (a StoreError saying why)."""
    from svcnb.store import StoreError

    return StoreError(message)


# -- pseudonyms ---------------------------------------------------------------------------------
class Pseudonyms:
    """Replacement names and addresses for one copy: the same input gives the same output.

    Names are numbered per kind in the order first asked for (``vm-001``, ``fw-002``, ...);
    addresses go through a keyed prefix-preserving map (docs/contracts.md section 2).
    """

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._names: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}
        self._bits: dict[tuple[int, str], int] = {}
        self.addresses: dict[str, str] = {}

    def name(self, kind: str, value: Any, pattern: str = "{kind}-{n:03d}") -> Any:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return value
        key = (kind, str(value))
        found = self._names.get(key)
        if found is None:
            n = self._counts[kind] = self._counts.get(kind, 0) + 1
            found = self._names[key] = pattern.format(kind=kind, n=n)
        return found

    def _flip(self, version: int, prefix: str) -> int:
        bit = self._bits.get((version, prefix))
        if bit is None:
            digest = hmac.new(self._key, f"{version}:{prefix}".encode(), hashlib.sha256).digest()
            bit = self._bits[(version, prefix)] = digest[0] & 1
        return bit

    def _map_int(self, version: int, value: int, width: int, keep: int) -> int:
        """The first ``keep`` bits of ``value`` mapped prefix-preserving (the rest left 0)."""
        bits = format(value, f"0{width}b")
        out = []
        for i in range(keep):
            out.append(str(int(bits[i]) ^ self._flip(version, bits[:i])))
        return int("".join(out).ljust(width, "0"), 2) if out else 0

    def network(self, text: str) -> str | None:
        """The pseudonym of an address or CIDR as written (a host stays a host); None when
        ``text`` is neither."""
        cleaned = text.strip()
        try:
            net = ipaddress.ip_network(cleaned, strict=False)
        except ValueError:
            return None
        width = net.max_prefixlen
        mapped = self._map_int(net.version, int(net.network_address), width, net.prefixlen)
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = (
            ipaddress.IPv4Address(mapped) if net.version == 4 else ipaddress.IPv6Address(mapped)
        )
        if "/" in cleaned:
            return f"{address}/{net.prefixlen}"
        return str(address)

    def address(self, value: Any) -> Any:
        """An address, CIDR or rule word: pseudonym, ``any`` words kept, unparsed text replaced
        by ``unparsed-N`` (it matched nothing before and matches nothing after)."""
        if not isinstance(value, str):
            return value
        if value.strip().lower() in _ANY_WORDS:
            return value
        found = self.addresses.get(value)
        if found is None:
            mapped = self.network(value)
            found = mapped if mapped is not None else self.name("unparsed", value)
            self.addresses[value] = found
        return found

    def url(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        return self.name("hook", value, "https://hook-{n}.example.invalid/")


# -- reading the snapshot -------------------------------------------------------------------------
def _na(value: Any) -> bool:
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _value(value: Any) -> Any:
    """A frame cell as plain JSON (NA as None, numpy scalars as Python ones)."""
    if isinstance(value, list | tuple) or type(value).__name__ == "ndarray":
        return [_value(v) for v in value]
    if _na(value):
        return None
    if hasattr(value, "item") and not isinstance(value, str):
        return value.item()
    return value


def _time(value: Any) -> str | None:
    """``2026-11-01T00:00:00Z`` (fractions kept when the store has them), None for NA."""
    if _na(value):
        return None
    moment = value.to_pydatetime() if hasattr(value, "to_pydatetime") else value
    moment = moment.astimezone(UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


def _rows(frame: pd.DataFrame) -> Iterator[dict[str, Any]]:
    for row in frame.to_dict("records"):
        yield {str(k): _value(v) for k, v in row.items()}


@dataclass
class _Notes:
    lines: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        if text not in self.lines:
            self.lines.append(text)


def _load(
    store: Store, resource: ResourceName, at: Any, notes: _Notes, snapshot: str
) -> pd.DataFrame | None:
    from svcnb.store import MissingResourceError

    try:
        return store.load(resource, at)
    except MissingResourceError as exc:
        notes.add(
            f"{resource}: not read at snapshot {snapshot} ({exc}); the copy has none, "
            "which does not mean the account had none"
        )
        return None


def _money(raw: Any, amount: Any, currency: Any) -> tuple[Any, str | None]:
    """(the value the copy states, a note when it is not the amount as read)."""
    if amount is None:
        if raw is None:
            return None, None
        return json.loads(raw), "kept as sent (unreadable)"
    sent = json.loads(raw) if raw is not None else None
    from svcnb.money import plain_text

    text = plain_text(amount, currency)
    if isinstance(sent, bool) or sent is None:
        return text, None
    if isinstance(sent, int | float):
        return float(text), None
    if isinstance(sent, str):
        return text, None
    # an object (amount/currency or minor units): the copy states it as {amount, currency}
    out: dict[str, Any] = {"amount": text}
    if currency is not None:
        out["currency"] = currency
    return out, None


def _decimal(amount: Any) -> Any:
    # svcnb.money loads pandas: imported here, so `svcnb sandbox` without --from-store never does
    from svcnb.money import to_decimal

    return to_decimal(amount)


def _vm_word(word: Any, counts: dict[str, int]) -> tuple[str | None, str | None]:
    """(the sandbox's status word, the kind of pending job the copy gives it: stop, provision)."""
    from svcnb import vocab

    if word is None:
        return None, None
    if word in _SANDBOX_VM_WORDS:
        kind = {"stopping": "stop", "provisioning": "provision"}.get(word)
        return word, kind
    cls = vocab.vm_class(word)
    if cls in _VM_WORD:
        counts[f"{word} -> {_VM_WORD[cls]}"] = counts.get(f"{word} -> {_VM_WORD[cls]}", 0) + 1
        return _VM_WORD[cls], None
    if cls == "transitional":
        stop = any(h in str(word).lower() for h in _STOP_HINTS)
        target = "stopping" if stop else "provisioning"
        counts[f"{word} -> {target}"] = counts.get(f"{word} -> {target}", 0) + 1
        return target, "stop" if stop else "provision"
    counts[f"{word} (unknown word, kept)"] = counts.get(f"{word} (unknown word, kept)", 0) + 1
    return word, None


def _billing_word(word: Any, counts: dict[str, int]) -> Any:
    from svcnb import vocab

    if word is None or word in ("active", "overdue", "suspended"):
        return word
    cls = vocab.billing_class(word)
    target = _BILLING_WORD.get(cls, word)
    label = f"{word} -> {target}" if target != word else f"{word} (unknown word, kept)"
    counts[label] = counts.get(label, 0) + 1
    return target


@dataclass
class StoredCopy:
    """A copy of one snapshot as a sandbox state: ``doc`` (``svcnb.sandbox._saved``), ``notes``
    on what the store did not hold, the ``snapshot_id`` copied, and the ``pseudonyms`` used
    (None when not anonymized)."""

    doc: dict
    notes: list[str]
    snapshot_id: str
    pseudonyms: Pseudonyms | None


def state_from_store(
    store: Store,
    at: Any = None,
    *,
    anonymize: bool = False,
    key: bytes | str | None = None,
) -> StoredCopy:
    """The account as of ``at`` in ``store`` as a sandbox state, with notes (:class:`StoredCopy`).

    Reads every resource of the snapshot as of ``at`` (the latest by default) with
    ``store.load``. ``key`` fixes the address pseudonyms (default: drawn at random per copy).
    Raises ``StoreError`` when the snapshot has no VMs to copy.
    """
    from svcnb.store import RESOURCES, MissingResourceError

    notes = _Notes()
    try:
        vms = store.load("vms", at)
    except MissingResourceError as exc:
        raise _rehearsal_error(
            f"the snapshot as of {at or 'the latest'} could not read the VMs ({exc}); "
            "a copy without its fleet would answer wrongly: pick another --at"
        ) from None
    snapshot = str(vms.attrs.get("as_of_snapshot"))
    entry = store.snapshots()
    row = entry[entry["snapshot_id"] == snapshot]
    now = _time(row["server_time"].iloc[0]) if len(row) else None
    if now is None:
        raise _rehearsal_error(f"snapshot {snapshot} is not in the store's list of snapshots")
    frames: dict[str, pd.DataFrame | None] = {"vms": vms}
    for resource in RESOURCES:
        if resource != "vms":
            frames[resource] = _load(store, resource, at, notes, snapshot)
    for name, frame in frames.items():
        unreadable = frame.attrs.get("unreadable") if frame is not None else None
        if unreadable:
            shown = ", ".join(f"{c} ({n})" for c, n in unreadable.items())
            notes.add(f"{name}: values the snapshot could not read: {shown}")
    p = Pseudonyms(_key(key)) if anonymize else None
    doc = _document(vms, frames, now, notes, p)
    notes.add(
        "not in a store, so not in the copy: API tokens (the copy has its own admin, read and "
        "none), webhook secrets (each subscription gets a new one), VM actions, the event log, "
        "account SSH keys not attached to a VM"
    )
    return StoredCopy(doc, notes.lines, snapshot, p)


def _key(key: bytes | str | None) -> bytes:
    if key is None:
        return secrets.token_bytes(32)
    return key.encode() if isinstance(key, str) else key


# the VM's fields up to its links, in the spec's key order (the copy keeps it: the sandbox
# answers records in the order it holds their keys); plan and billing are stated by the copy
_VM_HEAD = (
    "id", "name", "hostname", "status", "vcpu", "ram_mib", "disk_gib", "bandwidth_gib",
    "network_speed_mbps", "network_10g_enabled", "daily_backup_enabled", "is_protected",
    "ip_address", "region_slug", "region_name", "plan_slug", "plan_name", "os_slug", "os_name",
    "os_version", "billing_status", "created_at", "bandwidth_used_bytes", "bandwidth_pack_bytes",
)  # fmt: skip
_WEBHOOK_ORDER = (
    "id", "url", "events", "description", "is_active", "created_at", "updated_at",
    "consecutive_failures",
)  # fmt: skip
_DELIVERY_ORDER = (
    "id", "event_id", "event", "url", "status_code", "success", "attempts", "created_at",
    "last_attempt_at", "error",
)  # fmt: skip


def _said(resource: ResourceName, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with each value as the API states it, by the column's schema entry: times as
    text, lists as lists (none: empty), decimal strings as strings."""
    from svcnb.frames import SCHEMAS

    out = dict(row)
    for column, spec in SCHEMAS[resource].items():
        if column not in out:
            continue
        value = out[column]
        if spec.dtype == "datetime64[ns, UTC]":
            out[column] = _time(value)
        elif spec.parse == "list":
            out[column] = list(value or [])
        elif spec.parse == "decimal":
            out[column] = None if value is None else str(value)
    return out


def _record(
    resource: ResourceName, row: dict[str, Any], columns: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """``row`` (a frame row as :func:`_rows` gives it) as the API record the copy states."""
    from svcnb.frames import api_record

    return dict(api_record(resource, _said(resource, row), columns))


def _renamed(p: Pseudonyms | None, row: dict[str, Any], **kinds: str | tuple[str, str]) -> None:
    """Replace the columns named in ``kinds`` by their pseudonyms, in place (nothing without
    ``p``). A kind is a :meth:`Pseudonyms.name` kind, or (kind, pattern); ``address`` and
    ``url`` take those pseudonyms, lists of addresses each one."""
    if p is None:
        return
    for column, kind in kinds.items():
        value = row[column]
        if kind == "address":
            row[column] = (
                [p.address(x) for x in value] if isinstance(value, list) else p.address(value)
            )
        elif kind == "url":
            row[column] = p.url(value)
        elif isinstance(kind, tuple):
            row[column] = p.name(kind[0], value, kind[1])
        else:
            row[column] = p.name(kind, value)


_DESCRIPTION = ("description", "description {n}")


def _document(
    vm_frame: pd.DataFrame,
    frames: dict[str, pd.DataFrame | None],
    now: str,
    notes: _Notes,
    p: Pseudonyms | None,
) -> dict:
    def links(resource: str) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        frame = frames.get(resource)
        if frame is not None:
            for r in _rows(frame):
                out.setdefault(r["vm_id"], []).append(r)
        return out

    keys, fws, nets = links("vm_ssh_keys"), links("vm_firewalls"), links("vm_private_networks")
    status_words: dict[str, int] = {}
    billing_words: dict[str, int] = {}
    pending: list[dict] = []
    vms: list[dict] = []
    no_price = unread_price = 0
    for index, r in enumerate(_rows(vm_frame)):
        status, job = _vm_word(r["status"], status_words)
        price, price_note = _money(
            r["price_monthly_raw"], r["price_monthly_amount"], r["price_monthly_currency"]
        )
        no_price += price is None and status != "terminated"
        unread_price += price_note is not None
        billing: dict | None = None
        if r["billing_status"] is not None or r["next_renewal_at"] is not None:
            billing = {}
            if price is not None:
                billing["priceMonthly"] = price
            billing["nextRenewalAt"] = _time(r["next_renewal_at"])
            billing["status"] = _billing_word(r["billing_status"], billing_words)
        _renamed(
            p,
            r,
            name="vm",
            hostname=("host", "host-{n:03d}.example.invalid"),
            ip_address="address",
        )
        # pseudonyms are numbered in the order asked for: a VM's links right after the VM
        for k in keys.get(r["id"], []):
            _renamed(p, k, name="key", fingerprint=("fingerprint", "SHA256:anon{n:04d}"))
        for f in fws.get(r["id"], []):
            _renamed(p, f, name="fw")
        for n in nets.get(r["id"], []):
            _renamed(p, n, name="net")
        vm = _record("vms", {**r, "status": status}, _VM_HEAD)
        if billing is None and price is not None:
            vm["plan"]["priceMonthly"] = price
        vm["billing"] = billing
        vm["sshKeys"] = [
            _record("vm_ssh_keys", k, ("ssh_key_id", "name", "fingerprint"))
            for k in keys.get(r["id"], [])
        ]
        vm["firewalls"] = [
            _record("vm_firewalls", f, ("firewall_id", "name")) for f in fws.get(r["id"], [])
        ]
        vm["privateNetworks"] = [
            _record("vm_private_networks", n, ("network_id", "name")) for n in nets.get(r["id"], [])
        ]
        vm.update(_record("vms", r, ("updated_at",)))
        vm["_price"] = (
            str(_decimal(r["price_monthly_amount"]))
            if r["price_monthly_amount"] is not None
            else "0"
        )
        vm["_priceForm"] = "string"
        vm["_index"] = index
        vms.append(vm)
        if job is not None:
            pending.append({"vmId": r["id"], "kind": job, "at": now, "actionId": None})
    if status_words or billing_words:
        said = ", ".join(f"{k} ({n})" for k, n in {**status_words, **billing_words}.items())
        notes.add(f"status words said in the sandbox's own words: {said}")
    if pending:
        notes.add(
            f"{len(pending):,} VMs were on their way (stopping or provisioning) when the snapshot "
            "was taken; the copy finishes them as it would a fresh stop or create (30 s, 60 s)"
        )
    if no_price:
        notes.add(
            f"{no_price:,} VMs state no monthly price in the snapshot; the copy charges them "
            "nothing at renewal"
        )
    if unread_price:
        notes.add(f"{unread_price:,} VMs' prices could not be read; the copy states them as sent")
    notes.add(
        "the store does not record whether a price was stated in billing or in plan; the copy "
        "states it in billing.priceMonthly (plan.priceMonthly for VMs without billing)"
    )

    doc: dict[str, Any] = {
        "format": "svcnb-sandbox-state",
        "version": 1,
        "now": now,
        "seed": int.from_bytes(hashlib.sha256(now.encode()).digest()[:4], "big"),
        "vms": vms,
        "sshKeys": [],
        "actions": [],
        "pending": pending,
        "firewalls": [],
        "rules": [],
        "networks": [],
        "attachments": [],
        "webhooks": [],
        "deliveries": [],
        "events": [],
    }
    _firewalls(doc, frames, p)
    _networks(doc, frames, p)
    _wallet(doc, frames, notes)
    _webhooks(doc, frames, p)
    return doc


def _firewalls(doc: dict, frames: dict, p: Pseudonyms | None) -> None:
    known: set[str] = set()
    if frames.get("firewalls") is not None:
        for r in _rows(frames["firewalls"]):
            known.add(r["id"])
            _renamed(p, r, name="fw", description=_DESCRIPTION)
            doc["firewalls"].append(_record("firewalls", r))
    if frames.get("firewall_rules") is None:
        return
    for r in _rows(frames["firewall_rules"]):
        if r["firewall_id"] not in known:
            continue  # a rule whose firewall the snapshot did not read: noted with firewalls
        _renamed(p, r, source_ips="address", dest_ips="address", description=_DESCRIPTION)
        doc["rules"].append(_record("firewall_rules", r))


def _networks(doc: dict, frames: dict, p: Pseudonyms | None) -> None:
    known: set[str] = set()
    if frames.get("networks") is not None:
        for r in _rows(frames["networks"]):
            known.add(r["id"])
            _renamed(p, r, name="net", ip_range="address")
            # addresses past every one in use: the copy's next attach picks a free one
            doc["networks"].append({**_record("networks", r), "_nextHost": 10})
    if frames.get("attachments") is None:
        return
    for r in _rows(frames["attachments"]):
        if r["network_id"] not in known:
            continue
        _renamed(p, r, private_ip="address")
        doc["attachments"].append(_record("attachments", r))


def _wallet(doc: dict, frames: dict, notes: _Notes) -> None:
    frame = frames.get("wallet")
    rows = list(_rows(frame)) if frame is not None else []
    if not rows or rows[0]["balance_amount"] is None:
        why = "not in the snapshot" if not rows else "its balance could not be read"
        notes.add(
            f"wallet: {why}; the copy's wallet holds 0.00, which is not the account's balance "
            "(renewals on the copy will go unpaid)"
        )
        doc["wallet"] = {
            "id": rows[0]["id"] if rows else "wal_unknown",
            "createdAt": _time(rows[0]["created_at"]) if rows else doc["now"],
            "updatedAt": _time(rows[0]["updated_at"]) if rows else doc["now"],
            "_balance": "0.00",
            "_balance_form": "string",
        }
        return
    r = rows[0]
    value, _ = _money(r["balance_raw"], r["balance_amount"], r["balance_currency"])
    form = "object" if isinstance(value, dict) else "string"
    if isinstance(value, float):
        form = "number"
    if isinstance(value, dict) and value.get("currency") not in (None, "EUR"):
        # the sandbox's wallet can only name EUR; a balance labelled with the wrong currency
        # would be a wrong figure, so the copy states the amount with no currency at all
        form = "string"
        notes.add(
            f"wallet: the balance is in {value['currency']}; the copy states the amount "
            "without a currency (the sandbox's wallet can name only EUR)"
        )
    doc["wallet"] = {
        "id": r["id"],
        "createdAt": _time(r["created_at"]),
        "updatedAt": _time(r["updated_at"]),
        "_balance": str(_decimal(r["balance_amount"])),
        "_balance_form": form,
    }


def _webhooks(doc: dict, frames: dict, p: Pseudonyms | None) -> None:
    known: set[str] = set()
    if frames.get("webhooks") is not None:
        for r in _rows(frames["webhooks"]):
            known.add(r["id"])
            _renamed(p, r, url="url", description=_DESCRIPTION)
            doc["webhooks"].append(_record("webhooks", r, _WEBHOOK_ORDER))
    if frames.get("deliveries") is None:
        return
    for r in _rows(frames["deliveries"]):
        if r["webhook_id"] not in known:
            continue
        _renamed(p, r, url="url")
        record = _record("deliveries", r, _DELIVERY_ORDER)
        doc["deliveries"].append({**record, "_webhookId": r["webhook_id"]})


# -- the copy -----------------------------------------------------------------------------------
class Rehearsal:
    """A running sandbox holding a copy of the account as one snapshot stored it.

    ``connect()`` gives a Client on it (admin token), ``control`` its control helper,
    ``notes`` what the store did not hold, ``snapshot_id`` the snapshot copied. When anonymized,
    :meth:`address` and :meth:`name` translate the account's values into the copy's (ask
    reachability on the copy with ``address("203.0.113.5")``). ``close()`` (or the end of a
    ``with`` block) stops the sandbox; the store is only read, never written.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        stack: ExitStack,
        notes: list[str],
        snapshot_id: str,
        pseudonyms: Pseudonyms | None,
    ) -> None:
        self.sandbox = sandbox
        self.notes = notes
        self.snapshot_id = snapshot_id
        self._stack = stack
        self._pseudonyms = pseudonyms

    def __repr__(self) -> str:
        anonymized = ", anonymized" if self._pseudonyms else ""
        return f"Rehearsal(of {self.snapshot_id}{anonymized} at {self.sandbox.base_url})"

    @property
    def base_url(self) -> str:
        return self.sandbox.base_url

    @property
    def control(self) -> Control:
        return self.sandbox.control

    @property
    def anonymized(self) -> bool:
        return self._pseudonyms is not None

    def connect(self, **client_options: Any) -> Client:
        """A Client on the copy with its admin token (``client_options`` go to Client)."""
        from svcnb._connect import sandbox_pins
        from svcnb.client import Client

        where = f"the dialect of the sandbox at {self.sandbox.base_url}"
        options = {"pins": sandbox_pins(self.sandbox.pins, where), **client_options}
        return Client(self.sandbox.tokens["admin"], self.sandbox.base_url, **options)

    def address(self, value: str) -> str:
        """The copy's address (or CIDR) for one of the account's; itself when not anonymized."""
        return value if self._pseudonyms is None else self._pseudonyms.address(value)

    def name(self, kind: str, value: str) -> str | None:
        """The copy's name for an account name of ``kind`` (vm, host, fw, net, key, hook,
        description) already seen in the snapshot; None when it was not."""
        if self._pseudonyms is None:
            return value
        return self._pseudonyms._names.get((kind, value))

    def save_state(self, path: str) -> None:
        """Write the copy's current account to ``path`` (``svcnb sandbox --state-file``)."""
        self.control.save_state(path)

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Rehearsal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _one_account(store: Store, account: str | None, option: str = "account=") -> Store:
    """``store`` bound to the one account a copy is made of: ``account``, or the store's only
    one. StoreError naming the accounts the store holds when it holds several and ``account``
    is None, or none of that name (``option`` is how the caller names it: ``--account``)."""
    if account is None and store.account is not None:
        return store
    held = store.accounts()
    if account is None:
        if len(held) <= 1:
            return store
        raise _rehearsal_error(
            f"the store {store.path} holds several accounts ({', '.join(held)}); a copy is of "
            f"one: name it with {option}NAME"
        )
    if account not in held:
        raise _rehearsal_error(
            f"the store {store.path} holds no account {account!r}; its accounts: "
            f"{', '.join(held) or 'none yet'}"
        )
    return store.for_account(account)


def rehearse(
    store: Store | str | None = None,
    at: Any = None,
    *,
    anonymize: bool = False,
    key: bytes | str | None = None,
    account: str | None = None,
    **sandbox_options: Any,
) -> Rehearsal:
    """Start a sandbox holding the account as of ``at`` in ``store`` (a Store or its path;
    default ``$SVCNB_STORE``), optionally anonymized (docs/contracts.md section 2). ``account``
    names the account to copy in a store of several (StoreError naming them when it is missing).

    ``sandbox_options`` go to ``svcnb.sandbox.serve`` (``dialect``, ``time_scale``: 0, the
    default, freezes the copy's clock at the snapshot's server time; ``port``). The notes on
    what the store did not hold are in ``Rehearsal.notes``. Example::

        with svcnb.rehearse(svcnb.Store("data/store"), anonymize=True) as copy:
            client = copy.connect()
            client.stop_vm(...)  # only the copy changes
    """
    from svcnb.sandbox import serve
    from svcnb.store import Store

    if not isinstance(store, Store):
        store = Store(store)
    store = _one_account(store, account)
    copy = state_from_store(store, at, anonymize=anonymize, key=key)
    stack = ExitStack()
    sandbox = stack.enter_context(serve(saved=copy.doc, **sandbox_options))
    return Rehearsal(sandbox, stack, copy.notes, copy.snapshot_id, copy.pseudonyms)
