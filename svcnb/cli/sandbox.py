"""``svcnb sandbox``: serve the sandbox on loopback until interrupted: a seeded fleet, a saved
account (``--state-file``) or a copy of a stored snapshot (``--from-store``, README "Rehearsing
on a copy"). The server stack, the saved-state format and the store are imported by run(), so
``svcnb sandbox --help`` needs only the options.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from svcnb.config import ConfigError
from svcnb.files import shown
from svcnb.sandbox import DEFAULT_SEED, DEFAULT_VMS, SandboxConfig

from ._common import add_dialect_option, fail

# a saved account as the sandbox's state files hold it (svcnb.sandbox.read_state_file)
Saved = dict[str, Any]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="port; 0 picks a free one (default: the port saved in --state-file, else a free one)",
    )
    parser.add_argument("--vms", type=int, default=DEFAULT_VMS, help="size of the seeded fleet")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the fleet")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every request")
    parser.add_argument(
        "--rate-limit",
        type=int,
        default=SandboxConfig.rate_limit,
        help="requests each token may make per window, unless raised for that token",
    )
    parser.add_argument(
        "--ip-rate-limit",
        type=int,
        default=SandboxConfig.ip_rate_limit,
        help="per-IP limit per window for requests without a valid token",
    )
    parser.add_argument(
        "--rate-window",
        type=float,
        default=SandboxConfig.rate_window_seconds,
        help="length of the fixed rate-limit window in seconds",
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        help="sandbox seconds per real second (0 freezes the clock)",
    )
    add_dialect_option(parser)
    parser.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDR",
        help="a proxy (address or CIDR) whose X-Forwarded-For names the caller for the per-IP "
        "limit; repeat for several (default: none, the socket peer counts)",
    )
    parser.add_argument(
        "--connection-file",
        default=None,
        metavar="PATH",
        help="write {base_url, api_root, control_url, tokens} as JSON here, readable by you "
        "only; svcnb.connect() and every svcnb command use the sandbox it names when "
        "SVCNB_SANDBOX=PATH is exported (default: $SVCNB_SANDBOX, else "
        "~/.local/state/svcnb/sandbox.json; a file of a sandbox still running is refused)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="do not log each sandbox event to stderr"
    )
    parser.add_argument(
        "--ca-bundle",
        default=None,
        help="PEM file webhook deliveries trust (for a local test receiver)",
    )
    parser.add_argument(
        "--state-file",
        default=None,
        metavar="FILE",
        help="start from the account saved in FILE (GET /_sandbox/state or "
        "--save-state-on-exit wrote it) instead of a seeded fleet, on the port saved with it; "
        "--vms and --seed are then ignored, the saved clock and seed are used. A FILE that "
        "does not exist yet is a seeded fleet when --save-state-on-exit names it too",
    )
    parser.add_argument(
        "--save-state-on-exit",
        default=None,
        metavar="FILE",
        help="when the sandbox stops (Ctrl-C or SIGTERM), write its account and port to FILE "
        "for --state-file",
    )
    parser.add_argument(
        "--dialect-file",
        default=None,
        metavar="FILE",
        help="speak the dialect `svcnb doctor --record FILE` wrote of a service (a twin of it; "
        "with --from-store it holds that account too); each point the file does not prove is "
        "listed on stderr at start, and keeps the default",
    )
    parser.add_argument(
        "--from-store",
        default=None,
        metavar="PATH",
        help="start from the account as a snapshot in this store holds it (a copy to rehearse "
        "a firewall change or a bulk stop on); the store is only read",
    )
    parser.add_argument(
        "--at",
        default=None,
        metavar="TIME",
        help="with --from-store: the snapshot as of this server time or snapshot id "
        "(default: the latest)",
    )
    parser.add_argument(
        "--account",
        default=None,
        metavar="NAME",
        help="with --from-store: the account to copy, in a store of several (default: the "
        "store's only one)",
    )
    parser.add_argument(
        "--anonymize",
        action="store_true",
        help="with --from-store: replace names, hostnames, addresses, descriptions and webhook "
        "URLs by consistent pseudonyms (firewall rules still match the same VMs)",
    )
    parser.epilog = (
        "examples:\n  svcnb sandbox --vms 40 --connection-file sandbox.json\n"
        "  svcnb sandbox --from-store data/store --anonymize --time-scale 0 "
        "--connection-file copy.json --save-state-on-exit copy-state.json\n"
        "  svcnb sandbox --from-store s3://team/history --account prod --anonymize "
        "--connection-file prod-copy.json"
    )


def run(args: argparse.Namespace, stop: threading.Event | None = None) -> int:
    """``svcnb sandbox``; with --from-store the copy of a snapshot (notes printed first)."""
    if args.from_store is None:
        if args.at is not None or args.anonymize or args.account is not None:
            raise ConfigError("--at, --account and --anonymize need --from-store PATH")
        return serve_until_stopped(args, stop)
    if getattr(args, "state_file", None):
        raise ConfigError("--from-store and --state-file both name a starting state; give one")
    from svcnb.learn.rehearsal import _one_account, state_from_store
    from svcnb.store import Store, StoreError

    try:
        store = _one_account(Store(args.from_store), args.account, option="--account ")
        copy = state_from_store(store, args.at, anonymize=args.anonymize)
    except (StoreError, ValueError) as exc:  # no such snapshot, a time that does not parse
        return fail("sandbox", str(exc), 2)
    print(
        f"svcnb sandbox: a copy of snapshot {copy.snapshot_id} ({copy.doc['now']})"
        + (f" of account {store.account}" if store.account else "")
        + (", anonymized" if args.anonymize else ""),
        flush=True,
    )
    for line in copy.notes:
        print(f"  note: {line}", flush=True)
    return serve_until_stopped(args, stop, saved=copy.doc)


def _speak_dialect_file(args: argparse.Namespace) -> bool:
    """``--dialect-file``: the file's dialect becomes ``args.dialect`` (its rate limit
    ``args.rate_limit`` unless ``--rate-limit`` was given), and each point it does not state as
    proven is one line on stderr. False, after one line saying why, when the file cannot be
    used (not TOML, another version, a key the sandbox does not know)."""
    from svcnb.sandbox import StateError, read_dialect_file

    if getattr(args, "dialect", "default") != "default":
        print(
            "svcnb sandbox: --dialect and --dialect-file both say how to speak; give one",
            file=sys.stderr,
        )
        return False
    try:
        spoken = read_dialect_file(args.dialect_file)
    except StateError as exc:
        fail("sandbox", shown(str(exc)))
        return False
    args.dialect = spoken.name
    for name, default in (
        ("rate_limit", SandboxConfig.rate_limit),
        ("rate_window", SandboxConfig.rate_window_seconds),
    ):
        key = "rate_window_seconds" if name == "rate_window" else name
        if key in spoken.settings and getattr(args, name, default) == default:
            setattr(args, name, spoken.settings[key])
    # the file's texts are another's: each is one line, nothing in it a terminal acts on
    print(
        f"svcnb sandbox: speaking the dialect file {shown(args.dialect_file)}; "
        f"{len(spoken.listed)} point(s) not spoken as proven:",
        file=sys.stderr,
    )
    for line in spoken.listed:
        print(f"  {shown(line)}", file=sys.stderr)
    return True


def _log_to_stderr(quiet: bool) -> logging.Handler:
    """Sandbox log lines (one per event, from the life engine) go to stderr as plain lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("svcnb.sandbox")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING if quiet else logging.INFO)
    return handler


