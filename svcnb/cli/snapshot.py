"""``svcnb snapshot [--store PATH] [--account NAME | --all]``: one snapshot of an account (or of
every account of the config file, in parallel) into the store.

The server is the one configured, never a sandbox started for the occasion: a throwaway account
must not enter a real history. Exit codes and ``--accept-gap``: README, "Alerts"; with ``--all``
each account lands or fails on its own (README, "Several accounts").
"""

from __future__ import annotations

import argparse
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pandas as pd

from svcnb.cli import _common
from svcnb.config import ConfigError
from svcnb.errors import SvcnbError
from svcnb.store import OriginError, Store, reason_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _common.add_store_option(parser, ", to write the snapshot to")
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--account",
        default=None,
        metavar="NAME",
        help="the account [accounts.NAME] of the config file to pull (default: the server "
        "SVC_BASE_URL/SVC_API_KEY name), e.g. --account prod",
    )
    which.add_argument(
        "--all",
        action="store_true",
        help="pull every account of the config file at once, one client (one rate budget) per "
        "token, into the store partitioned by account",
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="for cron: no progress bar, and on stdout only what changed since the last "
        "snapshot (nothing when nothing did); gaps, errors and warnings still on stderr",
    )
    parser.add_argument(
        "--accept-gap",
        action="append",
        default=[],
        type=_resources,
        metavar="RESOURCE",
        help="a resource whose gap (not read, or not proven whole) is known and accepted: said "
        "in one line, and exit 0 when it is the only gap (repeat, or comma-separate: "
        "--accept-gap deliveries,webhooks); the config file's accept_gaps lists, in [snapshot] "
        "and [accounts.NAME], add theirs",
    )
    parser.add_argument(
        "--allow-older",
        action="store_true",
        help="store the snapshot even if the server's time is earlier than the latest one's",
    )


def _resources(text: str) -> frozenset[str]:
    from svcnb.store import RESOURCES

    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    unknown = sorted(names - set(RESOURCES))
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown) or repr(text)} is no resource; the resources: "
            f"{', '.join(RESOURCES)}"
        )
    return names


# the exit code when the snapshot was stored but some resource could not be read
INCOMPLETE = 3


# the exit code when no server is configured
NOT_CONFIGURED = 2

# the exit code when nothing could be stored (with --all: when some account failed)
FAILED = 1


@dataclass
class Outcome:
    """What one account's snapshot came to: its id, or why it failed, and what it missed."""

    account: str | None
    code: int = 0
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)


def _said_here(record: logging.LogRecord) -> bool:
    """The store's log line for a resource not read: this command says it (with the reason, or
    as an accepted gap) in its own lines, so the log's copy is dropped."""
    return "recorded as missing" not in record.getMessage()


def run(args: argparse.Namespace) -> int:
    store_log = logging.getLogger("svcnb.store")
    store_log.addFilter(_said_here)
    try:
        return _run(args)
    finally:
        store_log.removeFilter(_said_here)


def _run(args: argparse.Namespace) -> int:
    allow_older = getattr(args, "allow_older", False)
    accepted = frozenset().union(*getattr(args, "accept_gap", []))
    quiet = getattr(args, "quiet", False)
    if getattr(args, "all", False):
        return _run_all(args.store, allow_older, accepted, quiet)
    name = getattr(args, "account", None)
    outcome = _one(
        args.store, name, not quiet, allow_older, prefix="", accepted=accepted, quiet=quiet
    )
    for line in outcome.out:
        print(line)
    for line in outcome.err:
        print(line, file=sys.stderr)
    return outcome.code


def _run_all(
    where: str | None,
    allow_older: bool,
    accepted: frozenset[str] = frozenset(),
    quiet: bool = False,
) -> int:
    try:
        names = _common.account_names()
    except ConfigError as exc:
        return _common.fail("snapshot", str(exc), NOT_CONFIGURED)
    # threads, not processes: the time goes in waiting on the servers; progress bars of several
    # threads would interleave, so none
    with ThreadPoolExecutor(len(names), thread_name_prefix="svcnb-snapshot") as pool:
        outcomes = list(
            pool.map(lambda n: _contained(where, n, allow_older, accepted, quiet), names)
        )
    for outcome in outcomes:
        for line in outcome.out:
            print(line)
        for line in outcome.err:
            print(line, file=sys.stderr)
    failed = [o.account for o in outcomes if o.code not in (0, INCOMPLETE)]
    incomplete = [o.account for o in outcomes if o.code == INCOMPLETE]
    if failed:
        stored = (
            "no account was stored" if len(failed) == len(outcomes) else "the others are stored"
        )
        print(
            f"svcnb snapshot: {len(failed)} of {len(outcomes)} account(s) failed "
            f"({', '.join(map(str, failed))}); {stored}",
            file=sys.stderr,
        )
        return FAILED
    return INCOMPLETE if incomplete else 0


