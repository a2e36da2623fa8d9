"""RuleEditor: edit one firewall rule with per-field validation, a diff, and an audit record."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
import pandas as pd

from svcnb import errors, frames

# The client's own pre-send check, called one field at a time, so the form refuses exactly what
# update_rule would refuse. (Private module until the client exports a per-field validator.)
from svcnb.client import Client, validate_rule_update
from svcnb.panels._display import Displayed
from svcnb.panels._messages import RateWait, banner, describe, show, shown_in
from svcnb.panels._quiet import quietly
from svcnb.panels._render import cell, table, theme_style
from svcnb.reports import firewall as firewall_report
from svcnb.store import RuleEdit, Store
from svcnb.times import to_utc

# API field -> label shown next to its input
EDITABLE = {
    "position": "Position",
    "port": "Port",
    "sourceIps": "Source IPs",
    "destIps": "Dest IPs",
    "description": "Description",
}
_LIST_FIELDS = {"sourceIps", "destIps"}
_SPLIT = re.compile(r"[\s,]+")
_RULE_COLUMNS = [
    "id",
    "position",
    "direction",
    "action",
    "protocol",
    "port",
    "sourceIps",
    "destIps",
    "description",
    "updatedAt",
]


def _as_text(field: str, value: Any) -> str:
    if field in _LIST_FIELDS:
        return "\n".join(str(v) for v in (value or []))
    return "" if value is None else str(value)


def _plain(value: Any) -> str:
    """A field value in words for the status line (an empty IP list means any)."""
    if isinstance(value, list):
        return ", ".join(value) or "any"
    return repr(value) if value == "" else str(value)


def _change_words(before: Any, after: Any) -> str:
    """An audit record's before/after fields as "Port 22 → 2222; ..." (as text if not dicts)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return f"{before} → {after}"
    return "; ".join(
        f"{EDITABLE.get(f, f)} {_plain(before.get(f))} → {_plain(v)}" for f, v in after.items()
    )


def _parse(field: str, text: str) -> Any:
    """The typed value of a field's input text; ValueError naming the field if it has no type."""
    if field == "position":
        stripped = text.strip()
        if not re.fullmatch(r"[+-]?\d+", stripped):
            raise ValueError(f"position must be a whole number, got {stripped!r}")
        return int(stripped)
    if field in _LIST_FIELDS:
        return [part for part in _SPLIT.split(text.strip()) if part]
    if field == "port":
        return text.strip()  # "22 " is 22; the API would keep the space
    return text


def _rule_label(rule: dict) -> str:
    port = rule.get("port") or "—"
    desc = str(rule.get("description") or "")[:40]
    return (
        f"{rule.get('position')} · {rule.get('direction')} {rule.get('action')} "
        f"{rule.get('protocol')} port {port} · {desc} ({rule.get('id')})"
    )


