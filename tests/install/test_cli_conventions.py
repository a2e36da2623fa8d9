"""The svcnb command's conventions: --version, a bare ``svcnb`` lists the commands, every
option's help shows its default (and nothing for an empty one), and the shell completes commands
and options (argcomplete)."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from importlib.metadata import version

import pytest

from svcnb import cli


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = cli.build_parser(name)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices[name]


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"svcnb {version('svcnb')}\n"


def test_svcnb_alone_lists_the_commands(capsys):
    assert cli.main([]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert "arguments are required" not in out
    for name, (_module, help_text, _example) in cli.COMMANDS.items():
        assert re.search(rf"^\s+{re.escape(name)}\s", out, re.M), name
        assert help_text.split()[0] in out
    assert "--version" in out


def test_an_unknown_command_is_still_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["nosuch"])
    assert stop.value.code == 2
    assert "invalid choice: 'nosuch'" in capsys.readouterr().err


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_every_option_shows_its_default(name):
    parser = _subparser(name)
    text = parser.format_help()
    formatter = parser._get_formatter()
    for action in parser._actions:
        if not action.option_strings or action.help is argparse.SUPPRESS:
            continue
        shown = formatter._expand_help(action) if action.help else ""
        if cli.shows_default(action):
            assert cli.states_default(shown), f"{name} {action.option_strings[0]}: {shown!r}"
            if not cli.states_default(cli.plain(action.help or "")):
                assert f"(default: {action.default})" in shown
    assert "(default: )" not in text and "(default: [])" not in text
    assert "(default: None)" not in text and "(default: False)" not in text


def test_the_options_the_issue_named():
    sandbox = _subparser("sandbox").format_help()
    flat = " ".join(sandbox.split())
    assert "unless raised for that token (default: 600)" in flat
    assert "random:SEED (default: default)" in flat
    # an empty default says what it means instead of "(default: [])"
    assert "(default: none, the socket peer counts)" in flat


@pytest.mark.parametrize(
    ("line", "offered"),
    [
        ("svcnb sna", {"snapshot", "snapshots"}),
        ("svcnb ", set(cli.COMMANDS) | {"--version"}),
        ("svcnb sandbox --sta", {"--state-file"}),
        ("svcnb --version", {"--version"}),
    ],
)
def test_the_shell_completes_commands_and_their_options(tmp_path, line, offered):
    # what bash's hook (register-python-argcomplete svcnb) asks, and where argcomplete answers
    out = tmp_path / "offered"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(out),
    }
    done = subprocess.run(
        [sys.executable, "-m", "svcnb"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert offered <= set(out.read_text().replace("\v", " ").split())


@pytest.mark.parametrize("name", ["sandbox", "demo"])
def test_a_dialect_the_sandbox_cannot_speak_is_refused_before_anything_runs(
    name, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        cli.main([name, "--dialect", "acmee"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"svcnb {name}: error: argument --dialect: dialect 'acmee'"), err
    assert "acme, linkhdr" in err and "random:SEED" in err
    assert list(tmp_path.iterdir()) == []  # no notebook copied, no store begun
