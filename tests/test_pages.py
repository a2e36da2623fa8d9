"""Finance without Jupyter: ``svcnb report KIND --format html`` and ``svcnb pages`` render a
view from any store as a self-contained page, with the figures ``--format json`` exports; text
tables fit the terminal; ``svcnb lab``'s store is named where ``svcnb report`` looks."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from svcnb import cli
from svcnb.cli import lab as lab_command
from svcnb.cli import report as report_command
from svcnb.reports import text_table
from svcnb.store import Store

REMOTE = re.compile(r"<script\b|<link\b|\bsrc=[\"']?(?:https?:)?//", re.IGNORECASE)


@pytest.fixture
def store(three_days: Store) -> Store:
    """Three daily snapshots of a sandbox, in a store of the user's own (not the demo's)."""
    return three_days


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def _figures_on(page: str) -> dict[str, str]:
    import html

    found = re.findall(r"data-figure='([^']+)'>([^<]*)</td>", page)
    return {name: html.unescape(text) for name, text in found}


def test_pages_hold_the_figures_report_json_exports(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "pages"
    code, said, err = _run(["pages", "--store", str(store.path), "--out", str(out)])
    assert code == 0, err
    assert "index.html" in said
    index = (out / "index.html").read_text(encoding="utf-8")
    for kind in report_command.KINDS:
        assert f'href="{kind}.html"' in index
        page = (out / f"{kind}.html").read_text(encoding="utf-8")
        code, exported, err = _run(
            ["report", kind, "--store", str(store.path), "--format", "json", "--table", "figures"]
        )
        assert code == 0, err
        figures = {f["figure"]: f["text"] for f in json.loads(exported)}
        assert figures, kind
        # every figure, as the JSON export says it, on the page: the same view, one renderer
        assert _figures_on(page) == figures, kind
        assert not REMOTE.search(page), f"{kind}: {REMOTE.search(page).group(0)}"
        assert page.startswith("<!DOCTYPE html>") and "<title>" in page
        assert 'name="viewport"' in page  # readable on a narrow screen


def test_report_html_is_the_page_of_pages(store: Store, tmp_path: Path) -> None:
    target = tmp_path / "billing.html"
    code, _, err = _run(
        ["report", "billing", "--store", str(store.path), "--format", "html", "--out", str(target)]
    )
    assert code == 0, err
    page = target.read_text(encoding="utf-8")
    assert "data:image/png;base64," in page  # plots inline
    assert "Renewals within 30 days" in page
    # every row the report computed is on the page (the renewals table is all shown)
    code, exported, _ = _run(
        ["report", "billing", "--store", str(store.path), "--format", "json", "--table", "renewals"]
    )
    for row in json.loads(exported):
        assert row["vm_id"] in page


def test_text_tables_never_break_a_date_or_an_amount() -> None:
    frame = pd.DataFrame(
        {
            "renewal_at": pd.to_datetime(["2026-11-05T00:00Z", "2026-11-30T00:00Z"]),
            "name": ["cache-fra-004", "web-nyc-001"],
            "amount": [119.0, 249.99],
            "currency": ["EUR", "EUR"],
            "reason": ["a renewal the wallet can pay", "the first one it cannot pay"],
        }
    )
    text = text_table(frame, width=60)
    assert "2026-11-05 00:00" in text and "2026-11-30 00:00" in text
    assert "119.00 EUR" in text and "249.99 EUR" in text
    assert max(len(line) for line in text.splitlines()) <= 60


def test_report_text_fits_a_wide_terminal(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, said, err = _run(["report", "billing", "--store", str(store.path), "--table", "renewals"])
    assert code == 0, err
    rows = [line for line in said.splitlines() if re.match(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} ", line)]
    assert rows, said
    # one line per renewal: its date, its name and its amount together, none wrapped at 100
    for line in rows:
        assert re.search(r"vm_\w+", line) and " EUR" in line, line
    assert max(len(line) for line in said.splitlines()) > 100


def test_report_names_the_store_lab_keeps_here(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SVCNB_STORE", raising=False)
    session = Path("data/lab/20261129-030000/store")
    session.parent.mkdir(parents=True)
    session.symlink_to(store.path)
    code, _, err = _run(["report", "billing"])
    assert code == 2
    assert f"--store {session}" in err
    # the line it names works as written
    code, said, err = _run(["report", "billing", "--store", str(session)])
    assert code == 0, err
    assert "Billing as of" in said


def test_lab_says_where_its_store_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SVCNB_STORE", raising=False)

    class NoSandbox:
        base_url = "http://127.0.0.1:1"
        connection_file = tmp_path / "sandbox.json"

        def __init__(self, *_a: object, **_k: object) -> None:
            pass

        def __enter__(self) -> NoSandbox:
            return self

        def __exit__(self, *_exc: object) -> None:
            pass

    class NoLab:
        def __init__(self, *_a: object, **_k: object) -> None:
            pass

        def wait(self, timeout: float | None = None) -> int:
            return 0

    monkeypatch.setattr(lab_command, "SandboxProcess", NoSandbox)
    monkeypatch.setattr(lab_command.subprocess, "Popen", NoLab)
    parser = argparse.ArgumentParser()
    lab_command.add_arguments(parser)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert lab_command.run(parser.parse_args(["--notebooks", "nb", "--no-browser"])) == 0
    line = next((s for s in said.getvalue().splitlines() if "snapshots" in s), "")
    where = re.search(r"--store (\S+)", line)
    assert where, said.getvalue()
    assert Path(where.group(1)).is_relative_to((tmp_path / "data" / "lab").resolve())


def test_pages_errors_are_labelled_pages(tmp_path: Path) -> None:
    """``svcnb pages`` says its own name on its errors, not ``svcnb report``'s, which the user
    never ran."""
    code, _, err = _run(["pages", "--store", str(tmp_path / "none"), "--out", str(tmp_path)])
    assert code == 2
    assert err.startswith("svcnb pages: "), err
    assert "svcnb report" not in err
    code, _, err = _run(["pages", "--store", str(tmp_path), "--at", "not a date"])
    assert code == 2
    assert err.startswith("svcnb pages: "), err


def test_a_page_lists_its_tables_with_their_row_counts(store: Store, tmp_path: Path) -> None:
    """A page holds every row of every table (tens of thousands of pixels at 1,000 VMs): it
    says its heading once and opens with a list going to each table, with its row count."""
    target = tmp_path / "billing.html"
    code, _, err = _run(
        ["report", "billing", "--store", str(store.path), "--format", "html", "--out", str(target)]
    )
    assert code == 0, err
    page = target.read_text(encoding="utf-8")
    heading = re.search(r"<h1>([^<]+)</h1>", page)
    assert heading and f"<b>{heading.group(1)}</b>" not in page  # not again over the figures
    code, exported, _ = _run(
        ["report", "billing", "--store", str(store.path), "--format", "json", "--table", "renewals"]
    )
    rows = len(json.loads(exported))
    link = re.search(r'<li><a href="#(table-renewals)">[^<]+</a> \(([\d,]+) rows?\)</li>', page)
    assert link, "no link to the renewals table"
    assert int(link.group(2).replace(",", "")) == rows
    assert f"id='{link.group(1)}'" in page
