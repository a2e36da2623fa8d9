"""The svcnb config file: where it is, reading it, and writing one section of it.

Location: the ``path`` argument, then ``$SVCNB_CONFIG``, then ``$XDG_CONFIG_HOME/svcnb/config.toml``
(``~/.config/svcnb/config.toml``). A missing file is an empty config. The file is TOML::

    [vocabulary.vm_status]
    halted = "stopped"

    [vocabulary.billing_status]
    unpaid = "owing"

It never holds a token: the client reads those from its arguments or the environment only.
This module is a leaf: it imports nothing of svcnb but the errors.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from svcnb.errors import SvcnbError

ENV_CONFIG = "SVCNB_CONFIG"

__all__ = ["ConfigError", "config_path", "read_config", "write_section"]


class ConfigError(SvcnbError, ValueError):
    """The config file cannot be read or written; names the file and what is wrong."""


def config_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The config file svcnb reads (it need not exist)."""
    if path is not None:
        return Path(path)
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "svcnb" / "config.toml"


def read_config(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The parsed config file, ``{}`` when there is none."""
    target = config_path(path)
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read the svcnb config file {target}: {exc.strerror}") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"the svcnb config file {target} is not valid TOML ({exc}); fix or remove it"
        ) from None


def write_section(
    dotted: str, values: dict[str, Any], path: str | os.PathLike[str] | None = None
) -> Path:
    """Merge ``values`` into the table ``dotted`` (e.g. ``vocabulary.vm_status``) and write the
    file back (other sections are kept; comments are not). Returns the file written."""
    target = config_path(path)
    config = read_config(target)
    table = config
    for part in dotted.split("."):
        inner = table.setdefault(part, {})
        if not isinstance(inner, dict):
            raise ConfigError(f"{target}: {dotted!r} is not a table; fix the file by hand")
        table = inner
    table.update(values)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(tomli_w.dumps(config).encode("utf-8"))
    os.replace(tmp, target)
    return target
