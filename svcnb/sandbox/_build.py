"""Building and resetting the account: seed it (or load a saved state), add the default tokens,
plug in the life and delivery engines (``_life.install`` and ``_deliveries.install`` run after
every build)."""

from __future__ import annotations

from . import _deliveries, _life, _saved
from ._config import SandboxConfig
from ._seed import seed_account
from ._state import State


def new_state(config: SandboxConfig, saved: dict | None = None) -> State:
    """A seeded account for ``config``, or the account ``saved`` holds (a state document of
    ``_saved``; a reset then goes back to it)."""
    state = State(config)
    state.start_doc = saved
    reset(state, config)
    return state


def reset(state: State, config: SandboxConfig, *, reseed: bool = False) -> State:
    """Empty ``state`` in place and seed it again from ``config`` (faults off, settings, tokens
    and counters back to their defaults; the default tokens keep their secrets). A sandbox
    started from a saved state goes back to that state unless ``reseed``."""
    with state.lock:
        if state.start_doc is not None and not reseed:
            return _saved.import_state(state, state.start_doc, config)
        state.clear(config)
        seed_account(state, config.vms)
        state.backends.tokens.install_defaults()
        _life.install(state)
        _deliveries.install(state)
    return state
