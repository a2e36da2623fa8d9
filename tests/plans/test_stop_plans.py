"""Stop plans on a 12-VM sandbox (seed 7), in four dialects.

The fleet, read off the sandbox's seed once and written down here by hand:

    web-nyc-001    running       protected  us-east-1
    api-sgp-002    running                  ap-southeast-1
    db-sgp-003     running                  ap-southeast-1
    cache-fra-004  running                  eu-central-1
    worker-fra-005 terminated               eu-central-1
    ci-fra-006     stopped       protected  eu-central-1
    vpn-fra-007    terminated               eu-central-1
    mail-nyc-008   running                  us-east-1
    lb-nyc-009     running                  us-east-1
    batch-nyc-010  provisioning             us-east-1
    web-sgp-011    stopped       protected  ap-southeast-1
    api-sgp-012    running                  ap-southeast-1
"""

from __future__ import annotations

import json

import pytest
from deltalake import DeltaTable

from svcnb import frames
from svcnb.plans import PlanError, PlanLimitError, StopPlan, apply_plan, build_stop_plan

IDS = {
    "web-nyc-001": "vm_eca2d91cff2db54d",
    "db-sgp-003": "vm_ebce02c6326307f1",
    "mail-nyc-008": "vm_fe994c9a28c74175",
    "lb-nyc-009": "vm_5eea46b0bf1c758d",
    "api-sgp-002": "vm_358c956bf1e3c6a7",
    "api-sgp-012": "vm_71f344fef72ef74a",
}


def _names(plan: StopPlan, decision: str) -> list[str]:
    return sorted(str(n) for n in plan.part(decision)["name"])


def _by_name(outcomes) -> dict[str, str]:
    return dict(zip(outcomes["name"], outcomes["outcome"], strict=True))


def _truth_status(fleet, name: str) -> str:
    return fleet.control.vm(IDS[name])["status"]


def test_a_region_plan_has_the_vms_worked_out_by_hand(admin):
    plan = build_stop_plan(admin, region="us-east-1")
    assert _names(plan, "stop") == ["lb-nyc-009", "mail-nyc-008"]
    assert _names(plan, "protected") == ["web-nyc-001"]
    assert _names(plan, "not stoppable") == ["batch-nyc-010"]
    assert plan.to_stop == [IDS["mail-nyc-008"], IDS["lb-nyc-009"]]
    why = dict(zip(plan.entries["name"], plan.entries["reason"], strict=True))
    assert why["mail-nyc-008"] == "region us-east-1"
    assert "is protected" in why["web-nyc-001"] and IDS["web-nyc-001"] in why["web-nyc-001"]
    assert "class transitional" in why["batch-nyc-010"]
    assert "only running VMs can be stopped" in why["batch-nyc-010"]
    assert plan.summary().endswith(
        "2 to stop, 1 protected (not stopped), 1 not stoppable; limit 10"
    )


def test_status_and_name_terms_combine_and_say_which_matched(admin):
    running = build_stop_plan(admin, status="running")
    # 7 running VMs, web-nyc-001 protected: 6 to stop
    assert len(running.to_stop) == 6 and _names(running, "protected") == ["web-nyc-001"]
    assert _names(running, "not stoppable") == []
    api = build_stop_plan(admin, status="running", name="API-*")
    assert _names(api, "stop") == ["api-sgp-002", "api-sgp-012"]
    reason = api.part("stop")["reason"].iloc[0]
    assert "is of class running" in reason and "matches 'API-*'" in reason
    picked = build_stop_plan(admin, ids=[IDS["db-sgp-003"], IDS["web-nyc-001"]])
    assert _names(picked, "stop") == ["db-sgp-003"]
    assert _names(picked, "protected") == ["web-nyc-001"]
    assert picked.part("stop")["reason"].iloc[0] == "listed by id"


def test_the_limit_is_on_by_default_and_raised_only_explicitly(admin, fleet):
    with pytest.raises(PlanLimitError) as caught:
        build_stop_plan(admin, status="running", limit=5)
    text = str(caught.value)
    assert "would stop 6 VMs, over the limit of 5" in text and "--limit 6" in text
    fleet.control.reset(seed=7, vms=40, dialect=fleet.control.dialect()["name"])
    vms = frames.vms(admin.vms.list())
    running = int(
        (
            (vms["status"].isin(["running", "online", "up"])) & ~vms["is_protected"].astype(bool)
        ).sum()
    )
    assert running > 10  # the 40-VM fleet has more running VMs than one action may stop
    with pytest.raises(PlanLimitError, match="over the limit of 10 per action"):
        build_stop_plan(admin, status="running")
    plan = build_stop_plan(admin, status="running", limit=running)
    assert len(plan.to_stop) == running
    # the apply checks the limit again: a plan built with a raised limit needs it raised there too
    before = len(fleet.control.actions())
    with pytest.raises(PlanLimitError, match="over the limit of 10"):
        apply_plan(plan, admin, approver="sam", store=None)
    assert len(fleet.control.actions()) == before


