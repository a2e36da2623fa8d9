"""Every dialect says the same account: wire facts checked against ``/_sandbox/truth``.

One server for the module; each case resets it into the dialect under test. A list is read the
dialect's own way (``dialect_support.walk``), words are mapped back through the dialect's
choices, money and times are compared as amounts and instants.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest
from _loopback import loopback_client
from dialect_support import amount as exact_amount
from dialect_support import page_items, served_size, size_param, walk
from dialects.cover import COVER

from svcnb.sandbox import NAMED, Dialect, Sandbox, serve

# make test: the named dialects and the random ones that speak every other choice the random
# draws make (tests/dialects/cover.py; the dialect sweep pulls them through svcnb too); make
# test-all: thirty random ones besides
DIALECTS = [
    *NAMED,
    *(f"random:{s}" for s in COVER),
    *(pytest.param(f"random:{s}", marks=pytest.mark.slow) for s in range(30) if s not in COVER),
]
PREFIXES = {"public": "/api/public/v1", "prefixed": "/api/v1/api/public/v1"}


@pytest.fixture(scope="module")
def server() -> Iterator[Sandbox]:
    with serve(vms=40, seed=7, time_scale=0.0) as sb:
        yield sb


class Spoken:
    """An admin client of the sandbox reset into one dialect."""

    def __init__(self, sb: Sandbox, name: str) -> None:
        self.sb = sb
        sb.control.reset(seed=7, vms=40, dialect=name)
        described = sb.control.dialect()
        assert described["name"] == name
        self.d = described["choices"]
        self.prefix = PREFIXES.get(self.d["base_paths"], "/api/public/v1")
        self.http = loopback_client(
            sb.base_url, timeout=30.0, headers={"x-api-key": sb.tokens["admin"]}
        )

    def request(self, method: str, path: str, **kw) -> httpx.Response:
        return self.http.request(method, self.prefix + path, **kw)

    def read_all(self, path: str, per_page: int | None = None, paged: bool = True) -> list[dict]:
        """Every item of a list, read the way the dialect pages it."""
        if not paged:
            response = self.request("GET", path)
            assert response.status_code == 200, response.text
            return response.json()["data"]
        items, total = walk(self.http, self.d, self.prefix + path, per_page)
        if total is not None:
            assert len(items) == total
        return items

    def close(self) -> None:
        self.http.close()


@pytest.fixture(params=DIALECTS)
def spoken(server: Sandbox, request: pytest.FixtureRequest) -> Iterator[Spoken]:
    client = Spoken(server, request.param)
    yield client
    client.close()
    server.control.reset(seed=7, vms=40, dialect="default")


def amount(value: object) -> Decimal | None:
    exact = exact_amount(value)
    return None if exact is None else exact.quantize(Decimal("0.01"))


def instant(text: str | None) -> datetime | None:
    if text is None:
        return None
    moment = datetime.fromisoformat(text)
    assert moment.tzinfo is not None, text
    return moment.astimezone(UTC)


def test_every_vm_is_read_in_the_dialects_paging(spoken: Spoken) -> None:
    truth = spoken.sb.control.truth()
    want = [vm["id"] for vm in truth["vms"]]
    assert [vm["id"] for vm in spoken.read_all("/vms")] == want
    assert [vm["id"] for vm in spoken.read_all("/vms", per_page=7)] == want


def test_words_money_and_times_say_the_truth(spoken: Spoken) -> None:
    truth = {vm["id"]: vm for vm in spoken.sb.control.truth()["vms"]}
    back_vm = {word: canonical for canonical, word in spoken.d["vm_words"].items()}
    back_billing = {word: canonical for canonical, word in spoken.d["billing_words"].items()}
    assert len(back_vm) == len(spoken.d["vm_words"])  # words within a kind are distinct
    for vm in spoken.read_all("/vms"):
        real = truth[vm["id"]]
        assert back_vm[vm["status"]] == real["status"]
        assert instant(vm["createdAt"]) == instant(real["createdAt"])
        if spoken.d["list_keys"] == "no_updated":
            assert "updatedAt" not in vm
        else:
            assert instant(vm["updatedAt"]) == instant(real["updatedAt"])
        assert ("sshKeys" in vm) == (spoken.d["list_keys"] == "full")
        assert vm["ram"] * (1024 if spoken.d["ram_unit"] == "GiB" else 1) == real["ram"]
        for holder in ("plan", "billing"):
            mine, theirs = vm[holder], real[holder]
            assert (mine is None) == (theirs is None)
            if theirs is not None and "priceMonthly" in theirs:
                assert amount(mine["priceMonthly"]) == amount(theirs["priceMonthly"])
                if spoken.d["money"] == "mixed":
                    assert mine["priceMonthly"] == theirs["priceMonthly"]
        if real["billing"] is not None:
            assert back_billing[vm["billing"]["status"]] == real["billing"]["status"]
            mine_at = vm["billing"]["nextRenewalAt"]
            assert instant(mine_at) == instant(real["billing"]["nextRenewalAt"])
    one = next(iter(truth.values()))
    detail = spoken.request("GET", f"/vms/{one['id']}").json()["data"]
    assert list(detail) == list(one)
    assert back_vm[detail["status"]] == one["status"]


def test_wallet_and_webhooks(spoken: Spoken) -> None:
    truth = spoken.sb.control.truth()
    wallet = spoken.request("GET", "/wallet").json()["data"]
    assert amount(wallet["balance"]) == amount(truth["wallet"]["balance"])
    assert instant(wallet["updatedAt"]) == instant(truth["wallet"]["updatedAt"])
    hooks = spoken.read_all("/webhooks", paged=spoken.d["webhooks_paged"])
    assert [h["id"] for h in hooks] == [h["id"] for h in truth["webhooks"]]
    for mine, theirs in zip(hooks, truth["webhooks"], strict=True):
        assert instant(mine["createdAt"]) == instant(theirs["createdAt"])
    if not spoken.d["webhooks_paged"]:
        # a query it does not take: refused, or ignored where the paging ignores unknown ones
        lenient = spoken.d["paging"] in ("offset", "token", "hal")
        assert spoken.request("GET", "/webhooks", params={"page": 1}).status_code == (
            200 if lenient else spoken.d["validation_status"]
        )


def test_delivery_fields_are_renamed(spoken: Spoken) -> None:
    truth = spoken.sb.control.truth()
    names = spoken.d["delivery_fields"]
    for hook in truth["webhooks"]:
        want = [d for d in truth["deliveries"] if d["webhookId"] == hook["id"]]
        got = spoken.read_all(f"/webhooks/{hook['id']}/deliveries", per_page=4)
        assert len(got) == len(want)
        for mine, theirs in zip(got, want, strict=True):
            assert mine["id"] == theirs["id"]
            for canonical, name in names.items():
                if name != canonical:
                    assert canonical not in mine or canonical in names.values()
                value = mine[name]
                if canonical in ("createdAt", "lastAttemptAt"):
                    assert instant(value) == instant(theirs[canonical])
                else:
                    assert value == theirs[canonical]


def test_failure_statuses_follow_the_kind(spoken: Spoken) -> None:
    d = spoken.d
    terse = d["wording"] == "terse"
    truth = spoken.sb.control.truth()
    stopped = next(vm for vm in truth["vms"] if vm["status"] == "stopped")
    response = spoken.request("POST", f"/vms/{stopped['id']}/stop")
    assert response.status_code == d["conflict_status"]
    assert response.json()["success"] is False
    assert (response.json()["error"] == "VM is not running") == terse

    rule = truth["rules"][0]
    path = f"/firewalls/{rule['firewallId']}/rules/{rule['id']}"
    response = spoken.request("PATCH", path, json={"port": "1" * 65})
    assert response.status_code == d["validation_status"]
    assert "port" in response.json()["error"]
    if terse:
        assert response.json()["error"] == "Invalid value for port"

    hook = {"url": "https://example.com/h", "events": ["vm.stopped"], "description": "x"}
    active = sum(1 for h in truth["webhooks"] if h["isActive"])
    for _ in range(10 - active):
        assert spoken.request("POST", "/webhooks", json=hook).status_code == d["created_status"]
    response = spoken.request("POST", "/webhooks", json=hook)
    assert response.status_code == d["cap_status"]
    assert (response.json()["error"] == "Webhook limit reached") == terse

    control = spoken.sb.control
    made = control.create_token("soon gone", ["vms:read"])
    control.revoke_token(made["id"])
    response = spoken.request("GET", "/vms", headers={"x-api-key": made["secret"]})
    assert response.status_code == d["revoked_status"]
    missing = spoken.request("GET", "/vms", headers={"x-api-key": ""})
    assert missing.status_code == 401


def test_success_statuses(spoken: Spoken) -> None:
    d = spoken.d
    truth = spoken.sb.control.truth()
    running = next(vm for vm in truth["vms"] if vm["status"] == "running")
    response = spoken.request("POST", f"/vms/{running['id']}/stop")
    assert response.status_code == d["stop_status"]
    assert set(response.json()["data"]) == {"actionId"}
    detail = spoken.request("GET", f"/vms/{running['id']}").json()["data"]
    assert detail["status"] == d["vm_words"]["stopping"]
    att = truth["attachments"][0]
    response = spoken.request("DELETE", f"/networks/{att['networkId']}/attachments/{att['vmId']}")
    assert response.status_code == d["delete_status"]
    assert response.json() == {
        "success": True,
        "data": {"vmId": att["vmId"], "networkId": att["networkId"]},
    }


def test_page_size_and_base_paths(spoken: Spoken) -> None:
    d = spoken.d
    size = size_param(d)
    response = spoken.request("GET", "/firewalls", params={size: d["page_max"] + 1})
    if d["over_max"] == "reject":
        assert d["paging"] != "bare"  # bare pages always clamp
        assert response.status_code == d["validation_status"]
        assert size in response.json()["error"]
    else:
        assert response.status_code == 200, response.text
        assert len(page_items(d, response.json())) <= d["page_max"]
        assert served_size(d, response) in (None, d["page_max"])
    first = spoken.request("GET", "/vms")
    assert len(page_items(d, first.json())) == min(40, d["page_default"])
    other = {"public": PREFIXES["prefixed"], "prefixed": PREFIXES["public"]}.get(d["base_paths"])
    if other is not None:
        assert spoken.http.get(other + "/vms").status_code == 404
    else:
        for prefix in PREFIXES.values():
            assert spoken.http.get(prefix + "/vms").status_code == 200


def test_truth_does_not_depend_on_the_dialect(server: Sandbox) -> None:
    server.control.reset(seed=7, vms=40)
    plain = server.control.truth()
    server.control.reset(seed=7, vms=40, dialect="acme")
    try:
        assert server.control.truth() == plain
    finally:
        server.control.reset(seed=7, vms=40)


def test_parse_names_the_choices() -> None:
    assert Dialect.parse("random:5").choices() == Dialect.parse("random:5").choices()
    assert Dialect.parse("default").choices() == Dialect().choices()
    with pytest.raises(ValueError, match="default, acme, linkhdr, cursor, drf, .* or random:SEED"):
        Dialect.parse("klingon")
    with pytest.raises(ValueError, match="random:SEED"):
        Dialect.parse("random:x")


def test_reset_refuses_an_unknown_dialect(server: Sandbox) -> None:
    with pytest.raises(RuntimeError, match="dialect"):
        server.control.reset(dialect="klingon")
    assert server.control.dialect()["name"] == "default"


def test_config_validates_the_dialect() -> None:
    from svcnb.sandbox import SandboxConfig

    assert SandboxConfig(dialect="random:3").dialect == "random:3"
    with pytest.raises(ValueError, match="choose one of"):
        SandboxConfig(dialect="nope")


def test_sliding_window_names_the_wait(server: Sandbox) -> None:
    server.control.reset(seed=7, vms=4, dialect="acme")
    try:
        made = server.control.create_token("slow", ["vms:read"], rate_limit=2)
        headers = {"x-api-key": made["secret"]}
        with loopback_client(server.base_url + "/api/public/v1", headers=headers) as http:
            assert [http.get("/vms").status_code for _ in range(2)] == [200, 200]
            response = http.get("/vms")
        assert response.status_code == 429
        wait = int(response.headers["retry-after"])
        assert 1 <= wait <= 60
        assert response.json()["error"].endswith(f"{wait} seconds")
    finally:
        server.control.reset(seed=7, vms=40)


def test_serve_in_a_dialect_points_at_a_path_it_serves(make_sandbox, tmp_path) -> None:
    path = tmp_path / "c.json"
    sb = make_sandbox(vms=2, dialect="linkhdr", connection_file=str(path))
    assert sb.api_root == sb.base_url + "/api/v1/api/public/v1"
    assert sb.connection_info()["dialect"] == "linkhdr"
    response = httpx.get(sb.api_root + "/vms", headers={"x-api-key": sb.tokens["read"]})
    assert response.headers["x-total-count"] == "2"


def test_webhook_payloads_stay_canonical_but_for_the_vm_word() -> None:
    from svcnb.sandbox import SandboxConfig, create_app
    from svcnb.sandbox._deliveries import _COURIERS

    state = create_app(SandboxConfig(vms=1, dialect="acme")).state.sandbox
    event = {
        "id": "evt_1",
        "type": "vm.stopped",
        "createdAt": "2026-11-01T00:00:00Z",
        "data": {"vm": {"id": "vm_1", "name": "a", "hostname": "a.x", "status": "stopped"}},
    }
    payload = _COURIERS[state]._payload(event)
    assert payload["data"]["vm"]["status"] == "off"
    assert payload["createdAt"] == "2026-11-01T00:00:00Z"
    assert event["data"]["vm"]["status"] == "stopped"  # the recorded event is left alone
