"""What every ``svcnb`` command shares: ``--store``, the client, and how an error the user can fix
ends (one line on stderr and an exit code, never a traceback). ``svcnb --help`` imports it, so
nothing here loads pandas, the store or the client until a command calls it.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from svcnb.client import Client

# exit codes every command shares: a usage or configuration mistake, Ctrl-C
USAGE = 2
INTERRUPTED = 130


def fail(command: str, text: str, code: int = USAGE) -> int:
    """Say ``text`` as ``svcnb COMMAND: text`` on stderr; returns ``code`` for the command to
    end with."""
    print(f"svcnb {command}: {text}", file=sys.stderr)
    return code


# ``--account '*'``: the command once for each account of the store, in turn
EVERY_ACCOUNT = "*"
ACCOUNT_HELP = (
    "the account to {what}, in a store of several (default: the store's only one); '*' "
    "(quoted) for each account of the store in turn, each under its name"
)


def each_account(
    command: str, args: argparse.Namespace, run: Callable[[argparse.Namespace], int]
) -> int:
    """``run`` once for each account of ``args.store`` (``--account '*'``), each after a line
    naming it; ends with the highest exit code. Figures of two accounts are never added."""
    from svcnb.store import Store, StoreError, check_readable

    store = Store(args.store)
    try:
        check_readable(store, args.store, None, every=True)
    except StoreError as exc:
        return fail(command, str(exc))
    worst = 0
    for name in store.accounts():
        print(f"== account {name} ==", flush=True)
        worst = max(worst, run(argparse.Namespace(**{**vars(args), "account": name})))
    return worst


def add_store_option(
    parser: argparse.ArgumentParser,
    what: str = "",
    default: str | None = None,
    local_only: bool = False,
) -> None:
    """``--store PATH`` (default None: ``Store`` then reads ``$SVCNB_STORE``, else data/store).
    ``what`` says what the command does with it; ``default`` words a default of the command's
    own (``svcnb lab`` starts a new store); ``local_only`` for what is kept in a folder only."""
    from svcnb.store import DEFAULT_PATH, ENV_PATH

    said = default or f"${ENV_PATH}, else {DEFAULT_PATH}"
    where = "a folder" if local_only else "a folder or a URL such as s3://bucket/prefix"
    parser.add_argument(
        "--store",
        default=None,
        metavar="PATH",
        help=f"snapshot store: {where}{what} (default: {said})",
    )


def lab_store_hint(given: str | None, command: str) -> str:
    """A sentence naming the store ``svcnb lab`` keeps under this folder, with the exact
    ``--store`` to pass to ``command``, when no store was named (neither ``--store`` nor
    ``$SVCNB_STORE``) and one is there; "" otherwise. The store is named, never read
    unasked: which session's history the user means is theirs to say."""
    from svcnb.jupyter.lab import LAB_STORES
    from svcnb.store import ENV_PATH

    if given or os.environ.get(ENV_PATH):
        return ""
    found = sorted(p for p in Path(LAB_STORES).glob("*/store") if (p / "_snapshots").is_dir())
    if not found:
        return ""
    others = f" ({len(found) - 1} older session(s) beside it)" if len(found) > 1 else ""
    return (
        f". `svcnb lab` keeps its snapshots here: the latest session's store is {found[-1]}"
        f"{others}; run `svcnb {command} --store {found[-1]}`"
    )


def _dialect_name(text: str) -> str:
    """``--dialect``'s value, refused at parsing (one line, exit 2) when the sandbox cannot speak
    it: before a command copies, writes or starts anything."""
    from svcnb.sandbox import Dialect

    try:
        Dialect.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_dialect_option(parser: argparse.ArgumentParser, what: str = "") -> None:
    """``--dialect NAME``: how the sandbox the command starts speaks (``what`` says more)."""
    parser.add_argument(
        "--dialect",
        type=_dialect_name,
        default="default",
        help="how the sandbox speaks: default, acme, linkhdr, cursor, drf, google, hal, "
        f"zeropage, capped or random:SEED{what} (default: default)",
    )


