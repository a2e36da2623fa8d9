"""``svcnb report ...`` over a real store."""

from __future__ import annotations

import io

import pandas as pd

from svcnb.cli import main
from svcnb.reports import billing, firewall


def test_table_names_the_runway(played, capsys):
    store, seen = played
    assert main(["report", "billing", "--store", str(store.path)]) == 0
    out = capsys.readouterr().out
    run = billing.runway(seen[-1]["vms"], seen[-1]["wallet"], now=seen[-1]["now"]).iloc[0]
    assert "Runway" in out
    assert run["vm_id"] in out
    assert "Renewals due in 7, 30 and 90 days" in out


def test_csv_as_of_a_past_snapshot(played, tmp_path, capsys):
    store, seen = played
    out = tmp_path / "renewals.csv"
    at = seen[1]["now"].isoformat()
    code = main(
        [
            "report",
            "billing",
            "--store",
            str(store.path),
            "--at",
            at,
            "--format",
            "csv",
            "--out",
            str(out),
            "--within",
            "90D",
        ]
    )
    assert code == 0
    back = pd.read_csv(out)
    want = billing.renewals(seen[1]["vms"], seen[1]["wallet"], now=seen[1]["now"], within="90D")
    assert back["vm_id"].tolist() == want["vm_id"].tolist()
    assert back["amount"].tolist() == want["amount"].astype(float).tolist()


def test_firewall_csv_to_stdout(played, capsys):
    store, seen = played
    assert main(["report", "firewall", "--store", str(store.path), "--format", "csv"]) == 0
    back = pd.read_csv(io.StringIO(capsys.readouterr().out))
    want = firewall.audit(
        seen[-1]["rules"], seen[-1]["vm_firewalls"], seen[-1]["firewalls"], seen[-1]["vms"]
    )
    assert back["check"].tolist() == want["check"].tolist()
    assert len(back) > 0


def test_png_for_every_report(played, tmp_path):
    store, _ = played
    for kind in ("bandwidth", "billing", "firewall", "webhooks"):
        out = tmp_path / f"{kind}.png"
        assert (
            main(["report", kind, "--store", str(store.path), "--format", "png", "--out", str(out)])
            == 0
        )
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_times_are_named(played, capsys):
    store, seen = played
    early = (seen[0]["now"] - pd.Timedelta(days=3)).isoformat()
    assert main(["report", "webhooks", "--store", str(store.path), "--at", early]) == 2
    assert "no snapshot at or before" in capsys.readouterr().err
    assert main(["report", "webhooks", "--store", str(store.path), "--at", "soonish"]) == 2
    assert "'soonish' is not a time" in capsys.readouterr().err


def test_empty_store_says_what_to_do(tmp_path, capsys):
    assert main(["report", "billing", "--store", str(tmp_path / "none")]) == 2
    assert "svcnb snapshot" in capsys.readouterr().err
