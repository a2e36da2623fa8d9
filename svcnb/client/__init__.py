"""The svcnb HTTP client: ``Client`` and its resources (``vms``, ``firewalls``, ``networks``,
``wallet``, ``webhooks``). It imports nothing else of svcnb but :mod:`svcnb.errors`."""

from __future__ import annotations

from svcnb.client._client import Client
from svcnb.client._validate import rule_update as validate_rule_update

__all__ = ["Client", "validate_rule_update"]
