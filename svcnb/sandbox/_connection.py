"""A sandbox's connection file: where it goes by default, how it is written, and whether the
sandbox it names is still the one answering there (docs/contracts.md §2).

``instance`` is drawn once per server process, so a reader can tell the sandbox that wrote the
file from a new one that took its port since: the new one has other tokens, and its account is
another account. Hence :func:`probe` is RUNNING only when ``GET /_sandbox/instance`` answers the
file's instance, and no token is sent before it does.

Only the standard library (and ``svcnb.files``, which is only that and the errors) here: the
client side (``svcnb._connect``) uses this module to judge a file without loading the server
stack.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

from svcnb import files as _files

ENV = "SVCNB_SANDBOX"

# what probe() finds at the address a connection file names
RUNNING = "running"  # the sandbox that wrote the file: proven by its instance
STOPPED = "stopped"  # nothing answers there
REPLACED = "replaced"  # another sandbox answers there (started since, with other tokens)
SILENT = "silent"  # something accepted the connection and said nothing within the bound
UNKNOWN = "unknown"  # something answers but does not prove it is the sandbox of the file
UNPROVEN = "unproven"  # the file names no instance (an older svcnb wrote it): nothing to prove

# how long the instance check may take in all, connecting included: a sandbox answers in
# milliseconds, and a program that holds the port without answering must not hold a command
PROBE_SECONDS = 2.0
# a connection file is a few hundred bytes
FILE_LIMIT = 64 * 1024
_ANSWER_LIMIT = 16 * 1024


def default_path() -> Path:
    """Where ``svcnb sandbox`` writes its connection file unless told (docs/contracts.md §2)."""
    named = os.environ.get(ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_STATE_HOME")
    return (Path(base) if base else Path.home() / ".local" / "state") / "svcnb" / "sandbox.json"


def write(info: dict, path: str | os.PathLike[str]) -> Path:
    """Write ``info`` to ``path`` as JSON through :func:`svcnb.files.write` (mode 0600, a
    private temporary of a random name, renamed into place); a ``path`` that is a symbolic
    link is refused (``svcnb.errors.RefusedFile``), never written through."""
    return _files.write(path, json.dumps(info, indent=2) + "\n", secret=True, make_folder=True)


def read(path: str | os.PathLike[str]) -> dict:
    """The connection file at ``path`` as a dict with at least ``base_url`` and
    ``tokens.admin``. OSError when it cannot be read (``svcnb.errors.RefusedFile`` when it is no
    regular file, too large, or too slow to read), ValueError when it is not such a file."""
    info = json.loads(_files.read(path, limit=FILE_LIMIT).decode("utf-8"))
    if not isinstance(info, dict) or not isinstance(info.get("tokens"), dict):
        raise ValueError("no tokens")
    if not isinstance(info.get("base_url"), str):
        raise ValueError("no base_url")
    if not isinstance(info["tokens"].get("admin"), str):
        raise ValueError("no tokens.admin")
    origin = _origin(info["base_url"])
    if origin is None:
        raise ValueError("base_url is not an http URL with a host")
    # the instance check asks the control URL: proving that server must prove the one the
    # tokens go to
    if "control_url" in info and _origin(info["control_url"]) != origin:
        raise ValueError("control_url names another server than base_url")
    return info


def _origin(url: object) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL; None for anything else."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80)


def control_url(info: dict) -> str:
    return str(info.get("control_url") or info["base_url"].rstrip("/") + "/_sandbox")


def probe(info: dict, timeout: float = PROBE_SECONDS) -> str:
    """Whether the sandbox ``info`` names answers, and is the one that wrote it: RUNNING only
    when ``GET /_sandbox/instance`` answers 200 with the file's ``instance`` within
    ``timeout`` seconds in all; else STOPPED (nothing listens), REPLACED (another sandbox),
    SILENT (no answer in time), UNPROVEN (the file names no instance) or UNKNOWN (any other
    answer). No token is sent."""
    try:
        url = urlsplit(control_url(info))
        port = url.port or 80
    except ValueError:  # "http://[::1", a port out of range: no address to ask
        return UNKNOWN
    if url.scheme != "http" or not url.hostname:
        return UNKNOWN
    try:
        status, body = _get(url.hostname, port, url.path.rstrip("/") + "/instance", timeout)
    except TimeoutError:
        return SILENT  # it accepted and said nothing: busy, hung, or not a sandbox at all
    except OSError:  # refused, reset, no route: nothing listens there any more
        return STOPPED
    except ValueError:  # not an HTTP answer
        return UNKNOWN
    if status != 200:
        return UNKNOWN
    try:
        found = json.loads(body)["data"]["instance"]
    except (ValueError, KeyError, TypeError):
        return UNKNOWN
    expected = info.get("instance")
    if not isinstance(found, str) or not found:
        return UNKNOWN
    if not isinstance(expected, str) or not expected:
        return UNPROVEN
    return RUNNING if found == expected else REPLACED


def _get(host: str, port: int, path: str, timeout: float) -> tuple[int, bytes]:
    """(status, body) of ``GET path`` over plain HTTP/1.0, the whole exchange within
    ``timeout`` seconds (a per-read timeout would let a server that drips bytes hold on)."""
    ends = time.monotonic() + timeout
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\nAccept: application/json\r\n"
            "Connection: close\r\n\r\n".encode("ascii")
        )
        received = b""
        while len(received) <= _ANSWER_LIMIT:
            left = ends - time.monotonic()
            if left <= 0:
                raise TimeoutError("no whole answer in time")
            sock.settimeout(left)
            chunk = sock.recv(4096)
            if not chunk:
                break
            received += chunk
        else:
            raise ValueError("an answer larger than an instance check's")
    head, sep, body = received.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split()
    if not sep or len(status_line) < 2 or not status_line[0].startswith(b"HTTP/"):
        raise ValueError("not an HTTP answer")
    if not status_line[1].isdigit():
        raise ValueError("not an HTTP status")
    return int(status_line[1]), body
