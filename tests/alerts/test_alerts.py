"""svcnb check: each rule at its crossing (days worked out by hand), fired once, cleared when the
condition goes, delivered over HTTPS on loopback with retries, exit codes, several dialects."""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import replace

import pandas as pd
import pytest
from _tiers import dialects

import svcnb
from svcnb import frames
from svcnb.alerts import AlertRules, DeliveryError, check, deliver, history, rules_from_config
from svcnb.cli import main
from svcnb.config import ConfigError
from svcnb.reports import bandwidth
from svcnb.store import Store

OFF = AlertRules(
    runway_days=None,
    low_balance_days=None,
    bandwidth_days=None,
    webhook_failures_left=None,
    high_findings=False,
)


def vm(
    renewal: str = "2026-12-31T00:00:00Z", used: int = 0, pack: int = 1000, price: str = "10.00"
) -> dict:
    return {
        "id": "vm-1",
        "name": "web-1",
        "status": "running",
        "region": {"slug": "fra1", "name": "Frankfurt"},
        "plan": {"slug": "s-1", "name": "Small"},
        "billing": {"status": "active", "nextRenewalAt": renewal, "priceMonthly": price},
        "bandwidthUsedBytes": used,
        "bandwidthPackBytes": str(pack),
        "isProtected": False,
    }


def write(store: Store, when: str, *, balance: str = "5.00", hooks=None, **vm_fields) -> str:
    out = {
        "vms": frames.vms([vm(**vm_fields)]),
        "wallet": frames.wallet([{"id": "w-1", "balance": {"amount": balance, "currency": "EUR"}}]),
    }
    if hooks is not None:
        out["webhooks"] = frames.webhooks(hooks)
        out["deliveries"] = frames.deliveries([])
    return store.write(out, server_time=pd.Timestamp(when), partial=True)


def fired(result) -> list[str]:
    return result.fired["key"].tolist()


def test_runway_fires_once_after_the_crossing_day_clears_on_top_up_and_fires_again(tmp_path):
    # balance 5.00 EUR, one renewal of 10.00 on 2026-12-31: the runway ends 2026-12-31, so it
    # is under 30 days from just after 2026-12-01 00:00 (30.0 days is not under 30)
    store = Store(tmp_path / "s")
    rules = replace(OFF, runway_days=30)
    write(store, "2026-11-30T00:00Z")
    assert fired(check(store, rules)) == []
    write(store, "2026-12-01T00:00Z")
    first = check(store, rules)
    assert fired(first) == [] and first.exit_code == 0
    write(store, "2026-12-01T12:00Z")
    crossing = check(store, rules)
    assert fired(crossing) == ["runway"] and crossing.exit_code == 1
    assert crossing.fired["value"].iloc[0] == 29.5
    assert crossing.fired["due_at"].iloc[0] == pd.Timestamp("2026-12-31T00:00Z")
    assert "balance 5.00 EUR" in crossing.fired["message"].iloc[0]
    # the same snapshot again, and the next day: still under 30 days, nothing new
    again = check(store, rules)
    assert (
        fired(again) == [] and again.exit_code == 0 and again.standing["key"].tolist() == ["runway"]
    )
    write(store, "2026-12-02T00:00Z")
    assert fired(check(store, rules)) == []
    # a top-up to 100.00 pays ten renewals: the runway moves to 2027-10-31, the alert clears
    write(store, "2026-12-03T00:00Z", balance="100.00")
    topped = check(store, rules)
    assert fired(topped) == [] and topped.cleared["key"].tolist() == ["runway"]
    write(store, "2026-12-04T00:00Z", balance="5.00")
    assert fired(check(store, rules)) == ["runway"]
    log = history(store)
    assert log["outcome"].tolist() == ["alert fired", "alert cleared", "alert fired"]
    assert log["time"].tolist() == [
        pd.Timestamp(t) for t in ("2026-12-01T12:00Z", "2026-12-03T00:00Z", "2026-12-04T00:00Z")
    ]


def test_low_balance_fires_seven_days_before_the_forecast(tmp_path):
    # balance 5.00, renewal 10.00 on 2026-12-20: with the 7-day window the balance is below
    # what is needed from 2026-12-13 00:00; low_balance_days = 7 fires at 7.0 days, not at 8
    store = Store(tmp_path / "s")
    rules = replace(OFF, low_balance_days=7)
    write(store, "2026-12-05T00:00Z", renewal="2026-12-20T00:00:00Z")
    assert fired(check(store, rules)) == []
    write(store, "2026-12-06T00:00Z", renewal="2026-12-20T00:00:00Z")
    result = check(store, rules)
    assert fired(result) == ["low_balance"]
    assert result.fired["due_at"].iloc[0] == pd.Timestamp("2026-12-13T00:00Z")
    assert result.fired["value"].iloc[0] == 7.0


