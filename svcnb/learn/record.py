"""``svcnb doctor --record FILE``: what the doctor proved, as a dialect file (docs/twin.md, "What
the doctor records"): :class:`Recorder` states each point from the doctor's
:class:`~svcnb.learn.observe.Observation`, :func:`write_dialect_file` writes it as TOML.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import tomli_w

from svcnb import files as _files
from svcnb import frames, vocab
from svcnb.client import parse_page
from svcnb.config import API_PREFIXES, ConfigError
from svcnb.errors import ApiError, SvcnbError
from svcnb.files import RefusedFile
from svcnb.frames import SCHEMAS, parse_money, unplaced_keys
from svcnb.learn.observe import (
    DETAIL_KEYS,
    MONEY_FIELDS,
    Observation,
    Seen,
    counted,
    money_form,
    time_form,
)
from svcnb.sandbox import CURRENCY, MONEY, TIMESTAMPS, TOKEN_NAMES, Dialect

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
_DETAIL_KEYS = frozenset(DETAIL_KEYS)
# the canonical delivery fields a dialect names, and the frame column each is read into
_DELIVERY_FIELDS = {
    name: frames.column_of("deliveries", name) for name in Dialect().delivery_fields
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


# a word the service wrote goes into the file only when it is plain vocabulary: letters, with
# "_", "-" or spaces between, short; anything else (digits, dots, colons) could carry an id, a
# host or an address, and is recorded as said, without its text
_PLAIN_WORD = re.compile(r"[A-Za-z](?:[A-Za-z_ -]{0,30}[A-Za-z])?")
# keys whose values name the account: what no word in the file may be or hold
_NAMING_KEY = re.compile(
    r"(?i)(?:^|_)(?:id|name|host|hostname|url|uri|ip|address|email|fingerprint|label|"
    r"description|secret|token)$|(?:Id|Name|Host|Hostname|Url|Uri|Ip|Address|Email)$|^ip"
)
_NOT_PLAIN = (
    "not recorded: not plain vocabulary (letters, '_', '-' and spaces, up to 32), or the same "
    "as a name, id or host the account holds"
)


def _naming_values(value: Any, into: set[str], key: str = "") -> None:
    """Every text under a key that names something of the account, at any depth."""
    if isinstance(value, dict):
        for k, v in value.items():
            _naming_values(v, into, str(k))
    elif isinstance(value, list):
        for v in value:
            _naming_values(v, into, key)
    elif isinstance(value, str) and value.strip() and _NAMING_KEY.search(key):
        into.add(value.strip().lower())


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
    """Turns what one :class:`Observation` saw (a doctor's run, keeping its answers; and a few
    more GET requests) into a :class:`DialectRecord`: each point as proven, or why not."""

    def __init__(self, observed: Observation) -> None:
        self.observed = observed
        self.out = DialectRecord()
        self.listed: int | None = observed.listed
        self.style: str | None = None
        self._naming: set[str] | None = None

    @property
    def naming(self) -> set[str]:
        """Every name, id, host, address and URL of the account the doctor read (lower case),
        and the service's host."""
        if self._naming is None:
            found: set[str] = set()
            for records in self.observed.records.values():
                _naming_values(records, found)
            _naming_values(self.observed.vms, found)
            host = httpx.URL(self.observed.client.base_url).host
            if host:
                found.add(host.lower())
            self._naming = found
        return self._naming

    def plain(self, word: Any) -> bool:
        """Whether ``word``, written by the service, may go into the file as it is: plain
        vocabulary (:data:`_PLAIN_WORD`) that is not, and holds no, name, id or host seen."""
        if not isinstance(word, str) or not _PLAIN_WORD.fullmatch(word):
            return False
        lowered = word.lower()
        return not any(n == lowered or (len(n) >= 3 and n in lowered) for n in self.naming)

    def told(self, words: list[Any]) -> str:
        """``words`` as the file may say them: each plain one quoted, the others counted."""
        shown = [repr(w) for w in words if self.plain(w)]
        hidden = sum(1 for w in words if not self.plain(w))
        if hidden:
            shown.append(f"{hidden} word{'s' if hidden > 1 else ''} {_NOT_PLAIN}")
        return ", ".join(shown)

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

    def _replies(self, label: str | None = None) -> list[Seen]:
        return [
            s
            for s in self.observed.seen
            if s.reply is not None and _label(s.path) and (label is None or _label(s.path) == label)
        ]

    # -- the points --------------------------------------------------------------------------
    def _base_path(self) -> None:
        client, req = self.observed.client, self.observed.req
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
        styles = {s for s in paged if s is not None and s != "plain"}
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
                for s in self.observed.seen
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
        said = self.told(list(body))
        if isinstance(reply.data, dict):
            said += "; data: " + self.told(list(reply.data))
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
                # a link object without a string href (templated, or only a title) says nothing
                # of the form
                hrefs = (
                    v.get("href") for v in data.get("_links", {}).values() if isinstance(v, dict)
                )
                links += [h for h in hrefs if isinstance(h, str)]
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
        big, refused = self.observed.ask({param: 1000})
        if refused is not None:
            self._rejecting(style, param, refused)
            return
        page = parse_page(big, None, self.observed.req)
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
        _, refused = self.observed.ask({param: 0})
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
            read = self.observed.read(label) if label else None
            items = read.items if read is not None else None
            n = len(parse_page(s.reply, None, self.observed.req).items)
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
        _, low_refused = self.observed.ask({param: 1})
        if low_refused is not None:
            for point in ("page_max", "over_max", "validation_status", "wording"):
                self.unseen(point, f"{param}=1 was refused too: it is not a size the service takes")
            return
        if style == "token":  # the size is one it takes: no longer only the sandbox's pairing
            self.out.inferred.pop("token_names", None)
        taken, refused_at = 1, 1000
        while refused_at - taken > 1:
            mid = (taken + refused_at) // 2
            _, no = self.observed.ask({param: mid})
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
            for word, _ in self.observed.words[kind].most_common():
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
                        f"said as {self.told(words)}; the sandbox says one word per status",
                    )
                elif not all(self.plain(w) for w in words):
                    self.cannot(f"{point}.{cls}", f"said as {self.told(words)}")
                else:
                    table[cls] = words if cls == "transitional" else words[0]
            if table:
                self.said(point, table)
            if unknown:
                self.cannot(
                    f"{point}.unknown_class",
                    f"{self.told(unknown)}: svcnb does not know the class; record "
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
            for value in self.observed.money_values(label):
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
                f"states {self.told(sorted(currencies))}; the sandbox states {CURRENCY} only",
            )
        elif currencies:
            self.said("currency", CURRENCY, "service")
        elif seen and not unread:
            self.unseen("currency", "no money value states a currency")
        else:
            self.unseen("currency", "no money value was read in a form the sandbox writes")
        if unread:
            self.cannot("money", f"written as {counted(unread)}: no form the sandbox writes")
        elif not seen:
            self.unseen("money", "no money value was read")
        elif common:
            self.said("money", sorted(common)[0])
        else:
            self.said("money", "mixed")
            self.out.inferred["money"] = (
                f"written as {counted(seen)}: a twin says each value in the form its own "
                "state holds it"
            )

    def _times(self) -> None:
        forms: Counter = Counter()
        for time in self.observed.times():
            form = _time_form(time.value, time.read)
            forms[form or f"{time_form(time.value)} ({_TIME_LAYOUT})"] += 1
        if not forms:
            self.unseen("timestamps", "no time was read")
        elif len(forms) == 1 and next(iter(forms)) in TIMESTAMPS:
            self.said("timestamps", next(iter(forms)))
        else:
            self.cannot("timestamps", f"written as {counted(forms)}; the sandbox writes one form")

    def _units(self) -> None:
        if not self.observed.vms:
            self.unseen("ram_unit", "no VM was read")
            self.unseen("disk_unit", "no VM was read")
            return
        # the config file's [units] only (no pins given), as --record has always read them; the
        # doctor's line reads them over the client's pins
        checks = frames.check_units(self.observed.vms)
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
        kinds = set(self.observed.vm_keys())
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
        records = [r for r in self.observed.deliveries if isinstance(r, dict)]
        if not records:
            self.unseen("delivery_fields", "no webhook had delivery records to read")
            return
        keys = self.observed.delivery_keys()
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
                if len(could) == 1 and self.plain(could[0]):
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
                [f"also {self.told(extra)}"] if extra else []
            )
            self.cannot(
                "delivery_fields.keys",
                f"the records carry {'; '.join(parts)}: the sandbox's carry id, event, url, "
                "error and the six fields",
            )

    def _rate_limit(self) -> None:
        headers = self.observed.rate_headers or {}
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


def write_dialect_file(
    record: DialectRecord, path: str | Path, *, follow_link: bool = False
) -> Path:
    """Write ``record`` as a dialect file (TOML, docs/twin.md) through
    :func:`svcnb.files.write`, readable by its owner only; ConfigError when it cannot.
    ``path`` a symbolic link is ``svcnb.errors.RefusedFile`` unless ``follow_link``."""
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
        written = _files.write(target, text, secret=True, follow_link=follow_link, make_folder=True)
    except RefusedFile:
        raise
    except OSError as exc:
        raise ConfigError(f"cannot write the dialect file {target}: {exc.strerror}") from None
    return written
