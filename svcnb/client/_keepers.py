"""Which keeper a token's rate budget goes to: the file of :mod:`svcnb.client._shared_budget`,
the Redis server of :mod:`svcnb.client._redis_budget`, or none, as ``$SVCNB_BUDGET`` or the
config file's ``[budget] backend`` say; one keeper of each place per process.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from svcnb.client._budget import ENV_BUDGET, Budget, TokenBudget, budget_key
from svcnb.client._redis_budget import RedisBudget
from svcnb.client._shared_budget import SharedBudget, check_budget_file
from svcnb.config import ConfigError, budget_config

OFF_WORDS = frozenset({"off", "none", "0", "false", "no"})
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def budget_backend() -> Path | str | None:
    """Where this process shares its budget: a file (Path), a Redis URL (str), or None (off).

    ``$SVCNB_BUDGET`` first (a file, a Redis URL, or ``off``), then ``[budget] backend`` of
    the config file, then the file in the user's cache folder.
    """
    env = os.environ.get(ENV_BUDGET, "").strip()
    if env:
        if env.startswith(REDIS_SCHEMES):
            return env
        return budget_path()
    configured = budget_config().get("backend")
    if configured is None:
        return budget_path()
    if configured.lower() in OFF_WORDS:
        return None
    if configured.startswith(REDIS_SCHEMES):
        return configured
    return Path(configured).expanduser()


def budget_path() -> Path | None:
    """The budget file this process shares, or None when ``SVCNB_BUDGET`` turns sharing off."""
    env = os.environ.get(ENV_BUDGET, "").strip()
    if env:
        if env.startswith(REDIS_SCHEMES):
            return None
        if env.lower() in OFF_WORDS:
            return None
        try:
            return Path(env).expanduser()
        except RuntimeError:  # ~user of a user this machine does not know
            raise ConfigError(
                f"{ENV_BUDGET}={env!r} starts with a home folder this machine does not know; give "
                "the path in full, or set it to off"
            ) from None
    cache = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(cache) if cache else Path.home() / ".cache"
    except RuntimeError:  # no home folder to put a cache in
        return None
    return base / "svcnb" / "budget.sqlite"


def token_budget(server: str, token_digest: str) -> TokenBudget | None:
    """The shared budget of a token on a server, where ``SVCNB_BUDGET`` or the config file's
    ``[budget]`` say (None: off)."""
    where = budget_backend()
    if where is None:
        return None
    keeper = redis_budget_for(where) if isinstance(where, str) else file_budget_for(where)
    return TokenBudget(keeper, budget_key(server, token_digest))


_keepers: dict[Path | str, Budget] = {}
_keepers_lock = threading.Lock()


def file_budget_for(path: Path) -> Budget:
    """The one SQLite budget of this process on ``path``."""
    with _keepers_lock:
        budget = _keepers.get(path)
        if budget is None:
            # said when the client is made: a budget that would go to another program's
            # database is a setting to fix, not a reason to pace alone unnoticed
            check_budget_file(path)
            budget = _keepers[path] = SharedBudget(path)
        return budget


def redis_budget_for(url: str) -> Budget:
    """The one Redis budget of this process on ``url``."""
    try:
        import redis  # noqa: F401  (checked here, so a missing package is said at once)
    except ImportError:
        raise ConfigError(
            f"the rate budget is to be shared on {url.split('@')[-1]}, which needs the redis "
            "package: pip install 'svcnb[redis]' (or set SVCNB_BUDGET to a file, or off)"
        ) from None

    with _keepers_lock:
        budget = _keepers.get(url)
        if budget is None:
            env = budget_config().get("password_env")
            password = os.environ.get(env) if env else None
            budget = _keepers[url] = RedisBudget(url, password)
        return budget
