"""FirewallAuditPanel: the firewall findings of a snapshot, what changed since the one before,
accepted risks; a chosen finding opens its rule or is accepted with a reason, owner and end."""

from __future__ import annotations

import calendar
import html
import re
from dataclasses import dataclass, field
from typing import Any, cast

import ipywidgets as widgets
import pandas as pd

from svcnb.client import Client
from svcnb.panels._accounts import PerAccount
from svcnb.panels._asof import one_account
from svcnb.panels._display import Displayed
from svcnb.panels._messages import RateWait, show, shown_in
from svcnb.panels._quiet import quietly
from svcnb.panels._render import PlotView, grid, shown, table, theme_style
from svcnb.panels._rule_editor import RuleEditor
from svcnb.reports import Reuse, firewall, value_label
from svcnb.store import Store, StoreError
from svcnb.times import to_utc

# What a reviewer decides on first (the grid is wider than the page: what is to the right
# needs scrolling): the finding, where, why and who accepted it until when; the rule's own
# fields after
_COLUMNS = [
    "state",
    "severity",
    "check",
    "firewall_name",
    "port",
    "affected_vm_count",
    "reason",
    "accepted_by",
    "accepted_until",
    "rule_id",
    "position",
    "direction",
    "action",
    "protocol",
]
_RESOLVED_COLUMNS = ["severity", "check", "firewall_name", "rule_id", "port", "reason"]
UNTIL_HINT = "YYYY-MM-DD or YYYY-MM-DDTHH:MM, UTC"


@dataclass
class AcceptForm:
    """What the accept form holds, checked: ``problems`` maps a field to what is wrong with
    it (empty when the finding can be accepted), ``until`` is the parsed end (UTC)."""

    problems: dict[str, str] = field(default_factory=dict)
    until: pd.Timestamp | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


# A date written with its day and month in either order: 01/02/2027, 1.2.2027, 01-02-2027.
_DAY_MONTH = re.compile(r"^\s*(\d{1,2})[/.-](\d{1,2})[/.-](\d{2,4})\b")


def parse_until(text: str) -> pd.Timestamp:
    """The end of an acceptance from the form's text (a time without a zone is UTC; a date
    alone is 00:00 UTC that day); ValueError naming the forms it takes.

    A date whose day and month could be read either way (01/02/2027: 1 February or 2 January)
    is refused, naming both readings; one only one way reads (13/02/2027) is read that way,
    and :func:`check_acceptance` says in words which date it took.
    """
    raw = str(text).strip()
    both = _DAY_MONTH.match(raw)
    if both:
        first, second = int(both.group(1)), int(both.group(2))
        if first <= 12 and second <= 12 and first != second:
            raise ValueError(
                f"{raw!r} could be {_words(first, second, both.group(3))} or "
                f"{_words(second, first, both.group(3))}; write it as YYYY-MM-DD"
            )
    try:
        ts = pd.to_datetime(raw, dayfirst=bool(both and int(both.group(1)) > 12))
    except (TypeError, ValueError):
        raise ValueError(f"{text!r} is not a date; write {UNTIL_HINT}") from None
    if pd.isna(ts):
        raise ValueError(f"{text!r} is not a date; write {UNTIL_HINT}")
    return to_utc(ts, "until")


def _words(day: int, month: int, year: str) -> str:
    return f"{day} {calendar.month_name[month]} {year}"


def when_text(at: pd.Timestamp) -> str:
    """``at`` as the form says it back: the date in words, so no reading of it is left open."""
    return f"{at:%Y-%m-%d %H:%M} UTC ({at.day} {at:%B %Y})"