def _contained(
    where: str | None,
    name: str,
    allow_older: bool,
    accepted: frozenset[str] = frozenset(),
    quiet: bool = False,
) -> Outcome:
    """One account's snapshot among several: whatever it raises is that account's line, so the
    others still land and print theirs (pool.map would re-raise it and drop every line)."""
    try:
        return _one(
            where, name, False, allow_older, prefix=f"{name}: ", accepted=accepted, quiet=quiet
        )
    except Exception as exc:
        outcome = Outcome(name, FAILED)
        outcome.err.append(
            f"svcnb snapshot: {name}: failed on what its service answered "
            f"({reason_of(exc)[:300]}); no snapshot of it was published. svcnb could not read "
            f"that answer: run `svcnb snapshot --account {name}` for the details, and report it"
        )
        return outcome


def _new_sandbox(exc: OriginError, sandbox_file: object, store: Store) -> str:
    """The store's refusal said as what it means on a sandbox: this is a new one (a restart
    without its saved state: another port, a clock that starts again, another account)."""
    seen = {
        "server": f"it answers at {exc.given}, the stored history's at {exc.held}",
        "account": f"its account is {exc.given}, the stored history's {exc.held}",
        "time": f"its clock reads {exc.given}, before the latest stored snapshot ({exc.held})",
    }[exc.what]
    return (
        f"SVCNB_SANDBOX={sandbox_file} names a new sandbox, not the one whose history "
        f"{store.path} holds ({seen}). Restart that one with `svcnb sandbox --state-file FILE` "
        "(its saved account, on its port), or give this one another store (--store PATH)"
    )


def _pinned_lines(client: object, prefix: str) -> list[str]:
    """Lists complete only by a pinned assumption: complete, and said so (``pinned``)."""
    relied = getattr(client, "relied_on", None)
    return [
        f"{prefix}lists complete as pinned, not proven: {name} pinned by {where}"
        for name, where in (relied if isinstance(relied, dict) else {}).items()
    ]