def test_bandwidth_fires_when_the_pack_is_three_days_away(tmp_path):
    # 100 bytes a day against a pack of 1000: at 600 used the pack is 4 days away, at 700 three
    store = Store(tmp_path / "s")
    rules = replace(OFF, bandwidth_days=3)
    write(store, "2026-11-05T00:00Z", used=500, balance="100.00")
    write(store, "2026-11-06T00:00Z", used=600, balance="100.00")
    assert fired(check(store, rules)) == []
    write(store, "2026-11-07T00:00Z", used=700, balance="100.00")
    result = check(store, rules)
    assert fired(result) == ["bandwidth:vm-1"]
    assert result.fired["due_at"].iloc[0] == pd.Timestamp("2026-11-10T00:00Z")
    # the day the bandwidth report states, not the estimate's hour
    message = result.fired["message"].iloc[0]
    assert message.endswith("passes its pack in 3 days (on 2026-11-10 UTC)"), message
    view = bandwidth.view(store)
    assert view.figures["first_exceeds_on"].text() == "2026-11-10 (web-1)"


def hook(failures: int, active: bool = True) -> dict:
    return {
        "id": "whk-1",
        "url": "https://example.com/hook",
        "events": ["vm.stopped"],
        "isActive": active,
        "consecutiveFailures": failures,
        "createdAt": "2026-11-01T00:00:00Z",
    }


def test_webhook_fires_within_ten_failures_of_auto_disable(tmp_path):
    # the service disables a subscription at 50 consecutive failures: 39 leaves 11, 40 leaves 10
    store = Store(tmp_path / "s")
    rules = replace(OFF, webhook_failures_left=10)
    write(store, "2026-11-05T00:00Z", hooks=[hook(39)], balance="100.00")
    assert fired(check(store, rules)) == []
    write(store, "2026-11-06T00:00Z", hooks=[hook(40)], balance="100.00")
    result = check(store, rules)
    assert fired(result) == ["webhook:whk-1"] and result.fired["value"].iloc[0] == 10
    # turned off by hand: no longer about to be auto-disabled, the alert clears
    write(store, "2026-11-07T00:00Z", hooks=[hook(40, active=False)], balance="100.00")
    assert check(store, rules).cleared["key"].tolist() == ["webhook:whk-1"]


def test_a_rule_that_cannot_be_read_says_so_and_clears_nothing(tmp_path):
    store = Store(tmp_path / "s")
    rules = replace(OFF, webhook_failures_left=10)
    write(store, "2026-11-06T00:00Z", hooks=[hook(45)], balance="100.00")
    assert fired(check(store, rules)) == ["webhook:whk-1"]
    write(store, "2026-11-07T00:00Z", balance="100.00")  # webhooks not read this time
    blind = check(store, rules)
    assert "webhook_failures_left" in blind.unknown and blind.cleared.empty
    assert "could not check webhook_failures_left" in blind.text()


def failed_attempts(n: int, *, timed: bool = True) -> list[dict]:
    """The latest ``n`` delivery records a service keeps: all failed, a minute apart."""
    out = []
    for k in range(n):
        record = {
            "id": f"d{k:02d}",
            "eventId": f"e{k // 3}",
            "event": "vm.stopped",
            "statusCode": 500,
            "success": False,
            "attempts": k % 3 + 1,
        }
        if timed:
            record["lastAttemptAt"] = f"2026-11-05T00:{k:02d}:00Z"
        out.append(record)
    return out


def write_counted(store: Store, when: str, hook_record: dict, records: list[dict]) -> str:
    out = {
        "vms": frames.vms([vm()]),
        "wallet": frames.wallet(
            [{"id": "w-1", "balance": {"amount": "100.00", "currency": "EUR"}}]
        ),
        "webhooks": frames.webhooks([hook_record]),
        "deliveries": frames.deliveries(records, webhook_id=hook_record["id"]),
    }
    return store.write(out, server_time=pd.Timestamp(when), partial=True)


