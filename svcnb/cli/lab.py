"""``svcnb lab``: JupyterLab on the notebooks, with a sandbox running for their kernels (the
sandbox process, the kernels' environment and the Jupyter command are ``svcnb._lab``'s)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys

from svcnb._lab import (
    DEFAULT_LAB_SEED,
    DEFAULT_LAB_TIME_SCALE,
    DEFAULT_LAB_VMS,
    LAB_STORES,
    REAL_API_ENV,
    STORE_ENV,
    SandboxProcess,
    kernel_environment,
    lab_command,
    private_folder,
    session_store,
)
from svcnb._notebooks import DEFAULT_FOLDER, NotebooksMissing, copy_into
from svcnb.cli._common import add_store_option
from svcnb.extras import lab_needed

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
        default=f"${STORE_ENV}, else a new {LAB_STORES}/<time>/store for this session's sandbox",
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
            "start `jupyter lab` yourself to use the real API",
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
            lab = subprocess.Popen(argv, env=env)
            # `kill` (SIGTERM) must clean up like ^C does: no orphaned sandbox or server.
            previous = signal.signal(signal.SIGTERM, _interrupt)
            try:
                return lab.wait()
            except KeyboardInterrupt:
                # One ^C ends both: Jupyter shuts its kernels down cleanly on SIGTERM.
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
