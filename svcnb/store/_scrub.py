"""Nothing secret is kept in a store: :func:`scrub` drops keys that name secrets and masks any
token-like ``svc_...`` text to its last four characters (``svcnb.client.redact``, the one masking
function), in text and bytes alike, in keys and values at any depth, before anything is written
(snapshots' metadata, journal records, pulled frames' notes)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pandas as pd

from svcnb.client import redact

_SECRET_KEYS = {"secret", "api_key", "apikey", "x-api-key", "token", "password", "authorization"}


def scrub(value: Any) -> Any:
    """``value`` with secret-named keys dropped and token-like text masked, at any depth.

    What comes back holds only what JSON holds (and datetimes, which :func:`jsonable`
    writes): anything else is made text here, and masked, because ``str()`` of bytes or of an
    object shows what it holds and nothing would mask it later.
    """
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            key = scrub(k) if isinstance(k, str | bytes | bytearray | memoryview) else redact(k)
            if key.lower() not in _SECRET_KEYS:
                out[key] = scrub(v)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return redact(bytes(value).decode("utf-8", "backslashreplace"))
    if value is None or isinstance(value, bool | int | float | datetime | pd.Timestamp):
        return value
    return redact(str(value))


def jsonable(value: Any) -> Any:
    if isinstance(value, datetime | pd.Timestamp):
        return pd.Timestamp(value).tz_convert("UTC").isoformat() if value.tzinfo else str(value)
    return redact(str(value))
