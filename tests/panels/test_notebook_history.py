"""Notebook 04's history cell against a service it cannot move in time says how much it has.

The cell is run as it is written (its source read from the .ipynb) with the notebook's names bound
to a test sandbox and store but no sandbox control, as against the real service. That the
notebooks make the history they need alone, after the others and twice is checked by nbval
(each alone, on a fresh store) and ``test_notebook_stories.py`` (in order, then 03 and 04 again).
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import nbformat

from svcnb.client import Client
from svcnb.store import Store

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _history_cell(name: str) -> str:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    return next(c.source for c in nb.cells if c.cell_type == "code" and "WANTED_DAYS" in c.source)


def _run(code: str, names: dict) -> tuple[str, int]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<history cell>", "exec"), names)  # noqa: S102 - the notebook's cell
    text = out.getvalue()
    found = re.search(r"history: (\d+) snapshots? over (\d+) days?", text)
    assert found, text
    return text, int(found.group(2))


def test_real_api_says_how_much_it_has(sandbox, tmp_path):
    code = _history_cell("04_billing_review")
    with Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client:
        store = Store(tmp_path / "store")
        # no sandbox control: as against the real service, it can only take one snapshot
        text, span = _run(code, {"client": client, "store": store, "sandbox": None})
    assert span == 0
    assert "less than 14 days" in text


def test_notebook_04_reviews_one_account_of_a_store_of_several(sandbox, tmp_path, monkeypatch):
    # a store of two accounts: the first cell names the one it reviews (the first, unless
    # ACCOUNT says), the client is that account's, and the billing cells read it alone
    from frames._samples import account
    from store.test_store_disk import DAY, T0, frames_of

    from svcnb import frames

    path = tmp_path / "store"
    store = Store(path)
    us = frames_of(account(2))
    us["wallet"] = frames.wallet([{"id": "w-us", "balance": {"amount": "9.00", "currency": "USD"}}])
    store.write(frames_of(account(3)), server_time=T0, account="north")
    store.write(us, server_time=T0 + DAY, account="south")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[accounts.north]\nbase_url = "{sandbox.base_url}"\ntoken_env = "SVC_T_NORTH"\n'
    )
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    monkeypatch.setenv("SVC_T_NORTH", sandbox.tokens["read"])
    monkeypatch.setenv("SVCNB_STORE", str(path))
    nb = nbformat.read(NOTEBOOKS / "04_billing_review.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    names: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for source in code[:3]:  # setup, history, the billing view
            exec(compile(source, "<notebook 04>", "exec"), names)  # noqa: S102
    text = out.getvalue()
    assert "this store holds accounts north, south: reviewing north" in text
    assert names["store"].account == "north"
    assert names["client"].base_url.startswith(sandbox.base_url.rstrip("/"))
    assert "USD" not in names["view"].figures_text()
    names["client"].close()
