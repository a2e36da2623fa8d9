"""No API token in any committed notebook, in ``out/`` or in a snapshot store.

Two nets: anything shaped like a token (``svcnb.client._redact.TOKEN_RE``, the one definition
of a token, with 20 or more characters after ``svc_`` so that short names are not taken for
one), and the exact secrets of a sandbox that was used to write a store in this test. Parquet
files are read column by column (their pages are compressed, so a byte search would miss a token
in them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _leaks import files_under, leaks

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
EXPECTED_NOTEBOOKS = {
    "01_inventory",
    "02_stop_vms",
    "03_firewall_audit",
    "04_billing_review",
    "05_bandwidth_report",
    "06_webhooks",
}


def test_the_scanner_finds_a_token_in_text_in_json_and_in_compressed_parquet(tmp_path: Path):
    secret = "svc_" + "Ab3_-" * 8
    (tmp_path / "page.html").write_text(f"<pre>key={secret}</pre>", encoding="utf-8")
    (tmp_path / "nb.ipynb").write_text(json.dumps({"outputs": [{"text": secret}]}))
    table = pa.table({"id": ["a", "b"], "note": ["fine", f"header x-api-key: {secret}"]})
    pq.write_table(table, tmp_path / "part.parquet", compression="zstd")
    found = leaks(files_under(tmp_path))
    assert sorted(Path(f.split(":")[0]).name for f in found) == [
        "nb.ipynb",
        "page.html",
        "part.parquet",
    ]
    assert all(secret not in f for f in found), "the report must not repeat the secret"
    # a short secret (not token-shaped) is still found when it is known
    (tmp_path / "short.txt").write_text("svc_short", encoding="utf-8")
    assert leaks([tmp_path / "short.txt"], ["svc_short"]) == [
        f"{tmp_path / 'short.txt'}: a known sandbox secret"
    ]


def test_every_committed_notebook_is_free_of_tokens() -> None:
    assert {p.stem for p in NOTEBOOKS} >= EXPECTED_NOTEBOOKS, "a user-story notebook is missing"
    assert leaks(NOTEBOOKS) == []
    # The outputs were committed, so the scan above read what users will see.
    executed = [
        p.name
        for p in NOTEBOOKS
        if any(c.get("outputs") for c in json.loads(p.read_text(encoding="utf-8"))["cells"])
    ]
    assert sorted(executed) == sorted(p.name for p in NOTEBOOKS), "commit executed notebooks"


@pytest.mark.parametrize("where", ["out", "data/store"])
def test_outputs_and_stores_on_this_machine_are_free_of_tokens(where: str) -> None:
    files = files_under(REPO / where)
    if not files:
        pytest.skip(f"nothing in {where} on this machine")
    assert leaks(files) == []


def test_a_store_written_through_a_sandbox_holds_none_of_its_secrets(tmp_path: Path) -> None:
    from svcnb import Client, sandbox
    from svcnb.store import Store

    with sandbox.serve(vms=6, seed=3) as sb:
        secrets = list(sb.tokens.values())
        with Client(sb.tokens["admin"], sb.base_url, progress=False) as client:
            store = Store(tmp_path / "store")
            store.build_history(client, 2, sb.control.advance)
            store.journal.append(
                {
                    "time": "2026-11-02T00:00:00Z",
                    "firewall_id": "fw",
                    "rule_id": "r",
                    "before": "{}",
                    "after": "{}",
                    "outcome": "saved",
                    "detail": repr(client),
                }
            )
    files = files_under(tmp_path / "store")
    assert any(p.suffix == ".parquet" for p in files), "the store wrote no Parquet file"
    assert leaks(files, secrets) == []
