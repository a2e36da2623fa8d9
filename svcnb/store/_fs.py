"""Where a store lives: a local folder or an object-storage URL, and its files.

Files are written once under names no other writer uses and never changed, so a file a snapshot
needs is either there whole or was never published. Credentials: docs/contracts.md §5.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

# An S3 file (a few kB to a few MB) is one PUT when it is closed, where pyarrow otherwise starts
# a multipart upload for it: three requests. Errors, a missing bucket too, still come from the
# write, when write_parquet closes the stream. (_with_options sets the same when it builds one.)
_ONE_PUT = "allow_delayed_open=true"
_REMOTE = ("s3://", "s3a://", "gs://", "gcs://", "az://", "abfs://", "abfss://")


def is_remote(url: str) -> bool:
    return url.startswith(_REMOTE)


# a Parquet file's rows and size in bytes, as a Delta add states them
Facts = tuple[int, int]


@dataclass(frozen=True)
class Location:
    """A store's root: ``url`` as deltalake takes it, and the same place for pyarrow."""

    url: str
    fs: pafs.FileSystem = field(repr=False, compare=False)
    root: str  # the root inside ``fs``
    local: bool
    storage_options: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, where: str | os.PathLike[str], options: Mapping[str, str] | None) -> Location:
        text = os.fspath(where)
        opts = {str(k): str(v) for k, v in (options or {}).items()}
        if is_remote(text):
            url = text.rstrip("/")
            opts = _plain_http(url, opts)
            uri = url
            if url.startswith("s3://"):
                uri += ("&" if "?" in url else "?") + _ONE_PUT
            fs, root = pafs.FileSystem.from_uri(uri)
            return cls(url, _with_options(fs, url, opts), root.rstrip("/"), False, opts)
        path = Path(text).absolute()
        return cls(str(path), pafs.LocalFileSystem(), str(path), True, opts)

    def table_url(self, name: str) -> str:
        return f"{self.url}/{name}"

    def file(self, table: str, name: str) -> str:
        return f"{self.root}/{table}/{name}"

    def url_of(self, path: str) -> str:
        """``path`` (inside ``fs``) as a user names it: a local path, or a URL such as s3://."""
        if self.local or not path.startswith(self.root):
            return path
        return self.url + path[len(self.root) :]

    def read_bytes(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as stream:
            return stream.read()

    def exists(self, path: str) -> bool:
        """Whether a file is at ``path``: on object storage one request (HEAD), where
        ``get_file_info`` asks a second time, for a folder of that name, when there is none."""
        if self.local:
            return self.fs.get_file_info(path).type != pafs.FileType.NotFound
        try:
            self.fs.open_input_file(path).close()
        except FileNotFoundError:
            return False
        return True

    def write_parquet(self, path: str, table: pa.Table, **options: Any) -> Facts:
        """Write ``table`` to ``path`` durably; returns its rows and size in bytes."""
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, **options)
        data = sink.getvalue()
        if self.local:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        else:
            with self.fs.open_output_stream(path) as out:
                out.write(data)
        return table.num_rows, data.size

    def read_parquet(
        self, path: str, threads: bool = False, columns: Collection[str] | None = None
    ) -> pa.Table:
        """The table at ``path``; with ``columns``, only those of them it holds, in its order."""
        # a memory map skips pyarrow's file system lookup, a large share of a small local read
        source = pa.memory_map(path) if self.local else self.fs.open_input_file(path)
        with source:
            parquet = pq.ParquetFile(source)
            names = None
            if columns is not None:
                names = [n for n in parquet.schema_arrow.names if n in columns]
            return parquet.read(columns=names, use_threads=threads)

    def parquet_facts(self, path: str) -> Facts:
        """Rows and size in bytes of the Parquet file at ``path``, from one open of it (on
        object storage: the open's HEAD gives the size, one ranged read the footer)."""
        source = pa.memory_map(path) if self.local else self.fs.open_input_file(path)
        with source:
            return pq.ParquetFile(source).metadata.num_rows, source.size()

    def size(self, path: str) -> int:
        return self.fs.get_file_info(path).size or 0

    def list_files(self, table: str) -> list[str]:
        """Names of the data files directly in ``table`` (its log left out)."""
        folder = f"{self.root}/{table}"
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        except (OSError, pa.ArrowException):
            return []
        return [i.base_name for i in infos if i.type == pafs.FileType.File]

    def list_data_files(self, table: str) -> list[str]:
        """Names of the data files of ``table`` relative to it: those at its root and those in
        its account partition folders (``account=NAME/file``)."""
        folder = f"{self.root}/{table}"
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        except (OSError, pa.ArrowException):
            return []
        out = [i.base_name for i in infos if i.type == pafs.FileType.File]
        for info in infos:
            if info.type == pafs.FileType.Directory and info.base_name.startswith("account="):
                inner = self.list_files(f"{table}/{info.base_name}")
                out += [f"{info.base_name}/{name}" for name in inner]
        return out

    def delete(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_file(path)


_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _plain_http(url: str, opts: dict[str, str]) -> dict[str, str]:
    """``opts`` with ``AWS_ALLOW_HTTP`` for an ``s3://`` store whose endpoint is an ``http://``
    server on this machine (MinIO, a test server): deltalake refuses plain HTTP unless told,
    and its refusal reads "builder error". An ``http://`` endpoint elsewhere would carry the
    credentials unencrypted over the network: ConfigError saying so, unless
    ``AWS_ALLOW_HTTP`` (environment or ``storage_options``) already decides."""
    if not url.startswith(("s3://", "s3a://")):
        return opts
    lower = {k.lower(): v for k, v in opts.items()}
    if "aws_allow_http" in lower or "allow_http" in lower or "AWS_ALLOW_HTTP" in os.environ:
        return opts
    endpoint = (
        lower.get("aws_endpoint_url")
        or lower.get("endpoint_url")
        or lower.get("aws_endpoint")
        or os.environ.get("AWS_ENDPOINT_URL_S3")
        or os.environ.get("AWS_ENDPOINT_URL")
        or ""
    )
    if not endpoint.lower().startswith("http://"):
        return opts
    host = urlsplit(endpoint).hostname or ""
    if host in _LOOPBACK:
        return {**opts, "AWS_ALLOW_HTTP": "true"}
    from svcnb.config import ConfigError

    raise ConfigError(
        f"the S3 endpoint of {url} is plain http:// on {host}, which would carry the "
        "credentials unencrypted; use https://, or set AWS_ALLOW_HTTP=true to allow it"
    )


def _with_options(fs: pafs.FileSystem, url: str, opts: Mapping[str, str]) -> pafs.FileSystem:
    """The S3 file system of a store: it honours the deltalake options given in code (the
    environment is read by pyarrow itself), and writes each file in one request."""
    if not isinstance(fs, pafs.S3FileSystem) or not opts:
        return fs
    lower = {k.lower(): v for k, v in opts.items()}
    kwargs: dict[str, Any] = {}
    endpoint = lower.get("aws_endpoint_url") or lower.get("endpoint_url")
    if endpoint:
        scheme, _, rest = endpoint.partition("://")
        kwargs["endpoint_override"] = rest or scheme
        kwargs["scheme"] = scheme if rest else "https"
    if lower.get("aws_access_key_id"):
        kwargs["access_key"] = lower["aws_access_key_id"]
        kwargs["secret_key"] = lower.get("aws_secret_access_key")
        if lower.get("aws_session_token"):
            kwargs["session_token"] = lower["aws_session_token"]
    if lower.get("aws_region"):
        kwargs["region"] = lower["aws_region"]
    return pafs.S3FileSystem(allow_delayed_open=True, **kwargs) if kwargs else fs
