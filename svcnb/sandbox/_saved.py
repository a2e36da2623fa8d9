"""A sandbox's account as one JSON document: save it, and start (or reset) a sandbox from it.

The document (``FORMAT``, version ``VERSION``) is what the backends hold, each backend writing
and reading its own part (``export()`` / ``restore()``), plus the clock and what the life engine
knows::

    {"format": "svcnb-sandbox-state", "version": 1,
     "now": "2026-11-01T00:00:00Z",          # the sandbox clock
     "seed": 7, "idCounters": {"vm": 40, ...}, # new ids continue where the saved ones stopped
     "vms": [...], "sshKeys": [...], "actions": [...],
     "pending": [{"vmId", "kind": "stop" | "provision", "at", "actionId"}],
     "firewalls": [...], "rules": [...],
     "networks": [...], "attachments": [...],
     "wallet": {...},
     "webhooks": [...], "deliveries": [...],
     "events": [...],
     "life": {"accruedUntil", "lowWarned", "anchors", "debts"},   # optional
     "listen": {"port": 40123}}  # optional, not the account (docs/contracts.md §2)

Records are in the spec's shape and key order, as ``GET /_sandbox/truth`` shows them, plus their
internal ``_`` keys (``_price``, ``_balance`` as decimal strings). Left out on purpose: API
tokens and webhook secrets (a restored sandbox makes its own default tokens and gives each
subscription a fresh secret), the server's machinery (faults, rate-limit windows, stored
idempotent answers, request counters) and delivery retries still queued.

Without ``life`` the life engine reads debts from the records' billing status, as it does for a
freshly seeded account (a state built from a store snapshot has no engine to ask). Without
``idCounters`` new ids start from 0 with ``seed``; ids are digests of the seed, so a different
seed keeps them apart from the saved ones. ``export_state`` of an imported document gives the
same document.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from svcnb import files as _files

from . import _deliveries, _life
from ._config import SandboxConfig
from ._envelopes import ApiFailure, iso, parse_iso
from ._state import State

FORMAT = "svcnb-sandbox-state"
VERSION = 1

_PARTS = (
    "vms",
    "sshKeys",
    "actions",
    "pending",
    "firewalls",
    "rules",
    "networks",
    "attachments",
    "wallet",
    "webhooks",
    "deliveries",
)


class StateError(ValueError):
    """A state document the sandbox cannot start from; the message says what is wrong."""


def export_state(state: State) -> dict:
    """The account of ``state`` as a JSON-ready document (module docstring)."""
    with state.lock:
        b = state.backends
        doc: dict = {
            "format": FORMAT,
            "version": VERSION,
            "now": iso(state.now()),
            "seed": state.seed,
            "idCounters": dict(state._counters),
        }
        for backend in (b.vms, b.firewalls, b.networks, b.wallet, b.webhooks):
            doc.update(backend.export())
        doc["events"] = json.loads(json.dumps(state.events))
        if state.life is not None:
            doc["life"] = state.life.export()
        return doc


def check_document(doc: object) -> dict:
    """``doc`` when it is a state document of this version; StateError saying what is not."""
    if not isinstance(doc, dict):
        raise StateError("a sandbox state must be a JSON object")
    if doc.get("format") != FORMAT:
        raise StateError(
            f"not a sandbox state: 'format' is {doc.get('format')!r}, expected {FORMAT!r} "
            "(save one with `svcnb sandbox --save-state-on-exit FILE` or GET /_sandbox/state)"
        )
    if doc.get("version") != VERSION:
        raise StateError(
            f"sandbox state version {doc.get('version')!r} is not supported; "
            f"this svcnb reads version {VERSION}"
        )
    if not isinstance(doc.get("now"), str):
        raise StateError("a sandbox state needs 'now', the sandbox time as ISO 8601")
    try:
        parse_iso(doc["now"])
    except ValueError:
        raise StateError(f"'now' {doc['now'][:40]!r} is not an ISO 8601 time with a zone") from None
    if not isinstance(doc.get("wallet"), dict) or "_balance" not in doc["wallet"]:
        raise StateError("a sandbox state needs 'wallet' with its '_balance'")
    for part in _PARTS:
        if part != "wallet" and not isinstance(doc.get(part, []), list):
            raise StateError(f"'{part}' must be a list")
    return doc


def config_for(doc: dict, config: SandboxConfig) -> SandboxConfig:
    """``config`` with the clock and seed of the saved account."""
    seed = doc.get("seed", config.seed)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise StateError(f"'seed' must be an integer, got {seed!r}")
    return config.with_changes(epoch=parse_iso(doc["now"]), seed=seed)


def import_state(state: State, doc: dict, config: SandboxConfig) -> State:
    """Replace the account of ``state`` with the one ``doc`` holds (default tokens, faults and
    settings as a reset leaves them). StateError when ``doc`` does not hold together."""
    check_document(doc)
    with state.lock:
        state.clear(config_for(doc, config))
        try:
            b = state.backends
            b.vms.restore(doc)
            b.firewalls.restore(doc)
            b.networks.restore(doc)
            b.wallet.restore(doc)
            b.webhooks.restore(doc)
            state.events = json.loads(json.dumps(doc.get("events", [])))
            b.tokens.install_defaults()
            counters = doc.get("idCounters")
            if isinstance(counters, dict):
                state._counters = {str(k): int(v) for k, v in counters.items()}
            _life.install(state, doc.get("life"))
            _deliveries.install(state)
        except ApiFailure as exc:  # a link to a record the document does not hold
            raise StateError(f"the sandbox state does not hold together: {exc.message}") from None
        except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
            raise StateError(
                f"the sandbox state does not hold together: {type(exc).__name__} {exc}"
            ) from None
    return state


def read_state_file(path: str | os.PathLike[str]) -> dict:
    """The state document in ``path``; StateError naming the file when it is not one."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise StateError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    try:
        return check_document(doc)
    except StateError as exc:
        raise StateError(f"{path}: {exc}") from None


def write_state_file(doc: dict, path: str | os.PathLike[str]) -> Path:
    """Write ``doc`` to ``path`` whole or not at all (:func:`svcnb.files.write`: a private
    temporary file renamed into place; a ``path`` that is a symbolic link is refused)."""
    # private: a copy of a stored account holds its names, hostnames and addresses
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    return _files.write(path, text, secret=True, make_folder=True)
