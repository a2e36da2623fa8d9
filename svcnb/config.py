"""The svcnb config file: where it is, reading it, and writing one section of it.

Location: the ``path`` argument, then ``$SVCNB_CONFIG``, then ``$XDG_CONFIG_HOME/svcnb/config.toml``
(``~/.config/svcnb/config.toml``); a missing file is an empty config. Its accounts are in the
README; its pin tables are the "pin" column of docs/contracts.md §0 ("Assumptions"), read by
:func:`pins` alone. It never holds a token (an account names the environment variable that
does), and it is a leaf: it imports nothing of svcnb but the errors.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import tomli_w

from svcnb import files as _files
from svcnb.assumptions import ASSUMPTIONS, DELIVERY_FIELDS, Pin, pin_value
from svcnb.errors import SvcnbError

ENV_CONFIG = "SVCNB_CONFIG"

# the account of a store or command that names none: SVC_API_KEY/SVC_BASE_URL's, and the one
# account of every store written before accounts existed
DEFAULT_ACCOUNT = "default"
# the account a session reads when nothing else names one (`svcnb lab --account NAME` sets it
# for the notebooks' kernels): svcnb.connect() with no server named, Store() with no path given
ENV_ACCOUNT = "SVCNB_ACCOUNT"
# set (`svcnb lab` on your store): svcnb.connect() starts no background sandbox, it says why
ENV_NO_SANDBOX = "SVCNB_NO_SANDBOX"

__all__ = [
    "DEFAULT_ACCOUNT",
    "DELIVERY_FIELDS",
    "UNIT_CHOICES",
    "Account",
    "ConfigError",
    "account",
    "accounts",
    "budget_config",
    "config_path",
    "pins",
    "read_config",
    "unit_choice",
    "units_config",
    "service_url",
    "write_section",
]


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
        raw = _files.read(target)
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
    except RecursionError:
        # tomllib parses nested arrays and inline tables by recursion: a file nested deeper than
        # the interpreter's stack is no config anyone wrote by hand
        raise ConfigError(
            f"the svcnb config file {target} nests arrays or tables too deeply to read; fix or "
            "remove it"
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
    try:
        _replace(target, tomli_w.dumps(config).encode("utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"cannot write the svcnb config file {target}: {exc.strerror}; check that its "
            "folder is writable, or pass another file (--config, $SVCNB_CONFIG)"
        ) from None
    return target


def _replace(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` at once, through :func:`svcnb.files.write`.

    A symbolic link is followed (the user made it: a config kept with dotfiles is often
    linked): the file it points to is replaced and the link stays, and that file keeps its
    mode, so a config made private stays private; a new file is readable by its owner only.
    """
    _files.write(target, data, secret=True, follow_link=True, keep_mode=True, make_folder=True)


# The API prefix forms a base URL may end with: the client tries both after a base URL without
# one (svcnb.client._config.BASE_PATH_CANDIDATES; this module is a leaf, so they are written here
# too, and tests/store/test_store_accounts.py keeps the two the same). Longest first.
API_PREFIXES = ("/api/v1/api/public/v1", "/api/public/v1")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def service_url(url: str) -> str:
    """The one spelling of the service a base URL reaches: scheme and host lower-case, the
    default port, a trailing slash and an API prefix (``/api/public/v1``,
    ``/api/v1/api/public/v1``) left out, as are user info and a fragment.

    Two base URLs that differ only in these reach the same service, so an account is recognised
    whichever way its URL is written. Text that is not a URL comes back without its trailing
    slash.
    """
    text = str(url).strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text.rstrip("/")
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if not scheme or not host:
        return text.rstrip("/")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/")
    for prefix in API_PREFIXES:
        if path.endswith(prefix):
            path = path[: -len(prefix)].rstrip("/")
            break
    query = f"?{parts.query}" if parts.query else ""
    return f"{scheme}://{host}{path}{query}"


# an account name is a folder name in the store (account=NAME) and a CLI word: keep it plain
_ACCOUNT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# accept_gaps: that account's known gaps a snapshot exits 0 with (accepted_gaps)
_ACCOUNT_KEYS = {"base_url", "token_env", "accept_gaps"}
# an account may pin assumptions for itself: [accounts.NAME.units] ram = "GiB" (its status
# words too: [accounts.NAME.vocabulary.vm_status], svcnb.vocab.for_account)
_PIN_TABLES = frozenset(a.table.partition(".")[0] for a in ASSUMPTIONS.values())
# what API tokens look like (svc_...; long opaque strings): a config file is often shared or
# committed, so a value that looks like one is refused rather than read
_TOKENISH = re.compile(r"^(svc_|sk_|ghp_|xox)|^(?=.*[a-z])(?=.*[0-9])[A-Za-z0-9_.\-+/=]{24,}$")


