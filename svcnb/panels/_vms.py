"""VmPanel: filter the fleet, pick VMs, stop them after a confirmation, watch them stop."""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import pandas as pd

from svcnb import errors, frames, plans, vocab
from svcnb.client import Client
from svcnb.panels._display import Displayed
from svcnb.panels._messages import Kind, RateWait, banner, describe, show, shown_in
from svcnb.panels._quiet import quietly
from svcnb.panels._render import grid, shown, table, theme_style
from svcnb.plans import NOT_STOPPABLE, PROTECTED, vms_text
from svcnb.reports import vm_classes
from svcnb.store import Store

_TABLE_COLUMNS = [
    "name",
    "id",
    "status",
    "region_slug",
    "plan_slug",
    "ip_address",
    "is_protected",
]
# Status classes after which watching a stop is pointless: it either worked or cannot any more.
_FINAL = {"stopped", "terminated", "suspended"}
_GONE = "not found"  # the panel's own word for a VM the API no longer knows
# how rows join the selection in the grid (DataTables' "os" selection style)
SELECT_HINT = (
    "Click a row to select it; Ctrl-click (⌘-click on a Mac) adds or removes a row, "
    "Shift-click adds the rows in between."
)
# buttons as wide as their label, so a count is never cut off
_FIT = {"width": "auto", "min_width": "max-content"}


def _final(status: Any) -> bool:
    return status == _GONE or vocab.current().classify("vm_status", status) in _FINAL


@dataclass
class StopAction:
    """One stop the panel queued and watches."""

    vm_id: str
    name: str
    action_id: str
    status: str = "stopping"


def _choices(frame: pd.DataFrame, column: str, label: str) -> list[tuple[str, str]]:
    values = sorted({str(v) for v in frame[column].dropna()}) if column in frame else []
    return [(f"all {label}", "")] + [(v, v) for v in values]


