"""One observation of a service: every GET ``svcnb doctor`` (and ``--record``) sends, and the
readers of what came back, once for both, so the table and the dialect file cannot disagree.

The readers give plain observations; :mod:`svcnb.learn.doctor` judges them into findings and
:mod:`svcnb.learn.record` states them as a dialect; neither reads the service itself.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd

from svcnb import frames
from svcnb.assumptions import Pins
from svcnb.client import Client, Listing, Page, parse_page
from svcnb.errors import (
    ApiError,
    AuthError,
    Forbidden,
    PagingWarning,
    SvcnbError,
    TransportError,
    ValidationError,
)
from svcnb.frames import SCHEMAS

# the money fields of the records read: (label, where the value is taken from)
MONEY_FIELDS = ("billing.priceMonthly", "plan.priceMonthly", "wallet balance")
_TIME = re.compile(
    r"\d{4}-?\d{2}-?\d{2}[Tt ]\d{2}(?::?\d{2}(?::?\d{2})?)?(?:[.,](\d+))?\s*"
    r"([Zz]|[+-]\d{2}(?::?\d{2})?)?"
)
_FRACTIONS = {3: "milliseconds", 6: "microseconds", 9: "nanoseconds"}
# the nested keys a full VM object carries and a summary does not
DETAIL_KEYS = ("sshKeys", "firewalls", "privateNetworks")
_T = TypeVar("_T")


def _kind(value: object) -> str:
    """The JSON type of an amount inside a money object."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?\d+", text):
            return "integer string"
        return "decimal string" if re.fullmatch(r"-?\d+\.\d+", text) else "string"
    return "null" if value is None else type(value).__name__


def money_form(value: object) -> str:
    """How a price or balance is written, for the table (whether svcnb reads it is
    ``parse_money``'s answer, never this description's)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        if re.fullmatch(r"\s*[+-]?\d+(\.\d+)?\s*", value):
            return "numeric string"
        return "text with a currency" if re.search(r"[A-Z]{3}", value) else "text"
    if isinstance(value, dict):
        keys = [
            f"{k}: {_kind(v)}" if k in ("amount", "value", "units") else str(k)
            for k, v in value.items()
        ]
        return "{" + ", ".join(keys) + "}"
    return f"a JSON {type(value).__name__}"


def time_form(value: object) -> str:
    """How a time is written: its zone and its fraction of a second (whether svcnb reads it is
    the frames' answer, never this description's)."""
    if isinstance(value, bool) or not isinstance(value, str):
        return f"a JSON {'number' if isinstance(value, int | float) else type(value).__name__}"
    match = _TIME.fullmatch(value.strip())
    if match is None:
        return "not ISO 8601"
    digits, zone = match.group(1), match.group(2)
    if zone is None:
        where = "no zone"
    elif zone in ("Z", "z"):
        where = "Z"
    else:
        where = f"offset {zone}"
    if digits is None:
        frac = "whole seconds"
    else:
        frac = _FRACTIONS.get(len(digits), f"{len(digits)}-digit fractions of a second")
    return f"{where}, {frac}"


def at(record: object, path: str) -> object:
    """The value at a schema path (``a.b``; ``a|b`` the first alternative not null)."""
    for alternative in path.split("|"):
        value = record
        for part in alternative.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is not None:
            return value
    return None


def counted(counter: Counter) -> str:
    return ", ".join(f"{k} ×{n}" for k, n in counter.most_common())


def quiet(build: Callable[[], _T]) -> _T:
    """``build()`` without the frames' warnings: the doctor reports what they say itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", frames.UnreadableValueWarning)
        return build()


def times_read(values: Sequence[object], pins: Pins | None = None) -> list[bool]:
    """Whether svcnb reads each time value: the frames' own time reader (every time column of
    every frame is read by it alike) reads them all in one column, with ``pins`` (a client's;
    None: the config file's) for the zone of a time that states none."""
    if not values:
        return []
    records = [{"id": str(i), "createdAt": v} for i, v in enumerate(values)]
    column = quiet(lambda: frames.firewalls(records, pins=pins))["created_at"]
    return [not bool(pd.isna(v)) for v in column]


@dataclass
class ListRead:
    """One list read through the client: what it held and whether it is proven complete."""

    label: str
    items: Listing | None = None
    refused: str | None = None  # why the token could not read it (not a doubt: nothing read)
    failed: str | None = None  # why reading it failed (unproven)


@dataclass
class Seen:
    """One answer the pass's requests got (kept only when recording): the path and query
    asked, and the reply, or the status and text of the failure."""

    path: str
    params: dict[str, Any]
    reply: Any = None  # the client's Reply: data, meta, body, headers
    status: int | None = None
    message: str = ""


