"""A store taken from a sandbox keeps the status words its dialect pins (the snapshot's catalog
entry), so ``svcnb report`` and ``svcnb check`` on that store, in a later process with no
client, read every VM as the reader did: no unknown word, no VM left out. What the user pins
in the config file outranks what a snapshot was taken with."""

from __future__ import annotations

import warnings

from svcnb import cli, vocab
from svcnb.config import write_section
from svcnb.reports import billing
from svcnb.store import Store


def _snapshot_from_sandbox(make_sandbox, monkeypatch, tmp_path):
    sb = make_sandbox(vms=200, seed=3, time_scale=0.0)  # 12 VMs 'suspended' (seed 3)
    conn = sb.write_connection_file(tmp_path / "sandbox.json")
    monkeypatch.setenv("SVCNB_SANDBOX", str(conn))
    store = tmp_path / "store"
    assert cli.main(["snapshot", "--store", str(store), "--quiet"]) == 0
    monkeypatch.delenv("SVCNB_SANDBOX")
    vocab.reload()  # a later process: the config file's words only
    return sb, store


def test_a_report_on_a_sandbox_store_reads_the_words_the_snapshot_was_taken_with(
    make_sandbox, monkeypatch, tmp_path, capsys
):
    sb, store = _snapshot_from_sandbox(make_sandbox, monkeypatch, tmp_path)
    suspended = sum(v["status"] == "suspended" for v in sb.control.truth()["vms"])
    assert suspended > 0
    capsys.readouterr()
    assert cli.main(["report", "billing", "--store", str(store)]) == 0
    out, err = capsys.readouterr()
    assert "not in svcnb's vocabulary" not in err, err
    assert "VMs left out (status word unknown)               0" in out
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        late = billing.overdue.from_store(Store(store))
    assert (late["status"] == "suspended").sum() == suspended


def test_the_config_file_outranks_the_words_a_snapshot_was_taken_with(
    make_sandbox, monkeypatch, tmp_path
):
    _, store = _snapshot_from_sandbox(make_sandbox, monkeypatch, tmp_path)
    write_section("vocabulary.vm_status", {"suspended": "stopped"})
    vocab.reload()
    snap = Store(store).at()
    assert snap.pins["vocabulary.vm_status.suspended"].value == "stopped"
    assert snap.vocabulary().classify("vm_status", "suspended") == "stopped"
