"""``svcnb doctor``: what this service answered where the spec says "not shown".

Read-only against any configured service: it sends only GET requests (a few dozen at most, plus
the pages of the VM list) and never changes anything in the account. It reports the base path
found, the paging style and page cap, the status and billing words seen (mapped or unknown), the
money and time forms seen, the delivery-record fields, the rate-limit headers and which read
endpoints the token can use. ``--write-config`` pins the vocabulary it saw (and any ``--map
WORD=CLASS`` you give for the words it does not know) into the config file the client reads.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from svcnb import vocab
from svcnb._connect import configured_client
from svcnb.client import Client
from svcnb.client._resources import segment
from svcnb.config import config_path, write_section
from svcnb.errors import ApiError, ScopeError, SvcnbError

ASKED_PAGE = 100  # what svcnb asks for; a server that serves fewer caps the page size
PROBE_PAGE = 1000  # far above any plausible cap: tells rejecting servers from clamping ones
DATE_FIELDS = ("createdAt", "updatedAt", "nextRenewalAt", "attachedAt", "lastAttemptAt")
# the delivery fields the spec promises, and the names services are known to give them
DELIVERY_NAMES = {
    "statusCode": ("statusCode", "status_code", "responseStatus", "httpStatus", "responseCode"),
    "success": ("success", "ok", "delivered", "succeeded", "successful"),
    "attempts": ("attempts", "attempt", "attemptCount", "tries"),
}


@dataclass
class Finding:
    """One line of the doctor's table: a point the spec leaves open and what was seen."""

    point: str
    seen: str
    ok: bool = True
    detail: dict[str, Any] = field(default_factory=dict)