def serve_until_stopped(
    args: argparse.Namespace, stop: threading.Event | None = None, saved: Saved | None = None
) -> int:
    """Serve until Ctrl-C or SIGTERM (or until ``stop`` is set, for tests). ``saved``: a state
    document to start from (a copy of a snapshot; ``--state-file`` reads one)."""
    from svcnb.sandbox import StateError, read_state_file

    handler = _log_to_stderr(getattr(args, "quiet", False))
    try:
        if getattr(args, "dialect_file", None) and not _speak_dialect_file(args):
            return 2
        state_file = getattr(args, "state_file", None)
        if saved is None and state_file and not _starts_afresh(args):
            try:
                saved = read_state_file(state_file)
            except StateError as exc:
                return fail("sandbox", str(exc), 2)
        return _serve(args, stop, saved)
    finally:
        logging.getLogger("svcnb.sandbox").removeHandler(handler)


def _starts_afresh(args: argparse.Namespace) -> bool:
    """``--state-file F --save-state-on-exit F`` with no F yet: the first run of a sandbox that
    keeps its account in F starts from a seeded fleet (any other missing F is an error)."""
    state_file, save_to = args.state_file, getattr(args, "save_state_on_exit", None)
    if not save_to:
        return False
    return not Path(state_file).exists() and Path(state_file).absolute() == Path(save_to).absolute()


