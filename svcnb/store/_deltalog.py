"""The Delta logs of a store's tables, read commit by commit to name one that is damaged.

deltalake reads an empty commit, or one whose lines hold no action it knows, as a commit that
changes nothing, without a word: the catalog would list fewer snapshots than were published, a
journal table would lack the record the commit added. So svcnb reads the commit files
themselves, and every table reports such a commit alike (:func:`damaged_error`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from ._fs import Location
from ._layout import DamagedCommitError

LOG = "_delta_log"
# the actions of a commit that creates a table (and changes no file)
CREATE = {"metaData", "protocol"}
# the actions by which a commit changes what a table holds
_CHANGES = {"add", "remove", *CREATE}


@dataclass(frozen=True)
class Damage:
    """A commit of a table's log that is not one svcnb (or deltalake) wrote: its file's path
    (inside the store's file system), its version, what is wrong, and whether it is the
    latest commit (the one a power cut tears)."""

    path: str
    version: int
    problem: str
    latest: bool


def log_folder(loc: Location, table: str) -> str:
    return f"{loc.root}/{table}/{LOG}"


def commit_path(loc: Location, table: str, version: int) -> str:
    return f"{log_folder(loc, table)}/{version:020d}.json"


def parse_commit(data: bytes) -> tuple[str | None, list[dict[str, Any]]]:
    """(what is wrong with the commit or None, its actions)."""
    if not data:
        return "is empty (0 bytes)", []
    actions = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except ValueError:  # UnicodeDecodeError too
            return f"is not a Delta commit (line {number} is not JSON)", []
        if not isinstance(action, dict):
            return f"is not a Delta commit (line {number} is not an action)", []
        actions.append(action)
    if not actions:
        return "holds no action", []
    return None, actions


def change_problem(data: bytes) -> str | None:
    """What is wrong with a commit of a table whose every commit changes it (the journal's: each
    adds a file; deltalake's create: the schema), or None: not a Delta commit, or one that
    changes nothing, such as what is left of a commit torn after its first line."""
    problem, actions = parse_commit(data)
    if problem:
        return problem
    kinds = {kind for action in actions for kind in action}
    if kinds & _CHANGES:
        return None
    return f"changes nothing (it holds only {', '.join(sorted(kinds))})"


def first_line(exc: BaseException) -> str:
    # deltalake's messages go on with a Rust backtrace of "<unknown>" frames
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def damaged_commit(loc: Location, table: str) -> Damage | None:
    """The newest commit of ``table`` that is empty or not JSON, among those a reader replays
    (after the latest checkpoint)."""
    folder = log_folder(loc, table)
    try:
        infos = loc.fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
    except (OSError, pa.ArrowException):
        return None
    commits, checkpoints = [], []
    for info in infos:
        head, _, tail = info.base_name.partition(".")
        if head.isdigit() and tail == "json":
            commits.append(int(head))
        elif head.isdigit() and tail.startswith("checkpoint"):
            checkpoints.append(int(head))
    floor = max(checkpoints, default=-1)
    commits.sort()
    for version in reversed(commits):
        if version <= floor:
            break
        path = commit_path(loc, table, version)
        try:
            problem, _ = parse_commit(loc.read_bytes(path))
        except (OSError, pa.ArrowException) as exc:
            problem = f"cannot be read ({first_line(exc)})"
        if problem:
            return Damage(path, version, problem, version == commits[-1])
    return None


def move_aside(loc: Location, table: str, damage: Damage) -> str:
    """The command that moves the commit of ``damage`` out of its log, into its table's folder
    as ``<name>.damaged`` (no Delta reader looks at it there, and it is kept for whoever wants
    to see what it held)."""
    source = loc.url_of(damage.path)
    target = f"{loc.table_url(table)}/{damage.path.rpartition('/')[2]}.damaged"
    tool = {"s3": "aws s3 mv", "gs": "gsutil mv"}.get(loc.url.partition("://")[0], "mv")
    if not loc.local and tool == "mv":
        return f"move the object {source} to {target}"
    return f"`{tool} {source} {target}`"


def damaged_error(
    loc: Location, table: str, damage: Damage, subject: str, consequence: str, repair: str
) -> DamagedCommitError:
    """The one error for a damaged commit of any table of the store: ``subject`` (which table,
    and what it cannot do), the commit and what is wrong with it, ``consequence`` (what that does
    to the table) and ``repair`` (what to do), in one line."""
    where = loc.url_of(damage.path)
    return DamagedCommitError(
        f"{subject}: its commit {where} {damage.problem}. {consequence}. {repair}.",
        path=where,
        table=loc.table_url(table),
        problem=damage.problem,
    )
