"""Migrating a store of the first format (tests/store/data/legacy_store: five snapshots written
by that format, the third without the wallet, the first from before missing resources were
recorded) to Delta tables, checked row for row."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from svcnb.cli.migrate_store import add_arguments, run
from svcnb.store import RESOURCES, MissingResourceError, Store, StoreError, migrate
from svcnb.store._legacy import frame_at, read_entries

LEGACY = Path(__file__).parent / "data" / "legacy_store"


@pytest.fixture
def legacy(tmp_path) -> Path:
    copy = tmp_path / "old"
    shutil.copytree(LEGACY, copy)
    return copy


def test_migration_keeps_every_snapshot_and_checks_them(legacy, tmp_path):
    done = migrate(legacy, tmp_path / "new", server="https://api.example.test")
    entries = read_entries(legacy)
    assert done.snapshots == len(entries) == 5
    assert done.missing_checked == 1
    assert done.frames_checked == 5 * len(RESOURCES) - 1
    new = Store(tmp_path / "new")
    snaps = new.snapshots()
    assert snaps["snapshot_id"].tolist() == [e["snapshot_id"] for e in entries]
    assert snaps["missing"].tolist() == ["", "", "wallet", "", ""]
    assert snaps["unreadable"].tolist() == ["", "", "", "webhooks.events (1)", ""]
    with pytest.raises(MissingResourceError, match="billing:read"):
        new.load("wallet", at=snaps["server_time"].iloc[2])
    for entry in entries:  # independently of the migration's own check
        got = new.load("vms", at=entry["server_time"])
        got.attrs = {}
        pd.testing.assert_frame_equal(got, frame_at(legacy, "vms", entry))
    # the new store knows whose history it holds from now on
    assert new._entries()[0]["server"] == "https://api.example.test"
    assert new._entries()[0]["account"] == "wallet-1"
    assert (legacy / "manifest.json").exists()  # the old store is left as it was


def test_migration_refuses_a_store_that_is_not_old_or_a_target_that_is_not_empty(legacy, tmp_path):
    with pytest.raises(StoreError, match="not a store in the old format"):
        migrate(tmp_path / "nothing", tmp_path / "new")
    migrate(legacy, tmp_path / "new")
    with pytest.raises(StoreError, match="already holds snapshots"):
        migrate(legacy, tmp_path / "new")


def test_a_damaged_old_store_fails_the_migration(legacy, tmp_path):
    changes = next((legacy / "vms").glob("segment=*/changes.parquet"))
    table = pq.read_table(changes)
    pq.write_table(table.slice(0, 1), changes)
    with pytest.raises(StoreError, match="damaged"):
        migrate(legacy, tmp_path / "new")


def test_the_command_reports_the_check(legacy, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert run(parser.parse_args([str(legacy), str(tmp_path / "new"), "--quiet"])) == 0
    out = capsys.readouterr().out
    assert "migrated 5 snapshot(s)" in out and "checked row for row" in out
    assert run(parser.parse_args([str(legacy), str(tmp_path / "new"), "--quiet"])) == 1
    assert "already holds snapshots" in capsys.readouterr().err


# S3 reads and writes go through the object store to the same code as on disk, whose twin of
# this test runs in `make test`; on S3 it runs in `make test-all` (the S3 tests `make test` keeps:
# concurrent writers, a killed writer, a round trip, damaged commits)
@pytest.mark.slow
def test_migration_to_s3(legacy, s3_url):
    done = migrate(legacy, s3_url)
    assert done.snapshots == 5
    assert Store(s3_url).snapshots()["missing"].tolist() == ["", "", "wallet", "", ""]


# On S3 the journal is written by the same code as on disk; make test keeps the disk case (the
# S3 tests it keeps are named above test_migration_to_s3), make test-all runs both.
@pytest.mark.parametrize("where", ["disk", pytest.param("s3", marks=pytest.mark.slow)])
def test_the_audit_log_goes_with_the_history(legacy, tmp_path, where, request):
    records = [
        {
            "time": "2026-11-02T10:00:00+00:00",
            "firewall_id": "fw_1",
            "rule_id": "rule_1",
            "before": {"port": "22"},
            "after": {"port": "2222"},
            "outcome": "saved",
        },
        {
            "time": "2026-11-01T09:00:00+00:00",  # written after, dated before: order kept
            "firewall_id": "fw_1",
            "rule_id": "rule_2",
            "before": None,
            "after": None,
            "outcome": "finding accepted",
            "kind": "finding_acceptance",
            "reason": "bastion, reviewed",
        },
    ]
    (legacy / "audit.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    target = tmp_path / "new" if where == "disk" else request.getfixturevalue("s3_url")
    done = migrate(legacy, target)
    assert done.audit_records == 2
    log = Store(target).journal.log()
    assert log["outcome"].tolist() == ["saved", "finding accepted"]
    assert log["rule_id"].tolist() == ["rule_1", "rule_2"]
    assert log["after"].iloc[0] == {"port": "2222"}
    assert log["reason"].iloc[1] == "bastion, reviewed"
