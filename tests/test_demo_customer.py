"""``svcnb demo``'s simulated customer: keeps the wallet paid, except the one top-up that is late.

Over 70 simulated days of a 20-VM sandbox (seed 7), read from the mornings the customer saw.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from svcnb import Client
from svcnb.jupyter.demo import Customer, Morning

# seventy simulated days: make test-all
pytestmark = pytest.mark.slow

DAYS = 70


@pytest.fixture(scope="module")
def mornings() -> list[Morning]:
    from svcnb.sandbox import serve

    with (
        serve(vms=20, seed=7, port=0, time_scale=0.0, rate_limit=100_000) as sb,
        Client(sb.tokens["admin"], sb.base_url, progress=False) as client,
    ):
        customer = Customer(client, sb.control)
        for _ in range(DAYS):
            customer.advance(86_400)
        return customer.mornings


def test_one_look_each_morning_at_nine(mornings):
    assert len(mornings) == DAYS
    assert {m.at.hour for m in mornings} == {9}
    assert all((b.at - a.at).days == 1 for a, b in zip(mornings, mornings[1:], strict=False))


def test_what_is_owed_at_the_start_is_paid_the_first_morning(mornings):
    first = mornings[0]
    # the seeded account owes for VMs that are overdue when the sandbox starts
    assert first.overdue + first.suspended > 0
    assert first.topup is not None and first.topup > 0 and not first.late
    assert (mornings[1].overdue, mornings[1].suspended) == (0, 0)


def test_the_account_stays_paid_except_while_the_late_top_up_waits(mornings):
    (late,) = [m for m in mornings if m.late]
    # the late top-up came only once a VM was suspended for non-payment, and paid it all
    assert late.suspended > 0
    after = mornings[mornings.index(late) + 1]
    assert (after.overdue, after.suspended) == (0, 0)
    # before it the wallet had fallen short for weeks: nobody paid, renewals went unpaid
    waited = [m for m in mornings if m.short and m.topup is None and m.at < late.at]
    assert len(waited) >= 7
    assert min(m.balance for m in waited) < Decimal("50")
    # every other morning after the first top-up: nothing suspended, nothing owed for long
    calm = [m for m in mornings[1:] if m.at > late.at or m.at < waited[0].at]
    assert all(m.suspended == 0 for m in calm)


def test_each_top_up_lasts_its_sixty_days(mornings):
    topups = [m for m in mornings if m.topup is not None]
    assert len(topups) >= 2
    for m in topups:
        if m.late:
            continue
        # the next top-up comes a month or more later, never the next morning
        later = [t for t in topups if t.at > m.at]
        if later:
            assert (later[0].at - m.at).days >= 28
    # the balance never went below zero
    assert all(m.balance >= 0 for m in mornings)
