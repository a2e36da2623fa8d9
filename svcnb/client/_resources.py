"""Firewalls, networks, wallet and webhooks: each a short declaration of its paths."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, unquote

from svcnb.client._config import DEFAULT_PER_PAGE
from svcnb.client._paging import read_all
from svcnb.client._records import RecordParser
from svcnb.client._redact import redact
from svcnb.client._request import Requester
from svcnb.client._validate import rule_update, text
from svcnb.errors import ServerError, SvcnbError, UpstreamSyncError

# What no id may hold, as written or once a server or proxy has percent-decoded it: a URL
# normaliser (urllib3, httpx, nginx) resolves "." and ".." segments, so `vms.get("..")` would be
# GET /api/public/v1/; many servers decode "%2F" before routing and stop at NUL.
_DOT_SEGMENTS = frozenset({".", ".."})
_SEPARATORS = ("/", "\\")


def segment(name: str, value: Any) -> str:
    """``value`` percent-encoded as exactly one URL path segment, the one place ids enter a path.

    ValueError naming ``name`` for a value no server could read back as that one id: not a
    string, empty, ``.`` or ``..``, holding ``/``, ``\\``, NUL or another control character,
    not encodable as UTF-8 (a lone surrogate), or percent-decoding to any of those (``%2e%2e``,
    ``a%2Fb``): a server or proxy that decodes once more would read another path.
    """
    if not isinstance(value, str):
        raise ValueError(f"{name} must be an id string, got {type(value).__name__}")
    why = _unusable(value)
    if why:
        shown = redact(repr(value[:60]) + ("…" if len(value) > 60 else ""))
        raise ValueError(
            f"{name} {shown} is not an id svcnb can send as one URL path segment: {why}; pass "
            "the id as the API listed it"
        )
    return quote(value, safe="")


def _unusable(value: str) -> str:
    """Why ``value`` cannot be one path segment ("" when it can)."""
    if not value:
        return "it is empty"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "it holds a lone surrogate, which is not text UTF-8 can carry"
    seen = value
    # each round is what one more decoding server would read; a fixed point ends it, and every
    # round shortens the text, so this stops
    while True:
        if seen in _DOT_SEGMENTS:
            return "it is, or decodes to, a dot segment, which URLs resolve to another path"
        if any(sep in seen for sep in _SEPARATORS):
            return "it holds, or decodes to, a path separator (/ or \\)"
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in seen):
            return "it holds, or decodes to, a NUL or another control character"
        decoded = unquote(seen, errors="surrogateescape")
        if decoded == seen:
            return ""
        seen = decoded


class _Resource:
    def __init__(self, requester: Requester, records: RecordParser) -> None:
        self._req = requester
        self._records = records

    def _list(self, path: str, resource: str, scope: str, paged: bool = True) -> list[dict]:
        # Only the lists the spec pages take page parameters; others reject them.
        per_page = DEFAULT_PER_PAGE if paged else None
        rows = read_all(self._req, path, resource, scope=scope, per_page=per_page)
        return rows.like(self._records.many(resource, rows))

    def _one(self, method: str, path: str, resource: str, scope: str, **kw: Any) -> dict:
        reply = self._req.request(method, path, scope=scope, **kw)
        return self._records.one(resource, reply.data)


class Firewalls(_Resource):
    def list(self) -> list[dict]:
        """Every firewall: ``id, name, description, createdAt, updatedAt``."""
        return self._list("/firewalls", "firewall", "firewalls:read")

    def rules(self, fw_id: str) -> builtins.list[dict]:
        """Every rule of firewall ``fw_id`` (all pages), as the API sends them."""
        path = f"/firewalls/{segment('fw_id', fw_id)}/rules"
        return self._list(path, "rule", "firewalls:read")

    def update_rule(self, fw_id: str, rule_id: str, **fields: Any) -> dict:
        """Change ``position``, ``port``, ``source_ips``, ``dest_ips`` or ``description``.

        Everything is checked against the spec's bounds before anything is sent (ValueError
        naming the field and the bound). A 502 raises :class:`UpstreamSyncError` whose ``rule``
        is the rule as re-read after the failure: the API keeps the new values even then.
        """
        fw = segment("fw_id", fw_id)
        rule = segment("rule_id", rule_id)
        body = rule_update(fields)
        path = f"/firewalls/{fw}/rules/{rule}"
        try:
            return self._one("PATCH", path, "rule", "firewalls:write", json=body)
        except ServerError as exc:
            if exc.status != 502:
                raise
            said = exc.server_message
        # Raised out here, not in the except block, so it carries no __context__.
        reread, note = self._reread(fw_id, rule_id)
        raise UpstreamSyncError(
            502,
            f"PATCH {path}: the rule was saved but the upstream security-group sync failed "
            f"(server said: {said or '502'}); {note}. Check the rule and "
            "send the update again later",
            "PATCH",
            path,
            rule=reread,
            server_message=said,
        )

    def _reread(self, fw_id: str, rule_id: str) -> tuple[dict | None, str]:
        try:
            rules = self.rules(fw_id)
        except SvcnbError as exc:
            return None, f"re-reading the rule failed too ({type(exc).__name__})"
        for found in rules:
            if found.get("id") == rule_id:
                shown = {k: found.get(k) for k in ("position", "port", "sourceIps", "destIps")}
                return found, f"the API now holds {shown}"
        return None, "the rule is no longer listed"


class Networks(_Resource):
    def list(self) -> list[dict]:
        """Every private network: ``id, name, region{slug,name}, ipRange, createdAt, updatedAt``."""
        return self._list("/networks", "network", "networks:read")

    def attachments(self, net_id: str) -> builtins.list[dict]:
        """The attachments of network ``net_id`` (a sandbox extension of the API)."""
        path = f"/networks/{segment('net_id', net_id)}/attachments"
        return self._list(path, "attachment", "networks:read", paged=False)

    def attach(self, net_id: str, vm_id: str, private_ip: str | None = None) -> dict:
        """Attach VM ``vm_id`` to network ``net_id`` (same region); returns the attachment."""
        segment("vm_id", vm_id)
        body: dict[str, Any] = {"vmId": vm_id}
        if private_ip is not None:
            if not isinstance(private_ip, str) or not private_ip:
                raise ValueError(f"private_ip must be an IP address string, got {private_ip!r}")
            text("private_ip", private_ip)
            body["privateIp"] = private_ip
        path = f"/networks/{segment('net_id', net_id)}/attachments"
        return self._one("POST", path, "attachment", "networks:write", json=body)

    def detach(self, net_id: str, vm_id: str) -> dict:
        """Detach VM ``vm_id``; the record goes even when the upstream detach fails."""
        path = f"/networks/{segment('net_id', net_id)}/attachments/{segment('vm_id', vm_id)}"
        return self._one("DELETE", path, "detachment", "networks:write")


class Wallet(_Resource):
    def get(self) -> dict:
        """The wallet: ``id, balance, createdAt, updatedAt`` (balance in any of its forms)."""
        return self._one("GET", "/wallet", "wallet", "billing:read")


class Webhooks(_Resource):
    def create(self, url: str, events: Sequence[str], description: str = "") -> dict:
        """Subscribe ``url`` (HTTPS) to ``events``; the answer holds ``secret``, shown only once."""
        if not isinstance(url, str) or not url:
            raise ValueError(f"url must be an HTTPS URL string, got {url!r}")
        text("url", url)
        if isinstance(events, str) or not all(isinstance(e, str) for e in events):
            raise ValueError(
                f"events must be a list of event names such as ['vm.stopped'], got {events!r}"
            )
        for i, event in enumerate(events):
            text(f"events[{i}]", event)
        text("description", description)
        body = {"url": url, "events": list(events), "description": description}
        return self._one("POST", "/webhooks", "new webhook", "webhooks:write", json=body)

    def list(self) -> list[dict]:
        """Every subscription (never with ``secret``)."""
        return self._list("/webhooks", "webhook", "webhooks:read", paged=False)

    def set_active(self, wh_id: str, active: bool) -> dict:
        """Enable (``True``, also re-enables one disabled after failures) or disable it."""
        if not isinstance(active, bool):
            raise ValueError(f"active must be True or False, got {active!r}")
        path = f"/webhooks/{segment('wh_id', wh_id)}"
        return self._one("PATCH", path, "webhook", "webhooks:write", json={"isActive": active})

    def deliveries(self, wh_id: str) -> builtins.list[dict]:
        """One record per delivery attempt of subscription ``wh_id``."""
        path = f"/webhooks/{segment('wh_id', wh_id)}/deliveries"
        return self._list(path, "delivery", "webhooks:read")