def test_protected_vms_go_only_when_named_explicitly(admin):
    plan = build_stop_plan(admin, region="us-east-1", include_protected=[IDS["web-nyc-001"]])
    assert _names(plan, "stop") == ["lb-nyc-009", "mail-nyc-008", "web-nyc-001"]
    assert _names(plan, "protected") == []
    reason = plan.entries.set_index("name").loc["web-nyc-001", "reason"]
    assert reason == "region us-east-1; protected, included explicitly"
    with pytest.raises(PlanError, match="does not match"):
        build_stop_plan(admin, region="ap-southeast-1", include_protected=[IDS["web-nyc-001"]])
    with pytest.raises(PlanError, match="at least one filter term"):
        build_stop_plan(admin)
    with pytest.raises(PlanError, match="not in the fleet: vm_nope"):
        build_stop_plan(admin, ids=["vm_nope"])


def test_a_saved_plan_applies_waits_and_is_audited(
    admin, fleet, store, tmp_path, once_stops_queued
):
    plan = build_stop_plan(admin, region="ap-southeast-1")
    assert _names(plan, "stop") == ["api-sgp-002", "api-sgp-012", "db-sgp-003"]
    assert _names(plan, "not stoppable") == ["web-sgp-011"]  # stopped (and protected)
    path = plan.save(tmp_path / "plan.json")
    loaded = StopPlan.load(path)
    assert loaded.plan_id == plan.plan_id and loaded.to_stop == plan.to_stop

    with once_stops_queued(3, lambda control: control.advance(60)):
        out = apply_plan(loaded, admin, approver="sam", store=store, timeout=30)
    assert _by_name(out) == {
        "api-sgp-002": "stopped",
        "db-sgp-003": "stopped",
        "web-sgp-011": "skipped",
        "api-sgp-012": "stopped",
    }
    for name in ("api-sgp-002", "db-sgp-003", "api-sgp-012"):
        assert _truth_status(fleet, name) == "stopped"
    assert out["action_id"].notna().sum() == 3

    log = store.journal.log()
    assert list(log["kind"]) == ["stop_plan"]
    entry = log.iloc[0]
    assert entry["approver"] == "sam" and entry["plan_id"] == plan.plan_id
    assert entry["plan"] == json.loads(path.read_text())
    assert {v["name"]: v["outcome"] for v in entry["vms"]} == _by_name(out)
    assert entry["outcome"] == "stop plan applied: 3 stopped, 1 skipped"
    # the record as stored (the journal's stop plans table), read without svcnb
    text = str(
        DeltaTable(str(store.path / "_journal" / "stop_plans")).to_pyarrow_table().to_pylist()
    )
    assert fleet.tokens["admin"] not in text and fleet.tokens["admin"][-4:] not in text


def test_a_vm_changed_since_the_plan_is_refused_and_the_rest_go(
    admin, fleet, store, once_stops_queued
):
    plan = build_stop_plan(admin, region="us-east-1")
    fleet.control.vm_action(IDS["mail-nyc-008"], "touch")  # renamed behind the plan's back
    before = {a["id"] for a in fleet.control.actions()}
    with once_stops_queued(1, lambda control: control.advance(60)):
        out = apply_plan(plan, admin, approver="sam", store=store, timeout=30)
    assert _by_name(out)["mail-nyc-008"] == "refused"
    assert _by_name(out)["lb-nyc-009"] == "stopped"
    reason = out.set_index("name").loc["mail-nyc-008", "reason"]
    assert "changed since the plan was built" in reason
    assert "name was 'mail-nyc-008', is 'mail-nyc-008~1' now" in reason
    sent = [
        a["vmId"] for a in fleet.control.actions() if a["id"] not in before and a["type"] == "stop"
    ]
    assert sent == [IDS["lb-nyc-009"]]
    assert _truth_status(fleet, "mail-nyc-008") == "running"
    assert (
        store.journal.log().iloc[0]["outcome"]
        == "stop plan applied: 1 stopped, 1 refused, 2 skipped"
    )


def test_stragglers_and_vms_that_will_never_stop_are_reported(
    admin, fleet, store, once_stops_queued
):
    plan = build_stop_plan(admin, region="ap-southeast-1")

    def meddle(control) -> None:
        control.vm_action(IDS["api-sgp-012"], "start")  # someone starts it again: never stops
        control.vm_action(IDS["db-sgp-003"], "suspend")  # suspended: will not reach stopped
        control.advance(60)

    with once_stops_queued(3, meddle):
        out = apply_plan(plan, admin, approver="kim", store=store, timeout=3)
    assert _by_name(out) == {
        "api-sgp-002": "stopped",
        "db-sgp-003": "failed",
        "web-sgp-011": "skipped",
        "api-sgp-012": "straggler",
    }
    rows = out.set_index("name")
    assert "did not reach 'stopped' within 3s" in rows.loc["api-sgp-012", "reason"]
    assert "will not reach 'stopped'" in rows.loc["db-sgp-003", "reason"]
    # the status column holds the service's own word as last read
    words = fleet.control.dialect()["choices"]["vm_words"]
    assert rows.loc["api-sgp-012", "status"] == words["running"]
    assert rows.loc["db-sgp-003", "status"] == words["suspended"]
    logged = {v["name"]: v["outcome"] for v in store.journal.log().iloc[0]["vms"]}
    assert logged == _by_name(out)


