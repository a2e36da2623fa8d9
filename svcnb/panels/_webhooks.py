"""WebhooksPanel: subscriptions with their health, their deliveries, and re-enabling one."""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd

from svcnb import frames
from svcnb.client import Client
from svcnb.panels._accounts import PerAccount
from svcnb.panels._display import Displayed
from svcnb.panels._messages import Kind, RateWait, show, shown_in
from svcnb.panels._quiet import quietly
from svcnb.panels._render import PlotView, flag, grid, shown, theme_style
from svcnb.reports import webhooks as health_report
from svcnb.store import Store

_HEALTH_COLUMNS = [
    "url",
    "webhook_id",
    "is_active",
    "events",
    "delivered",
    "failed",
    "unknown",
    "success_rate",
    "ok_attempt_1",
    "ok_attempt_2",
    "ok_attempt_3",
    "consecutive_failures",
    "failures_to_disable",
    "last_success_at",
    "last_failure_at",
    "reason",
]
_DELIVERY_COLUMNS = [
    "created_at",
    "event",
    "attempts",
    "status_code",
    "success",
    "error",
    "event_id",
    "delivery_id",
]


class WebhooksPanel(PerAccount, Displayed):
    """Webhook subscriptions, their delivery health, and a button to enable one again.

    Reads the ``webhooks`` frame (id, url, events, is_active, consecutive_failures) and the
    ``deliveries`` frame (webhook_id, created_at, event, attempts, status_code, success, error);
    health comes from ``svcnb.reports.webhooks.health`` (``health``: webhook_id, url,
    is_active, events, delivered, failed, unknown (events whose outcome the delivery records do
    not say), success_rate, ok_attempt_1..3, consecutive_failures, failures_to_disable,
    last_success_at, last_failure_at, reason). A run or a distance that is only a bound shows as
    "≥ N" / "≤ N", an unknown one as "unknown" (their ``*_bound`` columns), never as a plain
    number; the status line says how many subscriptions that is.

    Widgets (stable attribute names): ``table`` (subscriptions with health in one grid, CSS
    ``svcnb-webhook-grid``; the row selected there is the chosen subscription: ``selected_id``,
    set by ``select(webhook_id)``), ``plot`` (failure runs, PNG), ``deliveries_table`` (a grid
    of the chosen subscription's deliveries, newest first), ``enable_button`` (CSS ``svcnb-enable``;
    enabled only for a disabled subscription), ``refresh_button`` and ``status`` (CSS
    ``svcnb-status``).

    Given a :class:`Store` instead of a client, it shows the subscriptions and deliveries of
    the latest snapshot (``account=`` as every panel takes it: one name, or a list or ``"*"``
    for one tab per account); nothing is sent to the service, so ``enable_button`` stays off.
    """

    def __init__(
        self, source: Client | Store, *, account: str | None = None, deliveries_shown: int = 50
    ) -> None:
        self.store = None
        if isinstance(source, Store):
            self.store = source.for_account(account) if account is not None else source
        elif account is not None:
            raise ValueError("account= picks an account of a store; a client is one account")
        self.client = None if isinstance(source, Store) else source
        self.deliveries_shown = deliveries_shown
        self.webhooks = frames.webhooks([])
        self.deliveries = frames.deliveries([])
        self.health = pd.DataFrame()

        self.table = grid(select=True, page=10).add_class("svcnb-webhook-grid")
        self._shown_ids: list[str] = []
        self.plot = PlotView()
        self.deliveries_table = grid(page=10).add_class("svcnb-deliveries-grid")
        self.enable_button = widgets.Button(
            description="Enable again", icon="play", button_style="success", disabled=True
        ).add_class("svcnb-enable")
        self.refresh_button = widgets.Button(description="Refresh", icon="refresh")
        # beside Enable again: why it is disabled, when it is
        self.enable_hint = widgets.HTML().add_class("svcnb-button-hint")
        self.status = widgets.HTML().add_class("svcnb-status")

        self.table.observe(self._on_select, names="selected_rows")
        self.enable_button.on_click(lambda _b: self.enable_selected())
        self.refresh_button.on_click(lambda _b: self.refresh())

        self.widget = widgets.VBox(
            [
                theme_style(),
                self.refresh_button,
                self.table,
                self.plot,
                widgets.HBox([self.enable_button, self.enable_hint]),
                self.status,
                widgets.HTML("<b>Deliveries of the chosen subscription</b>"),
                self.deliveries_table,
            ]
        ).add_class("svcnb-webhooks-panel")
        self.widget.add_class("svcnb-panel")
        self.wait_for_display()
        self.refresh()

    def _read(self) -> None:
        if self.store is not None:
            # the latest snapshot's, as taken (StoreError naming it when one was not read)
            self.webhooks = self.store.load("webhooks")
            self.deliveries = self.store.load("deliveries")
            return
        assert self.client is not None
        subs = self.client.webhooks.list()
        records = []
        for sub in subs:
            for delivery in self.client.webhooks.deliveries(sub["id"]):
                # the API's delivery record does not name its subscription; the frame does
                records.append({**delivery, "webhookId": sub["id"]})
        pins = getattr(self.client, "pins", None)
        self.webhooks = frames.webhooks(subs, pins=pins)
        self.deliveries = frames.deliveries(records, pins=pins)

    def refresh(self) -> None:
        """Read the subscriptions and every subscription's deliveries again (from the store:
        its latest snapshot), then redraw."""
        with (
            shown_in(self.status, "reading the webhook subscriptions"),
            RateWait(self.client) as waited,
        ):
            self._read()
            # the webhooks view is the one source of the health table and its counts
            view = health_report.frames_view(self.webhooks, self.deliveries)
            self.health = view.tables["health"]
            if self.after_display("plot", lambda: self.plot.draw(view.plots["health"])):
                self.plot.wait()
            self._redraw()
            counts = view.values()
            disabled, unknown, bounded = (
                counts["disabled"],
                counts["unknown"],
                counts["bounded"],
            )
            words = f"{len(self.webhooks)} subscriptions, {len(self.deliveries)} delivery records"
            if unknown:
                words += (
                    f"; {unknown} event(s) of unknown outcome (no success flag svcnb can read), "
                    "left out of the success rates"
                )
            if bounded:
                words += (
                    f"; {bounded} subscription(s) whose run of failures is only a bound or "
                    "unknown (≥ / unknown: see the reason column)"
                )
            words += f"; {disabled} disabled." if disabled else "."
            level: Kind = "warn" if disabled or bounded else "info"
            show(self.status, level, words + waited.words())

    def _redraw(self) -> None:
        keep = self.selected_id
        ids = [str(v) for v in self.health.get("webhook_id", [])]
        chosen = keep if keep in ids else (ids[0] if ids else None)
        with quietly(self.table, self._on_select, "selected_rows"):
            self._shown_ids = ids
            self.table.update(
                shown(self.health, _HEALTH_COLUMNS),
                selected_rows=[ids.index(chosen)] if chosen is not None else [],
            )
        self._on_select()

    @property
    def selected_id(self) -> str | None:
        """The webhook id of the subscription selected in the grid (the first, if more)."""
        rows = [i for i in self.table.selected_rows if 0 <= i < len(self._shown_ids)]
        return self._shown_ids[min(rows)] if rows else None

    def select(self, webhook_id: str) -> None:
        """Select subscription ``webhook_id`` in the grid, as a click there would."""
        if str(webhook_id) not in self._shown_ids:
            raise ValueError(f"no subscription {webhook_id!r}; press Refresh")
        self.table.selected_rows = [self._shown_ids.index(str(webhook_id))]

    def _selected(self) -> pd.Series | None:
        chosen = self.selected_id
        rows = self.webhooks[self.webhooks["id"] == chosen]
        return None if chosen is None or rows.empty else rows.iloc[0]

    def _on_select(self, _change: object = None) -> None:
        sub = self._selected()
        self.enable_button.disabled = self.client is None or sub is None or flag(sub["is_active"])
        if self.client is None:
            why = "This panel reads a store: give it a client to enable a subscription again."
        elif sub is None:
            why = "Choose a subscription in the table."
        elif flag(sub["is_active"]):
            why = "The chosen subscription is active: only a disabled one can be enabled again."
        else:
            why = ""
        self.enable_button.tooltip = why
        self.enable_hint.value = f"<small>{html.escape(why)}</small>" if why else ""
        mine = self.deliveries.iloc[0:0]
        if sub is not None:
            mine = self.deliveries[self.deliveries["webhook_id"] == sub["id"]]
            mine = mine.sort_values("created_at", ascending=False).head(self.deliveries_shown)
        # "id" alone would read as a VM's id in the grid's labels
        mine = mine.rename(columns={"id": "delivery_id"})
        self.deliveries_table.update(shown(mine, _DELIVERY_COLUMNS), selected_rows=[])

    def enable_selected(self) -> None:
        """Set the chosen (disabled) subscription active again and re-read everything."""
        sub = self._selected()
        if sub is None:
            show(self.status, "warn", "Choose a subscription first.")
            return
        if self.client is None:
            show(self.status, "warn", "This panel reads a store: enable it from a client's panel.")
            return
        with shown_in(self.status, f"enabling subscription {sub['id']}"):
            self.client.webhooks.set_active(str(sub["id"]), True)
            self.refresh()
            show(self.status, "ok", f"Subscription {sub['url']} ({sub['id']}) is active again.")
