"""The svcnb command: one module per subcommand in this package, dispatched by :data:`COMMANDS`.

Each command module has ``add_arguments(parser)`` and ``run(args) -> int``: it parses and prints,
and the layer it drives does the work. A command's module is imported only when that command is
parsed or run, so ``svcnb --help`` imports none of them, ``svcnb snapshot`` never loads the
server stack and ``svcnb sandbox`` never loads pandas. Exit codes: README, "Alerts" (the one
table of them is docs/your-service.md section 8).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import NamedTuple

from svcnb.cli._common import one_line_errors


class Command(NamedTuple):
    """One subcommand: ``load()`` imports its module (``add_arguments``, ``run``), ``help`` is
    its one-line help, ``example`` the example ``svcnb --help`` lists."""

    load: Callable[[], ModuleType]
    help: str
    example: str


# One function per command imports its module, by name, when the command is parsed or run:
# an editor follows each to its module, and `svcnb --help` imports none of them.
def _sandbox() -> ModuleType:
    from svcnb.cli import sandbox

    return sandbox


def _snapshot() -> ModuleType:
    from svcnb.cli import snapshot

    return snapshot


def _snapshots() -> ModuleType:
    from svcnb.cli import snapshots

    return snapshots


def _report() -> ModuleType:
    from svcnb.cli import report

    return report


def _pages() -> ModuleType:
    from svcnb.cli import pages

    return pages


def _listen() -> ModuleType:
    from svcnb.cli import listen

    return listen


def _check() -> ModuleType:
    from svcnb.cli import check

    return check


def _migrate_store() -> ModuleType:
    from svcnb.cli import migrate_store

    return migrate_store


def _stop() -> ModuleType:
    from svcnb.cli import stop

    return stop


def _doctor() -> ModuleType:
    from svcnb.cli import doctor

    return doctor


def _demo() -> ModuleType:
    from svcnb.cli import demo

    return demo


def _lab() -> ModuleType:
    from svcnb.cli import lab

    return lab


# subcommand -> its module, one-line help and an example, in the order `svcnb --help` lists them
COMMANDS: dict[str, Command] = {
    "sandbox": Command(
        _sandbox,
        "serve the local sandbox emulator of the API, or a copy of a stored snapshot",
        "svcnb sandbox --vms 40 --connection-file sandbox.json",
    ),
    "snapshot": Command(
        _snapshot,
        "take one snapshot of the account (or of every configured account) into the store",
        "svcnb snapshot --store data/store",
    ),
    "snapshots": Command(
        _snapshots,
        "list the snapshots in the store",
        "svcnb snapshots --store data/store",
    ),
    "report": Command(
        _report,
        "print or export a report as of a snapshot",
        "svcnb report billing --table runway",
    ),
    "pages": Command(
        _pages,
        "write every report as a self-contained HTML page from a store, for cron",
        "svcnb pages --out pages",
    ),
    "listen": Command(
        _listen,
        "run the verifying webhook receiver over HTTPS",
        "svcnb listen --port 8443 --cert cert.pem --key key.pem --secret-file secret.txt",
    ),
    "check": Command(
        _check,
        "evaluate the [alerts] rules on the latest snapshot (exit 1 when one fired), for cron",
        "svcnb check --store data/store",
    ),
    "migrate-store": Command(
        _migrate_store,
        "convert a store of the first format to Delta tables, checked row for row",
        "svcnb migrate-store data/store-old data/store-new",
    ),
    "stop": Command(
        _stop,
        "stop VMs through a reviewed plan: build, save, review, apply with an approver",
        "svcnb stop --region eu-central-1 --status running --plan-out stop.json",
    ),
    "doctor": Command(
        _doctor,
        "read-only check of what the configured service answers",
        "svcnb doctor",
    ),
    "demo": Command(
        _demo,
        "simulate an account on the sandbox and render the reports",
        "svcnb demo --out out --days 90",
    ),
    "lab": Command(
        _lab,
        "open JupyterLab on the notebooks: your store (--store, --account), else a sandbox",
        "svcnb lab",
    ),
}
# Every example of every help text runs as written (tests/install/test_cli_examples.py runs
# each, in this order, in an empty folder with the sandbox of the first one named).
EXAMPLES_HEADER = (
    "examples, on the simulated account the first one starts (export SVCNB_SANDBOX=sandbox.json;\n"
    "for your account set SVC_BASE_URL and SVC_API_KEY instead):\n"
)
EXIT_CODES = (
    "exit codes: 0 done; 1 failed (nothing stored; svcnb check: an alert fired); 2 a mistake in\n"
    "what was asked (an option, the config file, no server or store); 3 done with a gap said on\n"
    "stderr (snapshot: a resource not read or not proven whole, --accept-gap RESOURCE makes a\n"
    "known one exit 0; doctor: an assumption not proven); 130 interrupted. Warnings: one line\n"
    "each on stderr, the same one once with its count."
)
# Commands whose work reads the config file's vocabulary (frames, reports, plans, the doctor):
# a file that cannot be used is said before anything is pulled or stored, not found half-way
# through a snapshot, where it would cost one resource group at a time.
_READ_CONFIG = frozenset({"snapshot", "check", "doctor", "stop", "report", "pages"})

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

    def __init__(
        self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None
    ) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
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
        + "\n".join(f"  {entry.example}" for entry in COMMANDS.values())
        + "\n\n"
        + EXIT_CODES
        + "\n\nsvcnb COMMAND --help shows a command's options and more examples.",
    )
    parser.add_argument("--version", action=_Version, help="print svcnb's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (load, help_text, example) in COMMANDS.items():
        p = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            formatter_class=HelpFormatter,
            epilog=f"example:\n  {example}",
        )
        if name == command:
            load().add_arguments(p)
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
    argcomplete.autocomplete(build_parser(command if command in COMMANDS else None))


def main(argv: Sequence[str] | None = None) -> int:
    """``svcnb ARGV...``: the exit code of the command run (0 for ``svcnb`` alone)."""
    if "_ARGCOMPLETE" in os.environ:  # set by the shell's completion hook, never by a user
        _complete()
    args_given = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_given if not a.startswith("-")), None)
    name = command if command in COMMANDS else None
    return one_line_errors(name, lambda: _run(args_given, name))


def _run(argv: list[str], name: str | None) -> int:
    parser = build_parser(name)
    args = parser.parse_args(argv)
    if args.command is None:  # `svcnb` alone: what it can do, rather than a usage error
        parser.print_help()
        return 0
    if name in _READ_CONFIG:
        from svcnb import vocab

        vocab.current()  # ConfigError naming the file, one line (svcnb.cli._common)
        account = getattr(args, "account", None)
        if isinstance(account, str):
            # one account's words are read with its own pins ([accounts.NAME.vocabulary.*])
            with vocab.using(vocab.for_account(account)):
                return int(COMMANDS[args.command].load().run(args) or 0)
    return int(COMMANDS[args.command].load().run(args) or 0)
