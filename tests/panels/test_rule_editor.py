"""RuleEditor: per-field validation as the user types, diff, save, 502 re-read, audit log."""

from __future__ import annotations

import pytest

import svcnb
from svcnb.panels import RuleEditor


@pytest.fixture
def editor(admin, panel_store) -> RuleEditor:
    return RuleEditor(admin, panel_store)


def _fresh_rule(sandbox, fw_id: str, rule_id: str) -> dict:
    """The rule as the sandbox holds it now, read by a client of its own."""
    with svcnb.Client(
        api_key=sandbox.tokens["admin"], base_url=sandbox.base_url, progress=False
    ) as client:
        return next(r for r in client.firewalls.rules(fw_id) if r["id"] == rule_id)


def test_choosing_a_firewall_and_a_rule_fills_the_form(editor):
    assert editor.firewall_picker.options, "the sandbox seeds firewalls"
    fw_id = editor.firewall_picker.value
    assert editor.rule is not None and editor.rule["firewallId"] == fw_id
    last = editor.rule_picker.options[-1][1]
    editor.rule_picker.value = last
    assert editor.rule["id"] == last
    assert editor.port.value == (editor.rule["port"] or "")
    assert editor.position.value == str(editor.rule["position"])
    assert editor.source_ips.value.split() == list(editor.rule["sourceIps"])
    assert editor.save_button.disabled
    assert "No changes" in editor.diff.value


def test_an_invalid_port_is_refused_with_the_message_shown(sandbox, editor, panel_store):
    fw_id, rule = editor.firewall_picker.value, editor.rule
    editor.port.value = "1" * 65
    assert "port" in editor.port_error.value and "64" in editor.port_error.value
    assert "svcnb-port-error" in editor.port_error._dom_classes
    assert editor.save_button.disabled
    assert editor.save() == "refused"
    assert _fresh_rule(sandbox, fw_id, rule["id"])["port"] == rule["port"]
    assert panel_store.journal.log().empty

    editor.port.value = "443"
    assert editor.port_error.value == ""
    assert not editor.save_button.disabled


@pytest.mark.parametrize(
    ("field", "text", "words"),
    [
        ("position", "ten", "whole number"),
        ("position", "1001", "1000"),
        ("description", "x" * 256, "255"),
        ("sourceIps", "\n".join(f"10.0.0.{i}/32" for i in range(51)), "50"),
        ("destIps", "10.0.0.1/32 " + "9" * 65, "64"),
    ],
)
def test_each_field_shows_its_own_message_as_the_user_types(editor, field, text, words):
    editor.inputs[field].value = text
    message = editor.messages[field].value
    assert words in message
    others = [m.value for f, m in editor.messages.items() if f != field]
    assert others == [""] * len(others)
    assert editor.save_button.disabled


def test_a_valid_edit_lands_in_the_sandbox_and_in_the_audit_log(sandbox, editor, panel_store):
    fw_id, rule = editor.firewall_picker.value, editor.rule
    editor.port.value = "2222"
    editor.source_ips.value = "192.0.2.0/24, 198.51.100.7"
    editor.description.value = "ssh moved to 2222"
    diff = editor.diff.value
    assert "2222" in diff and "192.0.2.0/24" in diff
    assert "Position" not in diff  # unchanged fields are not in the diff

    editor.save_button.click()
    assert "Saved rule" in editor.status.value
    stored = _fresh_rule(sandbox, fw_id, rule["id"])
    assert stored["port"] == "2222"
    assert stored["sourceIps"] == ["192.0.2.0/24", "198.51.100.7"]
    assert stored["description"] == "ssh moved to 2222"
    assert stored["position"] == rule["position"]

    log = editor.audit_log()
    assert len(log) == 1
    entry = log.iloc[0]
    assert [entry["firewall_id"], entry["rule_id"]] == [fw_id, rule["id"]]
    assert entry["outcome"] == "saved"
    assert entry["before"] == {
        "port": rule["port"],
        "sourceIps": rule["sourceIps"],
        "description": rule["description"],
    }
    assert entry["after"] == {
        "port": "2222",
        "sourceIps": ["192.0.2.0/24", "198.51.100.7"],
        "description": "ssh moved to 2222",
    }
    assert editor.save_button.disabled and "No changes" in editor.diff.value
    assert f"Port {rule['port']} → 2222" in editor.history.value
    for path in panel_store.path.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", "replace")
            assert all(token not in text for token in sandbox.tokens.values())


def test_a_forced_sync_failure_shows_the_rule_as_read_again(sandbox, editor, panel_store):
    fw_id, rule = editor.firewall_picker.value, editor.rule
    sandbox.control.set_faults(upstreamSyncFail=True)
    editor.port.value = "8443"
    assert editor.save() == "upstream_sync_failed"
    assert "502" in editor.status.value
    assert "read again" in editor.reread.value and "8443" in editor.reread.value
    # the stored rule keeps the new values, and the form now shows what the API holds
    assert _fresh_rule(sandbox, fw_id, rule["id"])["port"] == "8443"
    assert editor.port.value == "8443"
    assert editor.audit_log().iloc[-1]["outcome"] == "upstream_sync_failed"


def test_open_shows_the_named_rule(editor):
    fw_ids = [v for _, v in editor.firewall_picker.options]
    target_fw = fw_ids[-1]
    editor.firewall_picker.value = target_fw
    rule_id = editor.rule_picker.options[-1][1]
    editor.firewall_picker.value = fw_ids[0]

    editor.open(target_fw, rule_id)
    assert editor.firewall_picker.value == target_fw
    assert editor.rule["id"] == rule_id

    editor.open(target_fw, "rule-does-not-exist")
    assert "not in firewall" in editor.status.value