def _status_choices(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """Status classes present, each labelled with the service's own words for it.

    The filter's values are classes, not words: "running" selects ``active`` VMs on a service
    that says ``active``, so code and notebooks filter the same way on every service.
    """
    found = vm_classes(frame) if len(frame) else pd.Series([], dtype="string")
    words: dict[str, set[str]] = {}
    for cls, word in zip(found, frame.get("status", []), strict=False):
        words.setdefault(str(cls), set()).add("" if pd.isna(word) else str(word))
    order = [*vocab.VM_CLASSES, vocab.UNKNOWN]
    options = [("all statuses", "")]
    for cls in sorted(words, key=lambda c: order.index(c) if c in order else len(order)):
        said = sorted(w for w in words[cls] if w and w != cls)
        options.append((f"{cls} ({', '.join(said)})" if said else cls, cls))
    return options


def _held_back_words(held: pd.DataFrame, idle: pd.DataFrame) -> str:
    """The VMs a plan holds back, each named with why: protected ones, then not running ones."""
    words = [
        f"{r.name} (protected: tick the box in the review to stop it)" for r in held.itertuples()
    ]
    words += [f"{r.name} ({r.status}: only running VMs can be stopped)" for r in idle.itertuples()]
    return ", ".join(words)


class VmPanel(Displayed):
    """The fleet as a filterable table; selected VMs are stopped after an explicit confirmation.

    Reads the ``vms`` frame columns id, name, hostname, status, region_slug, plan_slug,
    ip_address and is_protected.

    Widgets (stable attribute names): ``status_filter`` (values are status classes of
    svcnb.vocab, labelled with the words the service uses), ``region_filter``, ``plan_filter``,
    ``search`` (CSS ``svcnb-search``), ``table`` (the filtered fleet in one grid, CSS
    ``svcnb-vm-grid``: sort, search, pages; its ``selected_rows`` are the selection, read as VM
    ids by ``selected_ids`` and set by ``select(ids)``), ``selection_hint`` (CSS
    ``svcnb-selection-hint``: how to add rows to the selection, and what Stop would do with
    it), ``refresh_button``, ``stop_button`` (CSS ``svcnb-stop``), ``confirmation``,
    ``allow_protected``, ``approver`` (CSS ``svcnb-approver``), ``approver_note`` (says Confirm
    waits for a name), ``confirm_button`` (CSS
    ``svcnb-confirm``), ``cancel_button``, ``actions`` (CSS ``svcnb-actions``), ``status`` (CSS
    ``svcnb-status``). ``widget`` is the whole panel; the panel also displays itself.

    ``watch_interval`` is the seconds between status polls of queued stops, in a background
    thread; ``None`` turns the thread off so the caller (a test) drives it with ``poll()``.

    Stopping goes through a :class:`svcnb.plans.StopPlan` of the selection: Stop builds it
    (``plan``; at most ``limit`` VMs, protected ones held back unless ``allow_protected`` is
    ticked), Confirm applies it as the ``approver`` typed in the widget (empty unless
    ``approver`` is given: Confirm stays disabled until someone names themselves): each VM is
    read again and refused if it changed since the review, the rest are stopped and watched.
    The Stop button, the hint, the plan and the Confirm button all count the same thing: the
    VMs the plan stops; the ones it holds back are named beside it. The plan, approver and
    outcome per VM go to ``store``'s audit log (default ``Store()``) when the stops are queued
    and again when the watch ends.
    """

    def __init__(
        self,
        client: Client,
        *,
        watch_interval: float | None = 2.0,
        watch_timeout: float = 600.0,
        store: Store | None = None,
        approver: str | None = None,
        limit: int = plans.DEFAULT_LIMIT,
    ) -> None:
        self.client = client
        self.watch_interval = watch_interval
        self.watch_timeout = watch_timeout
        self._store = store
        self.limit = limit
        self.plan: plans.StopPlan | None = None
        # applied plans whose stops are still watched; settled and audited when the watch ends
        self.runs: list[plans.StopRun] = []
        self.vms = frames.vms([])
        self.pending: list[str] = []
        self.actions_by_vm: dict[str, StopAction] = {}
        # guards vms and actions_by_vm: the watcher thread updates them while the user clicks
        self._lock = threading.RLock()
        self._watcher: threading.Thread | None = None

        self.status_filter = widgets.Dropdown(description="Status", options=[("all statuses", "")])
        self.region_filter = widgets.Dropdown(description="Region", options=[("all regions", "")])
        self.plan_filter = widgets.Dropdown(description="Plan", options=[("all plans", "")])
        self.search = widgets.Text(
            description="Search", placeholder="name, hostname, IP or id", continuous_update=True
        ).add_class("svcnb-search")
        # the one view of the fleet: selection is made in the grid, rows map to _shown_ids
        self.table = grid(select=True, page=15).add_class("svcnb-vm-grid")
        self._shown_ids: list[str] = []
        self.selection_hint = widgets.HTML().add_class("svcnb-selection-hint")
        self.refresh_button = widgets.Button(description="Refresh", icon="refresh")
        self.stop_button = widgets.Button(
            description="Stop…",
            button_style="warning",
            icon="stop",
            disabled=True,
            layout=widgets.Layout(**_FIT),
        ).add_class("svcnb-stop")
        self.confirmation = widgets.HTML()
        self.allow_protected = widgets.Checkbox(
            description="Also stop the protected VMs named above",
            indent=False,
            layout=widgets.Layout(width="auto"),
        )
        self.confirm_button = widgets.Button(
            description="Confirm stop",
            button_style="danger",
            disabled=True,
            layout=widgets.Layout(**_FIT),
        ).add_class("svcnb-confirm")
        self.cancel_button = widgets.Button(description="Cancel")
        # nobody is presumed: the audit log's approver is whoever types their name here
        self.approver = widgets.Text(
            description="Approver",
            value=(approver or "").strip(),
            placeholder="your name (required)",
        ).add_class("svcnb-approver")
        self.approver_note = widgets.HTML().add_class("svcnb-approver-note")
        self.confirm_box = widgets.VBox(
            [
                self.confirmation,
                self.allow_protected,
                self.approver,
                self.approver_note,
                widgets.HBox([self.confirm_button, self.cancel_button]),
            ],
            layout=widgets.Layout(display="none"),
        )
        self.actions = widgets.HTML().add_class("svcnb-actions")
        self.status = widgets.HTML().add_class("svcnb-status")

        for w in (self.status_filter, self.region_filter, self.plan_filter, self.search):
            w.observe(self._on_filter, names="value")
        self.table.observe(self._on_user_select, names="selected_rows")
        self.allow_protected.observe(self._on_allow_protected, names="value")
        self.approver.observe(self._enable_confirm, names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.stop_button.on_click(lambda _b: self.review_stop())
        self.confirm_button.on_click(lambda _b: self.confirm_stop())
        self.cancel_button.on_click(lambda _b: self.cancel())

        self.widget = widgets.VBox(
            [
                theme_style(),
                widgets.HBox([self.status_filter, self.region_filter, self.plan_filter]),
                widgets.HBox([self.search, self.refresh_button]),
                self.table,
                self.selection_hint,
                self.stop_button,
                self.confirm_box,
                self.actions,
                self.status,
            ]
        ).add_class("svcnb-vm-panel")
        self.widget.add_class("svcnb-panel")
        self.refresh()

    # --- reading -------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the VM list again and redraw; filters and the selection are kept where possible."""
        with shown_in(self.status, "reading the VM list"), RateWait(self.client) as waited:
            self.vms = frames.vms(self.client.vms.list(), pins=getattr(self.client, "pins", None))
            self._set_choices()
            self._redraw()
            show(self.status, "info", f"{len(self.vms)} VMs read.{waited.words()}")

    def _set_choices(self) -> None:
        for dropdown, options in (
            (self.status_filter, _status_choices(self.vms)),
            (self.region_filter, _choices(self.vms, "region_slug", "regions")),
            (self.plan_filter, _choices(self.vms, "plan_slug", "plans")),
        ):
            keep = dropdown.value
            with quietly(dropdown, self._on_filter):
                dropdown.options = options
                dropdown.value = keep if keep in {v for _, v in dropdown.options} else ""

    def filtered(self) -> pd.DataFrame:
        """The VMs matching the status class, region, plan and search filters (same columns as
        vms)."""
        frame = self.vms
        if self.status_filter.value and len(frame):
            frame = frame[(vm_classes(frame) == self.status_filter.value).to_numpy(dtype=bool)]
        for dropdown, column in (
            (self.region_filter, "region_slug"),
            (self.plan_filter, "plan_slug"),
        ):
            if dropdown.value:
                frame = frame[(frame[column] == dropdown.value).fillna(False).astype(bool)]
        needle = self.search.value.strip().lower()
        if needle:
            text = pd.Series("", index=frame.index, dtype="string")
            for column in ("name", "hostname", "id", "ip_address"):
                text = text + " " + frame[column].fillna("").astype("string").str.lower()
            frame = frame[text.str.contains(needle, regex=False).fillna(False).astype(bool)]
        return frame

    def _redraw(self) -> None:
        with self._lock:
            frame = self.filtered()
        keep = set(self.selected_ids)
        ids = [str(v) for v in frame["id"]]
        with quietly(self.table, self._on_user_select, "selected_rows"):
            self._shown_ids = ids
            self.table.update(
                shown(frame, _TABLE_COLUMNS),
                selected_rows=[i for i, v in enumerate(ids) if v in keep],
            )
        self._on_select()

    @property
    def selected_ids(self) -> list[str]:
        """The VM ids of the rows selected in the grid, in grid order."""
        rows = sorted(set(self.table.selected_rows))
        return [self._shown_ids[i] for i in rows if 0 <= i < len(self._shown_ids)]

    def select(self, ids: Iterable[str]) -> None:
        """Select the VMs ``ids`` in the grid (those the filters show), as a click would."""
        wanted = {str(v) for v in ids}
        self.table.selected_rows = [i for i, v in enumerate(self._shown_ids) if v in wanted]

    def _on_filter(self, _change: object = None) -> None:
        self._redraw()

    def _on_user_select(self, _change: object = None) -> None:
        # a confirmation lists exactly what will be stopped: a new selection voids it
        if self.confirm_box.layout.display != "none":
            self._close_review()
            show(self.status, "info", "The selection changed; press Stop to review it again.")
            return
        self._on_select()

    def _on_select(self, _change: object = None) -> None:
        # Called after every redraw too (refresh, filters, each poll of the watcher), so the
        # button follows the statuses last read, not the ones seen when the VMs were selected.
        # It counts what the plan counts: the VMs Stop's plan stops; those it holds back are
        # named beside it, never counted in.
        selected = self.selected_ids
        # while a plan is under review the button counts that plan, protected VMs let through
        # by the review's box included: the button and Confirm never name two numbers
        reviewing = self.plan is not None and self.confirm_box.layout.display != "none"
        plan = self.plan if reviewing else self.preview()
        count = 0 if plan is None else len(plan.to_stop)
        held = pd.DataFrame() if plan is None else plan.part(PROTECTED)
        idle = pd.DataFrame() if plan is None else plan.part(NOT_STOPPABLE)
        # protected VMs alone still open the review: its box is where they are let through
        self.stop_button.disabled = not count and not len(held)
        self.stop_button.description = f"Stop {vms_text(count)}…" if count else "Stop…"
        said = _held_back_words(held, idle)
        if not selected:
            hint = f"Select the VMs to stop in the table. {SELECT_HINT}"
        else:
            hint = f"{len(selected)} selected; {vms_text(count)} to stop" + (
                f"; held back: {said}" if said else ""
            )
            hint += f". {SELECT_HINT}"
        # a disabled Stop says why on hover too (the hint line beside it says it always)
        self.stop_button.tooltip = (
            said or "Select running VMs in the table first." if self.stop_button.disabled else said
        )
        self.selection_hint.value = f"<small>{html.escape(hint)}</small>"

    def preview(self) -> plans.StopPlan | None:
        """The plan Stop would build of the selection as last read (the limit is the review's
        to enforce); None when nothing is selected."""
        ids = self.selected_ids
        if not ids:
            return None
        with self._lock:
            fleet = self.vms[self.vms["id"].isin(ids)].copy()
        try:
            return plans.build_stop_plan(fleet, ids=ids, limit=max(self.limit, len(ids)))
        except plans.PlanError:
            return None

    def stoppable(self) -> list[str]:
        """The selected VM ids Stop's plan stops: running (``running``, ``active``, ... by the
        statuses last read) and not protected; the count on the Stop button."""
        plan = self.preview()
        return [] if plan is None else plan.to_stop

    # --- stopping --------------------------------------------------------------------------

    def _name(self, vm_id: str) -> str:
        with self._lock:
            names = self.vms.loc[self.vms["id"] == vm_id, "name"]
        return str(names.iloc[0]) if len(names) else vm_id

    @property
    def store(self) -> Store:
        """The store whose audit log records applied plans (``Store()`` unless one was given)."""
        if self._store is None:
            self._store = Store()
        return self._store

    def _build_plan(self, include_protected: Iterable[str] = ()) -> plans.StopPlan | None:
        """The stop plan of the selection over the fleet last read; None (said in the
        confirmation) when it cannot be built, e.g. over the limit."""
        with self._lock:
            fleet = self.vms.copy()
        try:
            return plans.build_stop_plan(
                fleet,
                ids=self.selected_ids,
                include_protected=include_protected,
                limit=self.limit,
                server=str(self.client.base_url),
                built_at=self.client.server_time,
            )
        except plans.PlanError as exc:
            self.confirmation.value = banner("warn", f"No plan: {exc}")
            return None

    def review_stop(self) -> None:
        """Build the stop plan of the selection and show it: the VMs it stops and why, the
        protected ones it holds back, the ones not stoppable."""
        with quietly(self.allow_protected, self._on_allow_protected):
            self.allow_protected.value = False
        self.plan = self._build_plan()
        self.confirm_box.layout.display = ""
        self._show_plan()

    def _show_plan(self) -> None:
        plan = self.plan
        if plan is None:
            self.pending = []
            self.allow_protected.layout.display = "none"
            self._enable_confirm()
            return
        self.pending = plan.to_stop
        stop = plan.part(plans._stop.STOP)
        held = plan.part(plans._stop.PROTECTED)
        idle = plan.part(plans._stop.NOT_STOPPABLE)
        extra = [v for v in plan.include_protected if v in set(stop["vm_id"])]
        columns = ["name", "vm_id", "status", "reason"]
        parts = [f"<b>Stop plan {plan.plan_id}</b> (at most {vms_text(plan.limit)} per action)<br>"]
        if len(stop):
            parts.append(f"<b>{vms_text(len(stop))} will be stopped:</b>")
            parts.append(table(stop, columns))
        else:
            parts.append("<b>Nothing in the selection will be stopped.</b>")
        if len(idle):
            names = ", ".join(f"{r.name} ({r.status})" for r in idle.itertuples())
            parts.append(
                banner("info", f"Not stopped, because only running VMs can be stopped: {names}.")
            )
        # the warning follows the plan's include_protected: held back, or let through by the tick
        if len(held):
            names = ", ".join(str(n) for n in held["name"])
            one = len(held) == 1
            parts.append(
                banner(
                    "warn",
                    f"Protected, not stopped unless you tick the box below: {names}. "
                    f"{'It is' if one else 'They are'} marked as protected and held back.",
                )
            )
        elif extra:
            names = ", ".join(str(self._name(v)) for v in extra)
            one = len(extra) == 1
            parts.append(
                banner(
                    "warn",
                    f"Protected, and stopped because the box below is ticked: {names} "
                    f"({'it is' if one else 'they are'} in the list above). Untick the box to "
                    f"hold {'it' if one else 'them'} back.",
                )
            )
        self.confirmation.value = "".join(parts)
        self.allow_protected.layout.display = "" if len(held) or extra else "none"
        self._enable_confirm()
        self._on_select()

    def _on_allow_protected(self, _change: object = None) -> None:
        # the tick is the explicit inclusion of the protected VMs the plan names
        if self.allow_protected.value and self.plan is not None:
            guarded = self.plan.part(plans._stop.PROTECTED)["vm_id"]
            self.plan = self._build_plan(include_protected=[str(v) for v in guarded])
        else:
            self.plan = self._build_plan()
        self._show_plan()

    def _enable_confirm(self, _change: object = None) -> None:
        named = bool(self.approver.value.strip())
        self.confirm_button.disabled = not self.pending or not named
        self.confirm_button.description = f"Confirm: stop {vms_text(len(self.pending))}"
        self.confirm_button.tooltip = (
            "Nothing in this plan would be stopped."
            if not self.pending
            else ("" if named else "Type the approver's name first.")
        )
        self.approver_note.value = (
            ""
            if named or not self.pending
            else banner(
                "info",
                "Type the approver's name to enable Confirm: the audit log records who "
                "approved the stop.",
            )
        )

    def _close_review(self) -> None:
        """Close the review: its plan, its tick and the approver's name belong to it alone, so
        the next review starts with Confirm waiting for a name again."""
        self.pending, self.plan = [], None
        self.confirm_box.layout.display = "none"
        self.confirm_button.disabled = True
        with quietly(self.allow_protected, self._on_allow_protected):
            self.allow_protected.value = False
        self.approver.value = ""
        self._on_select()

    def cancel(self) -> None:
        """Drop the pending plan; nothing is sent."""
        self._close_review()
        show(self.status, "info", "Stop cancelled; nothing was sent.")

    def confirm_stop(self) -> list[StopAction]:
        """Apply the reviewed plan: each VM is read again and refused if it changed since the
        review; a stop is queued for the rest (the client adds the Idempotency-Key), watched,
        and the plan, approver and outcomes written to the audit log.

        Returns the actions queued now; refusals and failures are shown per VM in the status.
        """
        plan = self.plan
        if plan is None or not self.pending:
            held = 0 if plan is None else len(plan.part(plans._stop.PROTECTED))
            if held:
                # a disabled button still runs its handler when clicked from code: say why
                one = held == 1
                show(
                    self.status,
                    "warn",
                    f"Not sent: {vms_text(held)} in the plan {'is' if one else 'are'} protected "
                    f"and held back; tick the box to stop {'it' if one else 'them'}.",
                )
            else:
                show(self.status, "info", "Nothing to confirm: select VMs and press Stop first.")
            return []
        try:
            run = plans.StopRun(
                plan,
                self.client,
                approver=self.approver.value,
                store=self.store,
                limit=self.limit,
            )
        except plans.PlanError as exc:
            show(self.status, "warn", f"Not sent: {exc}")
            return []
        self._close_review()
        with RateWait(self.client) as waited:
            sent = run.queue()
        queued: list[StopAction] = []
        problems: list[str] = []
        skipped: list[str] = []
        for row in run.outcomes.itertuples():
            # a plan's outcomes name each VM by its id and name (strings, never missing)
            vm_id, name = str(row.vm_id), str(row.name)
            if row.outcome == plans._stop.QUEUED:
                action = StopAction(vm_id=vm_id, name=name, action_id=str(row.action_id))
                with self._lock:
                    self.actions_by_vm[vm_id] = action
                    # accepted: the VM is stopping now, so it is no longer one Stop can act on
                    self.vms.loc[self.vms["id"] == vm_id, "status"] = action.status
                queued.append(action)
            elif row.outcome == plans._stop.REFUSED:
                skipped.append(f"Not sent for {name} ({vm_id}): {row.reason}.")
            elif row.outcome == plans._stop.FAILED:
                failed = run.errors.get(vm_id)
                doing = f"stopping {name} ({vm_id})"
                problems.append(describe(failed, doing)[1] if failed else f"{doing}: {row.reason}")
        with shown_in(self.status, "writing the audit log"):
            run.record("queued" if sent else "applied")
        if sent:
            self.runs.append(run)
        self._draw_actions()
        if queued:
            self._redraw()
        words = (
            f"Stop queued for {vms_text(len(queued))}, approved by {run.approver}; watching "
            f"until stopped.{waited.words()}"
        )
        if not queued:
            words = "Nothing was sent." if not problems else "No stop was queued."
        if problems or skipped:
            kind: Kind = "warn" if queued or not problems else "error"
            self.status.value = (
                banner(kind, words)
                + "".join(banner("info", p) for p in skipped)
                + "".join(banner("error", p) for p in problems)
            )
        else:
            show(self.status, "ok", words)
        if queued and self.watch_interval is not None:
            self._start_watcher()
        return queued

    def _settle(self, *, final: bool) -> None:
        """Audit the outcome of each applied plan whose stops are all over (``final``: every
        one, stragglers named as such)."""
        with self._lock:
            statuses = {v: a.status for v, a in self.actions_by_vm.items()}
        for run in list(self.runs):
            mine = run.outcomes.loc[run.outcomes["outcome"] == plans._stop.QUEUED, "vm_id"]
            if final or all(_final(statuses.get(str(v))) for v in mine):
                run.settle({str(v): statuses.get(str(v)) for v in mine})
                run.record("watched")
                self.runs.remove(run)

    # --- watching --------------------------------------------------------------------------

    @property
    def watching(self) -> list[StopAction]:
        """Queued stops whose VM has not reached a final status yet."""
        with self._lock:
            return [a for a in self.actions_by_vm.values() if not _final(a.status)]

    def poll(self) -> bool:
        """Read the status of every watched VM once; True while some stop is still under way."""
        open_actions = self.watching
        if not open_actions:
            return False
        with shown_in(self.status, "watching the stops"), RateWait(self.client) as waited:
            for action in open_actions:
                try:
                    status = str(self.client.vms.get(action.vm_id).get("status", action.status))
                except errors.NotFound:
                    status = _GONE
                with self._lock:
                    action.status = status
                    self.vms.loc[self.vms["id"] == action.vm_id, "status"] = status
            self._draw_actions()
            self._redraw()
            self._settle(final=False)
            left = self.watching
            if left:
                show(
                    self.status,
                    "info",
                    f"Waiting for {vms_text(len(left))} to stop.{waited.words()}",
                )
            else:
                done = ", ".join(f"{a.name}: {a.status}" for a in open_actions)
                show(self.status, "ok", f"All stops finished ({done}).")
        return bool(self.watching)

    def _draw_actions(self) -> None:
        with self._lock:
            rows = [
                {"vm": a.name, "vm_id": a.vm_id, "action_id": a.action_id, "status": a.status}
                for a in self.actions_by_vm.values()
            ]
        self.actions.value = (
            "<b>Stop actions</b>" + table(rows, ["vm", "vm_id", "action_id", "status"])
            if rows
            else ""
        )

    def _start_watcher(self) -> None:
        if self._watcher is not None and self._watcher.is_alive():
            return
        self._watcher = threading.Thread(
            target=self._watch_loop, name="svcnb-vm-watch", daemon=True
        )
        self._watcher.start()

    def _watch_loop(self) -> None:
        assert self.watch_interval is not None
        deadline = time.monotonic() + self.watch_timeout
        while time.monotonic() < deadline:
            time.sleep(self.watch_interval)
            if not self.poll():
                return
        names = ", ".join(a.name for a in self.watching)
        self._settle(final=True)
        show(
            self.status,
            "warn",
            f"Stopped watching after {self.watch_timeout:.0f} s; still not stopped: {names}. "
            "Press Refresh to check again.",
        )
