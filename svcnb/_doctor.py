"""``svcnb doctor``: what this service answered where the spec says "not shown", and what of it
svcnb proved or understood.

Read-only against any configured service: it sends only GET requests (the pages of the lists it
reads, and a few more) and never changes anything in the account. It vouches only for what it
proved (docs/contracts.md section 0, the two reading rules):

- every list it reads (VMs, firewalls, the rules of one firewall, networks, the attachments of
  one network, webhooks, the deliveries of one webhook) is read through svcnb's own client, and
  the line says how the list was proven complete (the ``Listing``'s proof: a matching total, an
  explicit end, an empty page after a short one) or why it was not (its doubt, naming the keys
  svcnb did not understand);
- money: the forms seen per field (``billing.priceMonthly``, ``plan.priceMonthly``, the wallet's
  ``balance``), each read by ``svcnb.frames.parse_money``, and any it could not read (why);
- times: the forms seen in every time field the frames read, each read by the frames' own time
  reader, and any it could not read;
- units: ``svcnb.frames.check_units`` on the VMs read, one line each for ram and disk;
- delivery records: the keys placed (key -> the spec's field), and the keys the frames cannot
  place (``svcnb.frames._deliveries.unplaced_keys``);
- the status and billing words seen, mapped or unknown; the first answer's paging keys, the page
  sizes served; the rate-limit headers; which read endpoints the token can use.

A line marked ``!`` says UNPROVEN: a list not proven complete, a money or time form not read, a
unit in doubt, a delivery key not placed, an unknown status word. Any such line makes the exit
code 3; 0 only when everything read was proven and understood. ``--write-config`` pins the
vocabulary it saw (and any ``--map WORD=CLASS`` you give for the words it does not know) into
the config file the client reads.

``--record FILE`` writes what it proved as a dialect file (docs/twin.md), in the points of the
sandbox's dialects, for ``svcnb sandbox --dialect-file FILE`` to speak: a twin of the service.
After the table it sends a few more GET requests (the other base path, page sizes up to 1000 to
find the largest one taken, a size of 0), so the table's lines are those of a run without it.
Each point is stated only as proven; one not seen is under ``[not_observed]``, one seen in a form
the sandbox cannot speak under ``[not_expressible]``, one deduced under ``[inferred]``. Nothing in
the file names the account: no ids, no host, no token, no text the service wrote.
"""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import tomli_w

from svcnb import frames, vocab
from svcnb.client import Client, Listing, Page, parse_page
from svcnb.config import API_PREFIXES, ConfigError, _replace
from svcnb.errors import (
    ApiError,
    AuthError,
    Forbidden,
    PagingWarning,
    SvcnbError,
    TransportError,
    ValidationError,
)
from svcnb.frames import (
    MEANINGS,
    PLACED,
    SCHEMAS,
    UnknownMoneyKeyError,
    parse_money,
    unplaced_keys,
)
from svcnb.sandbox import CURRENCY, MONEY, TIMESTAMPS, TOKEN_NAMES, Dialect

ASKED_PAGE = 100  # the page size asked of GET /vms, to see what the server serves
PROBE_PAGE = 1000  # far above any plausible cap: tells rejecting servers from clamping ones
UNPROVEN = "UNPROVEN"
# the money fields of the records read: (label, where the value is taken from)
MONEY_FIELDS = ("billing.priceMonthly", "plan.priceMonthly", "wallet balance")
_TIME = re.compile(
    r"\d{4}-?\d{2}-?\d{2}[Tt ]\d{2}(?::?\d{2}(?::?\d{2})?)?(?:[.,](\d+))?\s*"
    r"([Zz]|[+-]\d{2}(?::?\d{2})?)?"
)
_FRACTIONS = {3: "milliseconds", 6: "microseconds", 9: "nanoseconds"}


@dataclass
class Finding:
    """One line of the doctor's table: a point the spec leaves open and what was seen.

    ``ok`` False: UNPROVEN (a list not proven complete, a form not understood): exit code 3.
    """

    point: str
    seen: str
    ok: bool = True
    detail: dict[str, Any] = field(default_factory=dict)


def _kind(value: Any) -> str:
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


def money_form(value: Any) -> str:
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


def time_form(value: Any) -> str:
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


def _at(record: Any, path: str) -> Any:
    """The value at a schema path (``a.b``; ``a|b`` the first alternative not null)."""
    for alternative in path.split("|"):
        value = record
        for part in alternative.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is not None:
            return value
    return None


def _counted(counter: Counter) -> str:
    return ", ".join(f"{k} ×{n}" for k, n in counter.most_common())


