"""POST /vms/{id}/stop: a queued action; running -> stopping -> stopped on the sandbox clock."""

from __future__ import annotations

from sandbox_support import failure


def test_stop_queues_an_action_and_completes_after_30_sandbox_seconds(api, sandbox):
    vm = next(v for v in api.data("/vms", params={"perPage": 100}) if v["status"] == "running")
    response = api.post(f"/vms/{vm['id']}/stop")
    assert response.status_code == 202
    action_id = response.json()["data"]["actionId"]
    assert list(response.json()["data"]) == ["actionId"]
    action = next(a for a in sandbox.control.actions() if a["id"] == action_id)
    assert (action["vmId"], action["type"], action["status"]) == (vm["id"], "stop", "in-progress")
    assert api.data(f"/vms/{vm['id']}")["status"] == "stopping"
    sandbox.control.advance(29)
    assert api.data(f"/vms/{vm['id']}")["status"] == "stopping"
    sandbox.control.advance(1)
    assert api.data(f"/vms/{vm['id']}")["status"] == "stopped"
    action = next(a for a in sandbox.control.actions() if a["id"] == action_id)
    assert action["status"] == "completed" and action["completedAt"] == "2026-11-01T00:00:30Z"
    stopped = [
        e
        for e in sandbox.control.events()
        if e["type"] == "vm.stopped"
        and e["data"]["vm"]["id"] == vm["id"]
        and e["createdAt"] >= "2026-11-01"
    ]
    assert len(stopped) == 1 and stopped[0]["createdAt"] == "2026-11-01T00:00:30Z"


def test_stop_on_a_vm_that_is_not_running_is_409(api):
    vms = api.data("/vms", params={"perPage": 100})
    for status in ("stopped", "suspended", "terminated", "stopping"):
        vm = next((v for v in vms if v["status"] == status), None)
        if vm is None:
            continue
        error = failure(api.post(f"/vms/{vm['id']}/stop"), 409)
        assert status in error
        assert api.data(f"/vms/{vm['id']}")["status"] == status


def test_stop_of_an_unknown_vm_is_404(api):
    assert "vm_none" in failure(api.post("/vms/vm_none/stop"), 404)


def test_seeded_stopping_vms_finish_on_the_clock(api, sandbox):
    stopping = [v["id"] for v in api.all("/vms") if v["status"] == "stopping"]
    sandbox.control.advance(60)
    assert all(api.data(f"/vms/{i}")["status"] == "stopped" for i in stopping)
