"""The token scanner of the leak tests: token-shaped strings (``TOKEN_RE``, with 20 or more
characters after ``svc_``) and known secrets, in text files and column by column in Parquet
files (their pages are compressed, so a byte search would miss a token in them)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from svcnb.client import TOKEN_PREFIX, TOKEN_RE

MIN_SECRET_CHARS = 20


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _parquet_text(path: Path) -> Iterator[str]:
    table = pq.read_table(path)
    yield from table.schema.names
    for key, value in (table.schema.metadata or {}).items():
        yield key.decode("utf-8", "replace")
        yield value.decode("utf-8", "replace")
    for column in table.columns:
        if pa.types.is_floating(column.type) or pa.types.is_integer(column.type):
            continue
        yield from _strings(column.to_pylist())


def _file_text(path: Path) -> Iterator[str]:
    if path.suffix == ".parquet":
        yield from _parquet_text(path)
    else:
        yield path.read_bytes().decode("utf-8", "replace")


def leaks(paths: Iterable[Path], secrets: Iterable[str] = ()) -> list[str]:
    """``path: what`` for every token-shaped string or known secret found in ``paths``."""
    secrets = [s for s in secrets if s]
    found = []
    for path in paths:
        for text in _file_text(path):
            for match in TOKEN_RE.finditer(text):
                if len(match.group()) < len(TOKEN_PREFIX) + MIN_SECRET_CHARS:
                    continue
                # Say where without repeating the secret: its first 8 characters are enough.
                found.append(f"{path}: token-shaped {match.group()[:8]}…")
            found += [f"{path}: a known sandbox secret" for s in secrets if s in text]
    return found


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