def check_acceptance(
    finding: pd.Series | None, reason: str, owner: str, until: str, now: pd.Timestamp
) -> AcceptForm:
    """Check the accept form for ``finding`` (a row of the panel's findings) at ``now``: a
    finding is chosen, reason and owner are given, the end parses and is after ``now``."""
    form = AcceptForm()
    if finding is None:
        form.problems["finding"] = "choose a finding in the table first"
    if not reason.strip():
        form.problems["reason"] = "say why the risk is accepted"
    if not owner.strip():
        form.problems["owner"] = "name who owns the risk"
    if not until.strip():
        form.problems["until"] = f"give the end of the acceptance ({UNTIL_HINT})"
    else:
        try:
            form.until = parse_until(until)
        except ValueError as exc:
            form.problems["until"] = str(exc)
        else:
            if form.until <= now:
                form.problems["until"] = (
                    f"{form.until:%Y-%m-%d %H:%M} UTC is not after now ({now:%Y-%m-%d %H:%M} UTC)"
                )
    return form


def _text(value: Any) -> str:
    return (
        ""
        if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value))
        else str(value)
    )


def _utc(at: Any) -> pd.Timestamp | None:
    if at is None:
        return None
    return to_utc(at, "at")


def fixed_text(saved_at: pd.Timestamp) -> str:
    """A finding's state once its rule was saved and before a snapshot shows the change."""
    return f"fixed (saved {saved_at:%H:%M} UTC), re-audit at next snapshot"


class FirewallAuditPanel(PerAccount, Displayed):
    """Firewall findings as of the latest snapshot, filterable by severity and check, each with
    its state since the snapshot before (``firewall.finding_changes``: new, open, accepted;
    the resolved ones listed apart in ``resolved_box``).

    Reads ``firewall.audit`` findings: severity, check, firewall_id, firewall_name, rule_id,
    position, direction, action, protocol, port, vm_id, affected_vm_count, reason, finding_id;
    and ``finding_changes``: finding_id, state, accepted_by, accepted_reason, accepted_until.

    Accepting a risk: choose a finding, fill ``accept_reason``, ``accept_owner`` and
    ``accept_until`` (checked as typed by :func:`check_acceptance`; problems in
    ``accept_hint``), then ``accept_button`` writes it to the store's journal
    (``store.journal.accept_finding``, audited); ``revoke_button`` ends the chosen finding's
    acceptance (owner and reason from the same form); ``button_hint`` beside them says why
    either is disabled, and ``form_status`` under them what they did. "Now" for the check is
    the service's time (:meth:`now`).

    Widgets (stable attribute names): ``severity_filter``, ``check_filter``, ``table`` (the
    findings passing the filters in one grid, CSS ``svcnb-finding-grid``; the row selected there
    is the chosen finding: ``selected_finding()``, set by ``select_finding(index)`` with an index
    of ``findings``), ``plot`` (PNG), ``open_button`` (CSS ``svcnb-open-rule``),
    ``retake_button`` (snapshot now and audit again; needs a client), ``editor_box`` (holds
    ``editor``, a RuleEditor, once a rule was opened) and ``status`` (CSS ``svcnb-status``).
    Without a client the panel only reads the store and cannot open rules.

    A finding whose rule is saved in the editor is marked fixed at once (``fixed``: (firewall_id,
    rule_id) -> save time by the server's clock; ``shown()``'s ``state`` column says "fixed
    (saved HH:MM UTC), re-audit at next snapshot"); the audit itself changes only with the next
    snapshot, which drops the marks it covers.
    """

    def __init__(
        self,
        store: Store,
        client: Client | None = None,
        *,
        account: str | list[str] | None = None,
    ) -> None:
        self.store = one_account(store, account)
        self.client = client
        self.findings = pd.DataFrame(columns=firewall.FINDING_COLUMNS)
        self.changes = pd.DataFrame(columns=firewall.FINDING_CHANGE_COLUMNS)
        self._snapshot_time: pd.Timestamp | None = None  # of the snapshot audited
        self.editor: RuleEditor | None = None
        self.fixed: dict[tuple[str, str], pd.Timestamp] = {}
        self._reuse = Reuse()  # the audits of the snapshots shown (see refresh)

        self.severity_filter = widgets.Dropdown(
            description="Severity",
            options=[("all severities", "")] + [(s, s) for s in firewall.SEVERITIES],
        )
        self.check_filter = widgets.Dropdown(description="Check", options=[("all checks", "")])
        # one row chosen at a time: the finding whose rule "Edit this rule" opens
        self.table = grid(select=True, page=10).add_class("svcnb-finding-grid")
        self._shown_index: list[int] = []
        self.plot = PlotView()
        self.open_button = widgets.Button(
            description="Edit this rule", icon="edit", disabled=True
        ).add_class("svcnb-open-rule")
        self.retake_button = widgets.Button(
            description="Snapshot now and audit again", icon="camera", disabled=client is None
        )
        self.editor_box = widgets.VBox()
        self.status = widgets.HTML().add_class("svcnb-status")
        self.resolved_box = widgets.HTML().add_class("svcnb-resolved")
        self.accept_reason = widgets.Text(
            description="Reason", placeholder="why this risk is accepted"
        )
        self.accept_owner = widgets.Text(description="Owner", placeholder="who owns the risk")
        self.accept_until = widgets.Text(description="Until", placeholder=UNTIL_HINT)
        self.accept_hint = widgets.HTML()
        self.accept_button = widgets.Button(
            description="Accept this risk", icon="check", disabled=True
        ).add_class("svcnb-accept-finding")
        self.revoke_button = widgets.Button(
            description="Revoke acceptance", icon="undo", disabled=True
        ).add_class("svcnb-revoke-acceptance")
        # beside the two buttons: why each one that is disabled is so, in words
        self.button_hint = widgets.HTML().add_class("svcnb-button-hint")
        # what Accept or Revoke did, or why not: under them, not in the status line far above
        self.form_status = widgets.HTML().add_class("svcnb-form-status")
        for box in (self.accept_reason, self.accept_owner, self.accept_until):
            box.observe(self._check_form, names="value")
        self.accept_button.on_click(lambda _b: self.accept_selected())
        self.revoke_button.on_click(lambda _b: self.revoke_selected())

        self.severity_filter.observe(self._redraw, names="value")
        self.check_filter.observe(self._redraw, names="value")
        self.table.observe(self._on_select, names="selected_rows")
        self.open_button.on_click(lambda _b: self.open_selected())
        self.retake_button.on_click(lambda _b: self.retake())

        self.widget = widgets.VBox(
            [
                theme_style(),
                widgets.HBox([self.severity_filter, self.check_filter, self.retake_button]),
                self.status,
                self.plot,
                self.table,
                self.open_button,
                widgets.HTML("<b>Accept the chosen finding as a risk</b>"),
                widgets.HBox([self.accept_reason, self.accept_owner, self.accept_until]),
                self.accept_hint,
                widgets.HBox([self.accept_button, self.revoke_button, self.button_hint]),
                self.form_status,
                self.resolved_box,
                self.editor_box,
            ]
        ).add_class("svcnb-audit-panel")
        self.widget.add_class("svcnb-panel")
        self.wait_for_display()
        self.refresh()

    def refresh(self) -> None:
        """Run the audit on the store's latest snapshot and redraw."""
        # the latest snapshot is audited once for the findings and their changes, and the two
        # snapshots' audits are kept until the next refresh: accepting a finding changes only
        # the acceptances
        self._reuse = Reuse()
        with shown_in(self.status, "auditing the latest snapshot"), self._reuse:
            self.findings = firewall.audit.from_store(self.store).reset_index(drop=True)
            self.changes = firewall.finding_changes(self.store)
            to = self.changes.attrs.get("to_time")
            self._snapshot_time = None if to is None else pd.Timestamp(to)
            self._drop_covered_marks()
            checks = sorted(self.findings["check"].dropna().astype(str).unique())
            keep = self.check_filter.value
            with quietly(self.check_filter, self._redraw):
                self.check_filter.options = [("all checks", "")] + [
                    (value_label("check", c), c) for c in checks
                ]
                self.check_filter.value = keep if keep in checks else ""
            if self.after_display(
                "plot",
                lambda: self.plot.draw(lambda ax: firewall.plot_findings(self.findings, ax=ax)),
            ):
                self.plot.wait()
            self._redraw()
            self._show_resolved()
            show(self.status, "info", self.summary())

    def summary(self) -> str:
        """ "9 findings in the latest snapshot: 1 new, 7 open, 1 accepted; 2 resolved since
        the snapshot before." (the figures of ``changes``)."""
        counts = self.changes["state"].value_counts()
        n = {s: int(counts.get(s, 0)) for s in firewall.FINDING_STATES}
        base = f"{len(self.findings):,} findings in the latest snapshot"
        if self.changes.empty or self.changes["from_snapshot"].isna().all():
            return f"{base}; no snapshot with an earlier server time to compare with."
        return (
            f"{base}: {n['new']:,} new, {n['open']:,} open, {n['accepted']:,} accepted; "
            f"{n['resolved']:,} resolved since the snapshot before."
        )

    def _show_resolved(self) -> None:
        resolved = self.changes[(self.changes["state"] == "resolved").to_numpy(dtype=bool)]
        if resolved.empty:
            self.resolved_box.value = ""
            return
        self.resolved_box.value = f"<b>Resolved since the snapshot before ({len(resolved)})</b>" + (
            table(resolved, _RESOLVED_COLUMNS)
        )

    def retake(self) -> None:
        """Take a snapshot with the client, then audit it (e.g. after editing rules)."""
        if self.client is None:
            show(self.status, "warn", "No client was given, so no snapshot can be taken here.")
            return
        with shown_in(self.status, "taking a snapshot"), RateWait(self.client) as waited:
            snapshot_id = self.store.take(self.client)
            # taken after every save so far, whatever the clocks say: the audit covers them all
            self.fixed = {}
            self.refresh()
            show(
                self.status,
                "ok",
                f"Snapshot {snapshot_id} taken; {len(self.findings)} findings.{waited.words()}",
            )

    def _drop_covered_marks(self) -> None:
        # a snapshot taken after a save shows the rule as it is now: the audit speaks for it
        snaps = self.store.snapshots()
        if snaps.empty or not self.fixed:
            return
        latest = pd.Timestamp(snaps["server_time"].max())
        self.fixed = {key: at for key, at in self.fixed.items() if at > latest}

    def mark_fixed(self, firewall_id: str, rule_id: str, saved_at: pd.Timestamp) -> None:
        """Mark the findings of a rule just saved as fixed, until a snapshot re-audits it."""
        self.fixed[(str(firewall_id), str(rule_id))] = saved_at
        self._redraw()
        mine = self.states() != "open"
        show(
            self.status,
            "ok",
            f"Rule {rule_id} saved: {int(mine.sum())} finding(s) marked fixed. The audit shows "
            "the change after the next snapshot (Snapshot now and audit again).",
        )

    def _change_of(self, column: str) -> pd.Series:
        """``column`` of ``changes`` for each of ``findings`` (matched by finding_id)."""
        current = self.changes[(self.changes["state"] != "resolved").to_numpy(dtype=bool)]
        by_id = current.set_index("finding_id")[column]
        return self.findings["finding_id"].map(by_id)

    def states(self) -> pd.Series:
        """Per finding: "new", "open" or "accepted" since the snapshot before, or "fixed
        (saved HH:MM UTC), re-audit at next snapshot" once its rule was saved here."""
        keys = zip(
            self.findings["firewall_id"].astype("string").fillna(""),
            self.findings["rule_id"].astype("string").fillna(""),
            strict=True,
        )
        since = self._change_of("state").astype("string").fillna("open")
        return pd.Series(
            [
                fixed_text(self.fixed[k]) if k in self.fixed else state
                for k, state in zip(keys, since, strict=True)
            ],
            index=self.findings.index,
            dtype="string",
        )

    def shown(self) -> pd.DataFrame:
        """The findings passing the severity and check filters (the columns of ``findings``,
        ``state``, ``accepted_by``, ``accepted_reason`` and ``accepted_until``)."""
        frame = self.findings.assign(
            state=self.states(),
            accepted_by=self._change_of("accepted_by"),
            accepted_reason=self._change_of("accepted_reason"),
            accepted_until=self._change_of("accepted_until"),
        )
        if self.severity_filter.value:
            frame = frame[frame["severity"] == self.severity_filter.value]
        if self.check_filter.value:
            frame = frame[frame["check"] == self.check_filter.value]
        return frame

    def _redraw(self, _change: object = None) -> None:
        frame = self.shown()
        keep = self.selected_finding()
        with quietly(self.table, self._on_select, "selected_rows"):
            self._shown_index = [int(i) for i in frame.index]
            self.table.update(
                shown(frame, _COLUMNS),
                selected_rows=[self._shown_index.index(keep)] if keep in self._shown_index else [],
            )
        self._on_select()

    def selected_finding(self) -> int | None:
        """The index in ``findings`` of the finding selected in the grid (the first, if more)."""
        rows = [i for i in self.table.selected_rows if 0 <= i < len(self._shown_index)]
        return self._shown_index[min(rows)] if rows else None

    def select_finding(self, index: int) -> None:
        """Select finding ``index`` of ``findings`` in the grid, as a click there would."""
        rows = [p for p, i in enumerate(self._shown_index) if i == int(index)]
        if not rows:
            raise ValueError(f"finding {index} is not shown; clear the severity and check filters")
        self.table.selected_rows = rows

    def _selected(self) -> pd.Series | None:
        index = self.selected_finding()
        # one row: the findings are indexed by their unique position
        return None if index is None else cast(pd.Series, self.findings.loc[index])

    def _on_select(self, _change: object = None) -> None:
        row = self._selected()
        has_rule = row is not None and bool(_text(row["rule_id"]))
        self.open_button.disabled = self.client is None or not has_rule
        if row is not None and not has_rule:
            self.open_button.tooltip = "This finding is not about one rule."
        elif self.client is None:
            self.open_button.tooltip = "Give the panel a client to edit rules."
        self._check_form()

    # -- accepted risks ------------------------------------------------------------------------

    def now(self) -> pd.Timestamp:
        """The service's time: an acceptance's end is judged by the clock its findings' states
        are (``finding_changes`` compares ends with snapshots' server times). That is the
        client's last answer from the service when it is later than the snapshot audited, else
        that snapshot's server time; this machine's clock (which may be days off a sandbox's,
        either way) only when neither is known."""
        seen = None if self.client is None else self.client.server_time
        times = [t for t in (_utc(seen), self._snapshot_time) if t is not None]
        return max(times) if times else pd.Timestamp.now(tz="UTC")

    def accept_form(self) -> AcceptForm:
        """The form's fields checked for the chosen finding (see :func:`check_acceptance`)."""
        return check_acceptance(
            self._selected(),
            self.accept_reason.value,
            self.accept_owner.value,
            self.accept_until.value,
            self.now(),
        )

    def _accepted(self, row: pd.Series | None) -> bool:
        if row is None or self.changes.empty:
            return False
        hit = self.changes[(self.changes["finding_id"] == row["finding_id"]).to_numpy(dtype=bool)]
        return bool((hit["state"] == "accepted").any())

    def _check_form(self, _change: object = None) -> None:
        row = self._selected()
        form = self.accept_form()
        self.accept_button.disabled = not form.ok
        missing = [
            name
            for name, box in (("Reason", self.accept_reason), ("Owner", self.accept_owner))
            if not box.value.strip()
        ]
        accepted = self._accepted(row)
        self.revoke_button.disabled = not accepted or bool(missing)
        if row is None:
            why_revoke = "choose an accepted finding in the table"
        elif not accepted:
            why_revoke = "the chosen finding is not accepted"
        else:
            why_revoke = f"type {' and '.join(missing)} above" if missing else ""
        why_accept = "; ".join(f"{k}: {v}" for k, v in form.problems.items())
        self.accept_button.tooltip = why_accept
        self.revoke_button.tooltip = f"Revoke: {why_revoke}" if why_revoke else ""
        reasons = [f"Accept needs {why_accept}" if why_accept else ""]
        reasons.append(f"Revoke needs you to {why_revoke}" if why_revoke and accepted else "")
        said = ". ".join(r for r in reasons if r)
        self.button_hint.value = f"<small>{html.escape(said)}.</small>" if said else ""
        typed = self.accept_reason.value or self.accept_owner.value or self.accept_until.value
        if form.ok and row is not None and form.until is not None:
            self.accept_hint.value = html.escape(
                f"Accepts \u201c{value_label('check', _text(row['check']))}\u201d on "
                f"{_text(row['firewall_name']) or 'the account'} until "
                f"{when_text(form.until)}, owned by {self.accept_owner.value.strip()}: "
                f"{self.accept_reason.value.strip()}"
            )
        elif typed:
            self.accept_hint.value = html.escape(
                "; ".join(f"{k}: {v}" for k, v in form.problems.items())
            )
        else:
            self.accept_hint.value = ""

    def accept_selected(self) -> bool:
        """Accept the chosen finding with the form's reason, owner and end; True when written."""
        form = self.accept_form()
        row = self._selected()
        if not form.ok or row is None or form.until is None:
            show(
                self.form_status,
                "warn",
                "Not accepted: " + "; ".join(f"{k}: {v}" for k, v in form.problems.items()),
            )
            return False
        fid = str(row["finding_id"])
        try:
            self.store.journal.accept_finding(
                fid,
                reason=self.accept_reason.value,
                owner=self.accept_owner.value,
                until=form.until,
                now=self.now(),
                firewall_id=_text(row["firewall_id"]) or None,
                rule_id=_text(row["rule_id"]) or None,
            )
        except StoreError as exc:
            show(self.form_status, "error", f"Not accepted: {exc}")
            return False
        owner, reason = self.accept_owner.value.strip(), self.accept_reason.value.strip()
        what = value_label("check", _text(row["check"]))
        where = _text(row["firewall_name"]) or "the account"
        self._after_register_change()
        show(
            self.form_status,
            "ok",
            f"Accepted \u201c{what}\u201d on {where} (finding {fid}) until "
            f"{when_text(form.until)}; owner {owner}, reason: {reason} (written to the store's "
            "audit log).",
        )
        return True

    def revoke_selected(self) -> bool:
        """End the chosen finding's acceptance (owner and reason from the form); True if done."""
        row = self._selected()
        if row is None:
            show(self.form_status, "warn", "Choose an accepted finding first.")
            return False
        fid = str(row["finding_id"])
        try:
            self.store.journal.revoke_acceptance(
                fid, owner=self.accept_owner.value, reason=self.accept_reason.value, now=self.now()
            )
        except StoreError as exc:
            show(self.form_status, "error", f"Not revoked: {exc}")
            return False
        owner = self.accept_owner.value.strip()
        self._after_register_change()
        show(
            self.form_status,
            "ok",
            f"Acceptance of finding {fid} revoked by {owner} (on the audit log).",
        )
        return True

    def _after_register_change(self) -> None:
        with self._reuse:
            self.changes = firewall.finding_changes(self.store)
        self.accept_reason.value = ""
        self.accept_owner.value = ""
        self.accept_until.value = ""
        self._redraw()

    def open_selected(self) -> RuleEditor | None:
        """Open the chosen finding's rule in the RuleEditor (created on first use)."""
        row = self._selected()
        if row is None or self.client is None:
            show(self.status, "warn", "Choose a finding about a rule first (and give a client).")
            return None
        return self.open_rule(str(row["firewall_id"]), str(row["rule_id"]))

    def open_rule(self, firewall_id: str, rule_id: str) -> RuleEditor | None:
        """Show rule ``rule_id`` of ``firewall_id`` in the embedded RuleEditor."""
        if self.client is None:
            show(self.status, "warn", "Give the panel a client to edit rules.")
            return None
        if self.editor is None:
            self.editor = RuleEditor(self.client, self.store)
            self.editor.on_saved(self.mark_fixed)
            self.editor_box.children = (self.editor.widget,)
        self.editor.open(firewall_id, rule_id)
        return self.editor
