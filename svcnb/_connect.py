"""Where a Client comes from: :func:`configured_client`, the one way svcnb builds one from
settings; :func:`connect`, that Client, or one on a background sandbox when nothing names a
server; :func:`sandbox_control`, that sandbox's control helper. The one module that may import
both the client and the sandbox.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from svcnb import vocab
from svcnb.assumptions import Pin, pin_value
from svcnb.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    TOKEN_MAX_LENGTH,
    TOKEN_MIN_LENGTH,
    Client,
    RefusedBaseUrl,
    Secret,
    as_secret,
    key_and_url,
    looks_like_token,
    screened_url,
)
from svcnb.config import (
    DEFAULT_ACCOUNT,
    ENV_ACCOUNT,
    ENV_NO_SANDBOX,
    ConfigError,
    account,
    accounts,
    config_path,
    pins,
)
from svcnb.files import RefusedFile, shown
from svcnb.sandbox import connection

if TYPE_CHECKING:
    from svcnb.sandbox import Control

_log = logging.getLogger("svcnb")

# A sandbox connection file, as `svcnb lab` and `svcnb sandbox` write it.
ENV_SANDBOX_FILE = connection.ENV

# The background sandbox of this process: started by the first connect() that needs it, kept
# until the interpreter exits, and shared by every later connect() without a server named.
_sandbox: Any = None
_sandbox_lock = threading.Lock()
# Control helpers of sandboxes named by connection files, by control URL: one HTTP pool each,
# however often a notebook asks.
_file_controls: dict[str, Control] = {}

SANDBOX_NOTICE = (
    "svcnb: neither SVC_API_KEY nor SVC_BASE_URL is set, so this session uses a local sandbox "
    "with simulated data (not your account)."
)


def connect(
    api_key: str | Secret | None = None,
    base_url: str | RefusedBaseUrl | None = None,
    *,
    account: str | None = None,
    sandbox: dict[str, Any] | None = None,
    **client_options: Any,
) -> Client:
    """A :class:`Client` from the arguments, then ``SVC_API_KEY``/``SVC_BASE_URL``.

    ``account``: the ``[accounts.NAME]`` of the config file instead (as
    :func:`configured_client`, the one place that reads it): ``svcnb.connect(account="prod")``.

    When neither names a server: the sandbox of the connection file ``SVCNB_SANDBOX`` names, if
    set; else a sandbox started in the background (once per process, with
    ``svcnb.sandbox.serve(**sandbox)``). Either way the Client holds the sandbox's admin token.
    ``client_options`` go to ``Client`` (``timeout``, ``max_retries``, ``progress``).
    :func:`sandbox_control` gives the control helper of that sandbox (None on the real service).
    """
    # wrapped before anything can raise, so no frame of a traceback holds the raw token (nor a
    # base URL with a password in it)
    api_key = as_secret(api_key)
    base_url = screened_url(base_url, "base_url")
    account = _session_account(account, api_key, base_url, sandbox)
    if account is not None:
        if api_key is not None or base_url is not None or sandbox is not None:
            raise ValueError(
                f"connect(account={account!r}) reads the account's base URL and token from the "
                "config file; pass no api_key, base_url or sandbox with it"
            )
        return configured_client(account, **client_options)
    key, url = key_and_url(api_key, base_url)
    if key is not None or url is not None:
        if sandbox is not None:
            raise ValueError(
                "sandbox= options apply only when no server is named; unset "
                f"{ENV_API_KEY}/{ENV_BASE_URL} and pass neither api_key nor base_url"
            )
        if url is None:  # Client's ConfigError, which names connect()'s sandbox as the way out
            return Client(key, url, **client_options)
    if sandbox is None and (url is not None or os.environ.get(ENV_SANDBOX_FILE)):
        return configured_client(api_key=key, base_url=url, **client_options)
    if os.environ.get(ENV_NO_SANDBOX):
        raise ConfigError(
            f"no service named ({ENV_BASE_URL}/{ENV_API_KEY}, {ENV_ACCOUNT} or account=) and "
            f"{ENV_NO_SANDBOX} is set (`svcnb lab` on your store): no sandbox is started in its "
            "place. Restart `svcnb lab` with --account NAME or with SVC_BASE_URL and "
            "SVC_API_KEY exported, or pass account= here"
        )
    sb = _background_sandbox(sandbox or {})
    return Client(
        sb.tokens["admin"],
        sb.base_url,
        pins=sandbox_pins(sb.pins, f"the dialect of the sandbox at {sb.base_url}"),
        **client_options,
    )


def _session_account(account: str | None, *named: object) -> str | None:
    """``account``, else the session's (``SVCNB_ACCOUNT``, which ``svcnb lab --account`` sets
    for its kernels) when nothing else names a server here."""
    if account is not None or any(n is not None for n in named):
        return account
    if os.environ.get(ENV_API_KEY) or os.environ.get(ENV_BASE_URL):
        return None
    return os.environ.get(ENV_ACCOUNT) or None


def sandbox_pins(given: Any, where: str) -> dict[str, Pin]:
    """The config file's pins, and over them the pins a sandbox hands over for its dialect
    (``Sandbox.pins``, a connection file's ``pins``): it knows what its answers mean, so a
    client on it reads every value; any other service's client does not get them. A pin this
    svcnb does not know (a newer sandbox's) is left out, and so is a value it cannot take."""
    out = pins()
    for name, value in (given or {}).items() if isinstance(given, dict) else ():
        try:
            out[name] = Pin(pin_value(name, value), where)
        except (KeyError, ValueError):
            continue
    _adopt_words(out)
    return out


def _adopt_words(given: dict[str, Pin]) -> None:
    """Reports classify status words by the process's vocabulary (``vocab.current()``: they
    read frames, from a store as often as not, with no client at hand), so the words a
    sandbox pins for its dialect are added to it for this process, as its user's config file
    would pin them: the sandbox's own reports read every word with no warning."""
    words = vocab.from_pins(given)
    current = vocab.current()
    for kind in vocab.CLASSES:
        for word, source in words.pinned[kind].items():
            current.add(kind, {word: words.words[kind][word]}, source=source)  # type: ignore[arg-type]


def configured_client(
    account: str | None = None,
    *,
    api_key: str | Secret | None = None,
    base_url: str | RefusedBaseUrl | None = None,
    **client_options: Any,
) -> Client:
    """A :class:`Client` on the server the settings name, never a sandbox started here.

    ``account`` names an ``[accounts.NAME]`` table of the config file: its ``base_url`` and the
    token in the variable its ``token_env`` names (``default`` without such a table is the
    server the environment names). Without ``account``: ``api_key``/``base_url``, then
    ``SVC_API_KEY``/``SVC_BASE_URL``, else the sandbox connection file ``SVCNB_SANDBOX`` names.
    ``client_options`` go to ``Client`` (``timeout``, ``max_retries``, ``progress``).

    The ``svcnb`` commands and :func:`connect` build their clients here, so a missing setting
    is a ConfigError that says what to set, not a throwaway sandbox answering instead. One
    Client per account: each token has its own rate governor (and, across processes, its own
    shared budget). Example, in a notebook with two accounts configured::

        prod = svcnb.configured_client("prod")
    """
    if account is not None and not (account == DEFAULT_ACCOUNT and account not in accounts()):
        return _account_client(account, client_options)
    key, url = key_and_url(api_key, base_url)
    if isinstance(url, RefusedBaseUrl):
        raise url.error()
    if key is not None or url is not None:
        if url is None:
            raise ConfigError(
                f"{ENV_API_KEY} is set but {ENV_BASE_URL} is not: set {ENV_BASE_URL} to the "
                "API's base URL (e.g. https://api.example.com)"
            )
        return Client(key, url, **{"pins": pins(DEFAULT_ACCOUNT), **client_options})
    connection_file = os.environ.get(ENV_SANDBOX_FILE)
    if connection_file:
        info = _running_sandbox(Path(connection_file))
        where = f"the dialect of the sandbox in {ENV_SANDBOX_FILE}={connection_file}"
        return Client(
            info["admin"],
            info["base_url"],
            **{"pins": sandbox_pins(info["pins"], where), **client_options},
        )
    raise ConfigError(
        f"no server configured: set {ENV_BASE_URL} and {ENV_API_KEY} for the real service, or "
        f"{ENV_SANDBOX_FILE} to the connection file `svcnb sandbox` writes (it prints the line "
        "to export)"
    )


def _account_client(name: str, client_options: dict[str, Any]) -> Client:
    """The Client of account ``name`` of the config file. ConfigError when the account is not
    in the config, its base_url could hold a secret, or its variable is not set or holds no
    token (``token_env = "PATH"`` must not send the PATH to the service)."""
    spec = account(name)
    where = f"{config_path()}: [accounts.{name}]"
    screened = screened_url(spec.base_url, f"{where} base_url")
    if isinstance(screened, RefusedBaseUrl):
        del spec  # its repr shows the URL, and a verbose traceback shows this frame's variables
        raise screened.error()
    # read and judged in one expression: no name of this frame (a traceback shows them) holds
    # a value that may be another program's secret
    if os.environ.get(spec.token_env) and not looks_like_token(os.environ.get(spec.token_env)):
        raise ConfigError(
            f"{where}: token_env names {spec.token_env}, which does not hold an API token "
            f"(svc_..., {TOKEN_MIN_LENGTH} to {TOKEN_MAX_LENGTH} characters, no spaces); set "
            "token_env to the variable that holds this account's token"
        )
    # wrapped before anything can raise, so no frame of a traceback holds the raw token
    return Client(as_secret(spec.token()), spec.base_url, **{"pins": pins(name), **client_options})


def sandbox_control(client: Client | None = None) -> Control | None:
    """The :class:`svcnb.sandbox.Control` of the sandbox ``connect()`` uses; None on the real API.

    Without ``client``: the sandbox ``connect()`` would use now. None when ``SVC_API_KEY`` or
    ``SVC_BASE_URL`` names a server (the real service: nothing to control there); else the
    sandbox of the connection file ``SVCNB_SANDBOX`` names; else the background sandbox, started
    now if no ``connect()`` started it yet.

    With ``client``: the control of the sandbox that client talks to, when it is the background
    sandbox or the one ``SVCNB_SANDBOX`` names; None for any other server, the real service
    included. Notebooks use this to run state-changing steps only on a sandbox::

        client = svcnb.connect()
        sandbox = svcnb.sandbox_control(client)
        if sandbox is not None:
            sandbox.advance(60)  # move the simulated clock
    """
    if client is None:
        if any(key_and_url(None, None)):  # a server is named: the real service
            return None
        connection_file = os.environ.get(ENV_SANDBOX_FILE)
        if connection_file:
            return _file_control(_running_sandbox(Path(connection_file)))
        return _background_sandbox({}).control
    wanted = client.base_url.rstrip("/")
    with _sandbox_lock:
        background = _sandbox
    if background is not None and background.base_url.rstrip("/") == wanted:
        return background.control
    connection_file = os.environ.get(ENV_SANDBOX_FILE)
    if connection_file:
        info = _read_connection_info(Path(connection_file))
        if info["base_url"].rstrip("/") == wanted:
            return _file_control(info)
    return None


def _file_control(info: dict[str, Any]) -> Control:
    from svcnb.sandbox import Control  # the server stack is imported only where a sandbox is

    url = info["control_url"]
    with _sandbox_lock:
        control = _file_controls.get(url)
        if control is None:
            control = _file_controls[url] = Control(url)
            atexit.register(control.close)
        return control


def _read_connection_info(path: Path) -> dict[str, Any]:
    """``base_url``, ``control_url``, ``admin`` (token) and ``instance`` of a sandbox connection
    file; ConfigError naming the file when there is none or it is not one."""
    return _summary(_read_connection_file(path))


def _summary(info: dict) -> dict[str, Any]:
    return {
        "base_url": info["base_url"],
        "control_url": connection.control_url(info),
        "admin": info["tokens"]["admin"],
        "instance": str(info.get("instance") or ""),
        "pins": info.get("pins") if isinstance(info.get("pins"), dict) else {},
    }


def _read_connection_file(path: Path) -> dict:
    where = f"{ENV_SANDBOX_FILE}={str(path)!r}"
    try:
        return connection.read(path)
    except FileNotFoundError:
        raise ConfigError(
            f"{where}: no such file; start a sandbox with `svcnb sandbox` (it writes the file "
            f"and prints the line to export) or unset {ENV_SANDBOX_FILE}"
        ) from None
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, RefusedFile) else type(exc).__name__
        raise ConfigError(
            f"{where} is not a readable sandbox connection file with base_url and tokens.admin "
            f"({why}); start a sandbox with `svcnb sandbox` (it writes one) or "
            f"unset {ENV_SANDBOX_FILE}"
        ) from None


def proven_connection_file(path: str | os.PathLike[str]) -> dict:
    """The whole connection file at ``path`` (tokens included), once the sandbox it names has
    proven to be the one answering there; ConfigError naming the file otherwise. Everything
    that takes a token from a connection file takes it here or through :func:`connect`."""
    info = _read_connection_file(Path(path))
    _proven(Path(path), _summary(info))
    return info


def _running_sandbox(path: Path) -> dict[str, Any]:
    """:func:`_read_connection_info`, and the sandbox it names is proven to be the one answering
    there (its instance check answers the file's instance within ``connection.PROBE_SECONDS``):
    else one line naming the file and what was found, before any request carries its token."""
    return _proven(path, _read_connection_info(path))


def _proven(path: Path, info: dict[str, Any]) -> dict[str, Any]:
    where = f"{ENV_SANDBOX_FILE}={str(path)!r}"
    found = connection.probe(
        {"base_url": info["base_url"], "control_url": info["control_url"], **_instance(info)}
    )
    if found == connection.RUNNING:
        return info
    url = shown(info["base_url"])  # the file's text: shown, never acted on by a terminal
    if found == connection.STOPPED:
        raise ConfigError(
            f"{where} names the sandbox at {url}, which is not running: it was "
            "stopped. Start it again with `svcnb sandbox` (with --state-file FILE to carry on "
            f"the account it saved) or unset {ENV_SANDBOX_FILE}"
        )
    if found == connection.REPLACED:
        raise ConfigError(
            f"{where} names a sandbox that has stopped; a new sandbox answers at "
            f"{url} now, another account with other tokens: point "
            f"{ENV_SANDBOX_FILE} at the connection file it printed, or unset {ENV_SANDBOX_FILE}"
        )
    seen = {
        connection.SILENT: f"something at {url} accepted the connection but did not answer the "
        f"sandbox's instance check within {connection.PROBE_SECONDS:g} s",
        connection.UNPROVEN: "the file names no sandbox instance (an older svcnb wrote it), so "
        f"the server at {url} cannot be proven to be its sandbox",
    }.get(
        found,
        f"something answers at {url} but not as the sandbox that wrote the file (its instance "
        "check gave no instance)",
    )
    raise ConfigError(
        f"{where}: {seen}; its tokens were not sent. Start a sandbox with `svcnb sandbox` and "
        f"point {ENV_SANDBOX_FILE} at the file it prints, or unset {ENV_SANDBOX_FILE}"
    )


def _instance(info: dict[str, Any]) -> dict[str, str]:
    return {"instance": info["instance"]} if info["instance"] else {}


def _background_sandbox(options: dict[str, Any]) -> Any:
    global _sandbox
    with _sandbox_lock:
        if _sandbox is None:
            # Imported here, not at the top: only this path needs the server stack.
            from svcnb.sandbox import serve

            context = serve(**options)
            _sandbox = context.__enter__()
            atexit.register(context.__exit__, None, None, None)
            # A notebook user must know the numbers are simulated. One fixed line on stdout:
            # nbval sees the same text on every run (no port, no token); the URL goes to the
            # log only.
            print(SANDBOX_NOTICE)
            _log.info("started a background sandbox at %s", _sandbox.base_url)
        elif options:
            _log.info(
                "a background sandbox already runs at %s; sandbox= options ignored",
                _sandbox.base_url,
            )
        return _sandbox
