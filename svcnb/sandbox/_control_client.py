"""``Control``: a small httpx helper with one method per control endpoint (docs/contracts.md §2).

Each method returns the envelope's ``data``; a failure envelope raises ``RuntimeError`` carrying
the sandbox's own message. :meth:`Control.clock` is the one reader of the sandbox clock over
HTTP. It is here, not on the client's side of the HTTP line, because the control endpoints are
the sandbox's own wire (outside the API prefix, in no dialect): their client ships with the
sandbox, and this module imports httpx and nothing of the emulator, so a receiver reading the
clock loads no server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from ._envelopes import parse_iso


@dataclass(frozen=True)
class ClockReading:
    """One answer of ``GET /_sandbox/clock``: the sandbox's time (UTC) and ``time_scale``, the
    sandbox seconds that pass per real second (0: the clock moves only when advanced)."""

    now: datetime
    time_scale: float


class Control:
    """Drives ``/_sandbox/`` of one sandbox. ``timeout`` (seconds) bounds each request;
    ``trust_env=False`` ignores proxy settings in the environment."""

    def __init__(
        self,
        control_url: str,
        transport: httpx.BaseTransport | None = None,
        *,
        timeout: float = 60.0,
        trust_env: bool = True,
    ) -> None:
        self.url = control_url.rstrip("/")
        # No TLS can happen on plain http with no proxy from the environment, so no TLS context
        # is made (loading the CA bundle costs more CPU than the calls a test makes)
        plain = httpx.URL(self.url).scheme == "http" and not trust_env
        self._http = httpx.Client(
            base_url=self.url,
            timeout=timeout,
            transport=transport,
            trust_env=trust_env,
            verify=not plain,
        )

    def __repr__(self) -> str:
        return f"Control({self.url!r})"

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, body: object = None) -> object:
        response = self._http.request(method, path, json=body)
        payload = response.json()
        if not payload.get("success"):
            raise RuntimeError(
                f"sandbox control {method} {path} answered {response.status_code}: "
                f"{payload.get('error')}"
            )
        return payload["data"]

    def _object(self, method: str, path: str, body: object = None) -> dict[str, Any]:
        """``_call`` for an endpoint whose ``data`` is a JSON object."""
        data = self._call(method, path, body)
        if not isinstance(data, dict):
            raise TypeError(
                f"sandbox control {method} {path} answered a {type(data).__name__}, not an object"
            )
        return data

    def _objects(self, method: str, path: str) -> list[dict[str, Any]]:
        """``_call`` for an endpoint whose ``data`` is a JSON array of objects."""
        data = self._call(method, path)
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise TypeError(
                f"sandbox control {method} {path} answered a {type(data).__name__}, "
                "not a list of objects"
            )
        return data

    def reset(
        self, seed: int | None = None, vms: int | None = None, dialect: str | None = None
    ) -> dict[str, Any]:
        """Seed the account again; ``dialect`` (``default``, ``acme``, ``random:SEED``, ...)
        switches how it is said until the next reset (left out: the server's own dialect)."""
        body = {
            k: v for k, v in (("seed", seed), ("vms", vms), ("dialect", dialect)) if v is not None
        }
        return self._object("POST", "/reset", body)

    def dialect(self) -> dict[str, Any]:
        """``{name, choices}`` of the dialect the sandbox speaks now."""
        return self._object("GET", "/dialect")

    def truth(self) -> dict[str, Any]:
        """The account as the default dialect says it, whatever dialect is active: ``{vms,
        wallet, firewalls, rules, networks, attachments, webhooks, deliveries}``."""
        return self._object("GET", "/truth")

    def state(self) -> dict[str, Any]:
        """The whole account as a saved state document (``svcnb.sandbox._saved``)."""
        return self._object("GET", "/state")

    def load_state(self, doc: dict) -> dict[str, Any]:
        """Replace the account with the saved state ``doc`` (a reset then goes back to it);
        a summary ``{now, vms, firewalls, networks, webhooks}``."""
        return self._object("PUT", "/state", doc)

    def save_state(self, path: str | os.PathLike[str]) -> Path:
        """Write the account's saved state document to ``path``."""
        from ._saved import write_state_file

        return write_state_file(self.state(), path)

    def instance(self) -> str:
        """This server's identity (drawn at its start; a reset keeps it)."""
        instance = self._object("GET", "/instance")["instance"]
        if not isinstance(instance, str):
            raise TypeError(f"the instance answer is a {type(instance).__name__}, not a string")
        return instance

    @property
    def timeout(self) -> float | None:
        """The read timeout of each request, in seconds."""
        return self._http.timeout.read

    def clock(self) -> ClockReading:
        """The sandbox clock as it answers now. RuntimeError (a failure envelope), ValueError,
        KeyError or TypeError when the answer is not a clock's; httpx.HTTPError when it cannot
        be asked."""
        data = self._object("GET", "/clock")
        return ClockReading(parse_iso(data["now"]), float(data.get("timeScale") or 0.0))

    def now(self) -> datetime:
        return self.clock().now

    def advance(self, seconds: float) -> datetime:
        data = self._object("POST", "/clock/advance", {"seconds": seconds})
        return parse_iso(data["now"])

    def tokens(self) -> list[dict[str, Any]]:
        return self._objects("GET", "/tokens")

    def create_token(
        self,
        name: str,
        scopes: list[str],
        expires_at: str | datetime | None = None,
        rate_limit: int | None = None,
    ) -> dict[str, Any]:
        body: dict = {"name": name, "scopes": list(scopes)}
        if expires_at is not None:
            body["expiresAt"] = (
                expires_at.isoformat() if isinstance(expires_at, datetime) else expires_at
            )
        if rate_limit is not None:
            body["rateLimit"] = rate_limit
        return self._object("POST", "/tokens", body)

    def revoke_token(self, token_id: str) -> dict[str, Any]:
        return self._object("POST", f"/tokens/{token_id}/revoke")

    def update_token(self, token_id: str, **fields: object) -> dict[str, Any]:
        """``rateLimit`` and/or ``expiresAt`` (also accepted as rate_limit / expires_at)."""
        names = {"rate_limit": "rateLimit", "expires_at": "expiresAt"}
        return self._object(
            "PATCH", f"/tokens/{token_id}", {names.get(k, k): v for k, v in fields.items()}
        )

    def delete_token(self, token_id: str) -> dict[str, Any]:
        return self._object("DELETE", f"/tokens/{token_id}")

    def set_faults(self, **faults: object) -> dict[str, Any]:
        """Replace the faults: latencyMs, errorRate, errorRoutes, dropRate, upstreamSyncFail,
        detachFail, seed (all off when not given)."""
        return self._object("PUT", "/faults", faults)

    def faults(self) -> dict[str, Any]:
        return self._object("GET", "/faults")

    def settings(self, **changes: object) -> dict[str, Any]:
        """Change rateWindowSeconds, ipRateLimit, defaultRateLimit, caBundle, trustedProxies; no
        arguments: read them (``caBundle`` and ``trustedProxies`` are listed once set)."""
        if not changes:
            return self._object("GET", "/settings")
        return self._object("PUT", "/settings", changes)

    def trust_ca_bundle(self, path: str | os.PathLike[str] | None) -> dict[str, Any]:
        """Make webhook deliveries trust the PEM CA bundle at ``path`` (an absolute path the
        sandbox process can read) besides the system store; ``None`` forgets it. Returns the
        settings. A reset goes back to the ``ca_bundle`` the sandbox started with."""
        bundle = None if path is None else os.fspath(Path(path).resolve())
        return self._object("PUT", "/settings", {"caBundle": bundle})

    def topup(self, amount: float | str) -> dict[str, Any]:
        return self._object("POST", "/wallet/topup", {"amount": amount})

    def emit(self, type: str, data: dict | None = None) -> dict[str, Any]:  # noqa: A002
        return self._object("POST", "/events", {"type": type, "data": data or {}})

    def events(self) -> list[dict[str, Any]]:
        return self._objects("GET", "/events")

    def actions(self) -> list[dict[str, Any]]:
        return self._objects("GET", "/actions")

    def stats(self) -> dict[str, Any]:
        return self._object("GET", "/stats")

    def create_vm(
        self, name: str | None = None, region: str | None = None, plan: str | None = None
    ) -> dict[str, Any]:
        body = {
            k: v for k, v in (("name", name), ("region", region), ("plan", plan)) if v is not None
        }
        return self._object("POST", "/vms", body)

    def vm_action(self, vm_id: str, action: str) -> dict[str, Any]:
        """``action`` is start, restart, terminate, suspend or touch."""
        return self._object("POST", f"/vms/{vm_id}/{action}")

    def vm(self, vm_id: str) -> dict[str, Any]:
        return self._object("GET", f"/vms/{vm_id}")