def _quiet(build: Callable[[], Any]) -> Any:
    """``build()`` without the frames' warnings: the doctor reports what they say itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", frames.UnreadableValueWarning)
        return build()


def times_read(values: list[Any]) -> list[bool]:
    """Whether svcnb reads each time value: the frames' own time reader (every time column of
    every frame is read by it alike) reads them all in one column."""
    if not values:
        return []
    records = [{"id": str(i), "createdAt": v} for i, v in enumerate(values)]
    column = _quiet(lambda: frames.firewalls(records))["created_at"]
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
    """One answer the doctor's requests got (kept only when recording): the path and query
    asked, and the reply, or the status and text of the failure."""

    path: str
    params: dict[str, Any]
    reply: Any = None  # the client's Reply: data, meta, body, headers
    status: int | None = None
    message: str = ""


class Doctor:
    """Runs each probe once; ``findings`` is the table. Every request is a GET.

    ``record=True`` keeps every answer (``seen``) for :meth:`record`."""

    def __init__(self, client: Client, record: bool = False) -> None:
        self.client = client
        self.req = client._req  # the one request path, for the raw answers paging hides
        self.recording = record
        self.seen: list[Seen] = []
        self.rate_headers: Mapping[str, str] | None = None
        self.findings: list[Finding] = []
        self.words: dict[str, Counter] = {"vm_status": Counter(), "billing_status": Counter()}
        self.vms: list[dict] = []
        self.lists: list[ListRead] = []
        self.records: dict[str, list[dict]] = {}  # frame name -> the records read for it
        self.wallet: dict | None = None
        self.endpoints: list[str] = []  # "GET /path ok" or "GET /path 403"
        self.refused: list[str] = []  # the endpoints this token may not read (403)
        self.wallet_failed: str | None = None  # why the wallet could not be read (not a 403)

    def add(self, point: str, seen: str, ok: bool = True, **detail: Any) -> None:
        if not ok and not seen.startswith(UNPROVEN):
            seen = f"{UNPROVEN}: {seen}"
        self.findings.append(Finding(point, seen, ok, detail))

    def run(self) -> list[Finding]:
        if not self.recording:
            return self._run()
        with self._watching():
            return self._run()

    @contextmanager
    def _watching(self) -> Iterator[None]:
        """Every answer of the one request path noted in ``seen`` (the lists' pages too)."""
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

    def _run(self) -> list[Finding]:
        first = self._first_answer()
        self.add(
            "base path",
            f"{self.client.base_url}{self.client.base_path or ''}",
            base_path=self.client.base_path,
        )
        self.findings.insert(0, self.findings.pop())  # base path reads best first
        self._read_lists()
        self._page_sizes(first)
        self._list_findings()
        self._list_items()
        self._words()
        self._money()
        self._times()
        self._units()
        self._deliveries()
        self._rate_limit()
        self.add("endpoints", ", ".join(self.endpoints), refused=self.refused)
        self.add("writes", "not probed: doctor never changes the account")
        return self.findings

    # -- raw answers ---------------------------------------------------------------------------
    def _get(self, path: str, params: dict | None = None, scope: str | None = None) -> Any:
        return self.req.request("GET", path, params=params, scope=scope)

    def _first_answer(self) -> Page | None:
        """``GET /vms`` asked nothing: the keys its answer pages by, as svcnb's pager reads
        them (a description only: completeness is the lists' own proof below)."""
        try:
            reply = self._get("/vms", None, "vms:read")
        except AuthError:
            raise  # a token the service does not take: nothing here can be checked
        except ApiError as exc:
            self.add("paging", f"GET /vms answered {exc.status}: nothing to describe")
            return None
        page = parse_page(reply, None, self.req)
        data = reply.data
        if isinstance(data, list):
            where = "a list under data"
        elif isinstance(data, dict):
            where = next(
                (f"data.{k}" for k in ("items", "results", "_embedded") if k in data), "data"
            )
        else:
            where = "data"
        said = [f"items in {where}"]
        said.append(f"a total ({page.total})" if page.total is not None else "no total")
        if page.said_number is not None:
            said.append(f"page number {page.said_number} for the first page")
        if page.next is not None:
            said.append("a next link")
        if page.cursor is not None:
            said.append(f"a continuation token, sent back as {page.cursor_param}")
        if page.ended is not None:
            said.append(f"an explicit end ({page.ended})")
        silent = page.total is None and page.said_number is None and not page.cursored
        if silent and page.next is None and page.cursor is None:
            said.append("no page number, link or continuation")
        if page.unknown:
            said.append(f"keys svcnb does not understand: {', '.join(page.unknown)}")
        self.add(
            "paging",
            "the first answer of GET /vms (nothing asked) carried " + "; ".join(said),
            unknown_keys=list(page.unknown),
        )
        return page

    def _served(self, per_page: int) -> tuple[Page | None, str | None]:
        try:
            reply = self._get("/vms", {"perPage": per_page}, "vms:read")
        except ApiError as exc:
            return None, f"refused with {exc.status} ({exc.server_message[:60]})"
        return parse_page(reply, None, self.req), None

    def _page_sizes(self, first: Page | None) -> None:
        """What the server served when asked nothing, 100 and 1000 per page, and what that
        shows given the VM list's proven length (nothing, where the length is not proven)."""
        if first is None:
            return
        vms = self._read("GET /vms")
        listed = len(vms.items) if vms and vms.items is not None and vms.items.complete else None
        of = f" of the {listed} the list holds" if listed is not None else ""
        parts = []
        n = len(first.items)
        if listed is None:
            parts.append(f"unasked {n} served (the list's length is not proven)")
        elif n < listed:
            parts.append(f"unasked {n} served{of} (a default page of {n})")
        else:
            parts.append(f"unasked all {n} served on one page")
        for asked in (ASKED_PAGE, PROBE_PAGE):
            page, refused = self._served(asked)
            if page is None:
                parts.append(f"perPage {asked} {refused}")
                continue
            got = len(page.items)
            stated = f", saying perPage {page.per_page}" if page.per_page is not None else ""
            if listed is None:
                parts.append(f"perPage {asked}: {got} served{stated} (whether a cap: not known)")
            elif got < min(asked, listed):
                cap = "a cap it states" if page.per_page == got else "a cap it does not state"
                if got == n:  # as many as unasked: perPage may not be its page-size parameter
                    cap += ", or it does not take perPage"
                parts.append(f"perPage {asked}: {got} served{of}{stated} ({cap})")
            else:
                parts.append(f"perPage {asked}: {got} served{of}{stated}")
            if got < asked and listed is not None and got < listed:
                break  # what a larger ask shows is already known: fewer than asked
        self.add("page sizes", "; ".join(parts))

    # -- lists, each through svcnb's own client ------------------------------------------------
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

    def _read(self, label: str) -> ListRead | None:
        return next((e for e in self.lists if e.label == label), None)

    def _read_lists(self) -> None:
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
                "GET /webhooks/{id}/deliveries", lambda wh=wh: c.webhooks.deliveries(wh),
                "webhooks:read",
            )  # fmt: skip
            if read.items:  # the first webhook with delivery records is the one looked at
                self.records["deliveries"] = list(read.items)
                break

    def _list_findings(self) -> None:
        labels = Counter(e.label for e in self.lists)
        seen: Counter = Counter()
        for entry in self.lists:
            seen[entry.label] += 1
            point = entry.label
            if labels[entry.label] > 1:
                point = f"{entry.label} #{seen[entry.label]}"
            if entry.refused is not None:
                self.add(point, f"not readable with this token ({entry.refused})")
            elif entry.failed is not None or entry.items is None:
                self.add(point, f"could not be read: {entry.failed}", ok=False)
            elif getattr(entry.items, "complete", False) is True:
                self.add(point, f"{len(entry.items)} read; proven complete: {entry.items.proof}")
            else:
                doubt = getattr(entry.items, "doubt", None) or "the client gave no proof"
                self.add(
                    point,
                    f"{len(entry.items)} read, NOT proven complete: {doubt}",
                    ok=False,
                    doubt=doubt,
                )

    # -- records ---------------------------------------------------------------------------
    def _list_items(self) -> None:
        if not self.vms:
            self.add("GET /vms items", "no VMs to look at")
            return
        first = self.vms[0]
        nested = [k for k in ("sshKeys", "firewalls", "privateNetworks") if k in first]
        kind = "full VM objects" if len(nested) == 3 else "summaries"
        if "updatedAt" not in first:
            kind += " without updatedAt (a refresh reads every VM's details again)"
        self.add("GET /vms items", kind)

    def _words(self) -> None:
        current = vocab.current()
        for vm in self.vms:
            self.words["vm_status"][vm.get("status")] += 1
            billing = vm.get("billing")
            if isinstance(billing, dict):
                self.words["billing_status"][billing.get("status")] += 1
        for kind, label in (("vm_status", "VM status"), ("billing_status", "billing status")):
            parts, unknown = [], []
            for word, n in self.words[kind].most_common():
                cls = current.classify(kind, word, warn=False)  # type: ignore[arg-type]
                if cls == vocab.UNKNOWN:
                    unknown.append(str(word))
                    parts.append(f"{word}→UNKNOWN ×{n}")
                else:
                    parts.append(f"{word}→{cls} ×{n}")
            self.add(label, ", ".join(parts) or "none seen", ok=not unknown, unknown=unknown)

    def _money_values(self, label: str) -> list[Any]:
        if label == "wallet balance":
            return [] if self.wallet is None else [self.wallet.get("balance")]
        holder, _, key = label.partition(".")
        return [
            vm[holder][key]
            for vm in self.vms
            if isinstance(vm.get(holder), dict) and key in vm[holder]
        ]

    def _money(self) -> None:
        for label in MONEY_FIELDS:
            if label == "wallet balance" and self.wallet is None:
                if self.wallet_failed is not None:
                    self.add(f"money: {label}", f"could not be read: {self.wallet_failed}", False)
                else:
                    self.add(f"money: {label}", "not readable with this token (billing:read)")
                continue
            values = self._money_values(label)
            read: Counter = Counter()
            unread: Counter = Counter()
            why: dict[str, str] = {}
            example: dict[str, str] = {}
            for value in values:
                form = money_form(value)
                try:
                    money = parse_money(value)
                except UnknownMoneyKeyError as exc:
                    unread[form] += 1
                    why.setdefault(form, "unknown key " + ", ".join(map(repr, exc.keys)))
                    continue
                except ValueError as exc:
                    unread[form] += 1
                    why.setdefault(form, str(exc)[:120])
                    continue
                read[form] += 1
                plain = money.currency is None and not isinstance(value, dict)
                shown = f"{money.raw[:60]} = {money.exact} {money.currency}" if not plain else ""
                example.setdefault(form, shown)  # what a form that is not plain reads as
            if not values:
                self.add(f"money: {label}", "not present in the records read")
                continue
            text = "read " + ", ".join(
                f"{form} ×{n}" + (f" (e.g. {example[form]})" if example[form] else "")
                for form, n in read.most_common()
            )
            text = text if read else "none read"
            if unread:
                text += "; NOT READ " + "; ".join(
                    f"{form} ×{n} ({why[form]})" for form, n in unread.most_common()
                )
            self.add(f"money: {label}", text, ok=not unread, unread=dict(unread))

    def _times(self) -> None:
        """Every time field the frames read, in every record read, read as the frames read it."""
        seen: list[tuple[str, Any]] = []
        for resource, records in self.records.items():
            schema = SCHEMAS[resource]  # type: ignore[index]
            paths = [f.path for f in schema.values() if f.dtype == "datetime64[ns, UTC]"]
            for record in records:
                for path in paths:
                    value = _at(record, path)
                    if value is not None:
                        seen.append((path.split("|", 1)[0], value))
        ok_forms: Counter = Counter()
        bad_forms: Counter = Counter()
        example: dict[str, str] = {}
        for (path, value), read in zip(seen, times_read([v for _, v in seen]), strict=True):
            form = time_form(value)
            if read:
                ok_forms[form] += 1
            else:
                bad_forms[form] += 1
                example.setdefault(form, f"{path} {json.dumps(value)[:40]}")
        text = f"read {_counted(ok_forms)}" if ok_forms else "none read"
        if bad_forms:
            text += "; NOT READ " + "; ".join(
                f"{form} ×{n} (e.g. {example[form]})" for form, n in bad_forms.most_common()
            )
        if not seen:
            text = "none seen"
        self.add("times", text, ok=not bad_forms, unread=dict(bad_forms))

    def _units(self) -> None:
        if not self.vms:
            self.add("units", "no VMs to check")
            return
        checks = frames.check_units(self.vms)
        frame = _quiet(lambda: frames.vms(self.vms))
        lost = frame.attrs.get("unreadable", {})
        for quantity, column in (("ram", "ram_mib"), ("disk", "disk_gib")):
            check = checks[quantity]
            text, ok = check.summary().removeprefix(f"{quantity}: "), check.ok
            if ok and lost.get(column):
                # the frames' rule: another quantity's unit in doubt leaves this one unknown
                ok = False
                text += (
                    f"; yet {lost[column]} value(s) NA in svcnb.frames.vms: the plans contradict "
                    "the unit another quantity is read in"
                )
            self.add(f"units: {quantity}", text, ok=ok)

    def _deliveries(self) -> None:
        hooks = self._read("GET /webhooks")
        if hooks is None or hooks.items is None:
            self.add("delivery records", "not readable with this token (webhooks:read)")
            return
        records = self.records.get("deliveries")
        if not records:
            self.add("delivery records", f"{len(hooks.items)} subscriptions, no records yet")
            return
        keys = list(dict.fromkeys(k for r in records if isinstance(r, dict) for k in r))
        placed, absent = [], []
        for column, spec in SCHEMAS["deliveries"].items():
            if column == "webhook_id":
                continue
            names = spec.path.split("|")
            given = [k for k in names if k in keys]
            if given:
                placed.extend(f"{k}→{names[0]}" for k in given)
            elif column in MEANINGS:
                absent.append(names[0])
        unplaced = unplaced_keys(records)
        harmless = [k for k in keys if k not in PLACED and k not in unplaced]
        text = f"{len(records)} records; placed {', '.join(placed)}"
        if harmless:
            text += f"; ignored (none of the counts, outcomes or times): {', '.join(harmless)}"
        if absent:
            text += f"; not given (NA): {', '.join(absent)}"
        if unplaced:
            text += "; NOT PLACED " + "; ".join(
                f"{key!r} in {len(rows)} record(s) (could be "
                f"{', '.join(c for c in MEANINGS if c in meant)}: NA there)"
                for key, (meant, rows) in unplaced.items()
            )
        self.add("delivery records", text, ok=not unplaced, unplaced=sorted(map(str, unplaced)))

    def _rate_limit(self) -> None:
        try:
            reply = self._get("/vms", {"perPage": 1}, "vms:read")
        except ValidationError:  # a service that refuses perPage: a plain GET has the headers too
            reply = self._get("/vms", None, "vms:read")
        h = self.rate_headers = reply.headers
        names = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")
        if not any(n in h for n in names):
            self.add("rate limit", "no X-RateLimit-* headers: svcnb paces on 429s only")
            return
        self.add(
            "rate limit",
            f"limit {h.get(names[0], '?')}, remaining {h.get(names[1], '?')}, reset in "
            f"{h.get(names[2], '?')} s (fixed or sliding window: headers do not tell; svcnb "
            "paces from them either way)",
        )

    # -- config ----------------------------------------------------------------------------
    def vocabulary(self, extra: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        """Every word seen with its class (unknown ones only where ``extra`` maps them)."""
        current = vocab.current()
        out: dict[str, dict[str, str]] = {"vm_status": {}, "billing_status": {}}
        for kind in out:
            for word in self.words[kind]:
                if not isinstance(word, str):
                    continue
                cls = current.classify(kind, word, warn=False)  # type: ignore[arg-type]
                if cls != vocab.UNKNOWN:
                    out[kind][word] = cls
            out[kind].update(extra.get(kind, {}))
        return out


# -- --record: what was proven, as a dialect file (docs/twin.md) ------------------------------
DIALECT_FILE = "svcnb-dialect"
DIALECT_FILE_VERSION = 1
# every list endpoint, by the label its lines carry
_LISTS = (
    (re.compile(r"/vms"), "GET /vms"),
    (re.compile(r"/firewalls"), "GET /firewalls"),
    (re.compile(r"/firewalls/[^/]+/rules"), "GET /firewalls/{id}/rules"),
    (re.compile(r"/networks"), "GET /networks"),
    (re.compile(r"/networks/[^/]+/attachments"), "GET /networks/{id}/attachments"),
    (re.compile(r"/webhooks"), "GET /webhooks"),
    (re.compile(r"/webhooks/[^/]+/deliveries"), "GET /webhooks/{id}/deliveries"),
)
# the page-size parameter of each paging style (token: the third of its names)
_SIZE_PARAM = {"offset": "limit", "hal": "size", "token": None}
# styles that ignore query parameters they do not take: a size svcnb sends them is not one
_LENIENT = ("offset", "token", "hal")
_DETAIL_KEYS = frozenset({"sshKeys", "firewalls", "privateNetworks"})
# the canonical delivery fields a dialect names, and the frame column each is read into
_DELIVERY_FIELDS = {
    "statusCode": "status_code",
    "success": "success",
    "attempts": "attempts",
    "eventId": "event_id",
    "createdAt": "created_at",
    "lastAttemptAt": "last_attempt_at",
}
_DELIVERY_FIXED = ("id", "event", "url", "error")  # keys every sandbox delivery record has
_TIME_LAYOUT = "not in the sandbox's layouts"
# the forms a sandbox that says money "mixed" gives, each record as it holds it
_MIXED_PARTS = frozenset({"number", "string", "object"})
_WRITES = {
    "created_status": "a create",
    "stop_status": "a stop",
    "delete_status": "a detach",
    "conflict_status": "a write in conflict with the account's state",
    "cap_status": "a subscription past the account's cap",
}


def _money_forms(value: Any) -> tuple[set[str], str | None]:
    """(the sandbox's money forms that write ``value`` exactly as the service did: its own
    renderer given the amount svcnb read, compared as JSON; the currency it states). A value
    in a currency other than the sandbox's matches the forms that write it in that one."""
    from svcnb.sandbox import write_money

    try:
        read = parse_money(value)
    except ValueError:  # UnknownMoneyKeyError too
        return set(), None
    if read.exact is None:
        return set(), None
    seen = json.dumps(value)
    forms = set()
    for form in MONEY:
        if form == "mixed":
            continue
        written = json.dumps(write_money(Dialect(money=form), str(read.exact)))
        if read.currency is not None:
            written = written.replace(f'"{CURRENCY}"', f'"{read.currency}"')
            written = written.replace(f' {CURRENCY}"', f' {read.currency}"')
        if written == seen:
            forms.add(form)
    return forms, read.currency


def _time_form(value: Any, read: bool) -> str | None:
    """The sandbox's time form (``timestamps``) that writes ``value`` exactly as the service
    did: its own renderer given the instant svcnb read (``read``: the frames' reader read it);
    None when none does."""
    from svcnb.sandbox import write_time

    if not read or not isinstance(value, str):
        return None
    instant = pd.Timestamp(value)
    if instant.tzinfo is None:
        return None
    utc = instant.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    return next((f for f in TIMESTAMPS if write_time(utc, f) == value), None)


def _fits(column: str, values: list[Any]) -> bool:
    """Whether every value given is of the column's type (a flag, a number, a time's text)."""
    given = [v for v in values if v is not None]
    if column == "success":
        return all(isinstance(v, bool) for v in given)
    if column in ("status_code", "attempts"):
        return all(isinstance(v, int) and not isinstance(v, bool) for v in given)
    return all(isinstance(v, str) for v in given)


def _shape(reply: Any) -> str | None:
    """The paging style one list answer is shaped in: a style of the sandbox's, ``plain`` (a
    list under ``data`` and nothing else), or None (no style the sandbox speaks)."""
    body = reply.body if isinstance(reply.body, dict) else {}
    extra = set(body) - {"success", "data", "meta"}
    data, meta, headers = reply.data, reply.meta, reply.headers
    if isinstance(data, dict):
        if extra or meta is not None:
            return None
        keys = set(data)
        if keys == {"items", "total", "page", "perPage"}:
            return "items"
        if keys == {"count", "next", "previous", "results"}:
            return "offset"
        if keys == {"_embedded", "_links", "page"}:
            links = data["_links"] if isinstance(data["_links"], dict) else {"?": None}
            page = data["page"] if isinstance(data["page"], dict) else {}
            sized = set(page) == {"size", "totalElements", "totalPages", "number"}
            return "hal" if set(links) <= {"self", "next"} and sized else None
        return None
    if not isinstance(data, list):
        return None
    if meta is not None:
        if extra:
            return None
        if set(meta) == {"page", "perPage", "total", "totalPages"}:
            return "meta"
        return "cursor" if set(meta) == {"nextCursor", "perPage", "total"} else None
    if "link" in headers or "x-total-count" in headers:
        linked = "link" in headers and "x-total-count" in headers
        return "link" if linked and not extra else None
    if not extra:
        return "plain"
    answers = {names[0] for names in TOKEN_NAMES}
    return "token" if len(extra) == 1 and extra <= answers else None


def _label(path: str) -> str | None:
    return next((label for pattern, label in _LISTS if pattern.fullmatch(path)), None)


@dataclass
class DialectRecord:
    """What ``--record`` writes: the points stated, bounds, and why the others are not."""

    base_path: str | None = None
    dialect: dict[str, Any] = field(default_factory=dict)
    service: dict[str, Any] = field(default_factory=dict)
    at_least: dict[str, int] = field(default_factory=dict)
    not_observed: dict[str, str] = field(default_factory=dict)
    not_expressible: dict[str, str] = field(default_factory=dict)
    inferred: dict[str, str] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"format": DIALECT_FILE, "version": DIALECT_FILE_VERSION}
        if self.base_path is not None:
            doc["base_path"] = self.base_path
        order = [f.name for f in dataclass_fields(Dialect)]
        doc["dialect"] = {k: self.dialect[k] for k in order if k in self.dialect}
        for name in ("service", "at_least", "not_observed", "not_expressible", "inferred"):
            table = getattr(self, name)
            if table:
                doc[name] = dict(table)
        return doc


