"""Tolerant record parsing: keys the spec does not list are kept (one warning per resource
naming them); a key svcnb itself needs raises :class:`MissingFieldError` naming resource, id
and key. Only keys svcnb cannot do without are required (``id`` nearly everywhere): a VM without
``updatedAt`` is still a VM, only refreshed by reading it again. Values and field names are
never changed here: the frames layer types them and maps the names servers use.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterable
from typing import Any

from svcnb.config import DELIVERY_FIELDS
from svcnb.errors import MissingFieldError, SchemaDriftWarning, SvcnbError

_log = logging.getLogger("svcnb.client")

_VM_SUMMARY = (
    "id", "name", "hostname", "status", "vcpu", "ram", "disk", "bandwidth", "networkSpeed",
    "network10gEnabled", "dailyBackupEnabled", "isProtected", "ipAddress", "region", "plan",
    "osTemplate", "billing", "createdAt", "bandwidthUsedBytes", "bandwidthPackBytes", "updatedAt",
)  # fmt: skip

_WEBHOOK = frozenset({
    "id", "url", "events", "description", "isActive", "createdAt", "updatedAt",
    "consecutiveFailures", "secret",
})  # fmt: skip

# resource -> (keys the spec lists, keys svcnb needs to do its job)
SCHEMAS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "vm": (
        frozenset(_VM_SUMMARY + ("sshKeys", "firewalls", "privateNetworks")),
        ("id",),
    ),
    "firewall": (frozenset({"id", "name", "description", "createdAt", "updatedAt"}), ("id",)),
    "rule": (
        frozenset(
            {
                "id",
                "firewallId",
                "position",
                "direction",
                "action",
                "protocol",
                "port",
                "sourceIps",
                "destIps",
                "description",
                "createdAt",
                "updatedAt",
            }
        ),
        ("id",),
    ),  # fmt: skip
    "network": (
        frozenset({"id", "name", "region", "ipRange", "createdAt", "updatedAt"}),
        ("id",),
    ),
    "attachment": (
        frozenset({"id", "vmId", "networkId", "privateIp", "netInterface", "attachedAt", "vm"}),
        ("id",),
    ),
    "detachment": (frozenset({"vmId", "networkId"}), ()),
    "wallet": (frozenset({"id", "createdAt", "updatedAt", "balance"}), ("id",)),
    "webhook": (_WEBHOOK, ("id",)),
    # a webhook just created is the one answer that must carry its secret (shown only once)
    "new webhook": (_WEBHOOK, ("id", "secret")),
    "delivery": (
        frozenset(
            {
                *DELIVERY_FIELDS,
                # the names other servers give the same fields (docs/dialects.md); kept in
                # step with SCHEMAS["deliveries"] of svcnb.frames (tests/frames check it)
                "status_code",
                "responseStatus",
                "httpStatus",
                "responseCode",
                "ok",
                "delivered",
                "succeeded",
                "successful",
                "attempt",
                "attemptCount",
                "tries",
                "event_id",
                "created_at",
                "last_attempt_at",
                "updatedAt",
                # the subscription, when a service names it in each record
                "webhookId",
            }
        ),
        ("id",),
    ),  # fmt: skip
    "action": (frozenset({"actionId"}), ("actionId",)),
}


class RecordParser:
    """Checks records of one Client; remembers which unknown keys it already warned about."""

    def __init__(self) -> None:
        self._warned: dict[str, set[str]] = {}
        self._noted: set[str] = set()
        self._lock = threading.Lock()

    def note_once(self, key: str, message: str, *args: Any) -> None:
        """Log ``message`` at INFO the first time ``key`` is noted by this Client."""
        with self._lock:
            if key in self._noted:
                return
            self._noted.add(key)
        _log.info(message, *args)

    def one(self, resource: str, record: Any) -> dict:
        return self.many(resource, [record])[0]

    def many(self, resource: str, records: Iterable[Any]) -> list[dict]:
        known, required = SCHEMAS[resource]
        out = []
        unknown: set[str] = set()
        for record in records:
            if not isinstance(record, dict):
                raise SvcnbError(
                    f"a {resource} record is a {type(record).__name__}, not a JSON object; "
                    "the API answered with an unexpected shape"
                )
            for key in required:
                if key not in record:
                    rid = record.get("id")
                    raise MissingFieldError(resource, None if rid is None else str(rid), key)
            unknown.update(k for k in record if k not in known)
            out.append(record)
        if unknown:
            self._warn(resource, unknown)
        return out

    def _warn(self, resource: str, unknown: set[str]) -> None:
        with self._lock:
            told = self._warned.setdefault(resource, set())
            new = sorted(unknown - told)
            told.update(new)
        if new:
            warnings.warn(
                f"{resource} records carry key(s) the API spec does not list: {', '.join(new)}; "
                "they are kept as they came (the API may have changed)"
                + _CONSEQUENCE.get(resource, ""),
                SchemaDriftWarning,
                stacklevel=4,
            )


# what an unlisted key costs, where it costs more than a column nobody reads
_CONSEQUENCE = {
    # the delivery record's field names are "not shown": a key svcnb cannot place may be the
    # status, the success flag, the attempt count or a time (svcnb.frames._deliveries)
    "delivery": (
        ". A delivery key that could be a status, a count or a time makes what it could be "
        "unknown in svcnb.frames.deliveries (NA, never False or 0), and the runs of failures "
        "counted from those records unknown"
    ),
}
