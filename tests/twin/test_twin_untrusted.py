"""A dialect file is a file from elsewhere, and ``doctor --record`` writes one about someone's
account: the sandbox reads it only when it is a regular file of a bounded size, prints its texts
with nothing a terminal acts on, and the recorder writes no word the service wrote that could
name the account, nor through a link the user did not ask it to follow."""

from __future__ import annotations

import argparse
import os
import stat
import threading
import tomllib
from pathlib import Path

import pytest

from svcnb import cli
from svcnb.cli.sandbox import _speak_dialect_file
from svcnb.client import Client
from svcnb.learn.doctor import Doctor
from svcnb.learn.record import Recorder, write_dialect_file

FORGED = "svcnb sandbox: forged line"


def _speak(path: Path) -> bool:
    args = argparse.Namespace(
        dialect_file=str(path), dialect="default", rate_limit=600, rate_window=60.0
    )
    return _speak_dialect_file(args)


def test_a_dialect_file_on_a_fifo_is_refused_at_once(tmp_path, capsys):
    path = tmp_path / "service.toml"
    os.mkfifo(path)
    result: list[bool] = []
    worker = threading.Thread(target=lambda: result.append(_speak(path)), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # release the reader the old code left waiting
        with open(path, "w"):
            pass
        worker.join(5)
        pytest.fail("svcnb sandbox --dialect-file waited on a FIFO")
    assert result == [False]
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "FIFO" in line, line


def test_a_dialect_file_linked_to_an_endless_device_is_refused(tmp_path, capsys):
    path = tmp_path / "service.toml"
    path.symlink_to("/dev/zero")
    assert _speak(path) is False
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "character device" in line, line


def test_a_dialect_file_larger_than_any_the_doctor_writes_is_refused(tmp_path, capsys):
    path = tmp_path / "service.toml"
    path.write_text('format = "svcnb-dialect"\nversion = 1\n' + "# pad\n" * 100_000)
    assert _speak(path) is False
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "larger than" in line, line


def test_the_texts_of_a_dialect_file_are_printed_on_their_own_line_without_escapes(
    tmp_path, capsys
):
    path = tmp_path / "service.toml"
    path.write_text(
        'format = "svcnb-dialect"\nversion = 1\n[not_observed]\n'
        f'paging = "nothing seen\\u001b[2J\\u001b]0;owned\\u0007\\r\\n{FORGED}"\n'
        f'"page_max.\\u001b[31mred" = "why\\n{FORGED}"\n'
    )
    assert _speak(path) is True
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\r" not in err
    assert not any(line.startswith(FORGED) for line in err.splitlines()), err
    assert "\\x1b[2J" in err and f"\\n{FORGED}" in err  # shown, not acted on


def test_a_dialect_file_error_quoting_its_key_is_one_line_without_escapes(tmp_path, capsys):
    path = tmp_path / "service.toml"
    path.write_text(
        f'format = "svcnb-dialect"\nversion = 1\n[dialect]\n"pag\\u001b[2J\\n{FORGED}" = 1\n'
    )
    assert cli.main(["sandbox", "--dialect-file", str(path)]) == 2
    err = capsys.readouterr().err
    (line,) = err.strip().splitlines()
    assert "\x1b" not in line and "dialect." in line


# -- doctor --record: no word that could name the account, no write through a link ------------


def _recorded(sandbox, tmp_path: Path, hostile: dict[str, list[str]]) -> tuple[str, dict]:
    """A record of the sandbox, the doctor having also seen the status words ``hostile``
    (vm_status / billing_status -> words), as a service writing them would show them."""
    with Client(sandbox.tokens["admin"], sandbox.base_url, progress=False) as client:
        doctor = Doctor(client, record=True)
        doctor.run()
        for kind, words in hostile.items():
            for word in words:
                doctor.observed.words[kind][word] += 1
        record = Recorder(doctor.observed).record()
    path = write_dialect_file(record, tmp_path / "service.toml")
    return path.read_text(), tomllib.loads(path.read_text())


def test_record_writes_no_status_word_that_carries_an_id_or_a_host(sandbox, tmp_path):
    sandbox.control.reset(seed=7, vms=12)
    vm = sandbox.control.truth()["vms"][0]
    hostile = {
        "vm_status": [
            f"running on {vm['hostname']}",  # a class svcnb cannot tell, with a host in it
            f"stopped:{vm['id']}",
            vm["name"],  # a VM's name said as a status
        ],
        "billing_status": [f"overdue since invoice {vm['id']}"],
    }
    text, doc = _recorded(sandbox, tmp_path, hostile)
    for secret in (vm["hostname"], vm["id"], vm["name"]):
        assert secret not in text, secret
    # that words were said is kept, without their text
    said = str(doc.get("not_expressible", {}))
    assert "not recorded: not plain vocabulary" in said, said
    # plain vocabulary is still recorded as it was said
    assert doc["dialect"]["vm_words"]["running"] == "running"


def test_record_refuses_a_link_unless_asked_to_follow_it(sandbox, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["admin"])
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    link = tmp_path / "service.toml"
    link.symlink_to(precious)
    code = cli.main(["doctor", "--record", str(link)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert precious.read_text() == "keep me\n"
    assert "symbolic link" in err and "--record-follow-link" in err

    code = cli.main(["doctor", "--record", str(link), "--record-follow-link"])
    capsys.readouterr()
    assert code in (0, 3)
    assert link.is_symlink()
    assert tomllib.loads(precious.read_text())["format"] == "svcnb-dialect"
    assert stat.S_IMODE(precious.stat().st_mode) == 0o600
