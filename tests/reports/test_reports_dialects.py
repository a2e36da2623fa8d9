"""Reports over the API of each named sandbox dialect give the numbers of the same account read
as the default dialect serves it (``/_sandbox/truth``): other words for the same statuses,
money in minor units, offset or millisecond times and renamed delivery fields change nothing."""

from __future__ import annotations

import httpx
import pandas as pd
import pytest
from _tiers import dialects

from svcnb import frames, vocab
from svcnb.client import Client
from svcnb.reports import bandwidth, billing, webhooks
from svcnb.sandbox import serve


def _read(client: Client) -> dict:
    hooks = client.webhooks.list()
    records = [
        dict(r, webhookId=h["id"]) for h in hooks for r in client.webhooks.deliveries(h["id"])
    ]
    pins = client.pins  # the sandbox's, handed over as connect() hands them
    return {
        "vms": frames.vms(client.vms.all(details=True, progress=False), pins=pins),
        "wallet": frames.wallet(client.wallet.get(), pins=pins),
        "webhooks": frames.webhooks(hooks, pins=pins),
        "deliveries": frames.deliveries(records, pins=pins),
    }


def _truth(control_url: str) -> dict:
    data = httpx.get(f"{control_url}/truth").json()["data"]
    return {
        "vms": frames.vms(data["vms"], units={"ram": "MiB", "disk": "GiB"}),
        "wallet": frames.wallet(data["wallet"]),
        "webhooks": frames.webhooks(data["webhooks"]),
        "deliveries": frames.deliveries(data["deliveries"]),
    }


def _reports(f: dict, now: pd.Timestamp) -> dict[str, pd.DataFrame]:
    vms, wallet = f["vms"], f["wallet"]
    out = {
        "runway": billing.runway(vms, wallet, now=now),
        "low_balance": billing.low_balance_forecast(vms, wallet, now=now),
        "renewals_due": billing.renewals_due(vms, wallet, now=now),
        "run_rate_plan": billing.run_rate(vms, wallet, now=now, by="plan_slug"),
        "run_rate_region": billing.run_rate(vms, wallet, now=now, by="region_slug"),
        "overdue": billing.overdue(vms, now=now),
        "usage": bandwidth.usage(vms, now=now),
        "health": webhooks.health(f["webhooks"], f["deliveries"], now=now),
        "event_mix": webhooks.event_mix(f["webhooks"], f["deliveries"], now=now),
        "attempts": webhooks.attempts(f["deliveries"], now=now),
    }
    for frame in out.values():
        frame.attrs = {}
    # The raw words differ by design; their classes are what the numbers rest on. Currency is
    # stated only by some money forms (every minor-unit price, no numeric string): whether it is
    # known differs by dialect, the amounts may not.
    drop = ["status", "billing_status", "currency"]
    return {n: f.drop(columns=drop, errors="ignore") for n, f in out.items()}


@pytest.mark.parametrize("dialect", dialects(["acme", "linkhdr", "cursor"]))
def test_every_named_dialect_gives_the_default_dialects_numbers(dialect):
    with (
        serve(vms=30, seed=7, dialect=dialect, rate_limit=100_000) as sb,
        Client(
            api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False, pins=sb.pins
        ) as client,
        # its words too, as svcnb.connect() adds them to the vocabulary reports classify by
        vocab.using(vocab.from_pins(client.pins)),
    ):
        read = _read(client)
        now = pd.Timestamp(client.server_time)
        truth = _truth(sb.control_url)
    for name in ("vms", "wallet", "deliveries"):
        assert "unreadable" not in read[name].attrs, (name, read[name].attrs)
    got, want = _reports(read, now), _reports(truth, now)
    runway = got["runway"].iloc[0]
    assert runway["unknown_status"] == 0 and bool(runway["complete"])
    assert got["health"]["unknown"].sum() == 0
    for name in want:
        pd.testing.assert_frame_equal(got[name], want[name], obj=f"{dialect}: {name}")