@dataclass(frozen=True)
class Account:
    """One ``[accounts.NAME]`` of the config file: where it is and which variable holds its
    token (never the token)."""

    name: str
    base_url: str
    token_env: str

    @property
    def service(self) -> str:
        """The service the account is on, one spelling for every way of writing its base URL
        (:func:`service_url`)."""
        return service_url(self.base_url)

    def token(self) -> str:
        """The token, read from the environment now; ConfigError when the variable is unset.
        (``svcnb.configured_client(NAME)`` also refuses a value not shaped like a token before
        it makes a client: this leaf module does not know the token's shape.)"""
        value = os.environ.get(self.token_env)
        if not value:
            raise ConfigError(
                f"account {self.name!r}: the environment variable {self.token_env} (its "
                f"token_env) is not set; export {self.token_env}=<token> before running"
            )
        return value


def accounts(path: str | os.PathLike[str] | None = None) -> dict[str, Account]:
    """The ``[accounts.NAME]`` tables of the config file, checked; ``{}`` when there are none.

    ConfigError names the file, the account and what is wrong: an unknown key, a missing or
    non-http ``base_url``, a ``token_env`` that is not a variable name, anything that looks
    like a token written into the file itself, or two names for one account (the same service,
    however its base URL is written, and the same token variable).
    """
    target = config_path(path)
    table = read_config(target).get("accounts", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{target}: 'accounts' must be a table of [accounts.NAME] tables")
    out: dict[str, Account] = {}
    for name, spec in table.items():
        where = f"{target}: [accounts.{name}]"
        if not _ACCOUNT_NAME.fullmatch(name) or name in {"*", "all"}:
            raise ConfigError(
                f"{where}: an account name is letters, digits, '_', '-', '.' (up to 63, not "
                "'all'); rename it"
            )
        if not isinstance(spec, dict):
            raise ConfigError(f"{where} must be a table with base_url and token_env")
        for key, value in spec.items():
            if key in _PIN_TABLES and isinstance(value, dict):
                continue  # pins, checked by pins(account=name)
            if key in {"token", "api_key", "secret", "password"} or (
                isinstance(value, str) and _TOKENISH.search(value) and key != "base_url"
            ):
                raise ConfigError(
                    f"{where}: {key} looks like a token; the config file never holds tokens. "
                    "Put the token in an environment variable and name that variable: "
                    'token_env = "SVC_TOKEN_'
                    + name.upper().replace("-", "_").replace(".", "_")
                    + '"'
                )
        unknown = sorted(set(spec) - _ACCOUNT_KEYS - _PIN_TABLES)
        if unknown:
            raise ConfigError(
                f"{where}: unknown key(s) {', '.join(unknown)}; an account has base_url and "
                f"token_env, and may pin assumptions in "
                f"[accounts.{name}.TABLE] (TABLE one of {', '.join(sorted(_PIN_TABLES))})"
            )
        base_url = spec.get("base_url")
        # a scheme is case-insensitive (RFC 3986): HTTPS:// is the same https:// URL
        if not isinstance(base_url, str) or not base_url.lower().startswith(
            ("http://", "https://")
        ):
            raise ConfigError(
                f"{where}: base_url is missing or not an http(s) URL; set e.g. "
                'base_url = "https://api.example.com"'
            )
        if "@" in base_url.partition("://")[2].partition("/")[0]:
            raise ConfigError(f"{where}: base_url holds credentials (user@host); remove them")
        token_env = spec.get("token_env")
        if not isinstance(token_env, str) or not _ENV_NAME.fullmatch(token_env):
            raise ConfigError(
                f"{where}: token_env must be the name of the environment variable that holds "
                'the token, e.g. token_env = "SVC_TOKEN_' + name.upper().replace("-", "_") + '"'
            )
        out[name] = Account(name, base_url.rstrip("/"), token_env)
    seen: dict[tuple[str, str], str] = {}
    for name, spec in out.items():
        first = seen.setdefault((spec.service, spec.token_env), name)
        if first != name:
            # one account under two names would be pulled and stored twice, and every total
            # over accounts would count it twice
            raise ConfigError(
                f"{target}: [accounts.{first}] and [accounts.{name}] are one account: the same "
                f"service ({spec.service}; base URLs are compared without case, default port, "
                f"trailing slash or API prefix) and the same token variable {spec.token_env}. "
                f"Keep one of the two names and remove the other"
            )
    return out


def account(name: str, path: str | os.PathLike[str] | None = None) -> Account:
    """The account ``name`` of the config file; ConfigError naming the ones there are."""
    found = accounts(path)
    if name not in found:
        listed = ", ".join(found) or "none"
        raise ConfigError(
            f"{config_path(path)} names no account {name!r} (accounts: {listed}); add "
            f"[accounts.{name}] with base_url and token_env"
        )
    return found[name]


def accepted_gaps(
    account: str | None = None, path: str | os.PathLike[str] | None = None
) -> frozenset[str]:
    """The resources whose gap a snapshot accepts, as ``--accept-gap`` does (said in one line,
    exit 0 when alone): ``[snapshot] accept_gaps`` for every account and ``accept_gaps`` of
    ``[accounts.NAME]`` for that one. Names are not checked here (this leaf does not know the
    resources); ``svcnb snapshot`` checks them. ConfigError when a value is not a list of
    names."""
    target = config_path(path)
    doc = read_config(target)
    found: set[str] = set()
    tables = [("[snapshot]", doc.get("snapshot", {}))]
    if account is not None:
        tables.append((f"[accounts.{account}]", doc.get("accounts", {}).get(account, {})))
    for where, table in tables:
        if not isinstance(table, dict):
            raise ConfigError(f"{target}: {where} must be a table")
        value = table.get("accept_gaps", [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(
                f"{target}: {where} accept_gaps must be a list of resource names, e.g. "
                'accept_gaps = ["wallet"]'
            )
        found.update(value)
    return frozenset(found)


_BUDGET_KEYS = {"backend", "password_env"}


def budget_config(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The ``[budget]`` table, checked: ``backend`` (a file, ``redis://host:6379/0``,
    ``rediss://...``, ``unix:///path``, or ``off``) and ``password_env`` (the NAME of the
    variable holding the Redis password: the URL itself never holds one). ``{}`` when absent."""
    target = config_path(path)
    table = read_config(target).get("budget", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{target}: 'budget' must be a table ([budget] backend = ...)")
    unknown = sorted(set(table) - _BUDGET_KEYS)
    if unknown:
        raise ConfigError(
            f"{target}: [budget] has unknown key(s) {', '.join(unknown)}; it has backend and "
            "password_env"
        )
    for key, value in table.items():
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise ConfigError(f"{target}: [budget] {key} must be a non-empty string")
    backend = table.get("backend", "")
    if backend.startswith("~") and "://" not in backend:
        try:
            Path(backend).expanduser()
        except RuntimeError:  # ~user of a user this machine does not know
            raise ConfigError(
                f"{target}: [budget] backend {backend!r} starts with a home folder this machine "
                "does not know; give the path in full"
            ) from None
    if "://" in backend and "@" in backend.partition("://")[2].partition("/")[0]:
        raise ConfigError(
            f"{target}: [budget] backend holds credentials (user:password@host); the config "
            'file never holds secrets: remove them and set password_env = "SVCNB_REDIS_PASSWORD"'
        )
    if "://" in backend and not backend.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(
            f"{target}: [budget] backend {backend!r} is neither a file nor a redis://, "
            "rediss:// or unix:// URL"
        )
    env = table.get("password_env")
    if env is not None and not _ENV_NAME.fullmatch(env):
        raise ConfigError(
            f"{target}: [budget] password_env must be the name of an environment variable"
        )
    return {k: v.strip() for k, v in table.items()}


# the quantities whose unit can be pinned, and the units each may be pinned to
UNIT_CHOICES: dict[str, tuple[str, ...]] = {"ram": ("MiB", "GiB"), "disk": ("GiB", "MiB")}


def unit_choice(quantity: str, unit: Any, where: str) -> str:
    """``unit`` spelled as svcnb spells it (``"gib"`` is ``"GiB"``); ConfigError naming
    ``where`` and the choices when it is none of them."""
    choices = UNIT_CHOICES.get(quantity)
    if choices is None:
        raise ConfigError(
            f"{where}: no unit can be pinned for {quantity!r}; the quantities are "
            f"{', '.join(UNIT_CHOICES)}"
        )
    if isinstance(unit, str):
        for choice in choices:
            if unit.strip().lower() == choice.lower():
                return choice
    raise ConfigError(
        f"{where}: {quantity} = {unit!r} is not a unit svcnb reads it in; use one of "
        f"{', '.join(repr(c) for c in choices)}"
    )


def units_config(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The ``[units]`` table, checked: ``ram`` and ``disk`` pinned to ``"MiB"`` or ``"GiB"``
    (the unit the service serves them in). ``{}`` when absent."""
    target = config_path(path)
    table = read_config(target).get("units", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{target}: 'units' must be a table ([units] ram = \"GiB\")")
    return {
        quantity: unit_choice(quantity, unit, f"{target}: [units]")
        for quantity, unit in table.items()
    }


def pins(account: str | None = None, path: str | os.PathLike[str] | None = None) -> dict[str, Pin]:
    """The assumptions the config file pins (``svcnb.assumptions.ASSUMPTIONS``), each with
    where: the table of all accounts (``[units] ram = "GiB"``), overridden for ``account`` by
    its own (``[accounts.NAME.units] ram = "GiB"``). A keyed one is pinned per key of its table
    (``[vocabulary.vm_status] locked = "suspended"`` is ``vocabulary.vm_status.locked``).
    ConfigError names a value that is no pin, or a key of such a table that pins nothing (a
    typo would otherwise pin nothing silently)."""
    target = config_path(path)
    config = read_config(target)
    found: dict[str, Pin] = {}
    places = [("", config)]
    if account is not None:
        spec = config.get("accounts", {})
        spec = spec.get(account) if isinstance(spec, dict) else None
        if isinstance(spec, dict):
            places.append((f"accounts.{account}.", spec))
    for prefix, holder in places:
        _check_tables(holder, prefix, target)
        for name, registered in ASSUMPTIONS.items():
            values = _table(holder, registered.table, prefix, target)
            if values is None:
                continue
            where = f"{target} [{prefix}{registered.table}]"
            items = (
                [(f"{name}.{key}", key, value) for key, value in values.items()]
                if registered.keyed
                else [(name, registered.key, values[registered.key])]
                if registered.key in values
                else []
            )
            for full, key, value in items:
                if registered.keyed and not key.strip():
                    # a blank word is no word: it would pin nothing, or fail later far away
                    raise ConfigError(f"{where}: a blank key pins nothing; name the word it maps")
                try:
                    found[full] = Pin(pin_value(full, value), f"{where} {key}")
                except ValueError as exc:
                    raise ConfigError(f"{where}: {exc}") from None
    fields = [p.value for n, p in found.items() if n.startswith("deliveries.fields.")]
    doubled = sorted({f for f in fields if fields.count(f) > 1})
    if doubled:
        raise ConfigError(
            f"{target}: [deliveries.fields] pins two served keys to {doubled[0]!r}; keep one"
        )
    return found


def _table(holder: dict, dotted: str, prefix: str, target: Path) -> dict | None:
    """The table ``dotted`` (``vocabulary.vm_status``) of ``holder``, None when absent."""
    table: Any = holder
    for part in dotted.split("."):
        if not isinstance(table, dict) or part not in table:
            return None
        table = table[part]
    if not isinstance(table, dict):
        raise ConfigError(f"{target} [{prefix}{dotted}] must be a table of pins")
    return table


def _check_tables(holder: dict, prefix: str, target: Path) -> None:
    """Every key of a pin table of ``holder`` pins a registered assumption or holds the table
    of one (``[vocabulary]`` holds ``vm_status``)."""
    names = set(ASSUMPTIONS)
    tables = {a.table for a in ASSUMPTIONS.values() if a.keyed}
    for root in sorted(_PIN_TABLES):
        values = holder.get(root)
        if values is None:
            continue
        if not isinstance(values, dict):
            raise ConfigError(f"{target} [{prefix}{root}] must be a table of pins")
        for key in values:
            dotted = f"{root}.{key}"
            if dotted in names and dotted not in tables:
                continue
            if any(t == dotted or t.startswith(dotted + ".") for t in tables):
                continue
            known = list(
                dict.fromkeys(
                    a.table.removeprefix(root + ".") if a.keyed else a.key
                    for a in ASSUMPTIONS.values()
                    if a.name.startswith(root + ".")
                )
            )
            raise ConfigError(
                f"{target} [{prefix}{root}]: {key!r} pins nothing; the keys are {', '.join(known)}"
            )
