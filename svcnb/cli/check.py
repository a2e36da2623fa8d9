"""``svcnb check``: evaluate the ``[alerts]`` rules on the store's latest snapshot, for cron.

What fires, when, and the deadline: README, "Alerts". The deadline covers every attempt and wait
of delivery, so a receiver that trickles its answer cannot keep one cron run going into the next.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Mapping
from functools import partial
from typing import Any

from svcnb.cli._common import ACCOUNT_HELP, EVERY_ACCOUNT, add_store_option, each_account, fail

EXAMPLE = """examples:
  svcnb check                                # after `svcnb snapshot`, from cron
  svcnb check --no-deliver                   # print only
  SVCNB_ALERT_URL=https://hooks.slack.com/services/... svcnb check --deliver

config file ([alerts] section; a rule set to false is off):
  [alerts]
  runway_days = 14            # runway under N days
  low_balance_days = 7        # low-balance forecast within N days
  bandwidth_days = 3          # a VM passes its bandwidth pack within N days
  webhook_failures_left = 10  # an active subscription within K failures of auto-disable
  high_findings = true        # a high-severity firewall finding
  url = "https://..."         # or $SVCNB_ALERT_URL (which wins)
  ca_bundle = "ca.pem"        # trust only this CA (a self-signed receiver)
  attempts = 4                # delivery attempts; waits backoff_seconds x 2^n between
  backoff_seconds = 1.0
  timeout_seconds = 10.0      # each step of one attempt (connect, send, each read)
  deadline_seconds = 60       # the whole run, delivery included (or --deadline)"""

FIRED = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXAMPLE
    add_store_option(parser, ", to check")
    parser.add_argument(
        "--account",
        metavar="NAME",
        help=ACCOUNT_HELP.format(what="check"),
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="config file with the [alerts] section (default: $SVCNB_CONFIG, then "
        "~/.config/svcnb/config.toml)",
    )
    parser.add_argument(
        "--deliver",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="send fired alerts to the HTTPS URL (default: when [alerts] url or "
        "$SVCNB_ALERT_URL is set)",
    )
    parser.add_argument(
        "--deadline",
        type=_seconds,
        metavar="SECONDS",
        help="end the run, delivery included, within this many seconds (default: [alerts] "
        "deadline_seconds, else 60)",
    )
    parser.add_argument(
        "--ca-bundle",
        metavar="PEM",
        help="trust only the CAs in this file for delivery (default: [alerts] ca_bundle, else "
        "the system's)",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 1 <= value <= 86_400:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 1 to 86400")
    return value


# one line on stderr naming the command, and the exit code to end with
_fail = partial(fail, "check")


def run(args: argparse.Namespace) -> int:
    if args.account == EVERY_ACCOUNT:
        return each_account("check", args, run)
    from dataclasses import replace

    started = time.monotonic()  # the run's deadline counts from here

    from svcnb.alerts import DeliveryError, check, check_url, deliver, rules_from_config
    from svcnb.config import ConfigError
    from svcnb.store import Store, StoreError, check_readable

    try:
        rules = rules_from_config(args.config)
        if args.ca_bundle:
            rules = replace(rules, ca_bundle=args.ca_bundle)
        if args.deadline is not None:
            rules = replace(rules, deadline_seconds=args.deadline)
        sending = bool(rules.url) if args.deliver is None else args.deliver
        if sending and not rules.url:
            raise ConfigError(
                "--deliver needs a URL: set [alerts] url in the config file or $SVCNB_ALERT_URL"
            )
        if sending:
            check_url(rules.url or "")
    except ConfigError as exc:
        return _fail(str(exc))
    store = Store(args.store, account=args.account)
    try:
        check_readable(store, args.store, args.account)
    except StoreError as exc:
        return _fail(str(exc))
    if store.snapshots().empty:
        return _fail(f"the store at {store.path} holds no snapshot; take one with `svcnb snapshot`")

    def send(body: Mapping[str, Any]) -> int:
        return deliver(
            rules.url or "",
            body,
            ca_bundle=rules.ca_bundle,
            attempts=rules.attempts,
            backoff_seconds=rules.backoff_seconds,
            timeout_seconds=rules.timeout_seconds,
            deadline=started + rules.deadline_seconds,
        )

    try:
        result = check(store, rules, send=send if sending else None)
    except ConfigError as exc:
        return _fail(str(exc))
    except StoreError as exc:
        return _fail(str(exc))
    except DeliveryError as exc:
        # what fired is still worth a look in the cron mail; nothing was recorded
        print(f"svcnb check: {exc}", file=sys.stderr)
        print(exc.result.text())  # type: ignore[attr-defined]
        return FIRED
    print(result.text())
    if result.delivered_attempts:
        from svcnb.alerts import endpoint_label

        print(
            f"delivered to {endpoint_label(rules.url or '')} (attempt {result.delivered_attempts})"
        )
    return result.exit_code