def _saved_port(saved: Saved | None) -> int | None:
    """The port a sandbox saved with --save-state-on-exit listened on (None: none saved)."""
    listen = (saved or {}).get("listen")
    port = listen.get("port") if isinstance(listen, dict) else None
    if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
        return port
    return None


def _in_use(path: Path) -> str | None:
    """Why ``path`` must not be written: it is the connection file of a sandbox still running
    (its users would be moved to this one without a word). None when it may be."""
    from svcnb.sandbox import connection

    try:
        info = connection.read(path)
    except (OSError, ValueError):
        return None
    if connection.probe(info) != connection.RUNNING:
        return None
    return (
        f"{path} is the connection file of the sandbox running at {shown(info['base_url'])}; stop "
        "that one first, or give this one a file of its own with --connection-file PATH"
    )


def _serve(args: argparse.Namespace, stop: threading.Event | None, saved: Saved | None) -> int:
    from svcnb.sandbox import connection, export_state, serve, write_state_file

    connection_file = (
        Path(args.connection_file) if args.connection_file else connection.default_path()
    )
    refused = _in_use(connection_file)
    if refused:
        print(f"svcnb sandbox: {refused}", file=sys.stderr)
        return 2
    port = args.port if args.port is not None else _saved_port(saved)
    try:
        context = serve(
            saved=saved,
            host=args.host,
            port=port or 0,
            connection_file=str(connection_file),
            vms=args.vms,
            seed=args.seed,
            latency_ms=args.latency_ms,
            rate_limit=args.rate_limit,
            ip_rate_limit=args.ip_rate_limit,
            rate_window_seconds=args.rate_window,
            time_scale=args.time_scale,
            ca_bundle=args.ca_bundle,
            dialect=getattr(args, "dialect", "default"),
            trusted_proxies=tuple(getattr(args, "trusted_proxy", None) or ()),
        )
        sandbox = context.__enter__()
    except (ValueError, RuntimeError, OSError) as exc:  # StateError is a ValueError
        message = str(exc)
        if isinstance(exc, RuntimeError) and port and args.port is None:  # could not bind
            message = (
                f"port {port}, saved in {args.state_file}, is taken; pass --port 0 for a free "
                "one (a store of this sandbox's snapshots then sees another server)"
            )
        print(f"svcnb sandbox: {message}", file=sys.stderr)
        return 2
    save_to = getattr(args, "save_state_on_exit", None)
    try:
        print(sandbox.base_url, flush=True)
        print(f"  public API: {sandbox.api_root}  control: {sandbox.control_url}", flush=True)
        if sandbox.state.dialect.name != "default":
            print(f"  dialect: {shown(sandbox.state.dialect.name)}", flush=True)
        print(f"  tokens ({', '.join(sandbox.tokens)}) written to {connection_file}", flush=True)
        if saved is not None:
            print(f"  started from a saved state at sandbox time {saved['now']}", flush=True)
        elif getattr(args, "state_file", None):
            print(f"  {args.state_file} does not exist yet: a seeded fleet", flush=True)
        if save_to:
            print(f"  Ctrl-C stops it and saves its account and port to {save_to}", flush=True)
        print("svcnb.connect() and every svcnb command use it in a shell where you paste:")
        print(f"export SVCNB_SANDBOX={shlex.quote(str(connection_file.absolute()))}", flush=True)
        _wait(stop or threading.Event())
        if save_to:
            doc = export_state(sandbox.state)
            doc["listen"] = {"port": int(sandbox.base_url.rsplit(":", 1)[1])}
            write_state_file(doc, save_to)
            print(f"  state saved to {save_to}", flush=True)
    finally:
        context.__exit__(None, None, None)
    return 0


def _wait(stop: threading.Event) -> None:
    """Until ``stop`` is set, Ctrl-C, or SIGTERM (what `kill`, systemd and docker stop send):
    both end the sandbox the same way, its state saved."""
    terminated: list[int] = []
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: terminated.append(signum))
    try:
        while not terminated and not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
