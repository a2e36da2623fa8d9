"""``svcnb`` fails in one line: every user mistake is a sentence on stderr and a non-zero exit."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from svcnb.cli import main
from svcnb.reports import billing

KINDS = ("bandwidth", "billing", "firewall", "webhooks")


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_no_server_configured_for_snapshot_first(played, capsys):
    store, _ = played
    assert main(["report", "billing", "--store", str(store.path), "--snapshot"]) == 2
    line = _one_line(capsys.readouterr().err)
    for name in ("SVC_BASE_URL", "SVC_API_KEY", "SVCNB_SANDBOX"):
        assert name in line


def test_key_without_url_is_named(played, capsys, monkeypatch):
    store, _ = played
    monkeypatch.setenv("SVC_API_KEY", "svc_notarealtokenatall")
    assert main(["report", "billing", "--store", str(store.path), "--snapshot"]) == 2
    err = capsys.readouterr().err
    line = _one_line(err)
    assert "SVC_BASE_URL" in line and "not" in line
    assert "svc_notarealtokenatall" not in err


def test_missing_store_names_where_it_looked(tmp_path, capsys, monkeypatch):
    where = tmp_path / "nowhere"
    assert main(["report", "billing", "--store", str(where)]) == 2
    assert str(where) in _one_line(capsys.readouterr().err)
    monkeypatch.setenv("SVCNB_STORE", str(where))
    assert main(["report", "bandwidth"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(where) in line and "SVCNB_STORE" in line


def test_unwritable_output_is_one_line(played, tmp_path, capsys):
    store, _ = played
    out = tmp_path / "no" / "such" / "folder" / "r.csv"
    code = main(
        ["report", "billing", "--store", str(store.path), "--format", "csv", "--out", str(out)]
    )
    assert code != 0
    assert str(out) in _one_line(capsys.readouterr().err)
    png = tmp_path / "missing" / "r.png"
    code = main(
        ["report", "webhooks", "--store", str(store.path), "--format", "png", "--out", str(png)]
    )
    assert code != 0
    _one_line(capsys.readouterr().err)


def test_unknown_table_lists_the_tables(played, capsys):
    store, _ = played
    assert main(["report", "billing", "--store", str(store.path), "--table", "nope"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "runway" in line and "monthly_total" in line


@pytest.mark.parametrize(
    "argv",
    [
        ["reprot", "billing"],
        ["report", "billing", "--frmat", "csv"],
        ["report", "bilingg"],
        ["report", "billing", "--format", "xls"],
    ],
)
def test_typos_get_argparse_words_not_a_traceback(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error:" in err


@pytest.mark.parametrize("kind", KINDS)
def test_text_tables_fit_100_columns_and_cut_nothing(played, kind, capsys):
    store, _ = played
    assert main(["report", kind, "--store", str(store.path)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "…" not in out and "..." not in out


def test_long_reason_wraps_whole():
    from svcnb.reports import text_table

    reason = " ".join(f"word{i}" for i in range(60))
    frame = pd.DataFrame({"check": ["shadowed"], "firewall_name": ["fw-1"], "reason": [reason]})
    text = text_table(frame, width=60)
    assert max(len(line) for line in text.splitlines()) <= 60
    assert " ".join(text.split()).count("word59") == 1
    assert all(f"word{i}" in text for i in range(60))


@pytest.mark.parametrize("kind", KINDS)
def test_every_table_exports_as_csv_and_json(played, kind, capsys):
    from svcnb import reports

    store, _ = played
    view = getattr(reports, kind).view(store)
    for name, frame in [("figures", view.figures_frame()), *view.tables.items()]:
        base = ["report", kind, "--store", str(store.path), "--table", name]
        assert main([*base, "--format", "csv"]) == 0
        back = pd.read_csv(io.StringIO(capsys.readouterr().out))
        assert list(back.columns) == [str(c) for c in frame.columns]
        assert len(back) == len(frame)
        assert main([*base, "--format", "json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert len(rows) == len(frame)


def test_csv_money_is_exact_decimal_text(frame):
    vms = frame(
        "vms",
        [
            {"id": "a", "name": "a", "status": "running", "plan_slug": "p", "region_slug": "r",
             "billing_status": "active", "price_monthly_amount": 0.1,
             "price_monthly_currency": "EUR"},
            {"id": "b", "name": "b", "status": "running", "plan_slug": "q", "region_slug": "r",
             "billing_status": "active", "price_monthly_amount": 0.2,
             "price_monthly_currency": "EUR"},
        ],
    )  # fmt: skip
    total = billing.monthly_total(vms)
    text = billing.export_csv(total)
    assert "0.30" in text and "0.30000000000000004" not in text
    assert billing.export_csv(pd.DataFrame({"amount": [12.499999999], "currency": ["EUR"]}))
    assert "12.50" in billing.export_csv(
        pd.DataFrame({"amount": [12.4999999999999], "currency": ["EUR"]})
    )


def test_help_has_defaults_examples_and_no_rest(capsys):
    for argv in (["--help"], ["report", "--help"], ["demo", "--help"], ["lab", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        assert "``" not in out and ":func:" not in out
        assert "example" in out
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    # --width follows the terminal: a table fits the window it is read in
    assert "(default: the terminal's width; 100 when not a terminal)" in said


def test_closed_pipe_exits_quietly(played):
    store, _ = played
    env = dict(os.environ, SVCNB_STORE=str(store.path))
    # the reader is gone before the command writes, as with `svcnb report ... | head -1`
    child = subprocess.Popen(
        [sys.executable, "-m", "svcnb", "report", "billing"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    child.stdout.close()
    err = child.stderr.read().decode()
    child.wait(timeout=120)
    assert err == ""
    assert child.returncode == 0
