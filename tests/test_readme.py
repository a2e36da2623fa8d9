"""The README's quick start runs as written (against a background sandbox)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _quick_start() -> str:
    text = README.read_text()
    section = text[text.index("## Quick start") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_quick_start_runs_and_leaves_a_snapshot(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SVCNB_STORE", str(tmp_path / "store"))
    namespace: dict = {}
    exec(compile(_quick_start(), str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "region_slug" in out
    assert len(namespace["fleet"]) == len(namespace["vms"]) > 0
    assert (tmp_path / "store" / "_snapshots" / "_delta_log").is_dir()
    assert "svc_" not in out


def test_readme_duckdb_query_reads_the_store(tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    import svcnb

    monkeypatch.chdir(tmp_path)
    store = svcnb.Store(tmp_path / "data" / "store")
    exec(compile(_quick_start().replace("svcnb.Store()", "store"), "q", "exec"), {"store": store})
    delta = pytest.importorskip("duckdb_extension_delta")
    extension = (
        Path(delta.__file__).parent
        / "extensions"
        / f"v{duckdb.__version__}"
        / "delta.duckdb_extension"
    )
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{extension}'")
    text = README.read_text()
    sql = re.search(r"```sql\n(.*?)```", text, re.S).group(1)
    # the README's date stands for "as of"; the test store's latest snapshot is that moment here
    sql = sql.replace(
        "2026-03-01 00:00:00+00", store.snapshots()["server_time"].iloc[-1].isoformat()
    )
    rows = con.execute(sql).fetch_df()
    assert sorted(rows["id"]) == sorted(store.load("vms")["id"])
