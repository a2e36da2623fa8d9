"""Webhook health on hand-built subscriptions and their attempt records; the run of failures
and the distance to auto-disable say whether they are exact, a bound or unknown."""

from __future__ import annotations

import warnings

import matplotlib.colors as mcolors
import pandas as pd
import pytest

from svcnb import frames
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
    # each row is its URL, short; each bar says its run, and "disabled" when it is
    assert [t.get_text() for t in ax.get_yticklabels()][0] == "b.example/h"
    assert [t.get_text() for t in ax.texts] == ["50 · disabled", "2", "1"]


def test_plot_health_draws_the_longest_runs_when_there_are_many():
    subs = frames.webhooks(
        [
            {"id": f"h{i:02d}", "url": f"https://hooks.example.com/a/long/path/number/{i}",
             "events": ["vm.stopped"], "isActive": True}
            for i in range(20)
        ]
    )  # fmt: skip
    health = webhooks.health(subs, frames.deliveries([]))
    health["consecutive_failures"] = pd.array(range(20), dtype="Int64")
    ax = webhooks.plot_health(health)
    assert len(ax.patches) == webhooks.MAX_BARS
    assert sorted(p.get_width() for p in ax.patches) == list(range(8, 20))
    assert "8 more in the table" in ax.get_title()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert all(len(t) <= 32 and "\u2026" in t for t in labels), labels
    assert ax.figure.get_size_inches()[1] >= 0.45 * webhooks.MAX_BARS


def test_no_deliveries_yet(frame, hooks):
    subs, _ = hooks
    got = webhooks.health(subs, frame("deliveries", []))
    assert got["events"].tolist() == [0, 0, 0]
    assert got["success_rate"].isna().all()


# --- the run of failures states its ground: exact, at least, unknown ------------------------

HOOK = {"id": "h9", "url": "https://d.example/h", "events": ["vm.stopped"], "isActive": True}