def client(account: str | None = None, *, progress: bool = False) -> Client:
    """The client of the server the settings name (:func:`svcnb.configured_client`): the
    ``[accounts.NAME]`` table of ``account``, else ``SVC_BASE_URL``/``SVC_API_KEY``, else the
    sandbox ``SVCNB_SANDBOX`` names; never a sandbox started for the occasion (a throwaway
    account must not enter a real history). ConfigError saying what to set when none is."""
    from svcnb import configured_client

    return configured_client(account, progress=progress)


def account_names() -> list[str]:
    """The accounts ``svcnb snapshot --all`` pulls: those of the config file; ConfigError when
    it names none."""
    from svcnb.config import ConfigError, accounts, config_path

    names = list(accounts())
    if not names:
        raise ConfigError(
            f"{config_path()} names no accounts; add [accounts.NAME] tables with base_url and "
            "token_env, or run without --all for the server SVC_BASE_URL/SVC_API_KEY name"
        )
    return names


def sandbox_connection_file() -> Path | None:
    """The connection file :func:`client` takes its server from, None when
    ``SVC_BASE_URL``/``SVC_API_KEY`` name one (or nothing does): commands say "this is a new
    sandbox" where they would otherwise speak of tokens and base URLs."""
    from svcnb.client import key_and_url
    from svcnb.sandbox import connection

    if any(key_and_url(None, None)):
        return None
    named = os.environ.get(connection.ENV)
    return Path(named) if named else None


# commands that run until stopped: their warnings are said as they come, not at the end
LONG_RUNNING = frozenset({"sandbox", "listen", "lab", "demo"})


def _warning_line(message: warnings.WarningMessage) -> str:
    # the message only: never the file, line or source that raised it (paths of an installed
    # package say nothing a user can act on); svcnb's warnings name the next step themselves
    return " ".join(str(message.message).split())


def said_warnings(name: str | None, caught: list[warnings.WarningMessage]) -> None:
    """The warnings of a run on stderr, one line each, the same one once with its count."""
    counts: dict[str, int] = {}
    for message in caught:
        line = _warning_line(message)
        counts[line] = counts.get(line, 0) + 1
    for line, n in counts.items():
        times = f" ({n} times)" if n > 1 else ""
        print(f"svcnb {name or ''}: warning{times}: {line}".replace("  ", " "), file=sys.stderr)


def one_line_errors(name: str | None, work: Callable[[], int]) -> int:
    """``work()``'s exit code; what the user can fix ends as one line on stderr instead, and
    every warning is one line on stderr (grouped at the end, but as it comes for a command
    that runs until stopped).

    Ctrl-C is 130; a closed pipe (``svcnb report ... | head -1``) is 0; a path the user gave
    that cannot be read or written, and a configuration that cannot be used (ConfigError),
    are 2. Anything else is a bug and goes up with its traceback.
    """
    if name in LONG_RUNNING:
        with warnings.catch_warnings():
            shown = warnings.showwarning

            def one_line(message: Any, category: Any, *rest: Any, **kw: Any) -> None:
                line = " ".join(str(message).split())
                print(f"svcnb {name}: warning: {line}", file=sys.stderr)

            warnings.showwarning = one_line
            try:
                return _guarded(name, work)
            finally:
                warnings.showwarning = shown
    with warnings.catch_warnings(record=True) as caught:
        # the filters in force stay (what svcnb or the user silenced stays silent)
        try:
            return _guarded(name, work)
        finally:
            said_warnings(name, caught)


def _guarded(name: str | None, work: Callable[[], int]) -> int:
    try:
        code = work()
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers below
        return code
    except KeyboardInterrupt:
        print(f"svcnb {name or ''}: interrupted".replace("  ", " "), file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # the reader went away: nothing more to say to anyone; stdout is pointed at devnull so
        # the interpreter's final flush does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:
        # a path the user gave cannot be read or written; anything else is a bug and goes up
        if exc.filename is None:
            raise
        print(f"svcnb {name}: {exc.strerror or exc}: {exc.filename}", file=sys.stderr)
        return USAGE
    except Exception as exc:
        from svcnb.config import ConfigError

        if isinstance(exc, ConfigError):
            print(f"svcnb {name}: {exc}", file=sys.stderr)
            return USAGE
        raise
