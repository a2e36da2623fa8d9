"""Receiving the service's webhooks: verify the signature, de-duplicate, log durably.

>>> from svcnb.webhooks import Receiver, free_port, serve
>>> port = free_port()                                                   # doctest: +SKIP
>>> hook = client.webhooks.create(f"https://127.0.0.1:{port}/", ["vm.stopped"])  # doctest: +SKIP
>>> receiver = Receiver(hook["secret"], "data/store")                    # doctest: +SKIP
>>> with serve(receiver, certfile="cert.pem", keyfile="key.pem", port=port):  # doctest: +SKIP
...     ...  # events arrive; read them with Store("data/store").events()

or from a shell: ``SVCNB_WEBHOOK_SECRET=... svcnb listen --port 8443 --cert C --key K``.
Accepted events are read back with ``Store.events()``.
"""

from __future__ import annotations

from svcnb.webhooks._errors import (
    MalformedSignature,
    MissingSignature,
    PayloadError,
    SignatureError,
    SignatureMismatch,
)
from svcnb.webhooks._receiver import (
    DEFAULT_TOLERANCE,
    Event,
    Receiver,
    parse_event,
    system_clock,
)
from svcnb.webhooks._server import Limits, RunningReceiver, bind, free_port, serve, uvicorn_server
from svcnb.webhooks._verify import verify

__all__ = [
    "DEFAULT_TOLERANCE",
    "Event",
    "Limits",
    "MalformedSignature",
    "MissingSignature",
    "PayloadError",
    "Receiver",
    "RunningReceiver",
    "SignatureError",
    "SignatureMismatch",
    "bind",
    "free_port",
    "parse_event",
    "serve",
    "system_clock",
    "uvicorn_server",
    "verify",
]
