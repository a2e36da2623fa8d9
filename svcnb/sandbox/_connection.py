"""A sandbox's connection file: where it goes by default, how it is written, and whether the
sandbox it names is still the one answering there.

The file is JSON, readable by its owner only (it holds the tokens)::

    {"base_url": "http://127.0.0.1:40123", "api_root": ".../api/public/v1",
     "control_url": ".../_sandbox", "tokens": {"admin": "svc_...", ...},
     "instance": "9f2c...", "dialect": "acme"}     # dialect only when not the default

``instance`` is drawn once per server process (``GET /_sandbox/instance`` answers it), so a
reader can tell the sandbox that wrote the file from a new one that took its port since: the
new one has other tokens, and its account is another account.

``svcnb sandbox`` writes it to ``$SVCNB_SANDBOX`` when that is set (so a sandbox restarted in a
shell that exported it is found again), else to ``$XDG_STATE_HOME/svcnb/sandbox.json``
(``~/.local/state/svcnb/sandbox.json``). ``svcnb.connect()`` and every command read the file
``SVCNB_SANDBOX`` names.

Only the standard library here: the client side (``svcnb._connect``) uses this module to judge a
file without loading the server stack.
"""

from __future__ import annotations

import http.client
import json
import os
from pathlib import Path
from urllib.parse import urlsplit

ENV = "SVCNB_SANDBOX"

# what probe() finds at the address a connection file names
RUNNING = "running"  # the sandbox that wrote the file
STOPPED = "stopped"  # nothing answers there
REPLACED = "replaced"  # another sandbox answers there (started since, with other tokens)
UNKNOWN = "unknown"  # something is there but does not say which sandbox it is


def default_path() -> Path:
    """Where ``svcnb sandbox`` writes its connection file unless told (module docstring)."""
    named = os.environ.get(ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_STATE_HOME")
    return (Path(base) if base else Path.home() / ".local" / "state") / "svcnb" / "sandbox.json"


def write(info: dict, path: str | os.PathLike[str]) -> Path:
    """Write ``info`` to ``path`` as JSON, mode 0600 from the first byte (it holds tokens).

    Written beside the target and renamed into place, so a reader never sees half a file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(info, handle, indent=2)
            handle.write("\n")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def read(path: str | os.PathLike[str]) -> dict:
    """The connection file at ``path`` as a dict with at least ``base_url`` and
    ``tokens.admin``. OSError when it cannot be read, ValueError when it is not such a file."""
    info = json.loads(Path(path).read_text())
    if not isinstance(info, dict) or not isinstance(info.get("tokens"), dict):
        raise ValueError("no tokens")
    if not isinstance(info.get("base_url"), str):
        raise ValueError("no base_url")
    if not isinstance(info["tokens"].get("admin"), str):
        raise ValueError("no tokens.admin")
    return info


def control_url(info: dict) -> str:
    return str(info.get("control_url") or info["base_url"].rstrip("/") + "/_sandbox")


def probe(info: dict, timeout: float = 3.0) -> str:
    """Whether the sandbox ``info`` names answers, and is the one that wrote it: RUNNING,
    STOPPED, REPLACED or UNKNOWN (a file without ``instance``, from an older svcnb, is RUNNING
    whenever something answers)."""
    url = urlsplit(control_url(info))
    if url.scheme != "http" or not url.hostname:
        return UNKNOWN
    connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=timeout)
    try:
        connection.request("GET", url.path.rstrip("/") + "/instance")
        answer = connection.getresponse()
        body = answer.read(4096)
    except TimeoutError:
        return UNKNOWN  # it accepted and said nothing: busy or hung, not known to be gone
    except OSError:  # refused, reset, no route: nothing listens there any more
        return STOPPED
    except http.client.HTTPException:
        return UNKNOWN
    finally:
        connection.close()
    expected = info.get("instance")
    if answer.status != 200:
        # an older sandbox (no such endpoint) or a control API that refuses this caller
        return RUNNING if expected is None else UNKNOWN
    try:
        found = json.loads(body)["data"]["instance"]
    except (ValueError, KeyError, TypeError):
        return UNKNOWN
    if expected is None or found == expected:
        return RUNNING
    return REPLACED
