"""Webhook health on three hand-built subscriptions and their attempt records."""

from __future__ import annotations

import matplotlib.colors as mcolors
import pandas as pd
import pytest

from svcnb.reports import webhooks

T0 = pd.Timestamp("2026-11-01T00:00Z")


@pytest.fixture
def hooks(frame):
    subs = frame(
        "webhooks",
        [
            {
                "id": "h1",
                "url": "https://a.example/h",
                "is_active": True,
                "consecutive_failures": 2,
                "events": ["vm.created", "vm.stopped"],
            },
            {
                "id": "h2",
                "url": "https://b.example/h",
                "is_active": False,
                "consecutive_failures": 50,
                "events": ["billing.low_balance"],
            },
            {
                "id": "h3",
                "url": "https://c.example/h",
                "is_active": True,
                "consecutive_failures": None,
                "events": ["vm.renewed"],
            },
        ],
    )
    plan = [
        # webhook, event id, event type, outcomes of attempts 1..n
        ("h1", "e1", "vm.created", [True]),
        ("h1", "e2", "vm.stopped", [False, True]),
        ("h1", "e3", "vm.created", [False, False]),  # attempt 3 not made yet
        ("h2", "e4", "billing.low_balance", [False, False, False]),
        ("h3", "e5", "vm.renewed", [False, False, True]),
        ("h3", "e6", "vm.renewed", [False]),
    ]
    rows = []
    for i, (hook, event_id, event, outcomes) in enumerate(plan):
        for n, ok in enumerate(outcomes, start=1):
            rows.append(
                {
                    "id": f"d-{event_id}-{n}",
                    "webhook_id": hook,
                    "event_id": event_id,
                    "event": event,
                    "status_code": 200 if ok else 500,
                    "success": ok,
                    "attempts": n,
                    "created_at": T0 + pd.Timedelta(hours=i),
                    "last_attempt_at": T0 + pd.Timedelta(hours=i, seconds=10 * n),
                }
            )
    return subs, frame("deliveries", rows)


def test_health_per_subscription(hooks):
    subs, recs = hooks
    got = webhooks.health(subs, recs)
    assert got["webhook_id"].tolist() == ["h2", "h1", "h3"]  # disabled, then closest to 50
    h1 = got.set_index("webhook_id").loc["h1"]
    assert (h1["events"], h1["delivered"], h1["failed"]) == (3, 2, 1)
    assert h1["success_rate"] == pytest.approx(2 / 3)
    assert h1["attempt_success_rate"] == pytest.approx(2 / 5)
    assert (h1["ok_attempt_1"], h1["ok_attempt_2"], h1["ok_attempt_3"]) == (1, 1, 0)
    assert h1["consecutive_failures"] == 2  # the service's own counter
    assert h1["failures_to_disable"] == 48
    h2 = got.set_index("webhook_id").loc["h2"]
    assert not h2["is_active"]
    assert h2["failures_to_disable"] == 0
    assert h2["success_rate"] == 0
    h3 = got.set_index("webhook_id").loc["h3"]
    # counted from the records: fail, fail, ok, then fail
    assert h3["consecutive_failures"] == 1
    assert h3["failures_to_disable"] == 49
    assert h3["ok_attempt_3"] == 1
    assert h3["last_success_at"] == T0 + pd.Timedelta(hours=4, seconds=30)


def test_attempts_distribution(hooks):
    _, recs = hooks
    got = webhooks.attempts(recs)
    h1 = got[got["webhook_id"] == "h1"].set_index("outcome")["events"].to_dict()
    assert h1 == {"attempt 1": 1, "attempt 2": 1, "not delivered": 1}
    h3 = got[got["webhook_id"] == "h3"].set_index("outcome")["share"].to_dict()
    assert h3 == {"attempt 3": 0.5, "not delivered": 0.5}


def test_disabled_and_event_mix(hooks):
    subs, recs = hooks
    assert webhooks.disabled(subs)["webhook_id"].tolist() == ["h2"]
    mix = webhooks.event_mix(subs, recs).set_index("event")
    assert mix["subscriptions"].to_dict() == {
        "billing.low_balance": 0,  # only a disabled subscription wants it
        "vm.created": 1,
        "vm.renewed": 1,
        "vm.stopped": 1,
    }
    assert mix["events"].to_dict() == {
        "billing.low_balance": 1,
        "vm.created": 2,
        "vm.renewed": 2,
        "vm.stopped": 1,
    }
    assert mix.loc["vm.created", "success_rate"] == 0.5
    assert mix["share"].sum() == pytest.approx(1)


def test_plot_health_bars_against_the_auto_disable_line(hooks):
    subs, recs = hooks
    ax = webhooks.plot_health(webhooks.health(subs, recs))
    assert [p.get_width() for p in ax.patches] == [50, 2, 1]
    assert mcolors.to_hex(ax.patches[0].get_facecolor()) == mcolors.to_hex("tab:red")
    assert mcolors.to_hex(ax.patches[1].get_facecolor()) == mcolors.to_hex("tab:blue")
    (line,) = ax.get_lines()
    assert list(line.get_xdata()) == [50, 50]
    assert ax.get_yticklabels()[0].get_text() == "https://b.example/h (h2)"


def test_no_deliveries_yet(frame, hooks):
    subs, _ = hooks
    got = webhooks.health(subs, frame("deliveries", []))
    assert got["events"].tolist() == [0, 0, 0]
    assert got["success_rate"].isna().all()
