"""WebhooksPanel: subscriptions with health, their deliveries, and re-enabling a disabled one."""

from __future__ import annotations

import pandas as pd

from svcnb.panels import WebhooksPanel


def _disabled(panel: WebhooksPanel) -> str:
    hooks = panel.webhooks
    return str(hooks[~hooks["is_active"].fillna(True)]["id"].iloc[0])


def test_subscriptions_show_their_health_and_deliveries(sandbox, admin):
    panel = WebhooksPanel(admin)
    hooks = admin.webhooks.list()
    assert len(panel.table.df) == len(hooks)
    for hook in hooks:
        assert hook["url"] in set(panel.table.df["URL"])
    # the seeded old receiver failed 50 times in a row and was disabled
    old = _disabled(panel)
    assert panel.table.df.set_index("Webhook id").loc[old, "Active"] == "no"
    assert "1 disabled" in panel.status.value

    panel.select(old)
    deliveries = admin.webhooks.deliveries(old)
    assert deliveries, "the sandbox seeds delivery attempts"
    for record in deliveries:
        assert record["id"] in set(panel.deliveries_table.df["Delivery id"])
    assert not panel.enable_button.disabled

    active = next(str(h["id"]) for h in hooks if h["isActive"])
    panel.select(active)
    assert panel.enable_button.disabled


def test_the_enable_button_makes_a_disabled_subscription_active_again(sandbox, admin):
    panel = WebhooksPanel(admin)
    old = _disabled(panel)
    panel.select(old)
    panel.enable_button.click()
    assert next(h for h in admin.webhooks.list() if h["id"] == old)["isActive"] is True
    assert "active again" in panel.status.value
    assert panel.selected_id == old
    assert panel.enable_button.disabled
    assert panel.table.df.set_index("Webhook id").loc[old, "Active"] == "yes"


def test_a_read_only_token_cannot_enable_and_is_told_why(sandbox, reader):
    panel = WebhooksPanel(reader)
    old = _disabled(panel)
    panel.select(old)
    panel.enable_button.click()
    assert "webhooks:write" in panel.status.value
    assert next(h for h in reader.webhooks.list() if h["id"] == old)["isActive"] is False


def test_from_a_store_of_several_accounts_one_tab_each_the_same_health(sandbox, admin, tmp_path):
    # a store partitioned by account ("*": one tab per account it holds), the same grid as live
    from svcnb.panels import AccountTabs
    from svcnb.store import Store

    store = Store(tmp_path / "store")
    store.take(admin, account="north")
    frames_now = {r: store.load(r, account="north") for r in ("webhooks", "deliveries")}
    live = WebhooksPanel(admin)
    tabs = WebhooksPanel(store, account="*")
    assert isinstance(tabs, AccountTabs) and list(tabs.panels) == ["north"]
    panel = tabs.panels["north"]
    assert len(panel.webhooks) == len(frames_now["webhooks"]) == len(live.webhooks)
    pd.testing.assert_frame_equal(panel.table.df, live.table.df)
    # nothing is sent to the service from a store: the button stays off, and says why
    panel.select(_disabled(panel))
    assert panel.enable_button.disabled
    panel.enable_selected()
    assert "reads a store" in panel.status.value
    # one account named is that account's panel
    assert len(WebhooksPanel(store, account="north").webhooks) == len(live.webhooks)