def _one(
    where: str | None,
    name: str | None,
    progress: bool,
    allow_older: bool,
    prefix: str,
    accepted: frozenset[str] = frozenset(),
    quiet: bool = False,
) -> Outcome:
    """One account's snapshot; never raises for what the user can fix (the message says)."""
    outcome = Outcome(name)
    try:
        configured = _configured_gaps(name)
        client = _common.client(name, progress=progress)
    except ConfigError as exc:
        outcome.err.append(f"svcnb snapshot: {prefix}{exc}")
        outcome.code = NOT_CONFIGURED
        return outcome
    store: Store | None = None
    try:
        with client:
            # a Store per account (and so per thread): its catalog reader keeps state of its own
            store = Store(where, account=name)
            snapshot_id = store.take(client, allow_older=allow_older)
    except ConfigError as exc:  # the store's place cannot be used as configured
        outcome.err.append(f"svcnb snapshot: {prefix}{exc}")
        outcome.code = NOT_CONFIGURED
        return outcome
    except (SvcnbError, OSError) as exc:
        sandbox_file = _common.sandbox_connection_file() if name is None else None
        # a store refuses a new origin in take(), never while it opens
        if isinstance(exc, OriginError) and sandbox_file is not None and store is not None:
            outcome.err.append(f"svcnb snapshot: {prefix}{_new_sandbox(exc, sandbox_file, store)}")
        else:
            outcome.err.append(f"svcnb snapshot: {prefix}{exc}")
        outcome.code = FAILED
        return outcome
    snaps = store.snapshots()
    row = snaps[(snaps["snapshot_id"] == snapshot_id).to_numpy(dtype=bool)].iloc[0]
    # what changed: the one line a quiet run prints (a diff per resource, so only then)
    changed = _changes(store, snaps, snapshot_id) if quiet else ""
    counts = ", ".join(
        f"{int(row[f'{r}_rows'])} {r.replace('_', ' ')}"
        for r in ("vms", "firewall_rules", "networks", "webhooks", "deliveries")
        if not pd.isna(row[f"{r}_rows"])
    )
    if not quiet:
        outcome.out.append(
            f"{prefix}snapshot {snapshot_id} in {store.path} (server time "
            f"{row['server_time']}): {counts}"
        )
    if changed:
        outcome.out.append(f"{prefix}{changed}")
    if row["unreadable"]:
        # a value svcnb could not read is a gap to see, quiet or not
        (outcome.err if quiet else outcome.out).append(
            f"{prefix}values svcnb could not read (kept as NA): {row['unreadable']}"
        )
    if not quiet:
        outcome.out.extend(_pinned_lines(client, prefix))
    status = store.resources(snapshot_id)
    known = status["resource"].isin(accepted | configured).to_numpy(dtype=bool)
    for gap in status[known & (status["status"] != "ok").to_numpy(dtype=bool)].itertuples():
        what = "not read" if gap.status == "missing" else "may be incomplete"
        source = "--accept-gap" if gap.resource in accepted else "accept_gaps, config file"
        outcome.err.append(
            f"svcnb snapshot: {prefix}accepted gap ({source}): {gap.resource}: {what}: "
            + " ".join(str(gap.reason).split())
        )
    status = status[~known]
    missing = status.query("status == 'missing'")
    doubted = status.query("status == 'incomplete'")
    if not missing.empty:
        outcome.err.append(
            f"svcnb snapshot: {prefix}incomplete, {len(missing)} resource(s) could not be read "
            "and are recorded as missing (not as empty):"
        )
        for resource, why in zip(missing["resource"], missing["reason"], strict=True):
            outcome.err.append(f"  {prefix}{resource}: {why}")
    if not doubted.empty:
        outcome.err.append(
            f"svcnb snapshot: {prefix}incomplete, {len(doubted)} resource(s) were stored although "
            "nothing the service said proved their lists whole (reports from them say "
            "complete=False):"
        )
        for resource, why in zip(doubted["resource"], doubted["reason"], strict=True):
            outcome.err.append(f"  {prefix}{resource}: may be incomplete: {why}")
    if not missing.empty or not doubted.empty:
        outcome.code = INCOMPLETE
    return outcome


def _configured_gaps(name: str | None) -> frozenset[str]:
    """The config file's ``accept_gaps`` for this account (``[snapshot]`` and
    ``[accounts.NAME]``), each a resource name (ConfigError naming the one that is not)."""
    from svcnb.config import accepted_gaps

    names = accepted_gaps(name)
    try:
        return _resources(",".join(names)) if names else frozenset()
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(f"accept_gaps in the config file: {exc}") from None


# what a change line names per resource, in this order
_CHANGED = ("vms", "firewall_rules", "networks", "webhooks", "wallet")


def _changes(store: Store, snaps: pd.DataFrame, snapshot_id: str) -> str:
    """What changed since the snapshot before ``snapshot_id`` (``""``: nothing, or no snapshot
    before it): rows added, removed and changed per resource, with the columns that changed,
    so a cron mail says what moved and nothing when nothing did."""
    from svcnb.store import MissingResourceError

    order = snaps.sort_values("server_time", kind="stable")["snapshot_id"].tolist()
    at = order.index(snapshot_id)
    if at == 0:
        return ""
    before = order[at - 1]
    parts = []
    for resource in _CHANGED:
        try:
            diff = store.diff(resource, before, snapshot_id)  # type: ignore[arg-type]
        except MissingResourceError:
            continue  # said as a gap on stderr
        if diff.empty:
            continue
        counts = diff.drop_duplicates(
            subset=[c for c in diff.columns if c not in ("column", "before", "after")]
        )["change"].value_counts()
        said = [f"{int(counts[c])} {c}" for c in ("added", "removed", "changed") if c in counts]
        columns = diff["column"].dropna().value_counts()
        if len(columns):
            said[-1] += " (" + ", ".join(f"{c} ×{n}" for c, n in columns.head(4).items()) + ")"
        parts.append(f"{resource.replace('_', ' ')} {', '.join(said)}")
    if not parts:
        return ""
    return f"changed since {before}: " + "; ".join(parts)