def history(failures: int) -> list[dict]:
    """API records of one subscription: a delivered event, then ``failures`` failed attempts
    (events of three attempts each, the last one cut short), one record per attempt, oldest
    first, a minute apart."""
    records = [
        {
            "id": "d-ok",
            "eventId": "e-ok",
            "event": "vm.stopped",
            "statusCode": 200,
            "success": True,
            "attempts": 1,
            "createdAt": "2026-11-01T00:00:00Z",
            "lastAttemptAt": "2026-11-01T00:00:00Z",
        }
    ]
    for n in range(failures):
        event, attempt = divmod(n, 3)
        at = (T0 + pd.Timedelta(minutes=n + 1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        records.append(
            {
                "id": f"d-{n:03d}",
                "eventId": f"e-{event:03d}",
                "event": "vm.stopped",
                "statusCode": 500,
                "success": False,
                "attempts": attempt + 1,
                "createdAt": at,
                "lastAttemptAt": at,
            }
        )
    return records


def _health_of(records: list[dict], hook: dict = HOOK) -> pd.Series:
    got = webhooks.health(
        frames.webhooks([hook]), frames.deliveries(records, webhook_id=hook["id"]), now=T0
    )
    assert len(got) == 1
    return got.iloc[0]


def test_the_whole_history_gives_an_exact_run():
    row = _health_of(history(47))
    assert row["consecutive_failures"] == 47 and row["consecutive_failures_bound"] == "exact"
    assert row["consecutive_failures_source"] == "delivery records"
    assert row["failures_to_disable"] == 3 and row["failures_to_disable_bound"] == "exact"
    assert bool(row["complete"]) and pd.isna(row["reason"])


def test_a_service_keeping_only_the_last_10_attempts_gives_at_least_10_and_unknown_left():
    # 47 failed attempts in a row; the service serves only its latest 10 records. How deep its
    # history goes is an assumption nobody pinned: "at most 40 left" (3 in truth) is no figure
    # to act on, so what is left is unknown, saying how to pin the depth
    got = webhooks.health(
        frames.webhooks([HOOK]), frames.deliveries(history(47)[-10:], webhook_id="h9"), now=T0
    )
    row = got.iloc[0]
    assert row["consecutive_failures"] == 10
    assert row["consecutive_failures_bound"] == "at least"
    assert pd.isna(row["failures_to_disable"])
    assert row["failures_to_disable_bound"] == "unknown"
    assert not bool(row["complete"])
    assert "no success among the 10 delivery record(s) served" in row["reason"]
    assert 'pin it: [deliveries] history = "full"' in row["reason"]
    assert got.attrs["complete"] is False
    assert "may keep only its latest attempts" in got.attrs["incomplete"]["h9"]


def test_a_history_pinned_as_full_gives_an_exact_run_from_records_without_a_success(
    tmp_path, monkeypatch
):
    config = tmp_path / "config.toml"
    config.write_text('[deliveries]\nhistory = "full"\n')
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    records = history(47)[1:]  # every attempt the subscription ever made, all failed
    row = _health_of(records)
    assert row["consecutive_failures"] == 47 and row["consecutive_failures_bound"] == "exact"
    assert row["failures_to_disable"] == 3 and row["failures_to_disable_bound"] == "exact"
    assert bool(row["complete"])


def _attempts_without_event_ids() -> list[dict]:
    # two events, each failed once and then delivered; the service names no event
    out = []
    for k, (ok, attempt) in enumerate([(False, 1), (True, 2), (False, 1), (True, 2)]):
        at = (T0 + pd.Timedelta(minutes=k)).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append(
            {
                "id": f"d-{k}",
                "event": "vm.stopped",
                "statusCode": 200 if ok else 500,
                "success": ok,
                "attempts": attempt,
                "createdAt": at,
                "lastAttemptAt": at,
            }
        )
    return out


def test_records_without_an_event_id_give_unknown_event_counts_never_attempts_as_events():
    with pytest.warns(frames.AssumptionWarning, match='records = "event"') as caught:
        recs = frames.deliveries(_attempts_without_event_ids(), webhook_id="h9")
    assert len([w for w in caught if issubclass(w.category, frames.AssumptionWarning)]) == 1
    got = webhooks.health(frames.webhooks([{**HOOK, "consecutiveFailures": 0}]), recs, now=T0)
    row = got.iloc[0]
    # 2 events delivered, 0 failed: never "2 failed" from attempts taken for events
    for column in ("events", "delivered", "failed", "success_rate", "ok_attempt_1"):
        assert pd.isna(row[column]), column
    assert not bool(row["complete"]) and "carry no event id" in row["reason"]
    mix = webhooks.event_mix(frames.webhooks([HOOK]), recs, now=T0)
    assert mix["events"].isna().all() and mix["share"].isna().all()
    tried = webhooks.attempts(recs, now=T0)
    assert tried["outcome"].tolist() == ["events unknown"] and tried["events"].isna().all()
    assert row["consecutive_failures"] == 0  # the service's counter does not rest on events


def test_records_pinned_as_events_count_each_record_as_one_event(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('[deliveries]\nrecords = "event"\n')
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    with warnings.catch_warnings():
        warnings.simplefilter("error", frames.AssumptionWarning)
        recs = frames.deliveries(_attempts_without_event_ids(), webhook_id="h9")
    assert frames.event_grouping(recs).state == "pinned"
    row = webhooks.health(frames.webhooks([{**HOOK, "consecutiveFailures": 0}]), recs).iloc[0]
    assert (row["events"], row["delivered"], row["failed"]) == (4, 2, 2)


def test_a_served_key_pinned_to_a_delivery_field_is_read_as_that_field(tmp_path, monkeypatch):
    records = [{k if k != "attempts" else "tryCount": v for k, v in r.items()} for r in history(2)]
    with pytest.warns(frames.UnplacedKeyWarning, match="tryCount"):
        unpinned = frames.deliveries(records, webhook_id="h9")
    assert unpinned["attempts"].isna().all()
    config = tmp_path / "config.toml"
    config.write_text('[deliveries.fields]\ntryCount = "attempts"\n')
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pinned = frames.deliveries(records, webhook_id="h9")
    assert pinned["attempts"].tolist() == [1, 1, 2]
    with pytest.warns(frames.UnplacedKeyWarning, match="tryCount"):
        # pins given by the caller win over the file's: none here
        assert frames.deliveries(records, webhook_id="h9", fields={})["attempts"].isna().all()


def test_the_services_own_counter_wins_and_is_exact():
    row = _health_of(history(47)[-10:], {**HOOK, "consecutiveFailures": 47})
    assert row["consecutive_failures"] == 47 and row["consecutive_failures_bound"] == "exact"
    assert row["consecutive_failures_source"] == "service counter"
    assert row["failures_to_disable"] == 3 and row["failures_to_disable_bound"] == "exact"
    assert bool(row["complete"])


@pytest.mark.parametrize(
    "rename",
    [
        {"lastAttemptAt": "sentAt", "createdAt": "sentAt"},  # a time field svcnb does not read
        {"lastAttemptAt": None, "createdAt": None},  # no time at all
    ],
)
def test_records_whose_time_cannot_be_read_give_an_unknown_run_never_a_count(rename):
    records = []
    for i, record in enumerate(history(47)):
        record = dict(record)
        when = record["lastAttemptAt"]
        for old, new in rename.items():
            del record[old]
            if new is not None:
                record[new] = when
        record["id"] = f"x-{(i * 7919) % 101:03d}"  # ids say nothing of the order
        records.append(record)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", frames.UnplacedKeyWarning)
        row = _health_of(records)
    assert pd.isna(row["consecutive_failures"]) and row["consecutive_failures_bound"] == "unknown"
    assert pd.isna(row["failures_to_disable"]) and row["failures_to_disable_bound"] == "unknown"
    assert not bool(row["complete"])
    assert "no readable attempt time" in row["reason"]


def test_a_time_without_a_zone_is_unreadable_and_the_run_unknown():
    records = history(5)
    records[-1] = {**records[-1], "lastAttemptAt": "2026-11-01T00:05:00"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", frames.UnreadableValueWarning)
        row = _health_of(records)
    assert row["consecutive_failures_bound"] == "unknown" and pd.isna(row["failures_to_disable"])


def test_records_of_different_outcome_at_one_time_are_not_ordered_by_a_guess():
    records = history(4)  # a success at 00:00, failed attempts at 00:01 .. 00:04
    # another event's success shares 00:02 with a failure: which came last is unknown
    records.append({**records[0], "id": "d-ok2", "eventId": "e-ok2"})
    records[-1]["lastAttemptAt"] = records[2]["lastAttemptAt"]
    row = _health_of(records)
    # 00:03 and 00:04 failed after it for sure; 00:02 may have too
    assert row["consecutive_failures"] == 2 and row["consecutive_failures_bound"] == "at least"
    assert "share the attempt time 2026-11-01 00:02:00" in row["reason"]
    assert row["failures_to_disable"] == 48 and row["failures_to_disable_bound"] == "at most"


def test_a_record_that_may_count_several_attempts_makes_the_run_a_lower_bound():
    # one record per event, attempts = how many were made (the spec's "attempt count")
    records = history(0) + [
        {
            "id": f"d-{k}",
            "eventId": f"e-{k}",
            "event": "vm.stopped",
            "statusCode": 500,
            "success": False,
            "attempts": 3,
            "lastAttemptAt": f"2026-11-01T01:0{k}:00Z",
        }
        for k in range(2)
    ]
    row = _health_of(records)
    assert row["consecutive_failures"] == 2 and row["consecutive_failures_bound"] == "at least"
    assert "may stand for several" in row["reason"]


def test_an_unknown_count_like_field_is_na_with_one_warning_and_no_failures_are_counted():
    # the attempt count under a name svcnb does not know: records may each be several attempts
    records = []
    for record in history(6):
        record = dict(record)
        record["tries_made"] = record.pop("attempts")
        records.append(record)
    with pytest.warns(frames.UnplacedKeyWarning, match="'tries_made'") as caught:
        deliveries = frames.deliveries(records, webhook_id="h9")
    assert len([w for w in caught if w.category is frames.UnplacedKeyWarning]) == 1
    assert deliveries["attempts"].isna().all()  # never 0
    assert deliveries.attrs["unplaced"] == {"tries_made": ["attempts"]}
    row = webhooks.health(frames.webhooks([HOOK]), deliveries, now=T0).iloc[0]
    assert pd.isna(row["consecutive_failures"]) and row["consecutive_failures_bound"] == "unknown"
    assert pd.isna(row["failures_to_disable"])
    assert pd.isna(row["attempt_success_rate"])
    assert "no readable attempt number" in row["reason"]


def test_an_unknown_status_like_field_makes_outcomes_unknown_not_failed():
    records = [
        {**r, "outcome": "delivered" if r["success"] else "retrying"} for r in history(2)[1:]
    ]
    with pytest.warns(frames.UnplacedKeyWarning, match="'outcome'"):
        deliveries = frames.deliveries(records, webhook_id="h9")
    assert deliveries["success"].isna().all() and deliveries["status_code"].isna().all()
    row = webhooks.health(frames.webhooks([HOOK]), deliveries, now=T0).iloc[0]
    assert (row["delivered"], row["failed"], row["unknown"]) == (0, 0, 1)
    assert pd.isna(row["success_rate"]) and pd.isna(row["consecutive_failures"])
    assert not bool(row["complete"])


def test_the_plot_says_at_least_and_unknown(frame):
    subs = frames.webhooks(
        [HOOK, {**HOOK, "id": "h8", "url": "https://e.example/h"}, {**HOOK, "id": "h7"}]
    )
    records = [dict(r, webhookId="h9") for r in history(47)[-10:]]
    records += [dict(r, webhookId="h7") for r in history(2)]
    records += [
        {k: v for k, v in r.items() if k != "lastAttemptAt"} | {"webhookId": "h8"}
        for r in history(3)
    ]
    health = webhooks.health(subs, frames.deliveries(records), now=T0)
    ax = webhooks.plot_health(health)
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == ["2", "unknown", "≥ 10"]
    widths = dict(zip(health["webhook_id"], [p.get_width() for p in ax.patches], strict=True))
    assert widths == {"h8": 0, "h9": 10, "h7": 2}
    assert ax.patches[list(health["webhook_id"]).index("h9")].get_hatch() == "//"


def test_bounds_read_as_bounds_wherever_the_frame_is_shown():
    from svcnb.reports import display_frame, text_table

    records = history(4)  # as in the test of records of different outcome at one time
    records.append({**records[0], "id": "d-ok2", "eventId": "e-ok2"})
    records[-1]["lastAttemptAt"] = records[2]["lastAttemptAt"]
    got = webhooks.health(
        frames.webhooks([HOOK]), frames.deliveries(records, webhook_id="h9"), now=T0
    )
    shown = display_frame(got, ["webhook_id", "consecutive_failures", "failures_to_disable"])
    assert shown.iloc[0].tolist() == ["h9", "≥ 2", "≤ 48"]
    text = text_table(got, 200, ["webhook_id", "consecutive_failures", "failures_to_disable"])
    assert "≥ 2" in text and "≤ 48" in text and "_bound" not in text
    unknown = got.assign(
        consecutive_failures=pd.array([None], dtype="Int64"),
        consecutive_failures_bound=pd.array(["unknown"], dtype="string"),
    )
    assert display_frame(unknown, ["consecutive_failures"]).iloc[0, 0] == "unknown"


def test_the_webhooks_view_says_events_unknown_on_every_surface():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", frames.AssumptionWarning)
        recs = frames.deliveries(_attempts_without_event_ids(), webhook_id="h9")
    view = webhooks.frames_view(frames.webhooks([{**HOOK, "consecutiveFailures": 0}]), recs, T0)
    shown = view.figures_frame().set_index("figure")
    for name in ("delivered", "failed", "unknown"):
        assert view.figures[name].text() == "unknown"  # never "2" failed events
        assert pd.isna(shown.loc[name, "value"]) and not shown.loc[name, "complete"]
    assert view.complete is False
    assert any("carry no event id" in note for note in view.notes)
    assert "Complete: no" in view.figures_text()
