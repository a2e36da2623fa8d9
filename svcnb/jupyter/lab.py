"""``svcnb lab``: JupyterLab on the notebooks, with a sandbox running for their kernels (README,
"Two commands").

The sandbox runs as a child ``svcnb sandbox`` process that writes its connection file into a
private temporary folder; kernels find it through :data:`SANDBOX_ENV` (see
:func:`kernel_environment`). A real ``SVC_API_KEY`` of the caller never reaches them. The browser
tests and ``svcnb demo`` reuse these pieces.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx

from svcnb import files as _files
from svcnb._connect import ENV_SANDBOX_FILE, proven_connection_file
from svcnb.client import ENV_API_KEY, ENV_BASE_URL
from svcnb.config import ENV_ACCOUNT, ENV_NO_SANDBOX
from svcnb.store import ENV_PATH, is_remote, resolve_url

# Path of a sandbox connection file (``svcnb sandbox --connection-file``); ``svcnb.connect()``
# uses that sandbox.
SANDBOX_ENV = ENV_SANDBOX_FILE
STORE_ENV = ENV_PATH
LAB_STORES = "data/lab"
# Variables that would send the kernels to the real service instead of the sandbox.
REAL_API_ENV = (ENV_API_KEY, ENV_BASE_URL)

LOOPBACK = "127.0.0.1"
DEFAULT_LAB_VMS = 40
DEFAULT_LAB_SEED = 7
# Fast enough that a stop clicked in the VM panel completes while the user watches.
DEFAULT_LAB_TIME_SCALE = 60.0


class SandboxProcess:
    """``svcnb sandbox`` in a child process; ready once its connection file holds a base URL.

    Use as a context manager. ``base_url`` and ``control_url`` are known after entry. The tokens
    stay in the connection file (read them with :meth:`tokens` when a test needs one); they are
    kept out of this object's attributes so that no repr or log of it can show them.
    """

    def __init__(
        self,
        connection_file: str | os.PathLike[str],
        *,
        vms: int = DEFAULT_LAB_VMS,
        seed: int = DEFAULT_LAB_SEED,
        time_scale: float = DEFAULT_LAB_TIME_SCALE,
        port: int = 0,
        log_file: str | os.PathLike[str] | None = None,
        start_timeout: float = 60.0,
    ) -> None:
        self.connection_file = Path(connection_file)
        self.argv = [
            sys.executable,
            "-m",
            "svcnb",
            "sandbox",
            "--host",
            LOOPBACK,
            "--port",
            str(port),
            "--vms",
            str(vms),
            "--seed",
            str(seed),
            "--time-scale",
            str(time_scale),
            "--connection-file",
            str(self.connection_file),
        ]
        self.log_file = Path(log_file) if log_file else None
        self.start_timeout = start_timeout
        self.base_url = ""
        self.control_url = ""
        self._proc: subprocess.Popen[bytes] | None = None

    def __repr__(self) -> str:
        return f"SandboxProcess(base_url={self.base_url!r}, file={str(self.connection_file)!r})"

    def __enter__(self) -> SandboxProcess:
        self.connection_file.parent.mkdir(parents=True, exist_ok=True)
        self.connection_file.unlink(missing_ok=True)
        log = open(self.log_file, "ab") if self.log_file else subprocess.DEVNULL  # noqa: SIM115
        try:
            self._proc = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        finally:
            if self.log_file:
                log.close()  # type: ignore[union-attr]
        try:
            self._wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                where = f"; its output is in {self.log_file}" if self.log_file else ""
                raise RuntimeError(
                    f"the sandbox exited with status {self._proc.returncode} before it was "
                    f"ready ({' '.join(self.argv[1:])}){where}"
                )
            data = _read_json(self.connection_file)
            if data and data.get("base_url"):
                self.base_url = str(data["base_url"]).rstrip("/")
                self.control_url = str(
                    data.get("control_url") or self.base_url + "/_sandbox"
                ).rstrip("/")
                return
            time.sleep(0.1)
        raise TimeoutError(
            f"the sandbox wrote no connection file at {self.connection_file} within "
            f"{self.start_timeout:.0f} s; run `svcnb sandbox --connection-file FILE` to see why"
        )

    def tokens(self) -> dict[str, str]:
        """The sandbox's tokens by name (secret values: never print or store them), once the
        sandbox answering at the file's address has proven to be this one (ConfigError else:
        a child that died and left its port to another program gets no token)."""
        return dict(proven_connection_file(self.connection_file)["tokens"])

    def control(self, method: str, path: str, **kwargs: object) -> object:
        """Call a ``/_sandbox/`` control endpoint and return its ``data``; errors raise."""
        with httpx.Client(base_url=self.control_url, timeout=30.0) as http:
            response = http.request(method, path, **kwargs)  # type: ignore[arg-type]
        body = response.json()
        if response.is_error or not body.get("success"):
            raise RuntimeError(
                f"sandbox control {method} {path} answered {response.status_code}: "
                f"{body.get('error', body)}"
            )
        return body.get("data")

    def close(self) -> None:
        """Stop the child process (politely, then firmly) and remove the connection file."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            # SIGTERM, not SIGINT: a child of a background job ignores SIGINT.
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self.connection_file.unlink(missing_ok=True)


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(_files.read(path).decode("utf-8"))
    except (OSError, ValueError):
        return None  # not written yet (the file appears whole, renamed into place)
    return data if isinstance(data, dict) else None