def test_a_read_only_token_is_refused_in_words_and_audited(sandbox, reader, panel_store):
    editor = RuleEditor(reader, panel_store)
    editor.description.value = "tightened"
    assert editor.save() == "failed"
    assert "firewalls:write" in editor.status.value
    assert sandbox.tokens["read"] not in editor.status.value
    assert editor.audit_log().iloc[-1]["outcome"] == "failed"


def test_a_rule_changed_elsewhere_is_not_overwritten_blindly(sandbox, editor, admin):
    fw_id, rule = editor.firewall_picker.value, editor.rule
    editor.description.value = "mine"
    admin.firewalls.update_rule(fw_id, rule["id"], port="2200")  # someone else, meanwhile

    assert editor.save() == "stale"
    assert "changed on the service" in editor.status.value
    assert _fresh_rule(sandbox, fw_id, rule["id"])["description"] == rule["description"]
    assert editor.description.value == "mine"  # the user's typing is kept
    assert editor.port.value == "2200"  # the untouched field follows the service
    assert "2200" not in editor.diff.value  # the diff is against the current rule now
    assert editor.audit_log().empty

    assert editor.save() == "saved"
    entry = editor.audit_log().iloc[-1]
    assert entry["before"] == {"description": rule["description"]}
    assert _fresh_rule(sandbox, fw_id, rule["id"])["port"] == "2200"


def test_a_stored_invalid_port_is_flagged_but_does_not_block_other_edits(sandbox, editor, admin):
    # the seed holds a few rules whose port does not parse (e.g. "ssh") on purpose
    fw_id, bad = next(
        (fw["id"], rule)
        for fw in admin.firewalls.list()
        for rule in admin.firewalls.rules(fw["id"])
        if rule["port"]
        and not rule["port"].replace(",", "").replace("-", "").isdigit()
        and rule["port"].lower() != "any"
    )
    editor.open(fw_id, bad["id"])
    assert "stored value is not valid" in editor.port_error.value
    assert editor.save_button.disabled  # nothing changed yet

    editor.description.value = "port still to be fixed"
    assert not editor.save_button.disabled
    assert editor.save() == "saved"
    stored = _fresh_rule(sandbox, fw_id, bad["id"])
    assert stored["port"] == bad["port"] and stored["description"] == "port still to be fixed"

    editor.port.value = bad["port"] + "x"  # an edit of the bad value is checked as usual
    assert "not a port list" in editor.port_error.value
    assert editor.save_button.disabled


def _open_ssh_from_anywhere(editor, admin) -> tuple[str, dict]:
    """Open the seeded rule that accepts SSH from anywhere on a firewall protecting VMs."""
    fw_id, ssh = next(
        (fw["id"], r)
        for fw in admin.firewalls.list()
        for r in admin.firewalls.rules(fw["id"])
        if r["direction"] == "IN"
        and r["action"] == "ACCEPT"
        and r["port"] == "22"
        and r["sourceIps"] == ["0.0.0.0/0"]
    )
    editor.open(fw_id, ssh["id"])
    return fw_id, ssh


def test_the_preview_shows_the_flows_an_edit_opens_and_closes(editor, admin):
    fw_id, _ssh = _open_ssh_from_anywhere(editor, admin)
    protected = {
        vm["name"]
        for vm in admin.vms.all(details=True)
        if fw_id in [f["id"] for f in vm.get("firewalls") or []]
        and vm["status"] not in ("terminated", "deleted")
    }
    assert editor.reach_preview.value == ""  # nothing pending, nothing to preview

    editor.port.value = "2222"
    preview = editor.reach_preview.value
    assert "svcnb-reach-diff" in editor.reach_preview._dom_classes
    assert "closes 22/TCP from anywhere to" in preview
    assert "opens 2222/TCP from anywhere to" in preview
    named = preview.split("closes 22/TCP from anywhere to", 1)[1].split("</li>", 1)[0]
    assert any(name in named for name in protected)
    diff = editor.reach_changes()
    assert set(diff["vm_name"]) <= protected
    assert set(diff.loc[diff["port"] == 22, "change"]) == {"closed"}

    # narrowing the source closes SSH from anywhere but keeps it open from the office range
    editor.port.value = "22"
    editor.source_ips.value = "203.0.113.0/24"
    preview = editor.reach_preview.value
    assert "closes 22/TCP from anywhere" in preview
    assert "203.0.113.0/24" not in preview
    assert "Source IPs" in editor.diff.value  # the field diff is still there beside it

    editor.source_ips.value = "0.0.0.0/0"
    assert editor.reach_preview.value == ""


def test_an_edit_that_changes_no_flow_says_so(editor, admin):
    _open_ssh_from_anywhere(editor, admin)
    editor.description.value = "wording only"
    assert "none of the probed flows" in editor.reach_preview.value


def test_an_empty_port_on_a_tcp_rule_is_refused_as_ambiguous(editor, admin):
    _open_ssh_from_anywhere(editor, admin)
    assert editor.rule["protocol"] == "TCP"
    editor.port.value = ""
    # every port at some services, no port at others: the audit could not read it back
    assert "every port on some services" in editor.port_error.value
    assert "write &#x27;any&#x27; for every port" in editor.port_error.value
    assert editor.save_button.disabled
    editor.port.value = "any"
    assert editor.port_error.value == "" and not editor.save_button.disabled
