"""``svcnb lab``: JupyterLab on the notebooks, with a sandbox running for their kernels (the
sandbox process, the kernels' environment and the Jupyter command are ``svcnb.jupyter.lab``'s)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from svcnb.cli._common import add_store_option
from svcnb.config import ConfigError, account, config_path
from svcnb.extras import lab_needed
from svcnb.jupyter.lab import (
    DEFAULT_LAB_SEED,
    DEFAULT_LAB_TIME_SCALE,
    DEFAULT_LAB_VMS,
    LAB_STORES,
    REAL_API_ENV,
    STORE_ENV,
    SandboxProcess,
    kernel_environment,
    lab_command,
    on_your_data,
    private_folder,
    session_store,
    your_environment,
)
from svcnb.jupyter.notebooks import DEFAULT_FOLDER, NotebooksMissing, copy_into

from ._common import fail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--notebooks",
        default=DEFAULT_FOLDER,
        metavar="DIR",
        help="working folder the notebooks are copied into and JupyterLab opens; a notebook you "
        "changed there is never overwritten",
    )
    parser.add_argument("--port", type=int, default=0, help="JupyterLab port (default: Jupyter's)")
    parser.add_argument("--vms", type=int, default=DEFAULT_LAB_VMS, help="sandbox fleet size")
    parser.add_argument("--seed", type=int, default=DEFAULT_LAB_SEED, help="sandbox seed")
    parser.add_argument(
        "--time-scale",
        type=float,
        default=DEFAULT_LAB_TIME_SCALE,
        help="sandbox clock speed; 60 plays a minute per second, 0 freezes it",
    )
    add_store_option(
        parser,
        ": the notebooks open on it, with no sandbox (your data, as `svcnb snapshot` wrote it)",
        default=f"on your service ${STORE_ENV}, else data/store; on a sandbox a new "
        f"{LAB_STORES}/<time>/store for the session",
    )
    parser.add_argument(
        "--account",
        metavar="NAME",
        help="the account [accounts.NAME] of the config file the notebooks read and connect to "
        "(its store partition and its service), with no sandbox",
    )
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="a sandbox for the notebooks even when SVC_BASE_URL/SVC_API_KEY are set (the "
        "default when neither they, --store nor --account name your data)",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open a web browser")


def run(args: argparse.Namespace) -> int:
    if needed := lab_needed("svcnb lab"):
        print(needed, file=sys.stderr)
        return 2
    try:
        copies = copy_into(args.notebooks)
    except NotebooksMissing as exc:
        return fail("lab", str(exc), 2)
    for line in copies.lines():
        print(f"svcnb lab: {line}", flush=True)
    root = copies.folder
    if on_your_data(args.store, args.account, args.sandbox):
        return _on_your_data(args, root)
    # Resolved here: the kernels run in the notebooks' folder, not where `svcnb lab` started.
    # Each lab session's sandbox is a new simulated account whose clock starts again, and a
    # store refuses a second server's history: so unless told, each session gets its own store.
    store = session_store(args.store)
    # the kernels' snapshots outlive the session: say where, and how a terminal reads them
    print(
        f"svcnb lab: the notebooks keep their snapshots in {store}; from a terminal: "
        f"svcnb report billing --store {store}",
        flush=True,
    )
    dropped = [name for name in REAL_API_ENV if os.environ.get(name)]
    if dropped:
        print(
            f"svcnb lab: ignoring {' and '.join(dropped)} so the notebooks use the sandbox; "
            "run `svcnb lab` without --sandbox to open them on your service",
            file=sys.stderr,
        )
    with private_folder("svcnb-lab-") as tmp:
        sandbox = SandboxProcess(
            tmp / "sandbox.json",
            vms=args.vms,
            seed=args.seed,
            time_scale=args.time_scale,
            log_file=tmp / "sandbox.log",
        )
        with sandbox:
            print(
                f"svcnb lab: sandbox at {sandbox.base_url} ({args.vms} VMs, seed {args.seed}, "
                f"clock x{args.time_scale:g}); notebooks in {root.resolve()}",
                flush=True,
            )
            env = kernel_environment(sandbox.connection_file, store)
            argv = lab_command(root, port=args.port or None, open_browser=not args.no_browser)
            return _serve(subprocess.Popen(argv, env=env))


def _on_your_data(args: argparse.Namespace, root: Path) -> int:
    """JupyterLab on the user's store (and account, or the service SVC_* name): no sandbox."""
    from svcnb.store import is_remote, resolve_url

    where = resolve_url(args.store)
    store = where if is_remote(where) else str(Path(where).resolve())
    if args.account is not None:
        try:
            account(args.account)
        except ConfigError as exc:
            return fail("lab", str(exc), 2)
        service = f"account {args.account} of {config_path()}"
    elif any(os.environ.get(name) for name in REAL_API_ENV):
        service = "the service SVC_BASE_URL names"
    else:
        service = "no service (the notebooks read the store; a cell that connects says so)"
    print(
        f"svcnb lab: your data, no sandbox: the store {store}, {service}; notebooks in "
        f"{root.resolve()} (svcnb lab --sandbox for simulated data)",
        flush=True,
    )
    env = your_environment(store, args.account)
    argv = lab_command(root, port=args.port or None, open_browser=not args.no_browser)
    return _serve(subprocess.Popen(argv, env=env))


def _serve(lab: subprocess.Popen) -> int:
    """Wait for JupyterLab; one ^C (or SIGTERM) ends it and its kernels cleanly."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return lab.wait()
    except KeyboardInterrupt:
        lab.terminate()
        try:
            lab.wait(timeout=30)
        except subprocess.TimeoutExpired:
            lab.kill()
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt
