"""The dialect file and the three commands of docs/twin.md: ``svcnb doctor --record FILE``,
``svcnb sandbox --from-store STORE --dialect-file FILE``, then svcnb pointed at the twin.

The file names nothing of the account; the doctor's table is the same with ``--record``; a file
the sandbox cannot use is one line naming the file and the key; the twin holds the store's
account, speaks the recorded dialect and lists at start each point it does not speak as proven.
"""

from __future__ import annotations

import json
import threading
import time
import tomllib
from pathlib import Path

import pytest

from svcnb import cli
from svcnb.cli.sandbox import run as sandbox_command
from svcnb.client import Client
from svcnb.sandbox import Dialect, StateError, read_dialect_file
from svcnb.store import Store

SEED, VMS = 7, 40


def _doctor(monkeypatch, capsys, base_url: str, token: str, *args: str) -> tuple[int, str, str]:
    monkeypatch.setenv("SVC_BASE_URL", base_url)
    monkeypatch.setenv("SVC_API_KEY", token)
    code = cli.main(["doctor", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _table(out: str) -> list[str]:
    # the findings' lines; what remains of the rate limit counts this run's own requests
    return [ln for ln in out.splitlines() if ln[:2] in ("  ", "! ") and "rate limit" not in ln]


def test_record_writes_the_dialect_and_names_nothing_of_the_account(
    sandbox, monkeypatch, capsys, tmp_path
):
    sandbox.control.reset(seed=SEED, vms=VMS, dialect="acme")
    truth = sandbox.control.truth()
    token = sandbox.tokens["admin"]
    _, plain, _ = _doctor(monkeypatch, capsys, sandbox.base_url, token)
    path = tmp_path / "acme.toml"
    code, out, _ = _doctor(monkeypatch, capsys, sandbox.base_url, token, "--record", str(path))
    assert code == 0, out
    assert f"recorded the dialect to {path}" in out
    # the extra requests come after the table: its lines are those of a run without --record
    assert _table(out) == _table(plain)
    doc = tomllib.loads(path.read_text())
    assert doc["format"] == "svcnb-dialect" and doc["version"] == 1
    assert doc["base_path"] == "/api/public/v1"
    assert doc["dialect"]["vm_words"]["running"] == "online"
    assert doc["dialect"]["delivery_fields"]["statusCode"] == "responseStatus"
    assert doc["dialect"]["page_max"] == 50 and doc["dialect"]["over_max"] == "clamp"
    text = path.read_text()
    port = sandbox.base_url.rsplit(":", 1)[1]
    named = [*sandbox.tokens.values(), "127.0.0.1", port, "localhost"]
    for vm in truth["vms"]:
        named += [vm["id"], vm["name"], vm["hostname"], vm["ipAddress"] or vm["id"]]
    for kind in ("firewalls", "rules", "networks", "webhooks", "deliveries"):
        named += [r["id"] for r in truth[kind]]
    named += [hook["url"] for hook in truth["webhooks"]]
    named += [r["eventId"] for r in truth["deliveries"]]
    found = sorted({n for n in named if n and str(n) in text})
    assert found == []


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ('format = "svcnb-dialect"\nversion = \n', "not TOML"),
        ('format = "svcnb-dialect"\nversion = 2\n', "version"),
        ('format = "something-else"\nversion = 1\n', "format"),
        ('format = "svcnb-dialect"\nversion = 1\n[dialect]\npaging = "graph"\n', "dialect.paging"),
        ('format = "svcnb-dialect"\nversion = 1\n[dialect]\npage_max = 0\n', "dialect.page_max"),
        (
            'format = "svcnb-dialect"\nversion = 1\n[dialect.vm_words]\nbooting = "up"\n',
            "dialect.vm_words",
        ),
        (
            'format = "svcnb-dialect"\nversion = 1\n[service]\ncurrency = "GBP"\n',
            "service.currency",
        ),
        ('format = "svcnb-dialect"\nversion = 1\n[extras]\n', "extras"),
        (
            'format = "svcnb-dialect"\nversion = 1\n[not_observed]\nklingon = "why"\n',
            "not_observed.klingon",
        ),
        ('format = "svcnb-dialect"\nversion = 1\nbase_path = "https://h/x"\n', "base_path"),
    ],
)
def test_a_file_the_sandbox_cannot_use_is_one_line_naming_file_and_key(
    tmp_path, capsys, content, key
):
    path = tmp_path / "service.toml"
    path.write_text(content)
    assert cli.main(["sandbox", "--dialect-file", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert str(path) in err and key in err, err
    with pytest.raises(StateError, match=key.replace(".", r"\.")):
        read_dialect_file(path)


def test_dialect_and_dialect_file_together_are_refused(tmp_path, capsys):
    path = tmp_path / "service.toml"
    path.write_text('format = "svcnb-dialect"\nversion = 1\n')
    assert cli.main(["sandbox", "--dialect", "acme", "--dialect-file", str(path)]) == 2
    assert "give one" in capsys.readouterr().err


def test_a_file_that_states_little_keeps_the_rest_and_says_so(tmp_path):
    path = tmp_path / "bare.toml"
    path.write_text('format = "svcnb-dialect"\nversion = 1\n[dialect]\npaging = "bare"\n')
    spoken = read_dialect_file(path)
    assert spoken.dialect.paging == "bare" and spoken.dialect.over_max == "clamp"
    points = [line.split(": ", 2)[1] for line in spoken.listed]
    # every point but the one stated (and those bare paging does not use) is listed, once
    assert "paging" not in points and "link_form" not in points and "token_names" not in points
    assert {"money", "vm_words", "page_max", "rate_limit", "created_status"} <= set(points)
    assert len(points) == len(set(points))
    assert all(
        line.startswith("not observed: ") and "the twin says" in line for line in spoken.listed
    )


def _transitional(tmp_path: Path, words: list[str]) -> tuple[dict[str, str], list[str]]:
    """What a dialect file stating ``words`` as the transitional ones makes the twin say: the
    transitional statuses given another word than the default dialect's, and the lines the file's
    reading lists about those words."""
    path = tmp_path / "service.toml"
    path.write_text(
        'format = "svcnb-dialect"\nversion = 1\n[dialect.vm_words]\n'
        f"transitional = {json.dumps(words)}\n"
    )
    spoken = read_dialect_file(path)
    default = Dialect().vm_words
    placed = {
        status: spoken.dialect.vm_words[status]
        for status in ("provisioning", "stopping")
        if spoken.dialect.vm_words[status] != default[status]
    }
    key = "vm_words.transitional"
    return placed, [line for line in spoken.listed if line.split(": ", 2)[1] == key]


def test_transitional_words_are_placed_only_where_the_sandbox_can_tell(tmp_path):
    # the synonym pools know both (matched as the vocabulary matches words)
    assert _transitional(tmp_path, ["Pending", " STOPPING "]) == (
        {"provisioning": "Pending", "stopping": " STOPPING "},
        [],
    )
    # one word no pool holds takes the status the other left (said as inferred)
    placed, lines = _transitional(tmp_path, ["pending", "winding_down"])
    assert placed == {"provisioning": "pending", "stopping": "winding_down"}
    assert lines[0].startswith("inferred: vm_words.transitional: 'winding_down'")
    # the only one seen, and no pool holds it: said for both, and said so
    placed, lines = _transitional(tmp_path, ["spawning"])
    assert placed == {"provisioning": "spawning", "stopping": "spawning"} and "both" not in lines[0]
    assert "provisioning and stopping" in lines[0]
    # two words of one pool: the sandbox says one word per status
    placed, lines = _transitional(tmp_path, ["pending", "starting"])
    assert placed == {} and lines[0].startswith("not expressible: vm_words.transitional")
    # two no pool holds: which is which cannot be told; neither is said
    placed, lines = _transitional(tmp_path, ["spawning", "winding_down"])
    assert placed == {} and len(lines) == 2
    assert all(line.startswith("not expressible: vm_words.transitional") for line in lines)
    # a pool word alone: the other status keeps its own word, and that is said
    placed, lines = _transitional(tmp_path, ["pending"])
    assert placed == {"provisioning": "pending"}
    assert lines == [
        "not observed: vm_words.transitional: no word for stopping was seen; the twin says stopping"
    ]


def _serve_command(
    argv: list[str], connection: Path
) -> tuple[threading.Event, threading.Thread, dict]:
    args = cli.build_parser("sandbox").parse_args(["sandbox", *argv])
    stop, result = threading.Event(), {}
    thread = threading.Thread(target=lambda: result.setdefault("code", sandbox_command(args, stop)))
    thread.start()
    deadline = time.monotonic() + 30
    while not _written(connection):  # whole: the file is written after it is opened
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.05)
    return stop, thread, result


def _written(connection: Path) -> bool:
    try:
        return bool(json.loads(connection.read_text()).get("base_url"))
    except (OSError, ValueError):
        return False


def test_the_three_commands_give_a_twin_of_the_account(sandbox, monkeypatch, capsys, tmp_path):
    """Record the service, copy its account from a store, and read the twin as the service."""
    sandbox.control.reset(seed=SEED, vms=VMS, dialect="acme")
    token = sandbox.tokens["admin"]
    store = Store(tmp_path / "store")
    with Client(token, sandbox.base_url, progress=False) as client:
        store.take(client)
        served = {vm["id"]: vm for vm in client.vms.list()}
    path = tmp_path / "service.toml"
    assert _doctor(monkeypatch, capsys, sandbox.base_url, token, "--record", str(path))[0] == 0
    recorded = tomllib.loads(path.read_text())

    connection = tmp_path / "twin.json"
    argv = [
        "--from-store",
        str(store.path),
        "--dialect-file",
        str(path),
        "--quiet",
        "--time-scale",
        "0",
    ]
    stop, thread, result = _serve_command([*argv, "--connection-file", str(connection)], connection)
    try:
        twin = json.loads(connection.read_text())
        with Client(twin["tokens"]["admin"], twin["base_url"], progress=False) as client:
            vms = {vm["id"]: vm for vm in client.vms.list()}
            wallet = client.wallet.get()
        # (the twin's lines at start are on stderr before the doctor's run)
        code, out, started = _doctor(monkeypatch, capsys, twin["base_url"], twin["tokens"]["admin"])
    finally:
        stop.set()
        thread.join(timeout=30)
    err = started + capsys.readouterr().err
    assert result["code"] == 0 and code == 0
    # the store's account, in the service's words and forms
    assert set(vms) == set(served)
    assert {vm["status"] for vm in vms.values()} == {vm["status"] for vm in served.values()}
    assert set(wallet["balance"]) == {"value", "currency", "precision"}  # acme: minor units
    assert "online→running" in out and "responseStatus→statusCode" in out
    # one line per point the file does not prove, each naming it
    listed = [ln.strip() for ln in err.splitlines() if ln.startswith("  not observed: ")]
    for point in recorded["not_observed"]:
        assert sum(f"not observed: {point}: " in ln for ln in listed) == 1, point
