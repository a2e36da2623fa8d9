"""The paging styles ``offset``, ``token``, ``hal``, ``zero`` and ``bare``, the money forms that
state a currency in other shapes, and ram in GiB (docs/dialects.md), read with plain httpx.

One server of 57 VMs for the module. A named dialect is chosen by a reset; a variant (another
token triple, absolute offset links, another money form) is put on the running state directly,
which is what a reset into it would do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from _loopback import loopback_client
from dialect_support import amount, walk

from svcnb.sandbox import (
    LINK_FORMS,
    MONEY,
    PAGING,
    PLANS,
    RAM_UNITS,
    TOKEN_NAMES,
    Dialect,
    Sandbox,
    serve,
)
from svcnb.sandbox import write_money as money
from svcnb.sandbox._speak import ram

VMS = 57
SEED = 11
PREFIX = "/api/public/v1"
NEW_MONEY = (
    "text",
    "code",
    "nanos",
    "minor_amount",
    "minor_exponent",
    "minor_scale",
    "minor_decimals",
)


@pytest.fixture(scope="module")
def server() -> Iterator[Sandbox]:
    with serve(vms=VMS, seed=SEED, time_scale=0.0) as sb:
        yield sb


@contextmanager
def speaking(server: Sandbox, dialect: str | Dialect) -> Iterator[tuple[httpx.Client, dict]]:
    """An admin client of the server reset into ``dialect`` (a name, or a Dialect put on the
    state), with the choices it says it speaks."""
    name = dialect if isinstance(dialect, str) else "default"
    server.control.reset(seed=SEED, vms=VMS, dialect=name)
    if isinstance(dialect, Dialect):
        with server.state.lock:
            server.state.dialect = dialect
    choices = server.control.dialect()["choices"]
    http = loopback_client(
        server.base_url, timeout=30.0, headers={"x-api-key": server.tokens["admin"]}
    )
    try:
        yield http, choices
    finally:
        http.close()
        server.control.reset(seed=SEED, vms=VMS, dialect="default")


def truth_ids(server: Sandbox) -> list[str]:
    return [vm["id"] for vm in server.control.truth()["vms"]]


# -- walking 57 VMs by each style's own continuation ---------------------------------------------
STYLES = [
    pytest.param("drf", id="offset-relative"),
    pytest.param(Dialect.named("drf").with_changes(link_form="absolute"), id="offset-absolute"),
    *[
        pytest.param(
            Dialect.named("google").with_changes(token_names=names), id=f"token-{names[0]}"
        )
        for names in TOKEN_NAMES
    ],
    pytest.param("hal", id="hal"),
    pytest.param("zeropage", id="zero"),
    pytest.param("capped", id="bare"),
]
HAS_TOTAL = {"offset": True, "token": False, "hal": True, "zero": True, "bare": False}


@pytest.mark.parametrize("dialect", STYLES)
@pytest.mark.parametrize("size", [None, 1, 7, 25, 57, 100])
def test_every_vm_comes_exactly_once_following_the_continuation(
    server: Sandbox, dialect: str | Dialect, size: int | None
) -> None:
    want = truth_ids(server)
    assert len(want) == VMS
    with speaking(server, dialect) as (http, d):
        if size == 100 and d["paging"] != "bare":
            size = d["page_max"]  # over page_max is refused (over_max reject); bare caps it
        items, total = walk(http, d, PREFIX + "/vms", size)
    got = [vm["id"] for vm in items]
    assert got == want  # each id once, in list order
    if HAS_TOTAL[d["paging"]]:
        assert total == VMS
    else:
        assert total is None


# -- offset --------------------------------------------------------------------------------------
def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_offset_answers_like_drf_with_relative_links(server: Sandbox) -> None:
    with speaking(server, "drf") as (http, d):
        assert (d["paging"], d["link_form"]) == ("offset", "relative")
        first = http.get(PREFIX + "/vms").json()
        assert list(first) == ["success", "data"]
        data = first["data"]
        assert data["count"] == VMS and data["previous"] is None
        assert len(data["results"]) == d["page_default"]
        assert data["next"] == f"{PREFIX}/vms?offset=20&limit=20"
        second = http.get(PREFIX + "/vms", params={"offset": 20, "limit": 20}).json()["data"]
        assert _query(second["previous"]) == {"offset": ["0"], "limit": ["20"]}
        assert second["previous"].startswith(PREFIX + "/vms?")
        middle = http.get(PREFIX + "/vms", params={"offset": 30, "limit": 7}).json()["data"]
        assert _query(middle["previous"]) == {"offset": ["23"], "limit": ["7"]}
        assert _query(middle["next"]) == {"offset": ["37"], "limit": ["7"]}
        last = http.get(PREFIX + "/vms", params={"offset": 50, "limit": 7}).json()["data"]
        assert last["next"] is None and len(last["results"]) == 7
        past = http.get(PREFIX + "/vms", params={"offset": 500}).json()["data"]
        assert past["results"] == [] and past["next"] is None and past["count"] == VMS
        # the prefixed base path links back under itself
        other = http.get("/api/v1/api/public/v1/vms").json()["data"]
        assert other["next"] == "/api/v1/api/public/v1/vms?offset=20&limit=20"


def test_offset_absolute_links_use_the_requests_own_host(server: Sandbox) -> None:
    dialect = Dialect.named("drf").with_changes(link_form="absolute")
    with speaking(server, dialect) as (http, d):
        data = http.get(PREFIX + "/vms", params={"offset": 10, "limit": 5}).json()["data"]
        assert data["next"] == f"{server.base_url}{PREFIX}/vms?offset=15&limit=5"
        assert data["previous"] == f"{server.base_url}{PREFIX}/vms?offset=5&limit=5"


def test_offset_ignores_the_page_parameters_it_does_not_take(server: Sandbox) -> None:
    with speaking(server, "drf") as (http, d):
        plain = http.get(PREFIX + "/vms", params={"offset": 5, "limit": 3}).json()
        noisy = http.get(
            PREFIX + "/vms",
            params={"offset": 5, "limit": 3, "page": 4, "perPage": 50, "cursor": "x", "q": "y"},
        ).json()
        assert noisy == plain
        # on every route: a route that takes no query ignores one too
        assert http.get(PREFIX + "/wallet", params={"page": 2}).status_code == 200
        too_big = http.get(PREFIX + "/vms", params={"limit": d["page_max"] + 1})
        assert too_big.status_code == 422 and too_big.json()["error"].startswith("limit")
        bad = http.get(PREFIX + "/vms", params={"offset": -1})
        assert bad.status_code == 422 and bad.json()["error"].startswith("offset")
    clamped = Dialect.named("drf").with_changes(over_max="clamp", page_max=25)
    with speaking(server, clamped) as (http, d):
        data = http.get(PREFIX + "/vms", params={"limit": 100}).json()["data"]
        assert len(data["results"]) == 25
        assert _query(data["next"]) == {"offset": ["25"], "limit": ["25"]}


# -- token ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("names", TOKEN_NAMES, ids=[n[0] for n in TOKEN_NAMES])
def test_token_sits_beside_data_and_is_absent_on_the_last_page(
    server: Sandbox, names: tuple[str, str, str]
) -> None:
    answer, token, size = names
    with speaking(server, Dialect.named("google").with_changes(token_names=names)) as (http, d):
        assert d["token_names"] == list(names)
        first = http.get(PREFIX + "/vms", params={size: 50}).json()
        assert list(first) == ["success", "data", answer]
        assert len(first["data"]) == 50
        last = http.get(PREFIX + "/vms", params={size: 50, token: first[answer]}).json()
        assert list(last) == ["success", "data"] and len(last["data"]) == 7
        # page and perPage are not this style's: ignored, not refused
        again = http.get(PREFIX + "/vms", params={"page": 3, "perPage": 5}).json()
        assert [vm["id"] for vm in again["data"]] == truth_ids(server)[: d["page_default"]]
        # an empty token is the first page; one the server never gave is refused, by name
        empty = http.get(PREFIX + "/vms", params={token: ""}).json()
        assert empty["data"] == again["data"]
        bad = http.get(PREFIX + "/vms", params={token: "not-a-token"})
        assert bad.status_code == 422 and bad.json()["error"].startswith(f"{token}:")
        too_big = http.get(PREFIX + "/vms", params={size: d["page_max"] + 1})
        assert too_big.status_code == 422 and too_big.json()["error"].startswith(size)


# -- hal (pages from 0) --------------------------------------------------------------------------
def test_hal_pages_count_from_zero(server: Sandbox) -> None:
    ids = truth_ids(server)
    with speaking(server, "hal") as (http, d):
        first = http.get(PREFIX + "/vms").json()["data"]
        assert [vm["id"] for vm in first["_embedded"]["vms"]] == ids[:20]
        assert first["page"] == {"size": 20, "totalElements": VMS, "totalPages": 3, "number": 0}
        assert first["_links"] == {
            "self": {"href": f"{server.base_url}{PREFIX}/vms?page=0&size=20"},
            "next": {"href": f"{server.base_url}{PREFIX}/vms?page=1&size=20"},
        }
        # page=1 is the second page; perPage is not this style's and is ignored
        second = http.get(PREFIX + "/vms", params={"page": 1, "perPage": 5}).json()["data"]
        assert [vm["id"] for vm in second["_embedded"]["vms"]] == ids[20:40]
        assert second["page"]["number"] == 1
        last = http.get(PREFIX + "/vms", params={"page": 2}).json()["data"]
        assert len(last["_embedded"]["vms"]) == 17 and list(last["_links"]) == ["self"]
        past = http.get(PREFIX + "/vms", params={"page": 9, "size": 10}).json()["data"]
        assert past["_embedded"] == {"vms": []} and "next" not in past["_links"]
        assert past["page"] == {"size": 10, "totalElements": VMS, "totalPages": 6, "number": 9}
        negative = http.get(PREFIX + "/vms", params={"page": -1})
        assert negative.status_code == 422 and negative.json()["error"].startswith("page")


def test_hal_names_each_collection(server: Sandbox) -> None:
    truth = server.control.truth()
    hook = truth["webhooks"][0]["id"]
    net = truth["attachments"][0]["networkId"]
    paths = {
        "/vms": "vms",
        "/firewalls": "firewalls",
        f"/firewalls/{truth['firewalls'][0]['id']}/rules": "rules",
        "/networks": "networks",
        f"/networks/{net}/attachments": "attachments",
        "/webhooks": "webhooks",
        f"/webhooks/{hook}/deliveries": "deliveries",
    }
    with speaking(server, Dialect.named("hal").with_changes(webhooks_paged=True)) as (http, d):
        for path, name in paths.items():
            data = http.get(PREFIX + path).json()["data"]
            assert list(data["_embedded"]) == [name], path
            assert data["page"]["totalElements"] >= len(data["_embedded"][name]) > 0


# -- zero ----------------------------------------------------------------------------------------
def test_zero_counts_pages_from_zero_in_meta(server: Sandbox) -> None:
    ids = truth_ids(server)
    with speaking(server, "zeropage") as (http, d):
        first = http.get(PREFIX + "/vms", params={"perPage": 25}).json()
        assert first["meta"] == {"page": 0, "perPage": 25, "total": VMS, "totalPages": 3}
        assert [vm["id"] for vm in first["data"]] == ids[:25]
        second = http.get(PREFIX + "/vms", params={"page": 1, "perPage": 25}).json()
        assert second["meta"]["page"] == 1 and [vm["id"] for vm in second["data"]] == ids[25:50]
        assert http.get(PREFIX + "/vms", params={"page": 3, "perPage": 25}).json()["data"] == []
        assert http.get(PREFIX + "/vms", params={"page": -1}).status_code == 422
        # like meta, a parameter it does not take is refused
        assert http.get(PREFIX + "/vms", params={"offset": 3}).status_code == 422


# -- bare ----------------------------------------------------------------------------------------
def test_bare_caps_the_page_silently_and_says_nothing_else(server: Sandbox) -> None:
    ids = truth_ids(server)
    with speaking(server, "capped") as (http, d):
        assert (d["paging"], d["page_max"]) == ("bare", 25)
        response = http.get(PREFIX + "/vms", params={"perPage": 100})
        assert response.status_code == 200
        body = response.json()
        assert list(body) == ["success", "data"]
        assert [vm["id"] for vm in body["data"]] == ids[:25]
        assert "link" not in response.headers and "x-total-count" not in response.headers
        third = http.get(PREFIX + "/vms", params={"perPage": 100, "page": 3}).json()
        assert [vm["id"] for vm in third["data"]] == ids[50:]
        assert http.get(PREFIX + "/vms", params={"perPage": 100, "page": 4}).json() == {
            "success": True,
            "data": [],
        }
        small = http.get(PREFIX + "/vms", params={"perPage": 10, "page": 2}).json()["data"]
        assert [vm["id"] for vm in small] == ids[10:20]
        assert len(http.get(PREFIX + "/vms").json()["data"]) == d["page_default"]
    # over_max says nothing to bare paging: it clamps silently even when set to reject
    with speaking(server, Dialect.named("capped").with_changes(over_max="reject")) as (http, d):
        assert len(http.get(PREFIX + "/vms", params={"perPage": 26}).json()["data"]) == 25


# -- money ---------------------------------------------------------------------------------------
SHAPES = {
    "text": lambda v: isinstance(v, str) and re.fullmatch(r"-?[0-9]+\.[0-9]{2} EUR", v),
    "code": lambda v: list(v) == ["amount", "currencyCode"] and isinstance(v["amount"], str),
    "nanos": lambda v: (
        list(v) == ["currencyCode", "units", "nanos"]
        and isinstance(v["units"], str)
        and isinstance(v["nanos"], int)
    ),
    "minor_amount": lambda v: (
        list(v) == ["amount", "currency", "precision"]
        and isinstance(v["amount"], int)
        and v["precision"] == 2
    ),
    "minor_exponent": lambda v: list(v) == ["value", "currency", "exponent"] and v["exponent"] == 2,
    "minor_scale": lambda v: list(v) == ["value", "currency", "scale"] and v["scale"] == 2,
    "minor_decimals": lambda v: list(v) == ["value", "currency", "decimals"] and v["decimals"] == 2,
}


@pytest.mark.parametrize("form", NEW_MONEY)
def test_each_money_form_says_the_truths_amount_exactly(server: Sandbox, form: str) -> None:
    truth = server.control.truth()
    real = {vm["id"]: vm for vm in truth["vms"]}
    with speaking(server, Dialect().with_changes(money=form)) as (http, d):
        assert d["money"] == form
        said = 0
        vms, _ = walk(http, d, PREFIX + "/vms", 100)
        one = http.get(f"{PREFIX}/vms/{vms[0]['id']}").json()["data"]
        for vm in [*vms, one]:
            for holder in ("plan", "billing"):
                theirs = real[vm["id"]][holder]
                if theirs is None or "priceMonthly" not in theirs:
                    assert vm[holder] is None or "priceMonthly" not in vm[holder]
                    continue
                value = vm[holder]["priceMonthly"]
                assert SHAPES[form](value), value
                assert amount(value) == amount(theirs["priceMonthly"])
                said += 1
        assert said > VMS // 2
        balance = http.get(PREFIX + "/wallet").json()["data"]["balance"]
        assert SHAPES[form](balance), balance
        assert amount(balance) == amount(truth["wallet"]["balance"])
    assert server.control.truth()["wallet"] == truth["wallet"]  # the truth stays canonical


@pytest.mark.parametrize(
    ("form", "value", "said"),
    [
        ("text", "12.5", "12.50 EUR"),
        ("text", -3.1, "-3.10 EUR"),
        ("code", "12.5", {"amount": "12.50", "currencyCode": "EUR"}),
        ("nanos", "12.50", {"currencyCode": "EUR", "units": "12", "nanos": 500000000}),
        ("nanos", "-12.50", {"currencyCode": "EUR", "units": "-12", "nanos": -500000000}),
        ("nanos", "-0.75", {"currencyCode": "EUR", "units": "0", "nanos": -750000000}),
        ("nanos", "249.99", {"currencyCode": "EUR", "units": "249", "nanos": 990000000}),
        (
            "nanos",
            {"amount": "7", "currency": "EUR"},
            {"currencyCode": "EUR", "units": "7", "nanos": 0},
        ),
        ("minor_amount", 12.5, {"amount": 1250, "currency": "EUR", "precision": 2}),
        ("minor_amount", "-0.05", {"amount": -5, "currency": "EUR", "precision": 2}),
        ("minor_exponent", "12.50", {"value": 1250, "currency": "EUR", "exponent": 2}),
        ("minor_scale", "12.50", {"value": 1250, "currency": "EUR", "scale": 2}),
        ("minor_decimals", "12.50", {"value": 1250, "currency": "EUR", "decimals": 2}),
    ],
)
def test_money_forms_exactly(form: str, value: object, said: object) -> None:
    spoken = money(Dialect(money=form), value)
    assert spoken == said
    if isinstance(said, dict):
        assert list(spoken) == list(said)  # key order too
    assert amount(spoken) == amount(value["amount"] if isinstance(value, dict) else value)


def test_money_that_does_not_parse_is_kept() -> None:
    for form in NEW_MONEY:
        assert money(Dialect(money=form), "n/a") == "n/a"
        assert money(Dialect(money=form), None) is None


# -- ram -----------------------------------------------------------------------------------------
def test_ram_in_gib_matches_the_truth_and_the_plan_name(server: Sandbox) -> None:
    real = {vm["id"]: vm for vm in server.control.truth()["vms"]}
    with speaking(server, "drf") as (http, d):
        assert d["ram_unit"] == "GiB"
        vms, _ = walk(http, d, PREFIX + "/vms", 100)
        one = http.get(f"{PREFIX}/vms/{vms[0]['id']}").json()["data"]
        for vm in [*vms, one]:
            assert isinstance(vm["ram"], int) and vm["ram"] * 1024 == real[vm["id"]]["ram"]
            # the plan's name (and slug) state the same size, for a client to cross-check
            stated = re.search(r"([0-9]+) GB$", vm["plan"]["name"])
            assert stated is not None and int(stated.group(1)) == vm["ram"], vm["plan"]
            assert vm["plan"]["slug"].endswith(f"-{vm['ram']}gb")


def test_every_plan_states_its_ram_in_name_and_slug() -> None:
    for slug, name, _vcpu, ram_mib, *_ in PLANS:
        assert ram_mib % 1024 == 0
        assert name.endswith(f" {ram_mib // 1024} GB") and slug.endswith(f"-{ram_mib // 1024}gb")


def test_ram_unit_conversion() -> None:
    gib = Dialect(ram_unit="GiB")
    assert ram(gib, 2048) == 2 and isinstance(ram(gib, 2048), int)
    assert ram(gib, 1536) == 1.5
    assert ram(gib, None) is None and ram(gib, True) is True
    assert ram(Dialect(), 2048) == 2048


# -- the dialect itself --------------------------------------------------------------------------
NAMED_CHOICES = {
    "drf": {"paging": "offset", "link_form": "relative", "money": "code", "ram_unit": "GiB"},
    "google": {
        "paging": "token",
        "token_names": ["nextPageToken", "pageToken", "pageSize"],
        "money": "nanos",
        "ram_unit": "MiB",
    },
    "hal": {"paging": "hal", "money": "minor_exponent"},
    "zeropage": {"paging": "zero", "money": "minor_amount"},
    "capped": {"paging": "bare", "page_max": 25, "over_max": "clamp", "money": "text"},
}


@pytest.mark.parametrize("name", list(NAMED_CHOICES))
def test_named_dialects_say_their_choices(server: Sandbox, name: str) -> None:
    plain = server.control.truth()
    with speaking(server, name) as (http, d):
        described = server.control.dialect()
        assert described["name"] == name
        for key, value in NAMED_CHOICES[name].items():
            assert d[key] == value, key
        default = Dialect().choices()
        changed = {k for k, v in d.items() if v != default[k]}
        assert changed == {k for k, v in NAMED_CHOICES[name].items() if v != default[k]}
        assert server.control.truth() == plain  # the truth is the default dialect's


def test_the_dialect_endpoint_names_the_new_points(server: Sandbox) -> None:
    choices = server.control.dialect()["choices"]
    assert choices["link_form"] == "absolute"
    assert choices["token_names"] == ["nextPageToken", "pageToken", "pageSize"]
    assert choices["ram_unit"] == "MiB"


def test_random_draws_every_new_choice() -> None:
    drawn = [Dialect.parse(f"random:{seed}") for seed in range(300)]
    assert {d.paging for d in drawn} == set(PAGING)
    assert {d.money for d in drawn} == set(MONEY)
    assert {d.ram_unit for d in drawn} == set(RAM_UNITS)
    assert {d.link_form for d in drawn} == set(LINK_FORMS)
    assert {d.token_names for d in drawn} == set(TOKEN_NAMES)
    assert all(d.over_max == "clamp" for d in drawn if d.paging == "bare")
    assert Dialect.parse("random:42").choices() == Dialect.parse("random:42").choices()
