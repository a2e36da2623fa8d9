"""Building and resetting the account: seed it, add the default tokens, plug in the life and
delivery engines (``_life.install`` and ``_deliveries.install`` run after every build)."""

from __future__ import annotations

from . import _deliveries, _life
from ._config import SandboxConfig
from ._seed import seed_account
from ._state import State


def new_state(config: SandboxConfig) -> State:
    """A seeded account for ``config``."""
    state = State(config)
    reset(state, config)
    return state


def reset(state: State, config: SandboxConfig) -> State:
    """Empty ``state`` in place and seed it again from ``config`` (faults off, settings, tokens
    and counters back to their defaults; the default tokens keep their secrets)."""
    with state.lock:
        state.clear(config)
        seed_account(state, config.vms)
        state.backends.tokens.install_defaults()
        _life.install(state)
        _deliveries.install(state)
    return state
