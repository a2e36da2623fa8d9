"""``svcnb doctor`` against services that answered the open points differently: it vouches
only for what it proved (every list's proof of completeness, every money and time form read,
the units, the delivery keys placed), and exits 3 on anything unproven."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

import svcnb
from svcnb import cli, vocab
from svcnb.client import Client
from svcnb.config import read_config, write_section
from svcnb.sandbox import DELIVERY_POOLS, Dialect, Sandbox

LISTS = (
    "GET /vms",
    "GET /firewalls",
    "GET /firewalls/{id}/rules",
    "GET /networks",
    "GET /networks/{id}/attachments",
    "GET /webhooks",
    "GET /webhooks/{id}/deliveries",
)


def doctor(
    sandbox: Sandbox, monkeypatch, capsys, *args: str, disk_pinned: bool | None = True
) -> tuple[int, str, str]:
    """``svcnb doctor`` on the sandbox named as any service is (SVC_BASE_URL): its answers
    prove everything but the unit of disk (no plan states a disk size), which the user has
    pinned here as the sandbox's (``svcnb doctor --pin units.disk=GiB --write-config``),
    unless ``disk_pinned`` is False (None: the config file as the test left it)."""
    if disk_pinned:
        write_section("units", {"disk": "GiB"})
    elif (
        disk_pinned is False
    ):  # the sandbox fixture pinned it as the sandbox's user (tests/conftest.py): unpin
        Path(os.environ["SVCNB_CONFIG"]).write_text("", encoding="utf-8")
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["admin"])
    code = cli.main(["doctor", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def line(out: str, point: str) -> str:
    """The table line of ``point`` (its mark included)."""
    found = [ln for ln in out.splitlines() if ln[2:].split("  ", 1)[0] == point]
    assert len(found) == 1, f"{point!r}: {found}\n{out}"
    return found[0]


def proven(out: str, point: str, proof: str) -> None:
    shown = line(out, point)
    assert shown.startswith("  ") and f"proven complete: {proof}" in shown, shown


def test_default_dialect_lists_proven_by_total(sandbox, monkeypatch, capsys):
    # named by SVC_BASE_URL, the sandbox is a service like any other: nothing pins its units
    code, out, _ = doctor(sandbox, monkeypatch, capsys, disk_pinned=False)
    assert code == 3, out
    assert "/api/public/v1" in out
    assert "a total (40); page number 1 for the first page" in out
    assert "unasked 20 served of the 40 the list holds (a default page of 20)" in out
    assert "perPage 1000 refused with 422" in out
    assert "40 read; proven complete: its total (40) matched" in line(out, "GET /vms")
    for point in LISTS:
        if point != "GET /webhooks":  # the one list the spec does not page
            proven(out, point, "its total (")
    proven(out, "GET /webhooks", "the endpoint takes no page number")
    assert "running→running" in out and "overdue→owing" in out
    money = line(out, "money: billing.priceMonthly")
    assert "number ×" in money and "numeric string ×" in money
    assert "{amount: decimal string, currency} ×" in money and "NOT READ" not in money
    assert "read number ×1" in line(out, "money: wallet balance")
    assert "money.scale: every amount states its scale" in money
    assert line(out, "times").endswith(
        "read Z, whole seconds ×164; times.zone: every time states its zone"
    )
    ram = line(out, "units: ram")
    assert ram.startswith("  ") and "units.ram = MiB proven: 40 VM(s) with a ram size" in ram
    disk = line(out, "units: disk")
    assert disk.startswith("! ") and "units.disk assumed, not proven" in disk
    assert '[units] disk = "GiB"' in disk and "proven" not in disk.replace("not proven", "")
    assert "bytes, as the key names them" in line(out, "units: bandwidthPackBytes")
    assert "statusCode→statusCode" in out and "NOT PLACED" not in out
    assert "limit 600" in out
    assert "GET /wallet ok" in out
    # the spec states no grace period and no answer shows one: only a pin decides it
    grace = line(out, "grace period")
    assert grace.startswith("! ") and "assumed (billing.grace)" in grace
    assert '[billing] grace = "3D"' in grace
    assert [ln for ln in out.splitlines() if ln.startswith("!")] == [disk, grace]
    assert "page cap" not in out and "not reached" not in out
    assert out.rstrip().endswith(
        "UNPROVEN (exit 3): units: disk, grace period: svcnb does not vouch for what these "
        "lines name"
    )
    assert sandbox.tokens["admin"] not in out


def test_the_sandbox_named_by_its_connection_file_hands_over_its_pins(
    sandbox, monkeypatch, capsys, tmp_path
):
    monkeypatch.setenv("SVCNB_SANDBOX", str(sandbox.write_connection_file(tmp_path / "sb.json")))
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert code == 0, out
    disk = line(out, "units: disk")
    assert disk.startswith("  ") and "units.disk = GiB pinned by the dialect of the sandbox" in disk
    assert "units.ram = MiB pinned by the dialect of the sandbox" in line(out, "units: ram")
    assert out.rstrip().endswith("everything read was proven complete and understood (exit 0)")


def test_write_config_pins_what_was_proven_and_what_the_user_confirms(sandbox, monkeypatch, capsys):
    code, out, _ = doctor(sandbox, monkeypatch, capsys, "--write-config", disk_pinned=False)
    assert code == 3
    assert 'pinned [units] ram = "MiB" (proven: 40 VM(s) with a ram size' in out
    assert "not pinned (nothing proved them): units.disk" in out
    assert read_config()["units"] == {"ram": "MiB"}
    assert "not pinned (nothing proved them):" in out and "billing.grace" in out
    pins = ("--pin", "units.disk=gib", "--pin", "billing.grace=3d")
    code, out, _ = doctor(sandbox, monkeypatch, capsys, "--write-config", *pins, disk_pinned=None)
    assert 'pinned [units] disk = "GiB" (confirmed with --pin)' in out
    assert read_config()["units"] == {"ram": "MiB", "disk": "GiB"}
    assert read_config()["billing"] == {"grace": "3d"}
    code, out, _ = doctor(sandbox, monkeypatch, capsys, disk_pinned=None)
    assert code == 0, out
    assert "units.disk = GiB pinned by" in line(out, "units: disk") and "[units] disk" in out
    code, _, err = doctor(sandbox, monkeypatch, capsys, "--pin", "money.scale=cents")
    assert code == 2 and "'cents' is not a pin of money.scale" in err


def test_integer_amounts_nothing_proves_are_assumed_not_proven(sandbox, monkeypatch, capsys):
    """A Stripe-like service: every amount an integer string of cents beside its currency."""

    def cents(value):
        if isinstance(value, dict) and "amount" in value:
            return {"amount": str(round(float(value["amount"]) * 100)), "currency": "EUR"}
        return {"amount": str(round(float(value) * 100)), "currency": "EUR"}

    def say(path: str, body: dict) -> dict:
        items = body.get("data")
        for item in items if isinstance(items, list) else [items]:
            if not isinstance(item, dict):
                continue
            for holder in (item, item.get("plan"), item.get("billing")):
                if isinstance(holder, dict):
                    for key in ("priceMonthly", "balance"):
                        if holder.get(key) is not None:
                            holder[key] = cents(holder[key])
        return body

    through(sandbox, monkeypatch, Rewriting(say))
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 3, out
    for field in ("billing.priceMonthly", "plan.priceMonthly", "wallet balance"):
        money = line(out, f"money: {field}")
        assert money.startswith("! ") and "money.scale assumed, not proven" in money, money
        assert '[money] scale = "major"' in money


def test_capped_lists_proven_by_an_empty_page(sandbox, monkeypatch, capsys):
    """Bare pages, capped at 25 without a word: no total proves anything, an empty page after
    a short one does, and the doctor says so (it once said 'page cap not reached')."""
    sandbox.control.reset(seed=7, vms=40, dialect="capped")
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 0, out
    assert "no total; no page number, link or continuation" in line(out, "paging")
    sizes = line(out, "page sizes")
    assert "perPage 100: 25 served of the 40 the list holds (a cap it does not state)" in sizes
    assert "40 read; proven complete: page 3 came back empty" in line(out, "GET /vms")
    for point in LISTS:
        if point != "GET /webhooks":
            proven(out, point, "page 2 came back empty" if point != "GET /vms" else "page 3")
    assert "page cap not reached" not in out and "not reached" not in out
    assert "read text with a currency ×" in line(out, "money: billing.priceMonthly")
    assert "= 4537.54 EUR" in line(out, "money: wallet balance")


def test_google_lists_end_where_a_token_is_missing_only_as_assumed_or_pinned(
    sandbox, monkeypatch, capsys, tmp_path
):
    # Google's last page carries no token: nothing in the answer says "the end", so a list is
    # complete only as assumed (exit 3, the pin named) until the config pins it
    sandbox.control.reset(seed=7, vms=40, dialect="google")
    config = tmp_path / "svcnb.toml"
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 3, out
    vms = line(out, "GET /vms")
    assert vms.startswith("! ") and "complete only as assumed: its last page carried no" in vms
    assert "[paging] no_continuation_is_end = true (or 'false')" in vms and "proven" not in vms
    config.write_text('[paging]\nno_continuation_is_end = true\n[billing]\ngrace = "3D"\n')
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 0, out
    assert "a continuation token, sent back as pageToken" in line(out, "paging")
    vms = line(out, "GET /vms")
    assert vms.startswith("  ") and "its last page carried no continuation" in vms
    assert f"pinned by {config} [paging] no_continuation_is_end" in vms
    for point in LISTS[1:]:
        assert "the service continues its lists by a continuation (pageToken=...)" in line(
            out, point
        )
    money = line(out, "money: plan.priceMonthly")
    assert "read {currencyCode, units: integer string, nanos} ×15" in money
    assert "= 249.990000000 EUR" in money


def test_drf_ram_in_gib_is_proven_by_the_plans(sandbox, monkeypatch, capsys):
    sandbox.control.reset(seed=7, vms=40, dialect="drf")
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert "items in data.results; a total (40); a next link" in line(out, "paging")
    for point in LISTS:
        if point != "GET /webhooks":
            proven(out, point, "its total (")
    money = line(out, "money: billing.priceMonthly")
    assert money.startswith("  ") and "read {amount: decimal string, currencyCode} ×25" in money
    ram = line(out, "units: ram")  # every plan states a size, and every VM fits it in GiB
    assert ram.startswith("  ") and "units.ram = GiB proven: 40 VM(s)" in ram
    disk = line(out, "units: disk")  # no plan states a disk size: pinned, here as GiB
    assert disk.startswith("  ") and "units.disk = GiB pinned by" in disk
    # the webhooks list (one page, no next link) ends only as assumed: the service pages its
    # other lists by next links, and this answer carries none
    webhooks = line(out, "GET /webhooks")
    assert webhooks.startswith("! ") and "[paging] no_continuation_is_end" in webhooks
    assert "UNPROVEN (exit 3): GET /webhooks" in out and code == 3


def test_zeropage_pages_from_zero_and_minor_units(sandbox, monkeypatch, capsys):
    sandbox.control.reset(seed=7, vms=40, dialect="zeropage")
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 0, out
    assert "page number 0 for the first page" in line(out, "paging")
    # page=1 is the second page here: the old doctor read it as "a page cap of 0"
    assert "perPage 100: 40 served of the 40 the list holds" in line(out, "page sizes")
    assert "served 0" not in out and "clamps silently" not in out
    proven(out, "GET /vms", "its total (40) matched")
    money = line(out, "money: plan.priceMonthly")
    assert "read {amount: integer, currency, precision} ×15" in money
    assert '{"amount":24999,"currency":"EUR","precision":2} = 249.99 EUR' in money


class Rewriting(httpx.HTTPTransport):
    """A transport between svcnb and a sandbox that changes what the service says: the
    request (``ask``) and the decoded JSON answer (``say(path, body)``)."""

    def __init__(
        self,
        say: Callable[[str, dict], dict],
        ask: Callable[[httpx.Request], httpx.Request] = lambda r: r,
    ) -> None:
        super().__init__()
        self.say, self.ask = say, ask

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request = self.ask(request)
        response = super().handle_request(request)
        response.read()
        if "json" not in response.headers.get("content-type", ""):
            return response
        body = self.say(request.url.path, json.loads(response.content))
        dropped = ("content-length", "content-type", "content-encoding", "x-total-count")
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in dropped]
        return httpx.Response(response.status_code, headers=headers, json=body, request=request)


def through(sandbox: Sandbox, monkeypatch, transport: httpx.BaseTransport) -> None:
    """``svcnb doctor`` reaches the sandbox through ``transport``."""

    def connect(account: str | None = None, **options: object) -> Client:
        return Client(
            sandbox.tokens["admin"], sandbox.base_url, progress=False, transport=transport
        )

    # the command line's client is the one svcnb.configured_client gives
    monkeypatch.setattr(svcnb, "configured_client", connect)


def test_an_unknown_paging_key_without_total_is_unproven(sandbox, monkeypatch, capsys):
    """A keyset service: its list answers continue by ``meta.nextPageKey`` (a name svcnb does
    not follow), state no total, and ignore the page asked for."""

    def ask(request: httpx.Request) -> httpx.Request:
        url = request.url.copy_remove_param("page")
        return httpx.Request(request.method, url, headers=request.headers)

    def say(path: str, body: dict) -> dict:
        meta = body.get("meta")
        if isinstance(meta, dict) and "total" in meta:
            body["meta"] = {"nextPageKey": "k2" if meta["totalPages"] > 1 else None}
        return body

    through(sandbox, monkeypatch, Rewriting(say, ask))
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 3, out
    assert "keys svcnb does not understand: meta.nextPageKey" in line(out, "paging")
    vms = line(out, "GET /vms")
    assert vms.startswith("! ") and "UNPROVEN" in vms and "NOT proven complete" in vms
    assert "meta.nextPageKey" in vms
    for point in LISTS:
        if point == "GET /webhooks":
            continue
        assert line(out, point).startswith("! "), point
    # the webhooks list carries no continuation, unknown or not, and the service serves it whole
    # whatever page or size is asked: a proven unpaged list
    proven(out, "GET /webhooks", "it served the same 3 item(s) whatever page or size")
    # the list's length is not proven, so the page sizes claim no cap
    assert "the list's length is not proven" in line(out, "page sizes")
    assert "the list holds" not in line(out, "page sizes")
    assert "UNPROVEN (exit 3): GET /vms," in out


def test_a_links_shape_svcnb_cannot_read_is_named(sandbox, monkeypatch, capsys):
    """A service whose list answers carry ``links`` as an array of plain strings (no rel, no
    href) and no total, and ignore the page asked for: the key is named, never skipped."""

    def ask(request: httpx.Request) -> httpx.Request:
        url = request.url.copy_remove_param("page")
        return httpx.Request(request.method, url, headers=request.headers)

    def say(path: str, body: dict) -> dict:
        meta = body.get("meta")
        if isinstance(meta, dict) and "total" in meta:
            del body["meta"]
            body["links"] = [f"{path}?after=k2"] if meta["totalPages"] > 1 else []
        return body

    through(sandbox, monkeypatch, Rewriting(say, ask))
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 3, out
    assert "keys svcnb does not understand: links" in line(out, "paging")
    vms = line(out, "GET /vms")
    assert vms.startswith("! ") and "NOT proven complete" in vms and "links" in vms


def test_forms_not_understood_are_unproven(sandbox, monkeypatch, capsys):
    """A money key svcnb does not know, times without a zone and a delivery key it cannot
    place: each named on its line, none of them 'ok'."""

    def say(path: str, body: dict) -> dict:
        data = body.get("data")
        if path.endswith("/vms") and isinstance(data, list):
            for vm in data:
                vm["createdAt"] = vm["createdAt"].removesuffix("Z")
                if isinstance(vm.get("billing"), dict):
                    vm["billing"]["priceMonthly"] = {"amount": "1.50", "currency": "EUR", "vat": 0}
        if path.endswith("/deliveries") and isinstance(data, list):
            for record in data:
                record["sentAt"] = record["createdAt"]
        return body

    through(sandbox, monkeypatch, Rewriting(say))
    code, out, err = doctor(sandbox, monkeypatch, capsys)
    # the client's own word on it: one line on stderr, no Python file or source line
    said = [line for line in err.splitlines() if "sentAt" in line]
    assert len(said) == 1 and said[0].startswith("svcnb doctor: warning") and ".py" not in err
    assert code == 3, out
    proven(out, "GET /vms", "its total (40) matched")
    money = line(out, "money: billing.priceMonthly")
    assert money.startswith("! ") and "UNPROVEN" in money
    assert "NOT READ {amount: decimal string, currency, vat} ×37 (unknown key 'vat')" in money
    assert line(out, "money: wallet balance").startswith("  ")
    times = line(out, "times")
    assert times.startswith("! ") and "NOT READ no zone, whole seconds ×40" in times
    assert "createdAt" in times
    deliveries = line(out, "delivery records")
    assert deliveries.startswith("! ") and "'sentAt' in 3 record(s)" in deliveries
    assert "could be created_at, last_attempt_at" in deliveries
    assert "money: billing.priceMonthly, times, delivery records" in out.splitlines()[-1]


def test_endpoints_the_token_may_not_read_are_named_not_doubted(sandbox, monkeypatch, capsys):
    token = sandbox.control.create_token("vms only", ["vms:read"])["secret"]
    write_section("units", {"disk": "GiB"})  # as doctor()'s user did: the sandbox's disk unit
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SVC_API_KEY", token)
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert code == 0, out
    proven(out, "GET /vms", "its total (40) matched")
    assert "not readable with this token (403, needs firewalls:read)" in line(out, "GET /firewalls")
    assert "not readable with this token" in line(out, "money: wallet balance")
    assert out.rstrip().endswith(
        "not readable with this token: GET /firewalls, GET /networks, GET /wallet, GET /webhooks"
    )


def test_acme_dialect_and_read_only(sandbox, monkeypatch, capsys):
    sandbox.control.reset(seed=7, vms=57, dialect="acme")
    before = sandbox.control.truth()
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert sandbox.control.truth() == before  # doctor changed nothing in the account
    assert code == 0, out
    assert "items in data.items" in out
    assert "perPage 100: 50 served of the 57 the list holds, saying perPage 50" in out
    assert "online→running" in out and "past_due→owing" in out
    assert "{value: integer, currency, precision}" in out
    assert "read Z, milliseconds" in out
    assert "responseStatus→statusCode" in out and "attemptCount→attempts" in out
    assert "without updatedAt" in out
    assert "GET /firewalls/{id}/rules ok" in out and "GET /networks/{id}/attachments ok" in out


def test_linkhdr_dialect(sandbox, monkeypatch, capsys):
    sandbox.control.reset(seed=7, vms=57, dialect="linkhdr")
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 0, out
    assert "a total (57); a next link" in out
    assert "/api/v1/api/public/v1" in out
    assert "status_code→statusCode" in out and "delivered→success" in out
    assert "offset +02:00" in out
    proven(out, "GET /vms", "its total (57) matched")


def exotic_dialect(sandbox: Sandbox) -> tuple[str, str]:
    """A random dialect whose VM words include one no vocabulary knows, and that word; all else
    it says (billing words, delivery keys, ram unit) svcnb understands."""
    known = vocab.Vocabulary()
    for seed in range(400):
        sandbox.control.reset(seed=7, vms=40, dialect=f"random:{seed}")
        choices = sandbox.control.dialect()["choices"]
        words = choices["vm_words"]
        present = {vm["status"] for vm in sandbox.control.truth()["vms"]}
        strange = [
            word
            for state, word in words.items()
            if state in present and known.classify("vm_status", word, warn=False) == vocab.UNKNOWN
        ]
        billing = choices["billing_words"].values()
        understood = (
            choices["ram_unit"] == "MiB"
            and all(choices["delivery_fields"][k] in names for k, names in DELIVERY_POOLS.items())
            and all(
                known.classify("billing_status", w, warn=False) != vocab.UNKNOWN for w in billing
            )
        )
        if strange and understood:
            return f"random:{seed}", strange[0]
    pytest.fail("no random dialect among 400 drew an exotic VM word and nothing else unknown")


def test_unknown_words_exit_3_and_map_writes_the_config(sandbox, monkeypatch, capsys):
    _, word = exotic_dialect(sandbox)
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 3
    assert f"{word}→UNKNOWN" in out and line(out, "VM status").startswith("! ")
    code, out, _ = doctor(
        sandbox, monkeypatch, capsys, "--map", f"{word}=running", "--write-config"
    )
    assert code == 0, out
    assert read_config()["vocabulary"]["vm_status"][word] == "running"
    assert vocab.reload().classify("vm_status", word) == "running"


def _speaking(sandbox: Sandbox, name: str, **words: dict[str, str]) -> None:
    """The sandbox reset to the default dialect with ``words`` (vm_words, billing_words)."""
    base = Dialect.named("default")
    changed = {k: {**getattr(base, k), **v} for k, v in words.items()}
    dialect = base.with_changes(name=f"file:{name}", **changed).registered()
    sandbox.control.reset(seed=7, vms=40, dialect=dialect.name)


def test_a_word_providers_differ_on_is_assumed_never_vouched(sandbox, monkeypatch, capsys):
    # "locked": a VM held during a backup at Vultr, a suspended one at Scaleway
    _speaking(sandbox, "locked-words", vm_words={"suspended": "locked"})
    running = [vm["id"] for vm in sandbox.control.truth()["vms"] if vm["status"] == "running"]
    for vm_id in running[:4]:
        sandbox.control.vm_action(vm_id, "suspend")
    suspended = sorted(
        vm["id"] for vm in sandbox.control.truth()["vms"] if vm["status"] == "suspended"
    )
    assert len(suspended) == 4
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 3
    shown = line(out, "VM status")
    assert shown.startswith("! ") and f"locked→UNKNOWN ×{len(suspended)}" in shown
    # the evidence to map it by: the VMs, their other status, what providers mean by the word
    assert any(vm_id in shown for vm_id in suspended) and "their billing status:" in shown
    assert "providers differ: held during an operation" in shown
    assert "would be assumed" in shown and "--map locked=CLASS" in shown
    assert "running→running" in shown  # a word that means one thing everywhere: no pin needed
    code, out, _ = doctor(sandbox, monkeypatch, capsys, "--map", "locked=suspended")
    assert code == 0, out
    assert "locked→suspended" in line(out, "VM status") and "(pinned by " in line(out, "VM status")


def test_a_port_sentinel_is_assumed_until_pinned(sandbox, monkeypatch, capsys):
    headers = {"x-api-key": sandbox.tokens["admin"]}
    with httpx.Client(base_url=sandbox.api_root, headers=headers) as http:
        first = http.get("/firewalls").json()["data"][0]["id"]
        rule = next(
            r
            for r in http.get(f"/firewalls/{first}/rules").json()["data"]
            if r["protocol"] == "TCP"
        )
        # DigitalOcean's every port; port 0 elsewhere (the sandbox stores what it is sent)
        changed = http.patch(f"/firewalls/{first}/rules/{rule['id']}", json={"port": "0"})
        assert changed.status_code == 200, changed.text
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 3
    shown = line(out, "firewall ports")
    assert shown.startswith("! ") and f"'0' ×1 (rules {rule['id']})" in shown
    assert "would be assumed" in shown and "may be open to every port" in shown
    assert '[firewall.port_sentinels] "0" = "every" (or \'zero\')' in shown
    from pathlib import Path

    Path(os.environ["SVCNB_CONFIG"]).write_text('[firewall.port_sentinels]\n"0" = "every"\n')
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    shown = line(out, "firewall ports")
    assert shown.startswith("  ") and "read as every (pinned by " in shown


def test_no_server_configured_is_an_error_not_a_sandbox(monkeypatch, capsys):
    assert cli.main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert "no server configured" in err and "SVC_BASE_URL" in err
    monkeypatch.setenv("SVC_API_KEY", "svc_abcdefgh12345678")
    assert cli.main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert "SVC_BASE_URL is not" in err and "svc_abcdefgh12345678" not in err


def test_a_bad_map_is_refused(sandbox, monkeypatch, capsys):
    code, _, err = doctor(sandbox, monkeypatch, capsys, "--map", "live=alive")
    assert code == 2
    assert "WORD=CLASS" in err


def test_a_hal_link_without_href_does_not_make_the_recorded_links_relative():
    """A HAL ``_links`` entry with no string href (templated, or a title only) says nothing of
    the link form: absolute links beside it are recorded as what they are."""
    from types import SimpleNamespace

    from svcnb.learn.observe import Seen
    from svcnb.learn.record import Recorder

    page = {
        "_embedded": {"vms": []},
        "_links": {
            "self": {"href": "https://api.example.test/v1/vms?page=2"},
            "next": {"href": "https://api.example.test/v1/vms?page=3"},
            "find": {"templated": True, "title": "a VM by id"},
        },
    }
    observed = SimpleNamespace(listed=None, seen=[Seen("/vms", {}, SimpleNamespace(data=page))])
    recorder = Recorder(observed)
    recorder.style = "hal"
    recorder._link_form()
    assert "link_form" not in recorder.out.not_expressible


def test_delivery_assumptions_unpinned_are_assumed_and_pinned_are_ok(
    sandbox, monkeypatch, capsys, tmp_path
):
    """Records without an event id, subscriptions without a failure counter and a key named
    as nobody names the attempt count: each an assumption, "assumed" with its pin until the
    config file pins it."""

    def say(path: str, body: dict) -> dict:
        data = body.get("data")
        if path.endswith("/deliveries") and isinstance(data, list):
            for record in data:
                record.pop("eventId", None)
                record["tryCount"] = record.pop("attempts")
        if path.endswith("/webhooks") and isinstance(data, list):
            for hook in data:
                hook.pop("consecutiveFailures", None)
        return body

    through(sandbox, monkeypatch, Rewriting(say))
    code, out, err = doctor(sandbox, monkeypatch, capsys)
    # the client's word on the key it cannot place: one line on stderr
    said = [ln for ln in err.splitlines() if "tryCount" in ln]
    assert said and said[0].startswith("svcnb doctor: warning"), err
    assert code == 3, out
    events, depth = line(out, "delivery events"), line(out, "delivery history depth")
    assert events.startswith("! ") and "assumed" in events and 'records = "event"' in events
    assert depth.startswith("! ") and "assumed" in depth and 'history = "full"' in depth
    assert "proven" not in events + depth
    records = line(out, "delivery records")
    assert records.startswith("! ") and "[deliveries.fields]" in records

    config = tmp_path / "config.toml"
    config.write_text(
        '[deliveries]\nrecords = "event"\nhistory = "full"\n'
        '[deliveries.fields]\ntryCount = "attempts"\n'
    )
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    for point in ("delivery events", "delivery history depth", "delivery records"):
        shown = line(out, point)
        assert shown.startswith("  ") and "pinned by" in shown, shown


def test_the_sandbox_proves_its_delivery_events_and_needs_no_history_depth(
    sandbox, monkeypatch, capsys
):
    _code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert "proven: every delivery record carries an event id" in line(out, "delivery events")
    assert line(out, "delivery history depth").startswith("  ")


def test_the_paging_and_delivery_pins_are_written_by_the_doctor_as_the_user_confirms(
    sandbox, monkeypatch, capsys, tmp_path
):
    # a user who knows that a last page without a token is the end says so once, through the
    # doctor, and the next run vouches for the lists as pinned
    sandbox.control.reset(seed=7, vms=40, dialect="google")
    config = tmp_path / "svcnb.toml"
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    pins = (
        *("--pin", "paging.no_continuation_is_end=true", "--pin", "deliveries.history=full"),
        *("--pin", "billing.grace=72h"),
    )
    code, out, _ = doctor(sandbox, monkeypatch, capsys, "--write-config", *pins)
    assert code == 3, out  # this run still saw the lists unpinned
    assert "pinned [paging] no_continuation_is_end = true (confirmed with --pin)" in out
    assert 'pinned [deliveries] history = "full" (confirmed with --pin)' in out
    written = read_config(config)
    assert written["paging"] == {"no_continuation_is_end": True}
    assert written["deliveries"] == {"history": "full"}
    assert written["billing"] == {"grace": "72h"}
    code, out, _ = doctor(sandbox, monkeypatch, capsys)
    assert code == 0, out
    assert "72h pinned by" in line(out, "grace period")
    assert "[paging] no_continuation_is_end" in line(out, "GET /vms").partition("pinned by")[2]
    code, out, err = doctor(sandbox, monkeypatch, capsys, "--pin", "paging.end=true")
    assert code == 2 and "paging.no_continuation_is_end" in err
