"""Each user-story notebook tells its story alone on a fresh store, after the others, or twice,
and on services that are not the default dialect.

nbval runs 01 to 06 in order, each on its own store, on the default dialect, and compares every
output. Here the notebooks run as a user would run them (nbclient, a kernel each): 01 to 06 in
order, then 03 and 04 again (out of order, twice), on one store and the one sandbox ``svcnb lab``
gives every kernel (``SVCNB_SANDBOX``), since a store keeps the history of one server. No cell may
fail or show an error, and the history span each one reports is checked. Their figures differ
from the default's by design (other words, other forms), so outputs are not compared; the
dialect sweep checks the numbers.

The stories run in ``make test-all``: on ``acme`` (other words and money forms) with 03 again
(its second run tells a story of its own: nothing left to fix), and with 04 again too (the same
span as its first run, after 05 and 06) on ``acme``, the default and ``linkhdr`` (link-header
paging, other times and delivery keys). ``make test`` runs every notebook twice elsewhere: alone
on the default dialect under nbval, and all six in a row on ``acme`` with a history
(``tests/test_demo_pages.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from svcnb.sandbox import serve

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
HISTORY = re.compile(r"history: (\d+) snapshots? over (\d+) days?")
# the span each notebook needs for its story (None: it keeps no history)
NEEDS = {
    "01_inventory": 0,
    "02_stop_vms": None,
    "03_firewall_audit": 0,
    "04_billing_review": 14,
    "05_bandwidth_report": 14,
    "06_webhooks": None,
}


@pytest.fixture
def kernel_env(monkeypatch, tmp_path):
    for name in ("SVC_API_KEY", "SVC_BASE_URL", "SVCNB_SANDBOX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")

    def use_store(path: Path) -> None:
        monkeypatch.setenv("SVCNB_STORE", str(path))

    return use_store


def _run(name: str) -> str:
    """Run notebook ``name`` in a new kernel; its printed text. No cell may fail or show an
    error."""
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    try:
        client.execute()
    except CellExecutionError as exc:
        pytest.fail(f"{name}: {exc.ename}: {exc.evalue}")
    errors = [
        out
        for cell in notebook.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors, f"{name}: {errors[0]['ename']}"
    return "".join(
        out.get("text", "")
        for cell in notebook.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )


def _span(name: str, text: str) -> int | None:
    found = HISTORY.search(text)
    if NEEDS[name] is None:
        return None
    assert found, f"{name} does not say how much history it has:\n{text}"
    return int(found.group(2))


AGAIN = [
    pytest.param("acme", ("03_firewall_audit",), id="acme-03-again", marks=pytest.mark.slow),
    *(
        pytest.param(
            dialect,
            ("03_firewall_audit", "04_billing_review"),
            id=f"{dialect}-03-04-again",
            marks=pytest.mark.slow,
        )
        for dialect in ("acme", "default", "linkhdr")
    ),
]


@pytest.mark.parametrize(("dialect", "again"), AGAIN)
def test_in_order_then_out_of_order_and_twice_on_one_store(
    kernel_env, tmp_path, monkeypatch, dialect, again
):
    kernel_env(tmp_path / "store")
    connection = tmp_path / "sandbox.json"
    # the limit raised: acme's list items carry no updatedAt, so each of the snapshots 04 and 05
    # build re-reads every VM; the story is what is tested here, not the pacing
    with serve(dialect=dialect, connection_file=str(connection), rate_limit=1_000_000):
        monkeypatch.setenv("SVCNB_SANDBOX", str(connection))
        _in_order()
        _again_out_of_order(again)


def _audit_fixes(text: str, first: bool) -> None:
    found = re.search(r"open SSH findings before: (\d+) after: (\d+)", text)
    assert found, text
    before, after = int(found.group(1)), int(found.group(2))
    if first:
        assert before > after, text
        assert "fixed (saved" in text  # marked fixed before the re-audit
    else:  # the first run fixed it: the second says there is nothing left
        assert before == after == 0, text
        assert "nothing to fix" in text


def _in_order() -> None:
    """01 to 06 as a new user runs them in ``svcnb lab``: one sandbox, one store."""
    text = _run("01_inventory")
    assert re.search(r"the latest has \d+ VM rows", text), text
    assert _span("01_inventory", text) >= 0
    text = _run("02_stop_vms")
    assert len(re.findall(r"stop queued as action", text)) == 2, text
    text = _run("03_firewall_audit")
    assert _span("03_firewall_audit", text) >= 0
    _audit_fixes(text, first=True)
    # the notebooks before took their snapshots within minutes: 04 and 05 still make 14 days
    for name in ("04_billing_review", "05_bandwidth_report"):
        text = _run(name)
        assert _span(name, text) >= NEEDS[name], text
        assert "less than" not in text
    text = _run("06_webhooks")
    assert "logged once each: True" in text, text


def _again_out_of_order(names: tuple[str, ...]) -> None:
    """03 and 04 once more, after the later notebooks: the same story, not a repeat of it."""
    text = _run("03_firewall_audit")
    assert _span("03_firewall_audit", text) >= 14
    _audit_fixes(text, first=False)
    if "04_billing_review" in names:
        text = _run("04_billing_review")
        assert _span("04_billing_review", text) >= 14
        assert "less than" not in text
