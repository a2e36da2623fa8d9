"""The svcnb command.

Each subcommand lives with the layer it drives (``svcnb.sandbox._cli``, ``svcnb.store._cli``,
``svcnb.reports._cli``, ``svcnb.webhooks._cli``, ``svcnb._demo``). They are imported only when
their subcommand runs, so ``svcnb snapshot`` never loads the server stack and ``svcnb sandbox``
never loads pandas.

A user's mistake never ends in a traceback: argparse names a bad option, and the errors that
come from what the user asked for (a folder that cannot be written, missing configuration, a
closed pipe, Ctrl-C) are one line on stderr and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence

# subcommand -> (module whose ``add_arguments(parser)`` and ``run(args) -> int`` implement it,
# one-line help, an example)
_COMMANDS = {
    "sandbox": (
        # the sandbox's own options plus --from-store (a copy of a stored snapshot)
        "svcnb._rehearse",
        "serve the local sandbox emulator of the API, or a copy of a stored snapshot",
        "svcnb sandbox --vms 40 --connection-file sandbox.json",
    ),
    "snapshot": (
        "svcnb.store._cli",
        "take one snapshot of the account (or of every configured account) into the store",
        "svcnb snapshot --store data/store",
    ),
    "snapshots": (
        "svcnb.store._cli_list",
        "list the snapshots in the store",
        "svcnb snapshots --store data/store",
    ),
    "report": (
        "svcnb.reports._cli",
        "print or export a report as of a snapshot",
        "svcnb report billing --table runway",
    ),
    "listen": (
        "svcnb.webhooks._cli",
        "run the verifying webhook receiver over HTTPS",
        "svcnb listen --port 8443 --cert cert.pem --key key.pem --secret-file secret.txt",
    ),
    "check": (
        "svcnb.alerts._cli",
        "evaluate the [alerts] rules on the latest snapshot (exit 1 when one fired), for cron",
        "svcnb check --store data/store",
    ),
    "migrate-store": (
        "svcnb.store._cli_migrate",
        "convert a store of the first format to Delta tables, checked row for row",
        "svcnb migrate-store data/store-old data/store-new",
    ),
    "stop": (
        "svcnb.plans._cli",
        "stop VMs through a reviewed plan: build, save, review, apply with an approver",
        "svcnb stop --region eu-central-1 --status running --plan-out stop.json",
    ),
    "doctor": (
        "svcnb._doctor",
        "read-only check of what the configured service answers",
        "svcnb doctor",
    ),
    "demo": (
        "svcnb._demo",
        "simulate an account on the sandbox and render the reports",
        "svcnb demo --out out --days 90",
    ),
    "lab": ("svcnb._lab", "open JupyterLab with a sandbox running", "svcnb lab"),
}

# Every example of every help text runs as written (tests/install/test_cli_examples.py runs
# each, in this order, in an empty folder with the sandbox of the first one named).
EXAMPLES_HEADER = (
    "examples, on the simulated account the first one starts (export SVCNB_SANDBOX=sandbox.json;\n"
    "for your account set SVC_BASE_URL and SVC_API_KEY instead):\n"
)
# Commands whose work reads the config file's vocabulary (frames, reports, plans, the doctor):
# a file that cannot be used is said before anything is pulled or stored, not found half-way
# through a snapshot, where it would cost one resource group at a time.
_READ_CONFIG = frozenset({"snapshot", "check", "doctor", "stop", "report"})

# ``literal``, :func:`name` and similar reST roles read as noise in a terminal
_REST = re.compile(r":[a-z]+:`~?([^`]+)`|``([^`]+)``")


def plain(text: str) -> str:
    """``text`` without reST markup."""
    return _REST.sub(lambda m: m.group(1) or m.group(2), text)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps examples' line breaks, shows defaults, and drops reST markup from help texts.

    ``(default: VALUE)`` is added after the help of every option that has a default, unless the
    help already states it (``default:`` or ``(default ...``). An option whose default is None,
    False or empty (``""``, ``[]``) has nothing to show and gets nothing.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = plain(action.help or "")
        if not action.option_strings or not shows_default(action) or states_default(text):
            return text
        return f"{text} (default: %(default)s)"

    def _format_text(self, text: str) -> str:
        return super()._format_text(plain(text))


def shows_default(action: argparse.Action) -> bool:
    """Whether ``action`` has a default worth printing (not None, False, empty or suppressed)."""
    default = action.default
    if default is None or default is False or default is argparse.SUPPRESS:
        return False
    return not (isinstance(default, str | list | tuple | dict) and not default)


def states_default(text: str) -> bool:
    """Whether a help text already says what its option's default is."""
    lowered = text.lower()
    return "(default" in lowered or "default:" in lowered


