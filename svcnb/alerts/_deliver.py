"""Delivery of an alert message to an HTTPS endpoint as JSON, with retries and backoff (what is
retried, the deadline: the README, "Alerts").

Plain ``http://`` is refused because alerts name VMs, money and weaknesses of the firewall. The
endpoint URL often is a secret itself (Slack's holds a token in its path), so messages and
errors name only its scheme and host. Any 4xx other than 408 and 429 is final: sending the same
body again would get the same answer. The deadline cuts every socket step of every attempt, not
only each step's timeout, because a receiver may trickle its answer one byte at a time.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from svcnb.client import bound
from svcnb.config import ConfigError
from svcnb.errors import SvcnbError

__all__ = ["DeliveryError", "deliver", "endpoint_label", "longest_delivery"]

MAX_RETRY_AFTER = 60.0
# httpx's timeout bounds each of connect, write, read and pool wait on its own
_TIMEOUT_PHASES = 4


class DeliveryError(SvcnbError):
    """The alert could not be delivered after every attempt; names the host and the last
    answer, never the URL's path or query."""


def endpoint_label(url: str) -> str:
    """``https://hooks.example.com/…``: enough to know where, nothing that could be a token."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}/…"


def _verify(ca_bundle: str | None) -> ssl.SSLContext | bool:
    if ca_bundle is None:
        return True
    try:
        path = Path(ca_bundle).expanduser()
    except RuntimeError:  # ~user of a user this machine does not know
        path = Path(ca_bundle)
    try:
        return ssl.create_default_context(cafile=str(path))
    except (OSError, ssl.SSLError, ValueError) as exc:  # ValueError: a NUL in the name
        raise ConfigError(
            f"[alerts] ca_bundle {path} cannot be read as PEM certificates ({exc}); "
            "give the CA file the receiver's certificate is issued by"
        ) from None


def check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        shown = endpoint_label(url) if parts.hostname else "the value given"
        raise ConfigError(
            f"the alert URL ({shown}) must be https://HOST/...; set [alerts] url or "
            "$SVCNB_ALERT_URL to the receiver's HTTPS address"
        )


def longest_delivery(attempts: int, backoff_seconds: float, timeout_seconds: float) -> float:
    """The longest :func:`deliver` with these settings may take, in seconds: every attempt
    running into each of its timeouts, and every wait between attempts at its longest."""
    waits = sum(max(backoff_seconds * 2**n, MAX_RETRY_AFTER) for n in range(max(attempts - 1, 0)))
    return attempts * _TIMEOUT_PHASES * timeout_seconds + waits


def deliver(
    url: str,
    payload: Mapping[str, Any],
    *,
    ca_bundle: str | None = None,
    attempts: int = 4,
    backoff_seconds: float = 1.0,
    timeout_seconds: float = 10.0,
    deadline: float | None = None,
    sleep: Callable[[float], Any] = time.sleep,
    transport: httpx.BaseTransport | None = None,
) -> int:
    """POST ``payload`` as JSON to ``url``; returns the number of attempts it took.

    ``deadline`` (a ``time.monotonic()`` instant) ends it, whatever the receiver does. Raises
    ConfigError for a URL that is not HTTPS, an unreadable CA bundle or a proxy it cannot use,
    DeliveryError when every attempt failed, the deadline came first, or the receiver refused
    the message (a 4xx other than 408/429).
    """
    check_url(url)
    where = endpoint_label(url)
    last = ""
    late = False
    tried = 0
    with _client(ca_bundle, timeout_seconds, transport) as http:
        bound(http).until(deadline)
        for attempt in range(1, attempts + 1):
            if deadline is not None and time.monotonic() >= deadline:
                late = True
                break
            tried = attempt
            wait = backoff_seconds * 2 ** (attempt - 1)
            try:
                answer = http.post(url, json=payload)
            except httpx.HTTPError as exc:
                # the exception's text may quote the URL: name only its kind
                last = f"{type(exc).__name__} talking to {where}"
                if "CERTIFICATE_VERIFY_FAILED" in str(exc):
                    last = (
                        f"the TLS certificate of {where} is not trusted (a self-signed "
                        "receiver needs [alerts] ca_bundle or --ca-bundle)"
                    )
            else:
                if answer.is_success:
                    return attempt
                last = f"{where} answered {answer.status_code}"
                if answer.status_code not in (408, 429) and answer.status_code < 500:
                    raise DeliveryError(
                        f"the alert receiver refused the message: {last}; check the URL and "
                        "what the receiver expects (nothing was retried)"
                    )
                retry_after = answer.headers.get("Retry-After", "")
                if retry_after.isdigit():
                    wait = min(float(retry_after), MAX_RETRY_AFTER)
            if attempt < attempts:
                if deadline is not None and time.monotonic() + wait >= deadline:
                    late = True
                    break
                sleep(wait)
    if deadline is not None and time.monotonic() >= deadline:
        late = True  # the last attempt ran into it
    if late:
        raise DeliveryError(
            f"the alert was not delivered by the check's deadline ({tried} attempt(s)"
            f"{': ' + last if last else ''}); the alerts stay unannounced and the next check "
            "sends them again. A receiver this slow may need [alerts] deadline_seconds or "
            "svcnb check --deadline raised"
        )
    raise DeliveryError(
        f"the alert was not delivered after {attempts} attempt(s): {last}; the alerts stay "
        "unannounced and the next check sends them again"
    )


def _client(
    ca_bundle: str | None, timeout_seconds: float, transport: httpx.BaseTransport | None
) -> httpx.Client:
    try:
        return httpx.Client(
            verify=_verify(ca_bundle),
            timeout=timeout_seconds,
            transport=transport,
            follow_redirects=False,
        )
    except ImportError:
        # httpx sets up every proxy the environment names; a SOCKS one needs a package of its
        # own (the client says the same, svcnb.client._wire)
        pass
    raise ConfigError(
        "the environment names a proxy httpx cannot use without more packages (a SOCKS proxy "
        "in ALL_PROXY or HTTPS_PROXY?): pip install 'httpx[socks]', or unset it for svcnb check"
    )
