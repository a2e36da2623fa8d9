"""Inline frames shaped as docs/contracts.md section 4 says (the root conftest closes figures)."""

from __future__ import annotations

from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from svcnb import frames  # noqa: E402

DT = "datetime64[ns, UTC]"

# frame -> column -> dtype (the contract's columns; tests give only the ones they need)
COLUMNS: dict[str, dict[str, str]] = {
    "vms": {
        "id": "string",
        "name": "string",
        "status": "string",
        "region_slug": "string",
        "plan_slug": "string",
        "billing_status": "string",
        "next_renewal_at": DT,
        "price_monthly_raw": "string",
        "price_monthly_amount": "Float64",
        "price_monthly_currency": "string",
        "bandwidth_used_bytes": "Int64",
        "bandwidth_pack_bytes": "Int64",
        "created_at": DT,
        "updated_at": DT,
    },
    "wallet": {
        "id": "string",
        "balance_raw": "string",
        "balance_amount": "Float64",
        "balance_currency": "string",
    },
    "firewalls": {
        "id": "string",
        "name": "string",
        "description": "string",
        "created_at": DT,
        "updated_at": DT,
    },
    "firewall_rules": {
        "id": "string",
        "firewall_id": "string",
        "position": "Int64",
        "direction": "string",
        "action": "string",
        "protocol": "string",
        "port": "string",
        "source_ips": "object",
        "dest_ips": "object",
        "description": "string",
    },
    "vm_firewalls": {"vm_id": "string", "firewall_id": "string", "name": "string"},
    "webhooks": {
        "id": "string",
        "url": "string",
        "events": "object",
        "description": "string",
        "is_active": "boolean",
        "consecutive_failures": "Int64",
        "created_at": DT,
        "updated_at": DT,
    },
    "deliveries": {
        "id": "string",
        "webhook_id": "string",
        "event_id": "string",
        "event": "string",
        "url": "string",
        "status_code": "Int64",
        "success": "boolean",
        "attempts": "Int64",
        "error": "string",
        "created_at": DT,
        "last_attempt_at": DT,
    },
}


def make_frame(kind: str, rows: list[dict]) -> pd.DataFrame:
    """A frame of ``kind`` from ``rows``; columns not given are NA, dtypes as the contract."""
    cols = COLUMNS[kind]
    data = {c: [r.get(c) for r in rows] for c in cols}
    frame = pd.DataFrame(data, columns=list(cols))
    for col, dtype in cols.items():
        if dtype == DT:
            frame[col] = pd.to_datetime(frame[col], utc=True)
        elif dtype != "object":
            frame[col] = frame[col].astype(dtype)
    return frame


@pytest.fixture
def frame() -> Callable[[str, list[dict]], pd.DataFrame]:
    return make_frame


@pytest.fixture(scope="session")
def played(tmp_path_factory):
    """A store of 5 daily snapshots of a sandbox (seed 13, 6 VMs), and the frames read straight
    from the API at each one (without the store)."""
    from svcnb.client import Client
    from svcnb.sandbox import serve
    from svcnb.store import Store

    path = tmp_path_factory.mktemp("store")
    with (
        serve(vms=6, seed=13, rate_limit=100_000) as sb,
        Client(
            api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False, pins=sb.pins
        ) as client,
    ):
        store = Store(path)
        seen = []
        for day in range(5):
            if day:
                sb.control.advance(86_400)
            store.take(client)
            seen.append(_read(client))
        yield store, seen


def _read(client) -> dict:
    """The frames of the account now, built from the API without the store."""
    full = client.vms.all(details=True, progress=False)
    hooks = client.webhooks.list()
    records = []
    for hook in hooks:
        records += [dict(r, webhookId=hook["id"]) for r in client.webhooks.deliveries(hook["id"])]
    rules = []
    fws = client.firewalls.list()
    for fw in fws:
        rules += client.firewalls.rules(fw["id"])
    return {
        "now": pd.Timestamp(client.server_time),
        "vms": frames.vms(full),
        "wallet": frames.wallet([client.wallet.get()]),
        "vm_firewalls": frames.vm_firewalls(full),
        "firewalls": frames.firewalls(fws),
        "rules": frames.firewall_rules(rules),
        "webhooks": frames.webhooks(hooks),
        "deliveries": frames.deliveries(records),
    }
