"""A config file svcnb cannot use is one line on stderr naming the file, exit 2, from every
command that reads it: never a traceback, whatever the file holds (nesting deeper than the
parser's stack, a section of the wrong type, a mapping to no class)."""

from __future__ import annotations

import pytest

from svcnb import vocab
from svcnb.cli import main

# file text -> what the line must say besides the file's name
BROKEN = {
    "deep arrays": ("a = " + "[" * 5000 + "]" * 5000 + "\n", "too deeply"),
    "deep tables": ("a = " + "{ b = " * 2000 + "1" + " }" * 2000 + "\n", "too deeply"),
    "vocabulary not a table": ("vocabulary = 3\n", "must be a table"),
    "vm_status not a table": ("[vocabulary]\nvm_status = 5\n", "vm_status"),
    "a class that is none": ('[vocabulary.vm_status]\nlive = "sort of"\n', "'sort of'"),
}


@pytest.fixture
def broken(request, tmp_path, monkeypatch, sandbox):
    """The config file holds one of BROKEN (with one account on the sandbox, for --all); the
    environment names the sandbox, so a command gets as far as it can."""
    text, said = BROKEN[request.param]
    path = tmp_path / "config.toml"
    account = f'\n[accounts.north]\nbase_url = "{sandbox.base_url}"\ntoken_env = "SVC_T_NORTH"\n'
    path.write_text(text + account)
    monkeypatch.setenv("SVCNB_CONFIG", str(path))
    monkeypatch.setenv("SVC_T_NORTH", sandbox.tokens["admin"])
    monkeypatch.setenv("SVC_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SVC_API_KEY", sandbox.tokens["admin"])
    monkeypatch.setenv("SVCNB_BUDGET", "off")
    vocab._active = None  # read the file anew, as a fresh process would
    return path, said


COMMANDS = {
    "snapshot --all": ["snapshot", "--all", "--quiet", "--store"],
    "snapshot": ["snapshot", "--quiet", "--store"],
    "check": ["check", "--no-deliver", "--store"],
    "doctor": ["doctor"],
    "stop": ["stop", "--status", "running", "--store"],
}


@pytest.mark.parametrize("broken", sorted(BROKEN), indirect=True)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_config_svcnb_cannot_use_is_one_line_naming_the_file(broken, command, tmp_path, capsys):
    path, said = broken
    argv = list(COMMANDS[command])
    if argv[-1] == "--store":
        argv.append(str(tmp_path / "store"))
    if command == "stop":
        argv = argv[:-2]  # stop builds from the service, it takes no store to print a plan
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "Error:" not in err.replace("ConfigError", ""), err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"svcnb {argv[0]}: "), err
    assert str(path) in lines[0] and said in lines[0], err
