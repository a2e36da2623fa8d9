"""``svcnb listen``: run the verifying webhook receiver over HTTPS in the foreground.

The subscription secret never comes from the command line (``--secret-file`` or
``SVCNB_WEBHOOK_SECRET``): there any local user could read it in the process list, and it would
land in shell history.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from svcnb.cli._common import add_store_option
from svcnb.store import is_remote, resolve_path, resolve_url
from svcnb.webhooks import (
    DEFAULT_TOLERANCE,
    Receiver,
    RunningReceiver,
    bind,
    uvicorn_server,
)

__all__ = ["SECRET_ENV", "add_arguments", "run"]

SECRET_ENV = "SVCNB_WEBHOOK_SECRET"


class _RefuseSecret(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(
            f"the secret is never taken from the command line (it would show in the process list "
            f"and shell history); set {SECRET_ENV} or pass --secret-file PATH"
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # no prefix matching: "--secret VALUE" must not be read as "--secret-file VALUE"
    parser.allow_abbrev = False
    parser.add_argument("--port", type=int, required=True, help="port to listen on (0: any free)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--cert", required=True, help="TLS certificate (chain) PEM file")
    parser.add_argument("--key", required=True, help="TLS private key PEM file")
    add_store_option(parser, ", which keeps the event log", local_only=True)
    parser.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE,
        help="seconds after which an event's signed createdAt marks it as a possible replay",
    )
    parser.add_argument(
        "--secret-file",
        default=None,
        help=f"file holding the subscription secret (default: ${SECRET_ENV})",
    )
    parser.add_argument("--secret", nargs="?", action=_RefuseSecret, help=argparse.SUPPRESS)
    parser.add_argument(
        "--sandbox-clock",
        metavar="CONTROL_URL",
        default=None,
        help="follow this sandbox's simulated clock (e.g. http://127.0.0.1:PORT/_sandbox) "
        "instead of the machine's clock when judging event age",
    )


def _read_secret(secret_file: str | None) -> str:
    if secret_file is not None:
        try:
            secret = Path(secret_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ValueError(f"cannot read --secret-file {secret_file!r}: {exc.strerror}") from None
        if not secret:
            raise ValueError(f"--secret-file {secret_file!r} is empty; put the secret in it")
        return secret
    secret = os.environ.get(SECRET_ENV, "").strip()
    if not secret:
        raise ValueError(
            f"no webhook secret: set {SECRET_ENV} or pass --secret-file PATH (the secret is never "
            "taken from the command line)"
        )
    return secret


def run(args: argparse.Namespace) -> int:
    where = resolve_url(args.store or None)
    if is_remote(where):
        # Path("s3://b/x") is the local folder "s3:/b/x": events would land beside the cwd
        print(
            f"svcnb listen: the webhook event log is kept in a local folder, and {where} is on "
            "object storage; give --store (or $SVCNB_STORE) a folder on this machine",
            file=sys.stderr,
        )
        return 2
    store = resolve_path(where)
    clock = None
    try:
        secret = _read_secret(args.secret_file)
        if args.tolerance < 0:
            raise ValueError(f"--tolerance must be >= 0 seconds, got {args.tolerance:g}")
        if args.sandbox_clock:
            # the command joins the two sides, as connect() does; the receiver takes any clock
            from svcnb.sandbox import SandboxClock

            clock = SandboxClock(args.sandbox_clock)
        receiver = Receiver(secret, store, tolerance=args.tolerance, clock=clock)
        server = uvicorn_server(receiver, args.cert, args.key)
        sock = bind(args.host, args.port)
    except (ValueError, OSError) as exc:
        print(f"svcnb listen: {exc}", file=sys.stderr)
        if clock is not None:
            clock.close()
        return 2
    running = RunningReceiver(receiver, args.host, sock.getsockname()[1])
    print(
        f"svcnb listen: receiving webhooks at {running.url}, logging to "
        f"{receiver.log.path} (Ctrl-C stops)",
        flush=True,
    )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if clock is not None:
            clock.close()
    return 0