def money_form(value: Any) -> str:
    """The written form of a price or balance, as ``svcnb.frames.parse_money`` tells them."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "other"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "numeric string" if re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", value) else "other"
    if isinstance(value, dict):
        if {"value", "precision"} <= value.keys():
            return "minor units {value,currency,precision}"
        if "amount" in value:
            return "{amount,currency}"
    return "other"


def time_form(text: Any) -> str:
    if not isinstance(text, str):
        return "not a string"
    match = re.fullmatch(
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?", text.strip()
    )
    if match is None:
        return "not ISO 8601"
    frac = "fractional seconds" if match.group(1) else "whole seconds"
    zone = match.group(2)
    if zone is None:
        return f"{frac}, NO ZONE (unreadable: svcnb never guesses a zone)"
    if zone == "Z":
        return f"{frac}, Z"
    return f"{frac}, offset {zone}" if zone not in ("+00:00", "+0000") else f"{frac}, +00:00"


def _items(data: Any) -> list:
    """The records of a list answer, in either of its shapes (a list, or ``{items: [...]}``)."""
    if isinstance(data, dict):
        data = data.get("items")
    return [x for x in data if isinstance(x, dict) and "id" in x] if isinstance(data, list) else []


def _counted(counter: Counter) -> str:
    return ", ".join(f"{k} ×{n}" for k, n in counter.most_common())


class Doctor:
    """Runs each probe once; ``findings`` is the table. Every request is a GET."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.req = client._req  # the one request path, for the raw replies paging hides
        self.findings: list[Finding] = []
        self.words: dict[str, Counter] = {"vm_status": Counter(), "billing_status": Counter()}
        self.vms: list[dict] = []

    def add(self, point: str, seen: str, ok: bool = True, **detail: Any) -> None:
        self.findings.append(Finding(point, seen, ok, detail))

    def run(self) -> list[Finding]:
        first = self._paging()
        self.add(
            "base path",
            f"{self.client.base_url}{self.client.base_path or ''}",
            base_path=self.client.base_path,
        )
        self.findings.insert(0, self.findings.pop())  # base path reads best first
        self._list_items(first)
        self._vms()
        self._words()
        self._money_and_times()
        self._deliveries()
        self._rate_limit()
        self._endpoints()
        self.add("writes", "not probed: doctor never changes the account")
        return self.findings

    # -- paging ----------------------------------------------------------------------------
    def _get(self, path: str, params: dict | None = None, scope: str | None = None) -> Any:
        return self.req.request("GET", path, params=params, scope=scope)

    def _paging(self) -> Any:
        reply = self._get("/vms", {"page": 1, "perPage": ASKED_PAGE}, "vms:read")
        body, data, meta, headers = reply.body, reply.data, reply.meta or {}, reply.headers
        if isinstance(data, dict) and isinstance(data.get("items"), list):
            items, style = data["items"], "items: data.items with total/page/perPage"
            total = data.get("total")
        else:
            items = data if isinstance(data, list) else []
            total = meta.get("total")
            if "link" in headers and 'rel="next"' in headers["link"]:
                style = "link: Link rel=next header" + (
                    " + X-Total-Count" if "x-total-count" in headers else ""
                )
            elif "nextCursor" in meta or "cursor" in meta:
                style = "cursor: meta.nextCursor"
            elif "totalPages" in meta:
                style = "meta: page/perPage with meta {page, perPage, total, totalPages}"
            elif isinstance(body.get("links"), dict) or body.get("next"):
                style = "next link in the body"
            else:
                style = "one page, no paging information"
        if total is None and "x-total-count" in headers:
            total = headers["x-total-count"]
        served = len(items)
        cap = "none seen"
        try:
            total_n = int(total) if total is not None else None
        except (TypeError, ValueError):
            total_n = None
        if total_n is not None and served < min(ASKED_PAGE, total_n):
            cap = f"{served} (asked {ASKED_PAGE}, served {served} of {total_n}: clamps silently)"
        else:
            cap = self._probe_cap(served, total_n)
        default = self._default_page()
        self.add(
            "paging",
            f"{style}; default page {default}; page cap {cap}; total {total_n}",
            style=style.split(":")[0],
            total=total_n,
        )
        return items

    def _probe_cap(self, served: int, total: int | None) -> str:
        try:
            reply = self._get("/vms", {"page": 1, "perPage": PROBE_PAGE}, "vms:read")
        except ApiError as exc:
            return f"below {PROBE_PAGE}: rejected with {exc.status} ({exc.server_message[:60]})"
        data = reply.data
        items = data.get("items", []) if isinstance(data, dict) else data
        if total is not None and len(items) < min(PROBE_PAGE, total):
            return f"{len(items)} (asked {PROBE_PAGE}: clamps silently)"
        return f"none up to {PROBE_PAGE}" if total and total > ASKED_PAGE else "not reached"

    def _default_page(self) -> str:
        try:
            reply = self._get("/vms", None, "vms:read")
        except ApiError as exc:
            return f"unknown ({exc.status})"
        data = reply.data
        items = data.get("items", []) if isinstance(data, dict) else data
        return str(len(items) if isinstance(items, list) else "unknown")

    # -- records ---------------------------------------------------------------------------
    def _list_items(self, items: list) -> None:
        if not items:
            self.add("list items", "no VMs to look at")
            return
        first = items[0] if isinstance(items[0], dict) else {}
        nested = [k for k in ("sshKeys", "firewalls", "privateNetworks") if k in first]
        kind = "full VM objects" if len(nested) == 3 else "summaries"
        if "updatedAt" not in first:
            kind += " without updatedAt (a refresh reads every VM's details again)"
        self.add("GET /vms items", kind)

    def _vms(self) -> None:
        self.vms = self.client.vms.list()
        self.add("VM list", f"{len(self.vms)} VMs read through svcnb's paging")

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

    def _money_and_times(self) -> None:
        prices: Counter = Counter()
        times: Counter = Counter()
        for vm in self.vms:
            for holder in (vm.get("billing"), vm.get("plan")):
                if isinstance(holder, dict) and "priceMonthly" in holder:
                    prices[money_form(holder["priceMonthly"])] += 1
            times[time_form(vm.get("createdAt"))] += 1
            billing = vm.get("billing")
            if isinstance(billing, dict) and billing.get("nextRenewalAt") is not None:
                times[time_form(billing["nextRenewalAt"])] += 1
        balance = "not readable with this token"
        try:
            wallet = self.client.wallet.get()
            balance = money_form(wallet.get("balance"))
            times[time_form(wallet.get("updatedAt"))] += 1
        except ScopeError:
            pass
        self.add(
            "money",
            f"prices: {_counted(prices) or 'none stated'}; wallet balance: {balance}",
            ok="other" not in prices and balance != "other",
        )
        self.add("times", _counted(times) or "none seen", ok=not any("NO" in t for t in times))

    def _deliveries(self) -> None:
        try:
            hooks = self.client.webhooks.list()
        except ScopeError:
            self.add("delivery records", "not readable with this token (webhooks:read)")
            return
        for hook in hooks:
            records = self.client.webhooks.deliveries(hook["id"])
            if not records:
                continue
            keys = list(records[0])
            found = {}
            for canonical, names in DELIVERY_NAMES.items():
                found[canonical] = next((k for k in names if k in keys), None)
            missing = [c for c, k in found.items() if k is None]
            shown = ", ".join(f"{k}→{c}" for c, k in found.items() if k is not None)
            extra = "; UNMAPPED " + ", ".join(missing) if missing else ""
            self.add(
                "delivery records",
                f"fields {', '.join(keys)}; read as {shown}{extra}",
                ok=not missing,
            )
            return
        self.add("delivery records", f"{len(hooks)} subscriptions, no delivery records yet")

    def _rate_limit(self) -> None:
        reply = self._get("/vms", {"page": 1, "perPage": 1}, "vms:read")
        h = reply.headers
        names = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")
        if not any(n in h for n in names):
            self.add("rate limit", "no X-RateLimit-* headers: svcnb paces on 429s only", ok=False)
            return
        self.add(
            "rate limit",
            f"limit {h.get(names[0], '?')}, remaining {h.get(names[1], '?')}, reset in "
            f"{h.get(names[2], '?')} s (fixed or sliding window: headers do not tell; svcnb "
            "paces from them either way)",
        )

    def _endpoints(self) -> None:
        probes: list[tuple[str, str, str]] = [
            ("GET /vms", "/vms", "vms:read"),
            ("GET /firewalls", "/firewalls", "firewalls:read"),
            ("GET /networks", "/networks", "networks:read"),
            ("GET /wallet", "/wallet", "billing:read"),
            ("GET /webhooks", "/webhooks", "webhooks:read"),
        ]
        parts, refused = [], []

        def by_id(label: str, template: str, item: Any, scope: str) -> tuple[str, str, str] | None:
            # an id the service gave that cannot be sent as one path segment is said, not sent
            try:
                path = template.format(
                    segment("id", item.get("id") if isinstance(item, dict) else item)
                )
            except ValueError as exc:
                parts.append(f"{label} not tried ({exc})")
                return None
            return label, path, scope

        if self.vms:
            probe = by_id("GET /vms/{id}", "/vms/{}", self.vms[0], "vms:read")
            if probe:
                probes.insert(1, probe)
        for label, path, scope in probes:
            try:
                reply = self._get(path, None, scope)
                parts.append(f"{label} ok")
                items = _items(reply.data)
                follow = None
                if label == "GET /firewalls" and items:
                    follow = by_id(
                        "GET /firewalls/{id}/rules", "/firewalls/{}/rules", items[0], scope
                    )
                if label == "GET /networks" and items:
                    follow = by_id(
                        "GET /networks/{id}/attachments",
                        "/networks/{}/attachments",
                        items[0],
                        scope,
                    )
                if follow:
                    probes.append(follow)
            except ApiError as exc:
                parts.append(f"{label} {exc.status}")
                refused.append(label)
        self.add("endpoints", ", ".join(parts), ok=not refused, refused=refused)

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