def test_a_distance_resting_on_an_unpinned_history_depth_is_unknown(tmp_path):
    # no counter from the service, and only its latest 10 attempts, all failed: at least 10 in
    # a row; how much history the service keeps is assumed, not pinned, so what is left before
    # auto-disable is unknown (never "at most 40" when 3 may be left): neither fires nor clears
    store = Store(tmp_path / "s")
    counterless = {k: v for k, v in hook(0).items() if k != "consecutiveFailures"}
    write_counted(store, "2026-11-05T01:00Z", counterless, failed_attempts(10))
    result = check(store, replace(OFF, webhook_failures_left=45))
    assert fired(result) == [] and result.exit_code == 0
    said = result.unknown["webhook:whk-1"]
    assert "failures left before auto-disable unknown" in said
    assert '[deliveries] history = "full"' in said


def test_a_bounded_distance_to_auto_disable_neither_fires_nor_passes_as_clear(tmp_path):
    # no counter; a success shares its attempt time with the oldest failure (another event):
    # 9 failures in a row for sure, the 10th perhaps, so at most 41 left. 41 may be 40:
    # within 10 is not known either way
    store = Store(tmp_path / "s")
    counterless = {k: v for k, v in hook(0).items() if k != "consecutiveFailures"}
    records = failed_attempts(10)
    records.append(
        {**records[0], "id": "dok", "eventId": "eok", "statusCode": 200, "success": True}
    )
    records[-1]["attempts"] = 1
    write_counted(store, "2026-11-05T01:00Z", counterless, records)
    result = check(store, replace(OFF, webhook_failures_left=10))
    assert fired(result) == [] and result.exit_code == 0
    assert "at most 41 failed deliveries left" in result.unknown["webhook:whk-1"]
    assert "could not check webhook:whk-1" in result.text()
    # an upper bound within the threshold is proven within it: that fires, saying "at most"
    wide = check(store, replace(OFF, webhook_failures_left=45))
    assert fired(wide) == ["webhook:whk-1"] and wide.fired["value"].iloc[0] == 41
    assert (
        "is at most 41 failed deliveries from auto-disable (≥ 9 in a row)"
        in (wide.fired["message"].iloc[0])
    )


def test_a_rule_turned_off_says_its_alerts_are_no_longer_checked_never_cleared(tmp_path):
    # the runway alert stands (29.5 days under 30); then runway_days is turned off while the
    # runway is still 29 days: nothing cleared, said as no longer checked, nothing recorded
    store = Store(tmp_path / "s")
    write(store, "2026-12-01T12:00Z")
    assert fired(check(store, replace(OFF, runway_days=30))) == ["runway"]
    write(store, "2026-12-02T12:00Z")
    turned_off = check(store, OFF)
    assert turned_off.cleared.empty and turned_off.unchecked["key"].tolist() == ["runway"]
    assert "cleared" not in turned_off.text()
    assert "no longer checked ([alerts] runway_days is off): runway 29 days" in turned_off.text()
    assert history(store)["outcome"].tolist() == ["alert fired"]


def test_check_gives_the_runway_in_the_days_the_reports_show(tmp_path):
    # 29.5 days: the billing report shows 29 (whole days left); the alert says the same figure
    from svcnb.reports import billing, cell_text

    store = Store(tmp_path / "s")
    write(store, "2026-12-01T12:00Z")
    row = billing.runway.from_store(store).iloc[0]
    shown = cell_text("runway_days", row["runway_days"])
    message = check(store, replace(OFF, runway_days=30)).fired["message"].iloc[0]
    assert shown == "29" and message.startswith(f"runway {shown} days:")


def test_an_alert_standing_is_not_cleared_when_the_distance_becomes_unknown(tmp_path):
    store = Store(tmp_path / "s")
    rules = replace(OFF, webhook_failures_left=10)
    write_counted(store, "2026-11-05T01:00Z", hook(45), failed_attempts(10))
    assert fired(check(store, rules)) == ["webhook:whk-1"]
    counterless = {k: v for k, v in hook(0).items() if k != "consecutiveFailures"}
    write_counted(store, "2026-11-06T01:00Z", counterless, failed_attempts(10, timed=False))
    blind = check(store, rules)
    assert blind.fired.empty and blind.cleared.empty
    assert "failures left before auto-disable unknown" in blind.unknown["webhook:whk-1"]


