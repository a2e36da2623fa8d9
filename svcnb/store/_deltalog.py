"""The Delta logs of a store's tables, read commit by commit to name one that is damaged.

deltalake reads an empty commit, or one whose lines hold no action it knows, as a commit that
changes nothing: the table then looks as it was one version earlier, without a word. A catalog
read that way lists fewer snapshots than were published, and the next writer would publish over
them. So svcnb looks at the commit files themselves: to check the catalog's latest commit on
each read that finds the table moved, and to name the commit when deltalake cannot read a log.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from ._fs import Location

LOG = "_delta_log"


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


def first_line(exc: BaseException) -> str:
    # deltalake's messages go on with a Rust backtrace of "<unknown>" frames
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def damaged_commit(loc: Location, table: str) -> tuple[str, str, bool] | None:
    """The newest commit of ``table`` that is empty or not JSON, among those a reader replays
    (after the latest checkpoint): (its path, what is wrong, whether it is the latest)."""
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
            return path, problem, version == commits[-1]
    return None