class Recorder:
    """Turns what a :class:`Doctor` run saw (and a few more GET requests) into a
    :class:`DialectRecord`: each point as proven, or why not."""

    def __init__(self, doctor: Doctor) -> None:
        self.doctor = doctor
        self.out = DialectRecord()
        vms = doctor._read("GET /vms")
        complete = vms is not None and vms.items is not None and vms.items.complete
        self.listed: int | None = len(vms.items) if complete else None  # type: ignore[arg-type]
        self.style: str | None = None

    def record(self) -> DialectRecord:
        self._base_path()
        self._paging()
        self._sizes()
        self._words()
        self._money()
        self._times()
        self._units()
        self._list_keys()
        self._deliveries()
        self._rate_limit()
        for point, what in _WRITES.items():
            self.unseen(point, f"only {what} shows it; the doctor sends GET requests only")
        self.unseen("revoked_status", "only a revoked or expired token shows it")
        return self.out

    # -- what the file says ----------------------------------------------------------------
    def said(self, point: str, value: Any, table: str = "dialect") -> None:
        getattr(self.out, table)[point] = value

    def unseen(self, point: str, why: str) -> None:
        self.out.not_observed.setdefault(point, why)

    def cannot(self, point: str, what: str) -> None:
        self.out.not_expressible.setdefault(point, what)

    def _get(self, params: dict[str, Any]) -> tuple[Any, tuple[int, str] | None]:
        """``GET /vms`` with ``params``: (the reply, None) or (None, (status, text))."""
        try:
            return self.doctor._get("/vms", params, "vms:read"), None
        except ApiError as exc:
            return None, (exc.status, exc.server_message)

    def _replies(self, label: str | None = None) -> list[Seen]:
        return [
            s
            for s in self.doctor.seen
            if s.reply is not None and _label(s.path) and (label is None or _label(s.path) == label)
        ]

    # -- the points --------------------------------------------------------------------------
    def _base_path(self) -> None:
        client, req = self.doctor.client, self.doctor.req
        own = httpx.URL(client.base_url).path.rstrip("/")
        full = own + (client.base_path or "")
        if full not in API_PREFIXES:
            # not written: a path of its own may name the account (a tenant, a customer)
            self.cannot(
                "base_paths",
                "the API answers under a base URL with a path of its own; the sandbox serves "
                f"{' and '.join(API_PREFIXES)} only",
            )
            return
        self.out.base_path = full
        if own:
            self.said("base_paths", "public" if full == "/api/public/v1" else "prefixed")
            self.unseen(
                "base_paths.other", "the base URL names its prefix: the other was not asked"
            )
            return
        other = next(p for p in API_PREFIXES if p != full)
        found, status = req.base_path, None
        req.base_path = other  # the one request path, asked once under the other prefix
        try:
            req.request("GET", "/vms", scope="vms:read")
            status = 200
        except ApiError as exc:
            status = exc.status
        except SvcnbError:
            status = None
        finally:
            req.base_path = found
        if status is None:
            self.unseen("base_paths.other", f"asking under {other} got no answer")
        if status is not None and 200 <= status < 300:
            self.said("base_paths", "both")
            return
        self.said("base_paths", "public" if full == "/api/public/v1" else "prefixed")
        if status not in (None, 404):
            self.cannot(
                "base_paths.other",
                f"{other} answered {status}; the sandbox answers 404 under a base path it does "
                "not serve",
            )

    def _paging(self) -> None:
        shapes: dict[str, set[str | None]] = {}
        for s in self._replies():
            shapes.setdefault(_label(s.path) or "", set()).add(_shape(s.reply))
        paged = {
            shape for label, found in shapes.items() if label != "GET /webhooks" for shape in found
        }
        if not paged:
            self.unseen("paging", "no list was read")
            return
        if None in paged:
            self.cannot(
                "paging",
                f"its list answers are shaped as no style the sandbox speaks ({self._keys()})",
            )
            return
        styles = paged - {"plain"}
        if len(styles) > 1:
            self.cannot(
                "paging", f"its lists answer in several styles ({', '.join(sorted(styles))})"
            )
            return
        if styles and "plain" in paged and styles != {"token"}:
            self.cannot(
                "paging", f"some lists answer paged ({styles.pop()}), others as a bare list"
            )
            return
        style = styles.pop() if styles else self._bare_or_token()
        if style is None:
            return
        if style == "meta":
            first = next((s for s in self._replies("GET /vms") if not s.params), None)
            said = first.reply.meta.get("page") if first is not None else None
            style = "zero" if said == 0 else "meta"
        self.style = style
        self.said("paging", style)
        self._token_names()
        self._link_form()
        hooks = shapes.get("GET /webhooks", set())
        if hooks - {"plain"}:
            self.said("webhooks_paged", True)
        elif hooks and style not in ("bare", "token"):
            self.said("webhooks_paged", False)
        elif hooks and style == "bare":
            # a page number asked of a bare list: taken when paged, refused when not
            asked = [
                s
                for s in self.doctor.seen
                if _label(s.path) == "GET /webhooks" and "page" in s.params
            ]
            if any(s.reply is not None for s in asked):
                self.said("webhooks_paged", True)
            elif asked:
                self.said("webhooks_paged", False)
            else:
                self.unseen("webhooks_paged", "no page of GET /webhooks was asked")
        else:
            self.unseen(
                "webhooks_paged",
                "GET /webhooks answered a bare list, as a paged one that fits one page does",
            )

    def _keys(self) -> str:
        """The keys of the first list answer (names only, never values)."""
        reply = self._replies()[0].reply
        body = reply.body if isinstance(reply.body, dict) else {}
        said = ", ".join(map(str, body))
        if isinstance(reply.data, dict):
            said += "; data: " + ", ".join(map(str, reply.data))
        return said

    def _bare_or_token(self) -> str | None:
        """Every list answered a bare list: pages that take the size asked (bare), or pages that
        ignore it (a token style whose lists all fit one page): ``perPage=1`` tells them apart
        where asking nothing served two or more."""
        vms = self._replies("GET /vms")
        unasked = next((s for s in vms if not s.params), None)
        one = next((s for s in vms if s.params == {"perPage": 1}), None)
        if unasked is not None and one is not None and len(unasked.reply.data) >= 2:
            if len(one.reply.data) == 1:
                return "bare"
            self.unseen("token_names", "no list was long enough to carry a continuation")
            return "token"
        self.unseen("paging", "every list answered a bare list of at most one item")
        return None

    def _token_names(self) -> None:
        if self.style != "token":
            return
        keys = {
            k
            for s in self._replies()
            for k in (s.reply.body or {})
            if k in {t[0] for t in TOKEN_NAMES}
        }
        if len(keys) > 1:
            self.cannot("token_names", f"several continuation keys ({', '.join(sorted(keys))})")
        elif keys:
            names = next(t for t in TOKEN_NAMES if t[0] in keys)
            self.said("token_names", list(names))
            self.out.inferred["token_names"] = (
                f"the continuation {names[0]} is sent back as {names[1]}; the page-size "
                f"parameter {names[2]} is the one the sandbox pairs with them"
            )

    def _link_form(self) -> None:
        links: list[str] = []
        for s in self._replies():
            data = s.reply.data
            if self.style == "offset" and isinstance(data, dict):
                links += [v for v in (data.get("next"), data.get("previous")) if isinstance(v, str)]
            elif self.style == "hal" and isinstance(data, dict):
                links += [
                    v.get("href") for v in data.get("_links", {}).values() if isinstance(v, dict)
                ]
        forms = {
            "absolute" if str(link).startswith(("http://", "https://")) else "relative"
            for link in links
        }
        if self.style == "offset":
            if len(forms) == 1:
                self.said("link_form", forms.pop())
            elif forms:
                self.cannot("link_form", "its next links are absolute and relative")
            else:
                self.unseen("link_form", "no list was long enough to carry a next link")
        elif "relative" in forms:
            self.cannot(
                "link_form", f"its {self.style} links are relative; the sandbox's are absolute"
            )

    def _sizes(self) -> None:
        """``page_default`` from the answers asked no size, ``page_max`` and ``over_max`` from
        sizes 1000 and below, ``validation_status`` and ``wording`` from a size refused."""
        style = self.style
        if style is None:
            for point in (
                "page_default",
                "page_max",
                "over_max",
                "validation_status",
                "wording",
                "webhooks_paged",
            ):
                self.unseen(point, "how the service pages was not seen as a sandbox style")
            return
        self._page_default(style)
        param = _SIZE_PARAM.get(style, "perPage")
        if style == "token":
            names = self.out.dialect.get("token_names")
            param = names[2] if names else None
        if param is None:
            for point in ("page_max", "over_max", "validation_status", "wording"):
                self.unseen(point, "the page-size parameter was not seen")
            return
        big, refused = self._get({param: 1000})
        if refused is not None:
            self._rejecting(style, param, refused)
            return
        page = parse_page(big, None, self.doctor.req)
        served = len(page.items)
        unasked = self.out.dialect.get("page_default", self.out.at_least.get("page_default"))
        if served == unasked and page.per_page is None and style in _LENIENT:
            for point in ("page_max", "over_max"):
                self.unseen(
                    point,
                    f"{param}=1000 served as many as asking nothing: it may not be a size it takes",
                )
        else:
            self.said("over_max", "clamp")
            if style == "token":
                self.out.inferred.pop("token_names", None)
            if page.per_page is not None and page.per_page < 1000:
                self.said("page_max", page.per_page)
            elif self.listed is not None and served < self.listed:
                self.said("page_max", served)
            else:
                self.out.at_least["page_max"] = served
                self.unseen("page_max", f"{param}=1000 served the whole list ({served})")
        _, refused = self._get({param: 0})
        if refused is None:
            self.unseen("validation_status", f"{param}=0 was served, not refused")
            self.unseen("wording", f"{param}=0 was served, not refused")
            return
        self._refused(style, "clamp", param, "0", refused)

    def _page_default(self, style: str) -> None:
        """The size a list is served in when none is asked (in a lenient style, svcnb's own
        ``perPage`` is not one: every list's first answer shows it)."""
        first = [s for s in self._replies("GET /vms") if not s.params]
        if style in _LENIENT:
            first += [
                s
                for s in self._replies()
                if not ({"page", "offset", "cursor"} & set(s.params))
                and not any(t[1] in s.params for t in TOKEN_NAMES)
            ]
        exact: set[int] = set()
        bound = 0
        for s in first:
            label = _label(s.path)
            read = self.doctor._read(label) if label else None
            items = read.items if read is not None else None
            n = len(parse_page(s.reply, None, self.doctor.req).items)
            if items is None or not items.complete or label != "GET /vms" and style not in _LENIENT:
                continue
            if n < len(items):
                exact.add(n)
            else:
                bound = max(bound, n)
        if len(exact) == 1:
            self.said("page_default", exact.pop())
        elif exact:
            self.cannot("page_default", f"lists asked no size were served {sorted(exact)} items")
        elif bound:
            self.out.at_least["page_default"] = bound
            self.unseen(
                "page_default", f"every list asked no size was served whole (up to {bound})"
            )
        else:
            self.unseen("page_default", "no list asked no size was proven complete")

    def _rejecting(self, style: str, param: str, refused: tuple[int, str]) -> None:
        """``param``=1000 refused: the largest size taken, found by halving (GET only)."""
        _, low_refused = self._get({param: 1})
        if low_refused is not None:
            for point in ("page_max", "over_max", "validation_status", "wording"):
                self.unseen(point, f"{param}=1 was refused too: it is not a size the service takes")
            return
        if style == "token":  # the size is one it takes: no longer only the sandbox's pairing
            self.out.inferred.pop("token_names", None)
        taken, refused_at = 1, 1000
        while refused_at - taken > 1:
            mid = (taken + refused_at) // 2
            _, no = self._get({param: mid})
            taken, refused_at = (taken, mid) if no is not None else (mid, refused_at)
        self.said("page_max", taken)
        self.said("over_max", "reject")
        self._refused(style, "reject", param, "1000", refused)

    def _refused(
        self, style: str, over_max: str, param: str, asked: str, refused: tuple[int, str]
    ) -> None:
        from svcnb.sandbox import VALIDATION_STATUS, validation_wording

        status, text = refused
        if status in VALIDATION_STATUS:
            self.said("validation_status", status)
        else:
            self.cannot("validation_status", f"{param}={asked} was refused with {status}")
        page_default = self.out.dialect.get("page_default", Dialect().page_default)
        page_max = self.out.dialect.get("page_max", Dialect().page_max)
        wording = validation_wording(style, over_max, page_default, page_max, {param: asked}, text)
        if wording is None:
            self.cannot(
                "wording", f"{param}={asked} was refused with a text the sandbox does not say"
            )
        else:
            self.said("wording", wording)

    def _words(self) -> None:
        current = vocab.current()
        for kind, point in (("vm_status", "vm_words"), ("billing_status", "billing_words")):
            by_class: dict[str, list[str]] = {}
            unknown: list[str] = []
            for word, _ in self.doctor.words[kind].most_common():
                if not isinstance(word, str):
                    continue
                cls = current.classify(kind, word, warn=False)  # type: ignore[arg-type]
                (unknown if cls == vocab.UNKNOWN else by_class.setdefault(cls, [])).append(word)
            table: dict[str, Any] = {}
            for cls in vocab.CLASSES[kind]:
                words = by_class.get(cls, [])
                most = 2 if cls == "transitional" else 1
                if not words:
                    self.unseen(f"{point}.{cls}", "no record said a status of this class")
                elif len(words) > most:
                    self.cannot(
                        f"{point}.{cls}",
                        f"said as {', '.join(map(repr, words))}; the sandbox says one word "
                        "per status",
                    )
                else:
                    table[cls] = words if cls == "transitional" else words[0]
            if table:
                self.said(point, table)
            if unknown:
                self.cannot(
                    f"{point}.unknown_class",
                    f"{', '.join(map(repr, unknown))}: svcnb does not know the class; record "
                    "again with --map WORD=CLASS",
                )

    def _money(self) -> None:
        """The one form the sandbox writes every amount seen in (or ``mixed``: each in one of
        the forms the sandbox's own records take), and the currency stated."""
        common: set[str] | None = None
        parts: set[str] = set()
        unread: Counter = Counter()
        seen: Counter = Counter()
        currencies: set[str] = set()
        for label in MONEY_FIELDS:
            for value in self.doctor._money_values(label):
                if value is None:
                    continue
                forms, currency = _money_forms(value)
                seen[money_form(value)] += 1
                if currency is not None:
                    currencies.add(currency)
                if not forms:
                    unread[money_form(value)] += 1
                    continue
                common = forms if common is None else common & forms
                parts |= forms & _MIXED_PARTS
        if currencies - {CURRENCY}:
            self.cannot(
                "currency",
                f"states {', '.join(sorted(currencies))}; the sandbox states {CURRENCY} only",
            )
        elif currencies:
            self.said("currency", CURRENCY, "service")
        elif seen and not unread:
            self.unseen("currency", "no money value states a currency")
        else:
            self.unseen("currency", "no money value was read in a form the sandbox writes")
        if unread:
            self.cannot("money", f"written as {_counted(unread)}: no form the sandbox writes")
        elif not seen:
            self.unseen("money", "no money value was read")
        elif common:
            self.said("money", sorted(common)[0])
        else:
            self.said("money", "mixed")
            self.out.inferred["money"] = (
                f"written as {_counted(seen)}: a twin says each value in the form its own "
                "state holds it"
            )

    def _times(self) -> None:
        values: list[Any] = []
        for resource, records in self.doctor.records.items():
            schema = SCHEMAS[resource]  # type: ignore[index]
            paths = [f.path for f in schema.values() if f.dtype == "datetime64[ns, UTC]"]
            values += [v for r in records for p in paths if (v := _at(r, p)) is not None]
        forms: Counter = Counter()
        for value, read in zip(values, times_read(values), strict=True):
            form = _time_form(value, read)
            forms[form or f"{time_form(value)} ({_TIME_LAYOUT})"] += 1
        if not forms:
            self.unseen("timestamps", "no time was read")
        elif len(forms) == 1 and next(iter(forms)) in TIMESTAMPS:
            self.said("timestamps", next(iter(forms)))
        else:
            self.cannot("timestamps", f"written as {_counted(forms)}; the sandbox writes one form")

    def _units(self) -> None:
        if not self.doctor.vms:
            self.unseen("ram_unit", "no VM was read")
            self.unseen("disk_unit", "no VM was read")
            return
        checks = frames.check_units(self.doctor.vms)
        ram, disk = checks["ram"], checks["disk"]
        if ram.seen in ("MiB", "GiB"):
            self.said("ram_unit", ram.seen)
        elif ram.checked:
            self.cannot(
                "ram_unit", f"ram fits {ram.seen or 'neither MiB nor GiB'} against the plans' sizes"
            )
        else:
            self.unseen("ram_unit", "no plan states a ram size to check it against")
        if disk.seen == "GiB":
            self.said("disk_unit", "GiB", "service")
        elif disk.checked:
            self.cannot(
                "disk_unit", f"disk fits {disk.seen or 'neither MiB nor GiB'}; the sandbox's is GiB"
            )
        else:
            self.unseen("disk_unit", "no plan states a disk size to check it against")

    def _list_keys(self) -> None:
        kinds = {(frozenset(_DETAIL_KEYS & set(vm)), "updatedAt" in vm) for vm in self.doctor.vms}
        if not kinds:
            self.unseen("list_keys", "no VM was read")
            return
        named = {
            (frozenset(), True): "summary",
            (frozenset(), False): "no_updated",
            (_DETAIL_KEYS, True): "full",
        }
        if len(kinds) == 1 and next(iter(kinds)) in named:
            self.said("list_keys", named[next(iter(kinds))])
            return
        said = "; ".join(
            f"{', '.join(sorted(nested)) or 'none of sshKeys, firewalls, privateNetworks'}"
            f"{'' if updated else ', no updatedAt'}"
            for nested, updated in kinds
        )
        self.cannot("list_keys", f"GET /vms items carry {said}")

    def _deliveries(self) -> None:
        records = [r for r in self.doctor.records.get("deliveries", []) if isinstance(r, dict)]
        if not records:
            self.unseen("delivery_fields", "no webhook had delivery records to read")
            return
        keys = list(dict.fromkeys(k for r in records for k in r))
        named: dict[str, str] = {}
        missing: list[str] = []
        for canonical, column in _DELIVERY_FIELDS.items():
            given = [k for k in SCHEMAS["deliveries"][column].path.split("|") if k in keys]
            if len(given) == 1:
                named[canonical] = given[0]
            elif given:
                self.cannot(f"delivery_fields.{canonical}", f"given as {', '.join(given)}")
            else:
                missing.append(canonical)
        unplaced = {k: meant for k, (meant, _) in unplaced_keys(records).items()}
        free = dict(unplaced)
        changed = True
        while changed and missing and free:
            changed = False
            for canonical in list(missing):
                column = _DELIVERY_FIELDS[canonical]
                could = [
                    k
                    for k, meant in free.items()
                    if column in meant and _fits(column, [r.get(k) for r in records])
                ]
                if len(could) == 1:
                    named[canonical] = could[0]
                    self.out.inferred[f"delivery_fields.{canonical}"] = (
                        f"no key svcnb reads as {canonical} is given; {could[0]!r}, which svcnb "
                        "cannot place, is the one key left whose values could be it"
                    )
                    missing.remove(canonical)
                    del free[could[0]]
                    changed = True
        for canonical in missing:
            self.cannot(
                f"delivery_fields.{canonical}",
                "the records give no key for it; the sandbox's give one",
            )
        if named:
            self.said("delivery_fields", named)
        absent = [k for k in _DELIVERY_FIXED if k not in keys]
        extra = [k for k in keys if k not in _DELIVERY_FIXED and k not in named.values()]
        if absent or extra:
            parts = ([f"no {', '.join(absent)}"] if absent else []) + (
                [f"also {', '.join(map(str, extra))}"] if extra else []
            )
            self.cannot(
                "delivery_fields.keys",
                f"the records carry {'; '.join(parts)}: the sandbox's carry id, event, url, "
                "error and the six fields",
            )

    def _rate_limit(self) -> None:
        headers = self.doctor.rate_headers or {}
        limit = headers.get("x-ratelimit-limit")
        if limit is None:
            self.cannot("rate_limit", "no X-RateLimit-Limit header; the sandbox sends one")
        elif re.fullmatch(r"[1-9]\d{0,8}", limit.strip()):
            self.said("rate_limit", int(limit), "service")
        else:
            self.cannot("rate_limit", "an X-RateLimit-Limit that is not a count")
        self.unseen("rate_window", "the headers do not tell a fixed window from a sliding one")
        self.unseen(
            "rate_window_seconds",
            "X-RateLimit-Reset tells when the current window ends, not how long one is",
        )


