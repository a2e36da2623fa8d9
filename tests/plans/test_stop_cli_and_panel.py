"""`svcnb stop` and the VM panel's stop flow, both through a stop plan (12-VM seed-7 fleet; see
test_stop_plans.py for the fleet worked out by hand)."""

from __future__ import annotations

import json

import pytest

from svcnb.cli import main
from svcnb.panels import VmPanel
from svcnb.store import Store

MAIL, LB, WEB_NYC = "vm_fe994c9a28c74175", "vm_5eea46b0bf1c758d", "vm_eca2d91cff2db54d"
API_2, DB_3, API_12 = "vm_358c956bf1e3c6a7", "vm_ebce02c6326307f1", "vm_71f344fef72ef74a"


@pytest.fixture
def configured(fleet, tmp_path, monkeypatch):
    """The environment names the loopback sandbox through a connection file, as `svcnb sandbox
    --connection-file` writes it; the default store is a fresh folder."""
    info = fleet.write_connection_file(tmp_path / "sandbox.json")
    monkeypatch.setenv("SVCNB_SANDBOX", str(info))
    monkeypatch.setenv("SVCNB_STORE", str(tmp_path / "store"))
    return Store(tmp_path / "store")


def test_cli_builds_saves_reviews_and_applies_a_plan(
    configured, fleet, tmp_path, capsys, once_stops_queued
):
    out = tmp_path / "plan.json"
    assert main(["stop", "--region", "us-east-1", "--plan-out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2 to stop, 1 protected (not stopped), 1 not stoppable; limit 10" in printed
    assert "mail-nyc-008 (vm_fe994c9a28c74175): region us-east-1" in printed
    assert sorted(
        v["vm_id"] for v in json.loads(out.read_text())["vms"] if v["decision"] == "stop"
    ) == sorted([MAIL, LB])

    fleet.control.vm_action(MAIL, "touch")
    assert main(["stop", "--review", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "lb-nyc-009 (vm_5eea46b0bf1c758d): unchanged" in printed
    assert "name was 'mail-nyc-008', is 'mail-nyc-008~1' now" in printed

    with once_stops_queued(1, lambda control: control.advance(60)):
        code = main(["stop", "--apply", str(out), "--approver", "sam", "--timeout", "30"])
    assert code == 1  # one VM refused: not everything the plan stops was stopped
    printed = capsys.readouterr().out
    assert "applied by sam" in printed
    assert fleet.control.vm(LB)["status"] == "stopped"
    assert fleet.control.vm(MAIL)["status"] == "running"
    entry = configured.journal.log().iloc[0]
    assert entry["approver"] == "sam"
    assert {v["vm_id"]: v["outcome"] for v in entry["vms"]}[MAIL] == "refused"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["stop"], "give filter terms"),
        (["stop", "--status", "running", "--limit", "5"], "over the limit of 5"),
        (["stop", "--apply", "x.json"], "--apply needs --approver"),
        (["stop", "--apply", "x.json", "--approver", "sam", "--region", "r"], "drop the filter"),
        (["stop", "--region", "us-east-1", "--approver", "sam"], "--approver goes with --apply"),
    ],
)
def test_cli_mistakes_are_one_line_and_exit_2(configured, capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_never_starts_a_sandbox_of_its_own(fleet, capsys):
    # no SVC_* variables and no SVCNB_SANDBOX (tests/conftest.py clears them)
    assert main(["stop", "--region", "us-east-1"]) == 2
    err = capsys.readouterr().err
    assert "no server configured" in err


def test_panel_review_shows_the_plan_and_confirm_applies_and_audits(fleet, admin, tmp_path):
    store = Store(tmp_path / "store")
    panel = VmPanel(admin, watch_interval=None, store=store, approver="kim")
    panel.select([MAIL, LB, WEB_NYC, "vm_24e09f005023924f"])
    panel.stop_button.click()
    shown = panel.confirmation.value
    assert f"Stop plan {panel.plan.plan_id}" in shown
    assert "2 VMs will be stopped" in shown and "listed by id" in shown
    assert "Protected, not stopped unless you tick the box below: web-nyc-001" in shown
    assert "batch-nyc-010" in shown and "only running VMs can be stopped" in shown
    assert sorted(panel.pending) == sorted([MAIL, LB])
    panel.allow_protected.value = True  # the explicit inclusion of web-nyc-001
    assert sorted(panel.pending) == sorted([MAIL, LB, WEB_NYC])
    fleet.control.vm_action(LB, "touch")  # changes after the review: refused
    panel.confirm_button.click()
    assert sorted(panel.actions_by_vm) == sorted([MAIL, WEB_NYC])
    assert "Not sent for lb-nyc-009" in panel.status.value
    assert "approved by kim" in panel.status.value
    queued = store.journal.log()
    assert list(queued["stage"]) == ["queued"]
    assert {v["vm_id"]: v["outcome"] for v in queued.iloc[0]["vms"]} == {
        MAIL: "queued",
        LB: "refused",
        WEB_NYC: "queued",
        "vm_24e09f005023924f": "skipped",
    }
    fleet.control.advance(60)
    assert panel.poll() is False
    log = store.journal.log()
    assert list(log["stage"]) == ["queued", "watched"]
    assert log.iloc[1]["plan_id"] == log.iloc[0]["plan_id"] and log.iloc[1]["approver"] == "kim"
    final = {v["vm_id"]: v["outcome"] for v in log.iloc[1]["vms"]}
    assert final[MAIL] == final[WEB_NYC] == "stopped" and final[LB] == "refused"


def test_panel_plan_over_the_limit_sends_nothing(fleet, admin, tmp_path):
    panel = VmPanel(admin, watch_interval=None, store=Store(tmp_path / "s"), limit=2)
    panel.select([API_2, DB_3, API_12])
    panel.stop_button.click()
    assert "would stop 3 VMs, over the limit of 2 per action" in panel.confirmation.value
    assert panel.confirm_button.disabled and panel.pending == []
    before = len(fleet.control.actions())
    assert panel.confirm_stop() == []
    assert len(fleet.control.actions()) == before


def test_panel_needs_an_approver_name(fleet, admin, tmp_path):
    panel = VmPanel(admin, watch_interval=None, store=Store(tmp_path / "s"), approver="kim")
    panel.select([MAIL])
    panel.stop_button.click()
    assert not panel.confirm_button.disabled
    panel.approver.value = "  "
    assert panel.confirm_button.disabled
    assert panel.confirm_stop() == []
    assert "needs an approver" in panel.status.value


def test_cli_apply_of_a_hand_edited_plan_leaves_the_protected_vm_running(
    configured, fleet, tmp_path, capsys, once_stops_queued
):
    from test_stop_plans import _forge

    out = tmp_path / "plan.json"
    assert main(["stop", "--region", "us-east-1", "--plan-out", str(out)]) == 0
    _forge(out)
    capsys.readouterr()
    with once_stops_queued(2, lambda control: control.advance(60)):
        code = main(["stop", "--apply", str(out), "--approver", "sam", "--timeout", "30"])
    assert code == 1  # not everything the file said to stop was stopped
    printed = capsys.readouterr().out
    assert fleet.control.vm(WEB_NYC)["status"] == "running"
    assert fleet.control.vm(MAIL)["status"] == fleet.control.vm(LB)["status"] == "stopped"
    row = _outcome_row(printed, WEB_NYC)
    assert "refused" in row and "is protected" in row
    entry = configured.journal.log().iloc[0]
    assert {v["vm_id"]: v["outcome"] for v in entry["vms"]}[WEB_NYC] == "refused"


def _outcome_row(printed: str, vm_id: str) -> str:
    """The row of ``vm_id`` in the outcome table of --apply, its wrapped lines joined."""
    lines = printed.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith(vm_id))
    rest = [x for x in lines[start + 1 :]]
    end = next((i for i, x in enumerate(rest) if x[:1].strip()), len(rest))
    return " ".join(" ".join([lines[start], *rest[:end]]).split())


def test_cli_apply_prints_a_short_table_of_outcomes(
    configured, fleet, tmp_path, capsys, once_stops_queued
):
    out = tmp_path / "plan.json"
    assert main(["stop", "--region", "us-east-1", "--plan-out", str(out)]) == 0
    capsys.readouterr()
    with once_stops_queued(2, lambda control: control.advance(60)):
        code = main(["stop", "--apply", str(out), "--approver", "sam", "--timeout", "30"])
    assert code == 0
    printed = capsys.readouterr().out
    table = printed[printed.index("VM id") :]
    assert max(len(line) for line in table.splitlines()) <= 100
    header = table.splitlines()[0].split()
    assert header == ["VM", "id", "Name", "Decision", "Outcome", "Reason"]
    assert "stopped" in _outcome_row(printed, MAIL) and "lb-nyc-009" in _outcome_row(printed, LB)
    held = _outcome_row(printed, WEB_NYC)
    assert "protected" in held and "skipped" in held and "is protected" in held


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["stop", "--status", "runing"], "no VM in the fleet has status 'runing': did you mean "
         "'running'?"),
        (["stop", "--region", "eu-centrl-1"], "no VM in the fleet has region 'eu-centrl-1': did "
         "you mean 'eu-central-1'?"),
        (["stop", "--plan-slug", "s-1vcpu-1g"], "did you mean 's-1vcpu-1gb'?"),
        (["stop", "--name", "mial-nyc-008"], "no VM in the fleet has name 'mial-nyc-008': did "
         "you mean 'mail-nyc-008'?"),
        (["stop", "--name", "wbe-*"], "no VM name in the fleet matches 'wbe-*'"),
        (["stop", "--id", "vm_fe994c9a28c74176"], "did you mean 'vm_fe994c9a28c74175'?"),
    ],
)  # fmt: skip
def test_cli_a_filter_value_no_vm_has_is_an_error_naming_the_closest(
    configured, capsys, argv, words
):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_terms_that_each_exist_but_match_nothing_together_give_an_empty_plan(
    configured, capsys
):
    # ci-fra-006 is in eu-central-1, but stopped: "running" and the name both exist
    assert main(["stop", "--status", "running", "--name", "ci-fra-006"]) == 0
    assert "0 to stop" in capsys.readouterr().out


def test_cli_apply_needs_a_named_approver(configured, capsys, tmp_path):
    out = tmp_path / "plan.json"
    assert main(["stop", "--region", "us-east-1", "--plan-out", str(out)]) == 0
    capsys.readouterr()
    for argv in (["--apply", str(out)], ["--apply", str(out), "--approver", "  "]):
        assert main(["stop", *argv]) == 2
        err = capsys.readouterr().err
        assert "--apply needs --approver NAME" in err and err.count("\n") == 1
    with pytest.raises(SystemExit):
        main(["stop", "--help"])
    assert "required with --apply" in " ".join(capsys.readouterr().out.split())
