from __future__ import annotations

import json
import multiprocessing
from datetime import UTC, datetime

import pandas as pd
import pytest

from svcnb.store import EVENT_COLUMNS, EventLog


def record(event_id="evt_1", delivery_id="dlv_1", **extra):
    base = {
        "received_at": datetime(2026, 11, 1, 0, 0, 5, tzinfo=UTC),
        "delivery_id": delivery_id,
        "event_id": event_id,
        "type": "vm.stopped",
        "event_header": "vm.stopped",
        "created_at": datetime(2026, 11, 1, tzinfo=UTC),
        "age_seconds": 5.0,
        "possible_replay": False,
        "data": {"vmId": "vm_1", "name": "café"},
    }
    base.update(extra)
    return base


def test_empty_log_reads_as_typed_empty_frame(tmp_path):
    frame = EventLog(tmp_path / "store").frame()
    assert list(frame.columns) == list(EVENT_COLUMNS)
    assert len(frame) == 0
    assert {c: str(t) for c, t in frame.dtypes.items()} == EVENT_COLUMNS
    assert not (tmp_path / "store").exists()  # reading never creates the store


def test_append_then_frame_round_trips_with_types(tmp_path):
    log = EventLog(tmp_path)
    assert log.append(record()) is True
    assert log.append(record("evt_2", "dlv_2", possible_replay=True, age_seconds=900.5))
    frame = log.frame()
    assert {c: str(t) for c, t in frame.dtypes.items()} == EVENT_COLUMNS
    assert frame["event_id"].tolist() == ["evt_1", "evt_2"]
    assert frame["possible_replay"].tolist() == [False, True]
    assert frame.loc[0, "created_at"] == pd.Timestamp("2026-11-01T00:00:00Z")
    assert frame.loc[0, "received_at"] == pd.Timestamp("2026-11-01T00:00:05Z")
    assert json.loads(frame.loc[0, "data"]) == {"vmId": "vm_1", "name": "café"}
    assert frame.loc[1, "age_seconds"] == 900.5


def test_duplicate_delivery_id_or_event_id_is_not_written(tmp_path):
    log = EventLog(tmp_path)
    assert log.append(record("evt_1", "dlv_1"))
    assert log.append(record("evt_1", "dlv_2")) is False  # a retry: new delivery, same event
    assert log.append(record("evt_9", "dlv_1")) is False  # the same delivery sent again
    assert len(log.frame()) == 1
    assert log.seen(delivery_id="dlv_1") and log.seen(event_id="evt_1")
    assert not log.seen(delivery_id="dlv_2", event_id="evt_2")


def test_dedup_survives_a_restart(tmp_path):
    EventLog(tmp_path).append(record())
    fresh = EventLog(tmp_path)  # a new process reads what the old one wrote
    assert fresh.seen(event_id="evt_1")
    assert fresh.append(record("evt_1", "dlv_other")) is False


def test_two_writers_on_one_log_see_each_other(tmp_path):
    a, b = EventLog(tmp_path), EventLog(tmp_path)
    assert a.append(record("evt_1", "dlv_1"))
    assert b.append(record("evt_1", "dlv_2")) is False
    assert b.append(record("evt_2", "dlv_3"))
    assert a.append(record("evt_2", "dlv_4")) is False
    assert log_lines(tmp_path) == 2


def _append_many(path, start, count, barrier):
    log = EventLog(path)
    barrier.wait(60)  # both writers start appending together, after their slow imports
    for i in range(start, start + count):
        log.append(record(f"evt_{i % 30}", f"dlv_{i}"))


def test_concurrent_processes_keep_each_event_once(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    # two writers, each offering all 30 events under delivery ids of its own
    barrier = ctx.Barrier(2)
    procs = [
        ctx.Process(target=_append_many, args=(tmp_path, n * 30, 30, barrier)) for n in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    frame = EventLog(tmp_path).frame()
    assert sorted(frame["event_id"]) == sorted(f"evt_{i}" for i in range(30))
    assert frame.attrs["skipped_lines"] == 0


def log_lines(path):
    return len(EventLog(path).path.read_bytes().splitlines())


def test_torn_last_line_is_skipped_and_the_next_append_is_intact(tmp_path):
    log = EventLog(tmp_path)
    log.append(record("evt_1", "dlv_1"))
    good = log.path.read_bytes()
    torn = b'{"received_at":"2026-11-01T00:00:05+00:00","delivery_id":"dlv_2","ev'
    log.path.write_bytes(good + torn)  # a crash mid-write: no newline

    reopened = EventLog(tmp_path)
    frame = reopened.frame()
    assert frame["event_id"].tolist() == ["evt_1"]
    assert frame.attrs["skipped_lines"] == 1
    # the torn event was never acknowledged, so the service retries it: it must go in whole
    assert reopened.append(record("evt_2", "dlv_3")) is True
    frame = EventLog(tmp_path).frame()
    assert frame["event_id"].tolist() == ["evt_1", "evt_2"]
    assert frame.attrs["skipped_lines"] == 1


def test_unknown_fields_are_refused_so_secrets_cannot_be_logged(tmp_path):
    log = EventLog(tmp_path)
    with pytest.raises(ValueError, match="unknown fields \\['signature'\\]"):
        log.append(record(signature="sha256=" + "0" * 64))
    with pytest.raises(ValueError, match="event_id"):
        log.append(record(event_id=""))
    assert not log.path.exists()


def test_lone_surrogates_in_data_do_not_break_the_log(tmp_path):
    log = EventLog(tmp_path)
    log.append(record(data={"note": json.loads('"\\ud800"')}))
    frame = log.frame()
    assert json.loads(frame.loc[0, "data"]) == {"note": "\ud800"}


def test_a_write_seen_half_done_is_read_again_once_complete(tmp_path):
    writer, reader = EventLog(tmp_path), EventLog(tmp_path)
    writer.append(record("evt_1", "dlv_1"))
    line = json.dumps({**json.loads(writer.path.read_bytes()), "event_id": "evt_2"})
    line = line.replace('"dlv_1"', '"dlv_2"').encode() + b"\n"
    with open(writer.path, "ab") as f:  # another process, caught mid-write
        f.write(line[:30])
        f.flush()
        assert not reader.seen(event_id="evt_2")
        f.write(line[30:])
    assert reader.seen(event_id="evt_2") and reader.seen(delivery_id="dlv_2")
    assert reader.append(record("evt_2", "dlv_9")) is False