def write_dialect_file(record: DialectRecord, path: str | Path) -> Path:
    """Write ``record`` as a dialect file (TOML, docs/twin.md); ConfigError when it cannot."""
    target = Path(path)
    text = (
        '# What `svcnb doctor --record` proved about a service where the API spec says "not\n'
        "# shown\", in the points of the sandbox's dialects (docs/twin.md, docs/dialects.md).\n"
        "# GET requests only. No ids, host, token or text the service wrote are in it.\n"
        "# A point under [not_observed] was not seen, one under [not_expressible] was seen in a\n"
        "# form the sandbox cannot say, one under [inferred] was deduced. `svcnb sandbox\n"
        "# --dialect-file` keeps its default for those and lists each when it starts.\n"
        + tomli_w.dumps(record.document())
    )
    try:
        _replace(target, text.encode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot write the dialect file {target}: {exc.strerror}") from None
    return target


def render(findings: Iterable[Finding]) -> str:
    findings = list(findings)
    width = max(len(f.point) for f in findings)
    lines = []
    for f in findings:
        mark = " " if f.ok else "!"
        lines.append(f"{mark} {f.point:<{width}}  {f.seen}")
    return "\n".join(lines)


def verdict(findings: list[Finding]) -> str:
    """The last line: what the exit code says, in words."""
    unproven = [f.point for f in findings if not f.ok]
    refused = [r for f in findings for r in f.detail.get("refused", [])]
    if not unproven:
        unread = f"; not readable with this token: {', '.join(refused)}" if refused else ""
        return f"everything read was proven complete and understood (exit 0){unread}"
    return (
        f"{UNPROVEN} (exit 3): {', '.join(unproven)}: svcnb does not vouch for what these lines "
        "name"
    )