@dataclass
class TimeSeen:
    """One time value of a record read: its schema path (the first name), the value as the
    service wrote it, and whether the frames' reader read it."""

    path: str
    value: object
    read: bool


class Observation:
    """The one pass over a service (GET requests only) and what it saw.

    ``keep=True`` keeps every answer of the one request path (``seen``), the lists' pages too,
    for a dialect file. Each request step is its own method, called in the doctor's order, so a
    failure leaves the lines judged before it."""

    def __init__(self, client: Client, keep: bool = False) -> None:
        self.client = client
        self.req = client._req  # the one request path, for the raw answers paging hides
        self.keeping = keep
        self.seen: list[Seen] = []
        self.rate_headers: Mapping[str, str] | None = None
        self.words: dict[str, Counter] = {"vm_status": Counter(), "billing_status": Counter()}
        self.vms: list[dict] = []
        self.lists: list[ListRead] = []
        self.records: dict[str, list[dict]] = {}  # frame name -> the records read for it
        self.wallet: dict | None = None
        self.endpoints: list[str] = []  # "GET /path ok" or "GET /path 403"
        self.refused: list[str] = []  # the endpoints this token may not read (403)
        self.wallet_failed: str | None = None  # why the wallet could not be read (not a 403)
        self._times: list[TimeSeen] | None = None

    # -- the pass ----------------------------------------------------------------------------
    @contextmanager
    def watching(self) -> Iterator[None]:
        """Every answer of the one request path noted in ``seen`` (the lists' pages too), when
        keeping them; nothing otherwise."""
        if not self.keeping:
            yield
            return
        ask = self.req.request

        def request(method: str, path: str, **kw: Any) -> Any:
            params = dict(kw.get("params") or {})
            try:
                reply = ask(method, path, **kw)
            except ApiError as exc:
                self.seen.append(Seen(path, params, None, exc.status, exc.server_message))
                raise
            self.seen.append(Seen(path, params, reply, reply.status))
            return reply

        self.req.request = request  # type: ignore[method-assign]
        try:
            yield
        finally:
            del self.req.request

    def get(self, path: str, params: dict | None = None, scope: str | None = None) -> Any:
        return self.req.request("GET", path, params=params, scope=scope)

    def ask(self, params: dict[str, Any]) -> tuple[Any, tuple[int, str] | None]:
        """``GET /vms`` with ``params``: (the reply, None) or (None, (status, text))."""
        try:
            return self.get("/vms", params, "vms:read"), None
        except ApiError as exc:
            return None, (exc.status, exc.server_message)

    def served(self, per_page: int) -> tuple[Page | None, str | None]:
        """The page ``GET /vms`` serves asked ``per_page``, or why it was refused."""
        try:
            reply = self.get("/vms", {"perPage": per_page}, "vms:read")
        except ApiError as exc:
            return None, f"refused with {exc.status} ({exc.server_message[:60]})"
        return parse_page(reply, None, self.req), None

    def read_lists(self) -> None:
        """Every list through svcnb's own client (the first firewall's rules, the first
        network's attachments, the first webhook's deliveries that has some), one VM's detail
        and the wallet; then the status words of the VMs read are counted."""
        c = self.client
        vms = self._list("GET /vms", c.vms.list, "vms:read")
        self.vms = list(vms.items or [])
        self.records["vms"] = self.vms
        if self.vms:
            try:
                c.vms.get(self.vms[0]["id"])
                self.endpoints.append("GET /vms/{id} ok")
            except ApiError as exc:
                self.endpoints.append(f"GET /vms/{{id}} {exc.status}")
            except ValueError:  # an id the service gave that is no path segment: not sent
                self.endpoints.append("GET /vms/{id} not sent (the id is no path segment)")
        fws = self._list("GET /firewalls", c.firewalls.list, "firewalls:read")
        self.records["firewalls"] = list(fws.items or [])
        if fws.items:
            fw = fws.items[0]["id"]
            rules = self._list(
                "GET /firewalls/{id}/rules", lambda: c.firewalls.rules(fw), "firewalls:read"
            )
            self.records["firewall_rules"] = list(rules.items or [])
        nets = self._list("GET /networks", c.networks.list, "networks:read")
        self.records["networks"] = list(nets.items or [])
        if nets.items:
            net = nets.items[0]["id"]
            att = self._list(
                "GET /networks/{id}/attachments",
                lambda: c.networks.attachments(net),
                "networks:read",
            )
            self.records["attachments"] = list(att.items or [])
        try:
            self.wallet = c.wallet.get()
            self.records["wallet"] = [self.wallet]
            self.endpoints.append("GET /wallet ok")
        except AuthError:
            raise
        except Forbidden as exc:
            self.endpoints.append(f"GET /wallet {exc.status}")
            self.refused.append("GET /wallet")
        except ApiError as exc:
            self.endpoints.append(f"GET /wallet {exc.status}")
            self.wallet_failed = f"answered {exc.status}: {exc.server_message[:80] or exc}"
        hooks = self._list("GET /webhooks", c.webhooks.list, "webhooks:read")
        self.records["webhooks"] = list(hooks.items or [])
        for hook in hooks.items or []:
            wh = hook["id"]
            read = self._list(
                "GET /webhooks/{id}/deliveries", functools.partial(c.webhooks.deliveries, wh),
                "webhooks:read",
            )  # fmt: skip
            if read.items:  # the first webhook with delivery records is the one looked at
                self.records["deliveries"] = list(read.items)
                break
        for vm in self.vms:
            self.words["vm_status"][vm.get("status")] += 1
            billing = vm.get("billing")
            if isinstance(billing, dict):
                self.words["billing_status"][billing.get("status")] += 1

    def _list(self, label: str, read: Callable[[], Any], scope: str) -> ListRead:
        entry = ListRead(label)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PagingWarning)  # the line says it instead
                entry.items = read()
            self.endpoints.append(f"{label} ok")
        except AuthError:
            raise
        except Forbidden as exc:
            entry.refused = f"{exc.status}, needs {getattr(exc, 'scope', None) or scope}"
            self.endpoints.append(f"{label} {exc.status}")
            self.refused.append(label)
        except TransportError:
            raise
        except ApiError as exc:
            entry.failed = f"answered {exc.status}: {exc.server_message[:80] or exc}"
            self.endpoints.append(f"{label} {exc.status}")
        except (SvcnbError, ValueError) as exc:  # PagingError, an id that is no path segment
            entry.failed = str(exc)[:300]
            self.endpoints.append(f"{label} unread")
        self.lists.append(entry)
        return entry

    def rate_limit(self) -> Mapping[str, str]:
        """The X-RateLimit-* headers (and any others) of one small ``GET /vms``."""
        try:
            reply = self.get("/vms", {"perPage": 1}, "vms:read")
        except ValidationError:  # a service that refuses perPage: a plain GET has the headers too
            reply = self.get("/vms", None, "vms:read")
        self.rate_headers = reply.headers
        return reply.headers

    # -- the readers -------------------------------------------------------------------------
    def read(self, label: str) -> ListRead | None:
        """The first list read under ``label`` (``GET /vms``), if it was read."""
        return next((e for e in self.lists if e.label == label), None)

    @property
    def listed(self) -> int | None:
        """How many VMs ``GET /vms`` holds, where its list is proven complete."""
        vms = self.read("GET /vms")
        items = vms.items if vms is not None else None
        return len(items) if items is not None and items.complete else None

    def money_values(self, label: str) -> list[object]:
        """The values of one of :data:`MONEY_FIELDS` in the records read, as written."""
        if label == "wallet balance":
            return [] if self.wallet is None else [self.wallet.get("balance")]
        holder, _, key = label.partition(".")
        return [
            vm[holder][key]
            for vm in self.vms
            if isinstance(vm.get(holder), dict) and key in vm[holder]
        ]

    def times(self) -> list[TimeSeen]:
        """Every time field the frames read, in every record read, read as the frames read it
        (with the client's pins: they decide only a time that states no zone)."""
        if self._times is None:
            seen: list[tuple[str, object]] = []
            for resource, records in self.records.items():
                schema = SCHEMAS[resource]  # type: ignore[index]
                paths = [f.path for f in schema.values() if f.dtype == "datetime64[ns, UTC]"]
                for record in records:
                    for path in paths:
                        value = at(record, path)
                        if value is not None:
                            seen.append((path.split("|", 1)[0], value))
            read = times_read([v for _, v in seen], self.client.pins)
            self._times = [TimeSeen(p, v, r) for (p, v), r in zip(seen, read, strict=True)]
        return self._times

    def vm_keys(self) -> list[tuple[frozenset[str], bool]]:
        """Per VM read: the nested keys of a full object it carries, and whether it carries
        ``updatedAt`` (a summary, a full object, or a summary a refresh cannot date)."""
        return [
            (frozenset(k for k in DETAIL_KEYS if k in vm), "updatedAt" in vm) for vm in self.vms
        ]

    @property
    def deliveries(self) -> list[dict]:
        """The delivery records of the first webhook that had some (as the service wrote them)."""
        return self.records.get("deliveries") or []

    def delivery_keys(self) -> list[str]:
        """The keys the delivery records carry, in the order first seen."""
        return list(dict.fromkeys(k for r in self.deliveries if isinstance(r, dict) for k in r))