def test_config_section_is_read_and_mistakes_are_named(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    path.write_text("[alerts]\nrunway_days = 30\nbandwidth_days = false\nattempts = 2\n")
    rules = rules_from_config(path)
    assert (rules.runway_days, rules.bandwidth_days, rules.attempts) == (30.0, None, 2)
    assert rules.low_balance_days == 7 and rules.high_findings is True  # defaults
    monkeypatch.setenv("SVCNB_ALERT_URL", "https://hooks.example.com/x")
    assert rules_from_config(path).url == "https://hooks.example.com/x"
    for bad, words in (
        ("runway = 3", "unknown key(s) runway"),
        ("runway_days = -1", "runway_days = -1 must be a number >= 0"),
        ("webhook_failures_left = 2.5", "must be a whole number"),
        ("high_findings = 1", "high_findings must be true or false"),
    ):
        path.write_text(f"[alerts]\n{bad}\n")
        with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
            rules_from_config(path)


def test_delivery_retries_after_500_and_refuses_plain_http(receiver, tls):
    receiver.answers = [500, 503]
    waits: list[float] = []
    attempts = deliver(
        receiver.url,
        {"text": "hello"},
        ca_bundle=str(tls.ca_pem),
        backoff_seconds=0.5,
        sleep=waits.append,
    )
    assert attempts == 3 and waits == [0.5, 1.0]
    assert receiver.bodies == [{"text": "hello"}] * 3
    receiver.answers = [500] * 4
    with pytest.raises(DeliveryError, match="after 4 attempt") as info:
        deliver(receiver.url, {"text": "x"}, ca_bundle=str(tls.ca_pem), sleep=lambda s: None)
    assert "secret-part" not in str(info.value)  # the URL's path may be a token
    receiver.answers = [404]
    with pytest.raises(DeliveryError, match="refused"):
        deliver(receiver.url, {"text": "x"}, ca_bundle=str(tls.ca_pem), sleep=lambda s: None)
    with pytest.raises(ConfigError, match="must be https"):
        deliver("http://127.0.0.1:9/x", {"text": "x"})


def test_self_signed_receiver_is_refused_without_its_ca(receiver):
    with pytest.raises(DeliveryError, match="not trusted") as info:
        deliver(receiver.url, {"text": "x"}, attempts=1)
    assert "secret-part" not in str(info.value)
    assert receiver.bodies == []


def test_svcnb_check_end_to_end_over_https(receiver, tls, tmp_path, capsys):
    store_path = tmp_path / "s"
    store = Store(store_path)
    config = tmp_path / "c.toml"
    config.write_text(
        "[alerts]\nrunway_days = 30\nlow_balance_days = false\nbandwidth_days = false\n"
        "webhook_failures_left = false\nhigh_findings = false\n"
        f'url = "{receiver.url}"\nca_bundle = "{tls.ca_pem}"\nbackoff_seconds = 0.01\n'
    )
    argv = ["check", "--store", str(store_path), "--config", str(config)]
    write(store, "2026-12-01T00:00Z")
    assert main(argv) == 0 and receiver.bodies == []
    write(store, "2026-12-01T12:00Z")
    receiver.answers = [500]  # the first attempt fails, the retry gets through
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "1 alert(s) fired" in out and "attempt 2" in out and "secret-part" not in out
    assert len(receiver.bodies) == 2 and receiver.bodies[0] == receiver.bodies[1]
    body = receiver.bodies[-1]
    assert body["text"].startswith("svcnb check on snapshot") and "runway 29 days" in body["text"]
    assert [a["key"] for a in body["fired"]] == ["runway"]
    assert body["fired"][0]["due_at"] == "2026-12-31T00:00:00+00:00"
    assert body["server_time"] == "2026-12-01T12:00:00+00:00"
    json.dumps(body)  # plain JSON all the way down
    # the same snapshot again: nothing fires, nothing is sent
    assert main(argv) == 0 and len(receiver.bodies) == 2
    assert main([*argv, "--no-deliver"]) == 0


def test_undelivered_alerts_are_sent_by_the_next_check(receiver, tls, tmp_path, capsys):
    store_path = tmp_path / "s"
    config = tmp_path / "c.toml"
    config.write_text(
        "[alerts]\nrunway_days = 30\nhigh_findings = false\nattempts = 2\n"
        f'url = "{receiver.url}"\nca_bundle = "{tls.ca_pem}"\nbackoff_seconds = 0.01\n'
    )
    write(Store(store_path), "2026-12-01T12:00Z")
    argv = ["check", "--store", str(store_path), "--config", str(config)]
    receiver.answers = [500, 500]
    assert main(argv) == 1
    assert "not delivered after 2 attempt" in capsys.readouterr().err
    assert main(argv) == 1 and len(receiver.bodies) == 3  # sent again, and this time it arrived
    assert main(argv) == 0


def test_user_mistakes_exit_2(tmp_path, capsys):
    assert main(["check", "--store", str(tmp_path / "none")]) == 2
    assert "no snapshot store" in capsys.readouterr().err
    store_path = tmp_path / "s"
    write(Store(store_path), "2026-12-01T12:00Z")
    assert main(["check", "--store", str(store_path), "--deliver"]) == 2
    assert "--deliver needs a URL" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("[alerts]\nrunway_days = 'soon'\n")
    assert main(["check", "--store", str(store_path), "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "runway_days" in err


@pytest.fixture(scope="module")
def default_keys(tmp_path_factory):
    return _fired_keys_on("default", tmp_path_factory.mktemp("default"))


RULES = AlertRules(runway_days=60, low_balance_days=60, bandwidth_days=10, webhook_failures_left=45)


def _fired_keys_on(dialect: str, folder) -> list[str]:
    from svcnb.sandbox import serve

    with (
        serve(vms=40, seed=7, dialect=dialect, rate_limit=100_000) as sb,
        svcnb.Client(api_key=sb.tokens["admin"], base_url=sb.base_url, progress=False) as c,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # the dialects' odd words are not under test here
        store = Store(folder)
        store.take(c)
        sb.control.advance(86_400)
        store.take(c)
        result = check(store, RULES)
        assert check(store, RULES).fired.empty  # once
        return sorted(result.fired["key"])


@pytest.mark.parametrize("dialect", dialects(["acme", "linkhdr", "cursor"]))
def test_the_same_alerts_fire_whatever_the_dialect(dialect, default_keys, tmp_path):
    # every rule has something to say on this account (seed 7, 40 VMs, day 2)
    assert {k.split(":")[0] for k in default_keys} == {
        "runway",
        "low_balance",
        "bandwidth",
        "webhook",
        "finding",
    }
    assert _fired_keys_on(dialect, tmp_path / "s") == default_keys


# -- a receiver that never finishes answering ---------------------------------------------------

MARGIN = 2.0  # generous: a loaded CI box; the bug ran past 180 s


def test_a_delivery_to_a_trickling_receiver_ends_by_its_deadline(tls):
    from _receiver import trickling_receiver

    with trickling_receiver(str(tls.cert_pem), str(tls.key_pem)) as slow:
        started = time.monotonic()
        with pytest.raises(DeliveryError, match="deadline") as info:
            deliver(
                slow.url,
                {"text": "x"},
                ca_bundle=str(tls.ca_pem),
                timeout_seconds=10,  # each trickled line comes well within it
                deadline=started + 2,
            )
        took = time.monotonic() - started
    assert took < 2 + MARGIN, f"delivery ran {took:.1f} s with a 2 s deadline"
    assert "secret-part" not in str(info.value)


@pytest.mark.parametrize("how", ["--deadline", "deadline_seconds"])
def test_svcnb_check_ends_by_its_deadline_and_records_nothing(tls, tmp_path, capsys, how):
    from _receiver import trickling_receiver

    store_path = tmp_path / "s"
    write(Store(store_path), "2026-12-01T12:00Z")
    with trickling_receiver(str(tls.cert_pem), str(tls.key_pem)) as slow:
        config = tmp_path / "c.toml"
        config.write_text(
            "[alerts]\nrunway_days = 30\nhigh_findings = false\n"
            f'url = "{slow.url}"\nca_bundle = "{tls.ca_pem}"\nbackoff_seconds = 0.01\n'
            + ("deadline_seconds = 3\n" if how == "deadline_seconds" else "")
        )
        argv = ["check", "--store", str(store_path), "--config", str(config)]
        if how == "--deadline":
            argv += ["--deadline", "3"]
        started = time.monotonic()
        code = main(argv)
        took = time.monotonic() - started
    err = capsys.readouterr().err
    assert took < 3 + MARGIN, f"svcnb check ran {took:.1f} s with a 3 s deadline"
    assert code == 1 and "deadline" in err and "secret-part" not in err
    assert slow.bodies  # it was tried
    assert "fired" not in set(history(Store(store_path))["outcome"])  # sent again next time


def test_the_check_deadline_is_a_bounded_number(tmp_path, capsys):
    path = tmp_path / "c.toml"
    for bad in ("deadline_seconds = 0", "deadline_seconds = false", "deadline_seconds = 1e9"):
        path.write_text(f"[alerts]\n{bad}\n")
        with pytest.raises(ConfigError, match="deadline_seconds"):
            rules_from_config(path)
    with pytest.raises(SystemExit):
        main(["check", "--deadline", "nan"])
    assert "not a number of seconds" in capsys.readouterr().err