def session_store(given: str | None) -> str | Path:
    """The store the kernels get: ``--store``, else ``$SVCNB_STORE`` (a folder made absolute,
    since the kernels run in the notebooks' folder; a URL as it is), else a new folder under
    data/lab for this session."""
    if given or os.environ.get(STORE_ENV):
        where = resolve_url(given or None)
        # a URL stays one (Path("s3://b/x") would be a local folder "s3:/b/x")
        return where if is_remote(where) else Path(where).resolve()
    return (Path(LAB_STORES) / time.strftime("%Y%m%d-%H%M%S") / "store").resolve()


def kernel_environment(
    connection_file: str | os.PathLike[str],
    store: str | os.PathLike[str] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for JupyterLab and its kernels: this sandbox, and no API token at all.

    ``SVCNB_SANDBOX`` names the connection file; ``svcnb.connect()`` reads the sandbox's URL and
    token from it and ``svcnb.sandbox_control()`` its control URL. ``SVC_API_KEY`` and
    ``SVC_BASE_URL`` are removed, so a real token of the caller never reaches the kernels and
    no secret travels in the environment (where ``%env`` or a crash dump would show it).
    """
    env = dict(os.environ if base is None else base)
    for name in REAL_API_ENV:
        env.pop(name, None)
    env[SANDBOX_ENV] = str(Path(connection_file).resolve())
    if store is not None:
        env[STORE_ENV] = str(store)
    env.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    return env


def on_your_data(
    store: str | None, account: str | None, sandbox: bool, env: Mapping[str, str] | None = None
) -> bool:
    """Whether ``svcnb lab`` opens the notebooks on the user's own data (no sandbox): a store
    (``--store``) or an account (``--account``) named, or a service in the environment
    (``SVC_BASE_URL``/``SVC_API_KEY``), and no ``--sandbox`` asked for."""
    env = os.environ if env is None else env
    return not sandbox and bool(store or account or any(env.get(n) for n in REAL_API_ENV))


def your_environment(
    store: str | os.PathLike[str],
    account: str | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for JupyterLab and its kernels on the user's own data: the store
    (``SVCNB_STORE``) and the account (``SVCNB_ACCOUNT``, which ``svcnb.connect()`` and
    ``Store()`` then read), or the service ``SVC_BASE_URL``/``SVC_API_KEY`` already name; no
    sandbox file, and ``SVCNB_NO_SANDBOX`` so a notebook never falls back to one."""
    env = dict(os.environ if base is None else base)
    env.pop(SANDBOX_ENV, None)
    if account is not None:
        # the account's own base URL and token (its token_env) win over a loose pair
        for name in REAL_API_ENV:
            env.pop(name, None)
        env[ENV_ACCOUNT] = account
    env[STORE_ENV] = str(store)
    env[ENV_NO_SANDBOX] = "1"
    env.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    return env


def lab_command(
    root_dir: str | os.PathLike[str],
    *,
    port: int | None = None,
    open_browser: bool = True,
    without_token: bool = False,
    extra: list[str] | None = None,
) -> list[str]:
    """The ``jupyter lab`` command line, on loopback only.

    ``without_token`` switches Jupyter's login off; only tests on loopback should ask for it.
    """
    argv = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        f"--ServerApp.ip={LOOPBACK}",
        f"--ServerApp.root_dir={Path(root_dir).resolve()}",
    ]
    if port:
        argv += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if not open_browser:
        argv.append("--no-browser")
    if without_token:
        argv += ["--IdentityProvider.token=", "--ServerApp.password="]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers and CI runners often run as root
    return argv + list(extra or [])


@contextlib.contextmanager
def private_folder(prefix: str) -> Iterator[Path]:
    """A temporary folder only this user can read (it will hold the sandbox's tokens)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o700)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
