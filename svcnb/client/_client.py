"""``Client``: configuration, the resources, ``stats`` and ``server_time``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import httpx

from svcnb.assumptions import Pin, pin_value
from svcnb.client._config import (
    DEFAULT_DEADLINE,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_WAIT,
    DEFAULT_TIMEOUT,
    resolve,
    screened_url,
)
from svcnb.client._records import RecordParser
from svcnb.client._redact import Secret, as_secret
from svcnb.client._request import Requester
from svcnb.client._resources import Firewalls, Networks, Wallet, Webhooks
from svcnb.client._vms import VMs
from svcnb.config import pins as config_pins


def _pins(pins: Mapping[str, Pin | str] | None) -> dict[str, Pin]:
    if pins is None:
        return config_pins()
    return {
        name: pin if isinstance(pin, Pin) else Pin(pin_value(name, pin), "the pins given to Client")
        for name, pin in pins.items()
    }


# Connections per Client: also the most workers vms.all may use.
POOL_SIZE = 64


class Client:
    """The VM-hosting public API, every documented endpoint, paced and retried safely.

    ``api_key`` and ``base_url`` fall back to ``SVC_API_KEY`` and ``SVC_BASE_URL``. The base path
    (``/api/public/v1`` or ``/api/v1/api/public/v1``) is found on the first call. ``max_retries``
    bounds retries of 5xx and dropped connections per call; 429s are waited out separately.
    ``timeout`` bounds each step (connect, one read, one write); ``deadline`` (seconds, 120 by
    default) bounds each call as a whole, retries and waits included: a call still unanswered
    then raises ``TransportError``. ``max_wait`` (90 s) is the longest single wait the server may
    ask for (``Retry-After``, a rate-limit reset); a longer one raises ``RateLimited`` naming it.
    ``api_key`` may be a ``str`` or a :class:`~svcnb.client.Secret`; it is kept as a Secret,
    which shows as ``svc_…`` and its last four characters wherever it is printed.
    ``progress`` is the default for ``vms.all``'s progress bar. ``transport`` (an
    ``httpx.BaseTransport``) is for tests that mount an app in-process.

    ``pins`` are what this service means where its answers may not prove it (assumption name
    -> :class:`svcnb.assumptions.Pin` or a plain value; ``svcnb.assumptions``); without them,
    the config file's pins for all accounts. The frames read this client's answers with
    ``pins=client.pins``; ``svcnb.connect()`` gives a sandbox's client the pins of its dialect.
    """

    def __init__(
        self,
        api_key: str | Secret | None = None,
        base_url: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        deadline: float = DEFAULT_DEADLINE,
        max_wait: float = DEFAULT_MAX_WAIT,
        progress: bool = True,
        transport: httpx.BaseTransport | None = None,
        pins: Mapping[str, Pin | str] | None = None,
    ) -> None:
        # First, before anything can raise: a verbose traceback prints this frame's locals
        # (a base URL with a password in it is replaced by what says why it is refused).
        api_key = as_secret(api_key)
        # rebound on purpose, not a new name: the URL must not stay in a local (see above)
        base_url = screened_url(base_url, "base_url")  # type: ignore[assignment]
        settings = resolve(api_key, base_url, timeout, max_retries, deadline, max_wait)
        self._req = Requester(settings, transport=transport, pool_size=POOL_SIZE)
        self.progress = bool(progress)
        self.pins: dict[str, Pin] = _pins(pins)
        self._req.pins = self.pins  # the paging loop decides paging.* by the client's pins
        records = RecordParser()
        self.vms = VMs(self._req, records, lambda: self.progress)
        self.firewalls = Firewalls(self._req, records)
        self.networks = Networks(self._req, records)
        self.wallet = Wallet(self._req, records)
        self.webhooks = Webhooks(self._req, records)

    @property
    def base_url(self) -> str:
        return self._req.base_url

    @property
    def relied_on(self) -> dict[str, str]:
        """The pinned assumptions a list read by this client was complete only by: name ->
        where it was pinned (``paging.no_continuation_is_end``; ``svcnb snapshot`` says so)."""
        return dict(self._req.relied)

    @property
    def base_path(self) -> str | None:
        """The API prefix found on the first call (``None`` before it)."""
        return self._req.base_path

    @property
    def server_time(self) -> datetime | None:
        """The server's clock as of the last answer (its ``Date`` header), or ``None``."""
        return self._req.server_time

    @property
    def stats(self) -> dict:
        """``requests`` sent, ``retries``, ``rate_limited`` (429s seen), ``waited_seconds``."""
        return self._req.stats.as_dict()

    def close(self) -> None:
        self._req.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        req = getattr(self, "_req", None)  # a traceback of a failed __init__ shows it unbuilt
        if req is None:
            return "Client(<not built>)"
        return f"Client(base_url={req.base_url!r}, api_key={req.masked_token!r})"