class _Version(argparse.Action):
    """``--version``: the installed distribution's version (looked up only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kw: object):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # type: ignore[no-untyped-def]
        print(f"svcnb {installed_version()}")
        parser.exit()


def installed_version() -> str:
    """svcnb's version as installed (``pip show svcnb``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("svcnb")
    except PackageNotFoundError:
        return "(not installed: running from a source folder)"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only the module of ``command`` (when given) is imported to add its options."""
    parser = argparse.ArgumentParser(
        prog="svcnb",
        description="The VM-hosting API from the command line: snapshots into a Delta store, "
        "reports, alerts, stop plans, a webhook receiver, the sandbox emulator, and Jupyter "
        "(svcnb lab, svcnb demo: pip install 'svcnb[lab]').",
        formatter_class=HelpFormatter,
        epilog=EXAMPLES_HEADER
        + "\n".join(f"  {example}" for _m, _h, example in _COMMANDS.values())
        + "\n\nsvcnb COMMAND --help shows a command's options and more examples.",
    )
    parser.add_argument("--version", action=_Version, help="print svcnb's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text, example) in _COMMANDS.items():
        p = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            formatter_class=HelpFormatter,
            epilog=f"example:\n  {example}",
        )
        p.set_defaults(_module=module)
        if name == command:
            importlib.import_module(module).add_arguments(p)
            if p.description:
                p.description = plain(p.description)
    return parser


def _complete() -> None:
    """Answer the shell's completion request (argcomplete; ``eval "$(register-python-argcomplete
    svcnb)"`` once in the shell's rc file) and exit. Only the command being typed has its
    options added, as for --help, so completing a command name loads none of them."""
    import argcomplete

    line = os.environ.get("COMP_LINE", "")[: int(os.environ.get("COMP_POINT", "0") or 0)]
    typed = line.split()[1:]
    if line and not line[-1].isspace():
        typed = typed[:-1]  # the word being completed is not a command yet
    command = next((w for w in typed if not w.startswith("-")), None)
    argcomplete.autocomplete(build_parser(command if command in _COMMANDS else None))


def main(argv: Sequence[str] | None = None) -> int:
    if "_ARGCOMPLETE" in os.environ:  # set by the shell's completion hook, never by a user
        _complete()
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    name = command if command in _COMMANDS else None
    try:
        parser = build_parser(name)
        args = parser.parse_args(argv)
        if args.command is None:  # `svcnb` alone: what it can do, rather than a usage error
            parser.print_help()
            return 0
        if name in _READ_CONFIG:
            from svcnb import vocab

            vocab.current()  # ConfigError naming the file, below
        code = int(importlib.import_module(args._module).run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers below
        return code
    except KeyboardInterrupt:
        print(f"svcnb {name or ''}: interrupted".replace("  ", " "), file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`svcnb report ... | head -1`): nothing more to say to anyone;
        # stdout is pointed at devnull so the interpreter's final flush does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:
        # a path the user gave cannot be read or written; anything else is a bug and goes up
        if exc.filename is None:
            raise
        print(f"svcnb {name}: {exc.strerror or exc}: {exc.filename}", file=sys.stderr)
        return 2
    except Exception as exc:
        from svcnb.config import ConfigError

        if isinstance(exc, ConfigError):
            print(f"svcnb {name}: {exc}", file=sys.stderr)
            return 2
        raise