def render(findings: list[Finding]) -> str:
    width = max(len(f.point) for f in findings)
    lines = []
    for f in findings:
        mark = " " if f.ok else "!"
        lines.append(f"{mark} {f.point:<{width}}  {f.seen}")
    return "\n".join(lines)


def _parse_maps(values: list[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {"vm_status": {}, "billing_status": {}}
    for raw in values:
        kind = "vm_status"
        text = raw
        if text.startswith("billing:"):
            kind, text = "billing_status", text.removeprefix("billing:")
        word, sep, cls = text.partition("=")
        if not sep or not word or cls not in vocab.CLASSES[kind]:
            raise ValueError(
                f"--map {raw!r}: write WORD=CLASS for a VM status (CLASS one of "
                f"{', '.join(vocab.VM_CLASSES)}) or billing:WORD=CLASS (one of "
                f"{', '.join(vocab.BILLING_CLASSES)})"
            )
        out[kind][word] = cls
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "examples:\n  svcnb doctor\n  svcnb doctor --json\n"
        "  svcnb doctor --map live=running --map billing:arrears=owing --write-config"
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument(
        "--write-config",
        action="store_true",
        help="write the status words seen (and --map entries) to the config file",
    )
    parser.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="WORD=CLASS",
        help="map a word svcnb does not know (billing:WORD=CLASS for billing words)",
    )
    parser.add_argument("--config", metavar="PATH", help="config file (default: $SVCNB_CONFIG)")


def run(args: argparse.Namespace) -> int:
    try:
        extra = _parse_maps(args.map)
        client = configured_client(progress=False)
    except (SvcnbError, ValueError) as exc:
        print(f"svcnb doctor: {exc}", file=sys.stderr)
        return 2
    # the user's mappings count in this run too, so the table shows what the config will say
    vocab.extend(**extra)
    doctor = Doctor(client)
    try:
        with client:
            findings = doctor.run()
    except SvcnbError as exc:
        print(f"svcnb doctor: {exc}", file=sys.stderr)
        if doctor.findings:
            print(render(doctor.findings), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([f.__dict__ for f in findings], indent=2, default=str))
    else:
        print(f"svcnb doctor: {client.base_url} (token {client._req.masked_token}), GET only\n")
        print(render(findings))
    if args.write_config:
        words = doctor.vocabulary(extra)
        try:
            for kind, mapping in words.items():
                if mapping:
                    write_section(f"vocabulary.{kind}", mapping, args.config)
        except SvcnbError as exc:
            print(f"svcnb doctor: {exc}", file=sys.stderr)
            return 2
        print(f"\nwrote the vocabulary seen to {config_path(args.config)}")
        left = [
            w
            for f in findings
            for w in f.detail.get("unknown", [])
            if w not in extra["vm_status"] and w not in extra["billing_status"]
        ]
        if left:
            print(f"not written (svcnb cannot tell their class): {', '.join(left)}; add --map")
    unknown = any(f.detail.get("unknown") for f in findings)
    return 3 if unknown else 0
