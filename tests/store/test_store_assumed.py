"""A list complete only by an assumption nothing pins is not complete: ``svcnb snapshot``
records it incomplete with its reason and exits 3, as for any list not proven whole; pinned, it
is complete and the snapshot says "pinned" (docs/contracts.md section 0, "Assumptions")."""

from __future__ import annotations

from svcnb import cli
from svcnb.config import write_section
from svcnb.store import Store


def _snapshot(sandbox, monkeypatch, capsys, store, *quiet: str) -> tuple[int, str, str]:
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["admin"])
    code = cli.main(["snapshot", "--store", str(store), *quiet])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_list_complete_only_as_assumed_is_stored_incomplete_until_pinned(
    sandbox, monkeypatch, capsys, tmp_path
):
    # Google-style paging: the last page carries no token, and nothing else says "the end"
    sandbox.control.reset(seed=7, vms=40, dialect="google")
    store = tmp_path / "store"
    code, out, err = _snapshot(sandbox, monkeypatch, capsys, store, "--quiet")
    assert code == 3, out + err
    assert "complete only as assumed" in err and "paging.no_continuation_is_end" in err
    assert "[paging] no_continuation_is_end = true" in err
    status = Store(store).resources().set_index("resource")
    assert status.loc["vms", "status"] == "incomplete"
    assert "complete only as assumed" in status.loc["vms", "reason"]

    write_section("paging", {"no_continuation_is_end": True})
    # said on a plain run; --quiet (cron) keeps only errors, gaps and what changed
    code, out, err = _snapshot(sandbox, monkeypatch, capsys, tmp_path / "pinned")
    assert code == 0, out + err
    assert "complete as pinned, not proven: paging.no_continuation_is_end pinned by" in out
    status = Store(tmp_path / "pinned").resources().set_index("resource")
    assert (status["status"] == "ok").all(), status


def test_a_sandbox_hands_its_paging_pin_so_its_lists_are_complete(sandbox):
    assert sandbox.pins["paging.no_continuation_is_end"] == "true"