class RuleEditor(Displayed):
    """Pick a firewall and a rule, edit it in a validated form, review the diff, save, audit.

    Reads firewall records ``{id, name}`` and rule records with the API's keys (position, port,
    sourceIps, destIps, description, ...). Every save that is sent is a ``RuleEdit`` in the
    store's journal with time, firewall_id, rule_id, before and after (dicts of the changed
    fields), outcome and detail; ``audit_log()`` returns them as a frame.

    Widgets (stable attribute names): ``firewall_picker`` (CSS ``svcnb-firewall-picker``),
    ``rule_picker`` (CSS ``svcnb-rule-picker``), one input per
    editable field in ``inputs`` (``position``, ``port`` (CSS ``svcnb-port``), ``source_ips``,
    ``dest_ips``, ``description``) each with its message widget in ``messages`` (``port_error``
    has CSS ``svcnb-port-error``), ``diff``, ``reach_preview`` (CSS ``svcnb-reach-diff``: the flows
    the pending edit opens and closes on the VMs this firewall protects, from
    ``firewall.reach_diff``), ``save_button`` (CSS ``svcnb-save``),
    ``reset_button``, ``refresh_button`` (reload firewalls and rules), ``reread`` (the rule as
    read again after a failed sync), ``history`` (this rule's audit entries) and ``status``
    (CSS ``svcnb-status``).

    Audit records are stamped by ``clock``, by default the server's (``client.server_time``),
    the clock snapshots are stamped with. ``on_saved`` registers what to call after a save.
    """

    def __init__(
        self,
        client: Client,
        store: Store,
        *,
        clock: Callable[[], pd.Timestamp] | None = None,
    ) -> None:
        self.client = client
        self.store = store
        self._clock = clock or self._server_now
        self._saved_callbacks: list[Callable[[str, str, pd.Timestamp], Any]] = []
        # firewall id -> (vms, vm_firewalls, rules of the other firewalls on its VMs), read once
        # per firewall shown: a keystroke must not cost a fleet read
        self._reach_context: dict[str, tuple[pd.DataFrame, pd.DataFrame, list[dict]]] = {}
        self.firewalls: list[dict] = []
        self.rules: list[dict] = []
        self.rule: dict | None = None

        # wide enough for "name (fw_id)": the default width cut the id short
        self.firewall_picker = widgets.Dropdown(
            description="Firewall",
            options=[],
            layout=widgets.Layout(width="auto", min_width="30em"),
        ).add_class("svcnb-firewall-picker")
        self.rule_picker = widgets.Dropdown(
            description="Rule", options=[], layout=widgets.Layout(width="95%")
        ).add_class("svcnb-rule-picker")
        self.position = widgets.Text(description="Position", continuous_update=True)
        self.port = widgets.Text(
            description="Port", placeholder='22, 80,443, 8000-8100, any or "" (ICMP)'
        ).add_class("svcnb-port")
        self.source_ips = widgets.Textarea(
            description="Source IPs", placeholder="one CIDR or address per line; empty = any"
        ).add_class("svcnb-source-ips")
        self.dest_ips = widgets.Textarea(
            description="Dest IPs", placeholder="one CIDR or address per line; empty = any"
        ).add_class("svcnb-dest-ips")
        self.description = widgets.Textarea(description="Description").add_class(
            "svcnb-description"
        )
        self.inputs: dict[str, widgets.Text | widgets.Textarea] = {
            "position": self.position,
            "port": self.port,
            "sourceIps": self.source_ips,
            "destIps": self.dest_ips,
            "description": self.description,
        }
        self.position_error = widgets.HTML()
        self.port_error = widgets.HTML().add_class("svcnb-port-error")
        self.source_ips_error = widgets.HTML()
        self.dest_ips_error = widgets.HTML()
        self.description_error = widgets.HTML()
        self.messages: dict[str, widgets.HTML] = {
            "position": self.position_error,
            "port": self.port_error,
            "sourceIps": self.source_ips_error,
            "destIps": self.dest_ips_error,
            "description": self.description_error,
        }
        for field, box in self.inputs.items():
            box.continuous_update = True
            box.observe(self._on_edit, names="value")
            self.messages[field].add_class(f"svcnb-{field.lower()}-error")
        self.diff = widgets.HTML().add_class("svcnb-diff")
        self.reach_preview = widgets.HTML().add_class("svcnb-reach-diff")
        self.save_button = widgets.Button(
            description="Save", button_style="primary", icon="save", disabled=True
        ).add_class("svcnb-save")
        self.reset_button = widgets.Button(description="Undo edits", disabled=True)
        self.refresh_button = widgets.Button(description="Reload", icon="refresh")
        self.reread = widgets.HTML().add_class("svcnb-reread")
        self.history = widgets.HTML()
        self.status = widgets.HTML().add_class("svcnb-status")
        self._saved_shown: tuple[Any, Any] | None = None  # the rule "Saved rule ..." is about

        self.firewall_picker.observe(self._on_firewall, names="value")
        self.rule_picker.observe(self._on_rule, names="value")
        self.save_button.on_click(lambda _b: self.save())
        self.reset_button.on_click(lambda _b: self._fill())
        self.refresh_button.on_click(lambda _b: self.load_firewalls())

        self.widget = widgets.VBox(
            [
                theme_style(),
                widgets.HBox([self.firewall_picker, self.refresh_button]),
                self.rule_picker,
                *[widgets.VBox([self.inputs[f], self.messages[f]]) for f in EDITABLE],
                self.diff,
                self.reach_preview,
                widgets.HBox([self.save_button, self.reset_button]),
                self.status,
                self.reread,
                self.history,
            ]
        ).add_class("svcnb-rule-editor")
        self.widget.add_class("svcnb-panel")
        self.load_firewalls()

    def _server_now(self) -> pd.Timestamp:
        # The audit log sits beside snapshots stamped with the server's time, so it uses that
        # clock too; the machine's only stands in before the server has answered at all.
        seen = self.client.server_time
        if seen is None:
            return pd.Timestamp.now(tz="UTC")
        return to_utc(seen, "server_time")

    def on_saved(self, callback: Callable[[str, str, pd.Timestamp], Any]) -> None:
        """Call ``callback(firewall_id, rule_id, saved_at)`` after each save the service took."""
        self._saved_callbacks.append(callback)

    # --- choosing ---------------------------------------------------------------------------

    def load_firewalls(self) -> None:
        """Read the firewalls into the picker (keeping the chosen one when it still exists)."""
        self._reach_context = {}
        with shown_in(self.status, "reading the firewalls"):
            self.firewalls = list(self.client.firewalls.list())
            keep = self.firewall_picker.value
            ids = [str(fw["id"]) for fw in self.firewalls]
            with quietly(self.firewall_picker, self._on_firewall):
                self.firewall_picker.options = [
                    (f"{fw.get('name')} ({fw['id']})", str(fw["id"])) for fw in self.firewalls
                ]
                self.firewall_picker.value = keep if keep in ids else (ids[0] if ids else None)
            self._on_firewall()

    def _on_firewall(self, _change: object = None) -> None:
        fw_id = self.firewall_picker.value
        keep = self.rule_picker.value
        self.rules = []
        if fw_id is not None:
            with shown_in(self.status, f"reading the rules of firewall {fw_id}"):
                self.rules = sorted(
                    self.client.firewalls.rules(fw_id), key=lambda r: r.get("position") or 0
                )
        ids = [str(r["id"]) for r in self.rules]
        with quietly(self.rule_picker, self._on_rule):
            self.rule_picker.options = [(_rule_label(r), str(r["id"])) for r in self.rules]
            self.rule_picker.value = keep if keep in ids else (ids[0] if ids else None)
        self._on_rule()

    def _on_rule(self, _change: object = None) -> None:
        rule_id = self.rule_picker.value
        # "Saved rule ..." is about the rule saved: once another one is shown it would read as
        # this one's, so it goes
        if self._saved_shown not in (None, (self.firewall_picker.value, rule_id)):
            self.status.value = ""
            self._saved_shown = None
        self.rule = next((r for r in self.rules if str(r["id"]) == rule_id), None)
        self.reread.value = ""
        self._fill()
        self._show_history()

    def open(self, firewall_id: str, rule_id: str) -> None:
        """Show rule ``rule_id`` of firewall ``firewall_id`` (the audit panel opens rules so)."""
        ids = {str(fw["id"]) for fw in self.firewalls}
        if firewall_id not in ids:
            self.load_firewalls()
            ids = {str(fw["id"]) for fw in self.firewalls}
        if firewall_id not in ids:
            show(
                self.status,
                "error",
                f"Firewall {firewall_id} is not in the account any more; refresh the audit.",
            )
            return
        if self.firewall_picker.value != firewall_id:
            self.firewall_picker.value = firewall_id
        else:
            self._on_firewall()
        if rule_id not in {str(r["id"]) for r in self.rules}:
            show(
                self.status,
                "error",
                f"Rule {rule_id} is not in firewall {firewall_id} any more; refresh the audit.",
            )
            return
        self.rule_picker.value = rule_id
        show(self.status, "info", f"Editing rule {rule_id} of firewall {firewall_id}.")

    # --- editing ----------------------------------------------------------------------------

    def _fill(self) -> None:
        for field, box in self.inputs.items():
            with quietly(box, self._on_edit):
                box.value = _as_text(field, self.rule.get(field)) if self.rule else ""
                box.disabled = self.rule is None
        self._on_edit()

    def check(self, field: str) -> tuple[Any, str]:
        """The typed value of ``field``'s input and its problem ("" when valid).

        The bounds are the client's own (its pre-send check of ``update_rule``), so the form
        refuses exactly what the client would refuse before sending.
        """
        try:
            value = _parse(field, self.inputs[field].value)
            validate_rule_update({field: value})
        except ValueError as exc:
            return None, str(exc)
        protocol = str((self.rule or {}).get("protocol") or "").upper()
        if field == "port" and value == "" and protocol not in firewall_report.PORTLESS_PROTOCOLS:
            # services differ on it (every port, or none): the audit could not read it back
            return None, (
                f"an empty port on a {protocol or 'ported'} rule means every port on some "
                "services and no port on others; write 'any' for every port, or the ports"
            )
        return value, ""

    def changes(self) -> dict[str, Any]:
        """API field -> new value, for every edited, valid field that differs from the rule's."""
        if self.rule is None:
            return {}
        out = {}
        for field in EDITABLE:
            if not self._edited(field):
                continue
            value, problem = self.check(field)
            if not problem and value != self._current(field):
                out[field] = value
        return out

    def _current(self, field: str) -> Any:
        assert self.rule is not None
        value = self.rule.get(field)
        return list(value or []) if field in _LIST_FIELDS else value

    def _edited(self, field: str) -> bool:
        assert self.rule is not None
        return self.inputs[field].value != _as_text(field, self.rule.get(field))

    def problems(self) -> dict[str, str]:
        """API field -> message for every edited field whose input the client would refuse.

        A stored value the client would refuse (the audit's unparsed ports and IPs) does not
        block saving other fields: it is not sent unless the user edits it.
        """
        if self.rule is None:
            return {}
        return {f: p for f in EDITABLE if self._edited(f) and (p := self.check(f)[1])}

    def _on_edit(self, _change: object = None) -> None:
        problems = self.problems()
        for field, message in self.messages.items():
            text = problems.get(field, "")
            stored = "" if self.rule is None or self._edited(field) else self.check(field)[1]
            if text:
                message.value = banner("error", text)
            elif stored:
                message.value = banner(
                    "warn",
                    f"The stored value is not valid ({stored}); it is kept unless you change it.",
                )
            else:
                message.value = ""
        changes = self.changes()
        if self.rule is None:
            self.diff.value = "<i>Choose a firewall and a rule.</i>"
        elif not changes:
            self.diff.value = "<i>No changes.</i>"
        else:
            rows = "".join(
                f"<tr><td>{EDITABLE[f]}</td><td>{cell(self._current(f))}</td>"
                f"<td><b>{cell(v)}</b></td></tr>"
                for f, v in changes.items()
            )
            self.diff.value = (
                "<b>Changes to save</b>"
                '<table class="svcnb-table"><tr><th>field</th><th>before</th><th>after</th></tr>'
                f"{rows}</table>"
            )
        self.reach_preview.value = self._reach_words(changes)
        self.save_button.disabled = bool(problems) or not changes
        self.save_button.tooltip = (
            "Fix the fields marked in red first."
            if problems
            else ("No field differs from the rule yet." if not changes else "")
        )
        self.reset_button.disabled = not changes and not problems

    # --- reachability preview ---------------------------------------------------------------

    def _context(self, fw_id: str) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
        if fw_id not in self._reach_context:
            full = self.client.vms.all(details=True)
            links = frames.vm_firewalls(full)
            mine = set(links.loc[links["firewall_id"] == fw_id, "vm_id"])
            others = sorted(set(links.loc[links["vm_id"].isin(mine), "firewall_id"]) - {fw_id})
            rules = [r for other in others for r in self.client.firewalls.rules(other)]
            pins = getattr(self.client, "pins", None)
            self._reach_context[fw_id] = (frames.vms(full, pins=pins), links, rules)
        return self._reach_context[fw_id]

    def reach_changes(self, changes: dict[str, Any] | None = None) -> pd.DataFrame:
        """``firewall.reach_diff`` of the pending edit over the VMs this firewall protects.

        The other firewalls on those VMs take part, since they are pooled by position with this
        one; the probes are the report's defaults (well-known ports from anywhere plus what the
        rule names before and after the edit).
        """
        changes = self.changes() if changes is None else changes
        assert self.rule is not None
        fw_id = str(self.firewall_picker.value)
        vms, links, others = self._context(fw_id)
        rule_id = str(self.rule["id"])
        edited = [
            {**r, **changes, "firewallId": fw_id} if str(r["id"]) == rule_id else r
            for r in self.rules
        ]
        before = frames.firewall_rules([*self.rules, *others])
        after = frames.firewall_rules([*edited, *others])
        return firewall_report.reach_diff(before, after, links, vms)

    def _reach_words(self, changes: dict[str, Any]) -> str:
        if self.rule is None or not changes:
            return ""
        try:
            diff = self.reach_changes(changes)
        except Exception as exc:  # noqa: BLE001 - the preview must never block editing
            words = describe(exc, "working out which flows the edit changes")[1]
            return banner("warn", f"Reachability not shown: {words}")
        lines = firewall_report.reach_diff_words(diff)
        if not lines:
            return (
                "<b>Reachability</b><br><i>Opens and closes none of the probed flows "
                f"({', '.join(map(str, firewall_report.PROBE_PORTS))}/TCP from anywhere and "
                "what the rule names).</i>"
            )
        items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
        return f"<b>Reachability: this edit</b><ul>{items}</ul>"

    # --- saving -----------------------------------------------------------------------------

    def save(self) -> str:
        """Send the changed fields, record the outcome in the audit log and return it.

        Outcomes: ``saved``, ``upstream_sync_failed`` (stored, not synced; the re-read rule is
        shown), ``refused`` (not sent: invalid), ``failed`` (the API refused it), ``no_change``,
        ``stale`` (not sent: the rule changed on the service since it was loaded; the diff now
        compares with its current values and the user saves again after reviewing it).
        """
        if self.rule is None:
            show(self.status, "error", "Choose a firewall and a rule first.")
            return "no_change"
        problems = self.problems()
        if problems:
            words = "; ".join(problems.values())
            show(self.status, "error", f"Not saved, fix these fields first: {words}.")
            return "refused"
        changes = self.changes()
        if not changes:
            show(self.status, "info", "Nothing to save: no field differs from the rule.")
            return "no_change"
        fw_id = str(self.firewall_picker.value)
        rule_id = str(self.rule["id"])
        doing = f"saving rule {rule_id} of firewall {fw_id}"
        self.reread.value = ""
        if self._went_stale(fw_id, rule_id, doing):
            return "stale"
        changes = self.changes()
        if not changes:
            show(self.status, "info", "Nothing to save: the rule already holds these values.")
            return "no_change"
        before = {f: self._current(f) for f in changes}
        detail = ""
        updated: dict[str, Any] | None
        with RateWait(self.client) as waited:
            try:
                updated = self.client.firewalls.update_rule(fw_id, rule_id, **changes)
                outcome = "saved"
            except errors.UpstreamSyncError as exc:
                outcome = "upstream_sync_failed"
                detail = describe(exc, doing)[1]
                updated = exc.rule
            except Exception as exc:  # noqa: BLE001 - shown inline and audited
                outcome = "refused" if isinstance(exc, ValueError) else "failed"
                detail = describe(exc, doing)[1]
                updated = None
        saved_at = self._clock()
        if outcome != "refused":  # a refused change never left the machine: nothing to audit
            self._audit(fw_id, rule_id, before, changes, outcome, detail, saved_at)
        if outcome == "saved":
            assert updated is not None
            self._replace_rule(updated)
            summary = ", ".join(
                f"{EDITABLE[f]} {_plain(before[f])} → {_plain(v)}" for f, v in changes.items()
            )
            show(self.status, "ok", f"Saved rule {rule_id}: {summary}.{waited.words()}")
            self._saved_shown = (fw_id, rule_id)
            for callback in self._saved_callbacks:
                callback(fw_id, rule_id, saved_at)
        elif outcome == "upstream_sync_failed":
            self.status.value = banner("error", detail)
            if updated is not None:
                self._replace_rule(updated)
                self.reread.value = "<b>The rule as read again after the failure</b>" + table(
                    [updated], _RULE_COLUMNS
                )
            else:
                self.reread.value = banner(
                    "warn", "The rule could not be read again either; press Refresh rules."
                )
        else:
            self.status.value = banner("error", detail)
        self._show_history()
        return outcome

    def _went_stale(self, fw_id: str, rule_id: str, doing: str) -> bool:
        """Read the rule again; True (and say so) when someone changed it since it was loaded.

        The audit's "before" must be what the service held, and a save must not silently undo
        another person's edit, so the diff is recomputed against the current rule first.
        """
        with shown_in(self.status, doing):
            fresh = next(
                (r for r in self.client.firewalls.rules(fw_id) if str(r["id"]) == rule_id), None
            )
            if fresh is None:
                show(self.status, "error", f"Rule {rule_id} is gone from firewall {fw_id}.")
                return True
            assert self.rule is not None
            if all(fresh.get(f) == self.rule.get(f) for f in EDITABLE):
                return False
            # keep what the user typed; take the service's current value everywhere else, so
            # saving never reverts the other person's change to a field the user did not touch
            typed = {f: box.value for f, box in self.inputs.items() if self._edited(f)}
            self._replace_rule(fresh)
            for field, text in typed.items():
                self.inputs[field].value = text
            show(
                self.status,
                "warn",
                f"Not saved: rule {rule_id} was changed on the service since it was loaded. "
                "The diff now compares with its current values; review it and save again.",
            )
            return True
        return True  # the re-read failed; the status line says why

    def _replace_rule(self, rule: dict) -> None:
        self.rules = [rule if str(r["id"]) == str(rule["id"]) else r for r in self.rules]
        self.rule = rule
        with quietly(self.rule_picker, self._on_rule):
            self.rule_picker.options = [(_rule_label(r), str(r["id"])) for r in self.rules]
            self.rule_picker.value = str(rule["id"])
        self._fill()

    def _audit(
        self,
        fw_id: str,
        rule_id: str,
        before: dict,
        after: dict,
        outcome: str,
        detail: str,
        time: pd.Timestamp,
    ) -> None:
        record = RuleEdit(
            time=time,
            firewall_id=fw_id,
            rule_id=rule_id,
            before=before,
            after=after,
            outcome=outcome,
            detail=detail,
        )
        with shown_in(self.status, "writing the audit log"):
            self.store.journal.append(record)

    def audit_log(self) -> pd.DataFrame:
        """The store's journal, every kind, as the audit log (time, firewall_id, rule_id,
        before, after, outcome, detail, ...)."""
        return self.store.journal.log()

    def _show_history(self) -> None:
        if self.rule is None:
            self.history.value = ""
            return
        with shown_in(self.status, "reading the audit log"):
            log = self.store.journal.log()
            if log.empty or "rule_id" not in log:
                self.history.value = ""
                return
            mine = log[log["rule_id"] == str(self.rule["id"])]
            if "time" in mine:
                mine = mine.sort_values("time", ascending=False)
            mine = mine.assign(
                change=[
                    _change_words(b, a) for b, a in zip(mine["before"], mine["after"], strict=True)
                ]
            )
            self.history.value = (
                "<b>Earlier changes to this rule</b>"
                + table(mine, ["time", "change", "outcome"], limit=10)
                if not mine.empty
                else ""
            )