def test_apply_refuses_without_approver_on_another_server_or_after_an_edit(admin, store, tmp_path):
    plan = build_stop_plan(admin, region="us-east-1")
    for nobody in ("", "  ", None):
        with pytest.raises(PlanError, match="needs an approver"):
            apply_plan(plan, admin, approver=nobody, store=store)
    elsewhere = build_stop_plan(
        frames.vms(admin.vms.list()), region="us-east-1", server="http://127.0.0.1:9"
    )
    with pytest.raises(PlanError, match="was built on http://127.0.0.1:9"):
        apply_plan(elsewhere, admin, approver="sam", store=store)
    path = plan.save(tmp_path / "plan.json")
    data = json.loads(path.read_text())
    data["vms"][0]["decision"] = "stop"  # someone lets the protected VM through by hand
    path.write_text(json.dumps(data))
    with pytest.raises(PlanError, match="changed after it was built"):
        StopPlan.load(path)
    assert store.journal.log().empty


def _forge(path) -> dict:
    """What a hand-editor who knows the file format does: let the protected VM through and
    write the digest that matches the edited content (it is a plain sha256 of the body)."""
    import hashlib

    data = json.loads(path.read_text())
    for row in data["vms"]:
        if row["vm_id"] == IDS["web-nyc-001"]:
            row["decision"], row["reason"] = "stop", "region us-east-1"
    body = {k: v for k, v in data.items() if k != "plan_id"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    data["plan_id"] = hashlib.sha256(text.encode()).hexdigest()[:16]
    path.write_text(json.dumps(data))
    return data


def test_a_plan_edited_to_stop_a_protected_vm_stops_it_not(
    admin, fleet, store, tmp_path, once_stops_queued
):
    plan = build_stop_plan(admin, region="us-east-1")
    path = plan.save(tmp_path / "plan.json")
    _forge(path)
    forged = StopPlan.load(path)  # its digest matches its (edited) content
    assert IDS["web-nyc-001"] in forged.to_stop and forged.include_protected == ()
    before = {a["id"] for a in fleet.control.actions()}
    with once_stops_queued(2, lambda control: control.advance(60)):
        out = apply_plan(forged, admin, approver="sam", store=store, timeout=30)
    rows = out.set_index("name")
    assert rows.loc["web-nyc-001", "outcome"] == "refused"
    assert "is protected" in rows.loc["web-nyc-001", "reason"]
    assert "include_protected" in rows.loc["web-nyc-001", "reason"]
    assert _truth_status(fleet, "web-nyc-001") == "running"
    sent = {
        a["vmId"] for a in fleet.control.actions() if a["id"] not in before and a["type"] == "stop"
    }
    assert sent == {IDS["mail-nyc-008"], IDS["lb-nyc-009"]}
    logged = {v["name"]: v["outcome"] for v in store.journal.log().iloc[0]["vms"]}
    assert logged["web-nyc-001"] == "refused"


def test_a_plan_changed_in_memory_after_it_was_built_is_refused_whole(admin, fleet, store):
    from svcnb.errors import SvcnbError
    from svcnb.plans import PlanChangedError

    plan = build_stop_plan(admin, region="us-east-1")
    held = (plan.entries["vm_id"] == IDS["web-nyc-001"]).to_numpy()
    plan.entries.loc[held, "decision"] = "stop"
    before = len(fleet.control.actions())
    with pytest.raises(PlanChangedError) as caught:
        apply_plan(plan, admin, approver="sam", store=store)
    assert isinstance(caught.value, SvcnbError)
    text = str(caught.value)
    assert plan.plan_id in text and "build the plan again and review it" in text
    assert len(fleet.control.actions()) == before  # nothing was sent
    assert _truth_status(fleet, "web-nyc-001") == "running"


def test_a_saved_plan_edited_without_its_digest_is_refused_naming_the_file(admin, tmp_path):
    from svcnb.plans import PlanChangedError

    path = build_stop_plan(admin, region="us-east-1").save(tmp_path / "plan.json")
    data = json.loads(path.read_text())
    data["include_protected"] = [IDS["web-nyc-001"]]
    path.write_text(json.dumps(data))
    with pytest.raises(PlanChangedError) as caught:
        StopPlan.load(path)
    assert str(path) in str(caught.value) and "build the plan again and review it" in str(
        caught.value
    )


def test_a_plan_naming_a_vm_twice_is_not_read(admin, tmp_path):
    path = build_stop_plan(admin, region="us-east-1").save(tmp_path / "plan.json")
    data = json.loads(path.read_text())
    data["vms"].append({**data["vms"][0], "decision": "stop"})
    path.write_text(json.dumps(data))
    with pytest.raises(PlanError, match=f"names VM {data['vms'][0]['vm_id']} twice"):
        StopPlan.load(path)
