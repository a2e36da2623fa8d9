"""Files that hold a secret or come from elsewhere: one writer, one reader, one way to show their
text (docs/contracts.md §2).

Why each step: :func:`write` creates its temporary file with ``O_EXCL | O_NOFOLLOW`` in the
target's own folder, so a name planted in a shared folder, or a link there, is never written
through, and renames it over the target, so a reader sees the old file or the new, never half.
:func:`read` takes only a regular file because a FIFO would wait for ever and a link to
``/dev/zero`` would fill the memory. :func:`shown` escapes control characters so that a file's or
a service's text is never acted on by the terminal nor read as a line of svcnb's own. Refusals
are :class:`RefusedFile`, an ``OSError``, so every caller's handling of unreadable or unwritable
files applies.

Standard library only, and of svcnb only ``svcnb.errors``: the sandbox, which imports nothing
else of svcnb, writes its connection file and reads its dialect file here too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any

from svcnb.errors import RefusedFile

__all__ = ["RefusedFile", "read", "shown", "write"]

# what a file from elsewhere may weigh unless its reader says otherwise: far above any file
# svcnb writes (a dialect file is a few KiB), far below what hurts to hold in memory
DEFAULT_LIMIT = 1 << 20
# seconds a read may take: a local file of DEFAULT_LIMIT reads in milliseconds
DEFAULT_DEADLINE = 2.0
_CHUNK = 64 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)


def write(
    path: str | os.PathLike[str],
    data: bytes | str,
    *,
    secret: bool,
    follow_link: bool = False,
    keep_mode: bool = False,
    make_folder: bool = False,
) -> Path:
    """Write ``data`` (text is UTF-8) to ``path`` at once; returns the file written.

    ``secret``: the file is readable by its owner only (mode 0600), whatever the umask; else
    the umask decides, as for any file a program makes. ``follow_link``: a target that is a
    symbolic link is followed (the file it points to is replaced and the link kept); without
    it such a target is a :class:`RefusedFile` and nothing is written. ``keep_mode``: a file
    that exists keeps its mode (a config made private stays private). ``make_folder``: folders
    that do not exist are made, readable by their owner only (else a missing folder is
    ``FileNotFoundError``, as for any file written there).
    """
    target = Path(path)
    if target.is_symlink():
        if not follow_link:
            raise RefusedFile(
                errno.ELOOP,
                "is a symbolic link; name the file itself, or say the link is to be followed",
                str(target),
            )
        target = Path(os.path.realpath(target))
    body = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    folder = target.parent
    if make_folder:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    mode = 0o600 if secret else None
    if keep_mode:
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(os.stat(target).st_mode)
    fd, tmp = _temporary(folder, target.name, 0o600 if secret else 0o666)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(body)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise _named(exc, target) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_folder(folder)
    return target


def _temporary(folder: Path, name: str, mode: int) -> tuple[int, Path]:
    """A new file of a random name in ``folder``, open for writing: made here (``O_EXCL``),
    never an existing file nor a link someone planted at the name (``O_NOFOLLOW``)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    for _ in range(16):
        tmp = folder / f".{name[:64]}.{secrets.token_hex(8)}.tmp"
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
        except OSError as exc:  # named by the file the user asked for, not the temporary
            raise _named(exc, folder / name) from None
    raise FileExistsError(errno.EEXIST, "no free temporary name beside it", str(folder / name))


def _named(exc: OSError, target: Path) -> OSError:
    """``exc`` as the same kind of error, naming ``target``."""
    return type(exc)(exc.errno, exc.strerror or str(exc), str(target))


def _sync_folder(folder: Path) -> None:
    """The rename itself to disk (best effort: not every system opens folders)."""
    try:
        fd = os.open(folder, os.O_RDONLY | _CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read(
    path: str | os.PathLike[str],
    *,
    limit: int = DEFAULT_LIMIT,
    deadline: float = DEFAULT_DEADLINE,
) -> bytes:
    """The bytes of the regular file ``path`` (a link to one is followed: the user named it).

    :class:`RefusedFile` when it is not a regular file (a FIFO, a device, a folder, a socket),
    holds more than ``limit`` bytes, or is not read within ``deadline`` seconds (checked
    between chunks); ``FileNotFoundError`` and other ``OSError`` as ``open`` gives them.
    """
    # O_NONBLOCK: a FIFO opens at once (fstat then refuses it) instead of waiting for a writer
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | _NOCTTY | _CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RefusedFile(
                errno.EINVAL,
                f"is not a regular file ({_kind(info.st_mode)}); give a file",
                os.fspath(path),
            )
        if info.st_size > limit:
            raise _too_large(path, limit)
        ends = time.monotonic() + deadline
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > limit:  # it grew while read
                raise _too_large(path, limit)
            chunks.append(chunk)
            if time.monotonic() > ends:
                raise RefusedFile(
                    errno.ETIMEDOUT,
                    f"was not read within {deadline:g} s; copy it to a local disk",
                    os.fspath(path),
                )
    finally:
        os.close(fd)


def _too_large(path: str | os.PathLike[str], limit: int) -> RefusedFile:
    return RefusedFile(
        errno.EFBIG,
        f"is larger than {limit} bytes, more than any such file svcnb writes",
        os.fspath(path),
    )


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def shown(text: Any) -> str:
    """``text`` (``str()`` of anything) on one line with nothing a terminal acts on: each
    control character (C0 and C1, DEL), line or paragraph separator, and format character
    (bidirectional overrides, zero-width) is written as its escape, ``\\n``, ``\\x1b``,
    ``\\u202e``; every other character is kept."""
    said = str(text)
    if said.isprintable():
        return said
    return "".join(c if c.isprintable() or c == " " else _escaped(c) for c in said)


def _escaped(char: str) -> str:
    return char.encode("unicode_escape", "backslashreplace").decode("ascii")
