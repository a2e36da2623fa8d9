"""No API token in any committed notebook, in ``out/`` or in a snapshot store.

Two nets: anything shaped like a token (``svcnb.client._redact.TOKEN_RE``, the one definition
of a token, with 20 or more characters after ``svc_`` so that short names are not taken for
one), and the exact secrets of a sandbox that was used to write a store in this test. Parquet
files are read column by column (their pages are compressed, so a byte search would miss a token
in them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from svcnb.client._redact import TOKEN_PREFIX, TOKEN_RE

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
MIN_SECRET_CHARS = 20


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _parquet_text(path: Path) -> Iterator[str]:
    table = pq.read_table(path)
    yield from table.schema.names
    for key, value in (table.schema.metadata or {}).items():
        yield key.decode("utf-8", "replace")
        yield value.decode("utf-8", "replace")
    for column in table.columns:
        if pa.types.is_floating(column.type) or pa.types.is_integer(column.type):
            continue
        yield from _strings(column.to_pylist())


def _file_text(path: Path) -> Iterator[str]:
    if path.suffix == ".parquet":
        yield from _parquet_text(path)
    else:
        yield path.read_bytes().decode("utf-8", "replace")


def leaks(paths: Iterable[Path], secrets: Iterable[str] = ()) -> list[str]:
    """``path: what`` for every token-shaped string or known secret found in ``paths``."""
    secrets = [s for s in secrets if s]
    found = []
    for path in paths:
        for text in _file_text(path):
            for match in TOKEN_RE.finditer(text):
                if len(match.group()) < len(TOKEN_PREFIX) + MIN_SECRET_CHARS:
                    continue
                # Say where without repeating the secret: its first 8 characters are enough.
                found.append(f"{path}: token-shaped {match.group()[:8]}…")
            found += [f"{path}: a known sandbox secret" for s in secrets if s in text]
    return found


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []


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
            store.append_audit(
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


def test_demo_pages_are_real_reports_and_hold_no_token(tmp_path: Path) -> None:
    # `svcnb demo` writes what users open from out/; run it small into a temporary folder.
    from svcnb.cli import main

    out = tmp_path / "out"
    status = main(
        ["demo", "--out", str(out), "--days", "3", "--vms", "8", "--only", "04_billing_review"]
    )
    assert status == 0
    page = (out / "04_billing_review.html").read_text(encoding="utf-8")
    # (the page's stylesheet holds data-URI images too: count only <img> outputs)
    plots = re.findall(r'<img [^>]*src="data:image/png;base64,', page)
    assert plots, "the report page holds no embedded plot"
    assert "billing_panel = BillingPanel" not in page, "input cells must not be rendered"
    files = files_under(out)
    assert any(p.suffix == ".parquet" for p in files), "the demo store wrote no Parquet file"
    assert leaks(files) == []
