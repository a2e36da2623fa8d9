"""The ``svcnb`` command.

Each subcommand lives with the layer it drives (``svcnb.sandbox._cli``, ``svcnb.store._cli``,
``svcnb.reports._cli``, ``svcnb.webhooks._cli``, ``svcnb._demo``). They are imported only when
their subcommand runs, so ``svcnb snapshot`` never loads the server stack and ``svcnb sandbox``
never loads pandas.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# subcommand -> module whose ``add_arguments(parser)`` and ``run(args) -> int`` implement it
_COMMANDS = {
    "sandbox": ("svcnb.sandbox._cli", "serve the local sandbox emulator of the API"),
    "snapshot": ("svcnb.store._cli", "take one snapshot of the account into the store"),
    "snapshots": ("svcnb.store._cli_list", "list the snapshots in the store"),
    "report": ("svcnb.reports._cli", "print or save a report as of a snapshot"),
    "listen": ("svcnb.webhooks._cli", "run the verifying webhook receiver over HTTPS"),
    "doctor": ("svcnb._doctor", "read-only check of what the configured service answers"),
    "demo": ("svcnb._demo", "simulate an account on the sandbox and render the reports"),
    "lab": ("svcnb._lab", "open JupyterLab with a sandbox running"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only the module of ``command`` (when given) is imported to add its options."""
    parser = argparse.ArgumentParser(prog="svcnb", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in _COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        if name == command:
            importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(command).parse_args(argv)
    return int(importlib.import_module(args._module).run(args) or 0)
