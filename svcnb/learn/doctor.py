"""``svcnb doctor``: what this service answered where the spec says "not shown", and what of it
svcnb proved or understood (README, "Checking your service"; the reading rules and the
assumptions: docs/contracts.md section 0; ``--record``: docs/twin.md).

GET requests only, so it is safe against any service. Every list is read through svcnb's own
client and every value by svcnb's own readers, so a line proves or doubts exactly what a
snapshot would. What is read is :mod:`svcnb.learn.observe`'s; this module judges it into lines.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from svcnb import frames, vocab
from svcnb.assumptions import Decision, assumption, decide
from svcnb.client import Client, Listing, Page, parse_page
from svcnb.config import config_path
from svcnb.errors import ApiError, AuthError
from svcnb.frames import (
    MEANINGS,
    PLACED,
    SCHEMAS,
    UnknownMoneyKeyError,
    event_grouping,
    history_depth,
    parse_money,
    pin_fields,
    unplaced_keys,
)
from svcnb.learn.observe import (
    DETAIL_KEYS,
    MONEY_FIELDS,
    Observation,
    counted,
    money_form,
    quiet,
    time_form,
)
from svcnb.reports import firewall

NO_CONTINUATION = "paging.no_continuation_is_end"
FIELDS = "deliveries.fields."
ASKED_PAGE = 100  # the page size asked of GET /vms, to see what the server serves
PROBE_PAGE = 1000  # far above any plausible cap: tells rejecting servers from clamping ones
UNPROVEN = "UNPROVEN"


@dataclass
class Finding:
    """One line of the doctor's table: a point the spec leaves open and what was seen.

    ``ok`` False: UNPROVEN (a list not proven complete, a form not understood): exit code 3.
    """

    point: str
    seen: str
    ok: bool = True
    detail: dict[str, Any] = field(default_factory=dict)


def _open(value: Any) -> bool:
    """An amount written as an integer: its scale rests on money.scale."""
    try:
        return parse_money(value).basis == "open"
    except ValueError:
        return False


class Doctor:
    """Judges one :class:`~svcnb.learn.observe.Observation` of the service into ``findings``,
    the table. Every request is a GET, sent by the observation, in the order of the lines.

    ``record=True`` keeps every answer (``observed.seen``) for a
    :class:`svcnb.learn.record.Recorder`."""

    def __init__(self, client: Client, record: bool = False) -> None:
        self.client = client
        self.observed = Observation(client, keep=record)
        self.findings: list[Finding] = []

    def add(self, point: str, seen: str, ok: bool = True, **detail: Any) -> None:
        if not ok and not seen.startswith(UNPROVEN):
            seen = f"{UNPROVEN}: {seen}"
        self.findings.append(Finding(point, seen, ok, detail))

    def run(self) -> list[Finding]:
        with self.observed.watching():
            return self._run()

    def _run(self) -> list[Finding]:
        first = self._first_answer()
        self.add(
            "base path",
            f"{self.client.base_url}{self.client.base_path or ''}",
            base_path=self.client.base_path,
        )
        self.findings.insert(0, self.findings.pop())  # base path reads best first
        self.observed.read_lists()
        self._page_sizes(first)
        self._list_findings()
        self._list_items()
        self._words()
        self._ports()
        self._money()
        self._times()
        self._units()
        self._deliveries()
        self._rate_limit()
        self._grace()
        observed = self.observed
        self.add("endpoints", ", ".join(observed.endpoints), refused=observed.refused)
        self.add("writes", "not probed: doctor never changes the account")
        return self.findings

    # -- raw answers ---------------------------------------------------------------------------
    def _first_answer(self) -> Page | None:
        """``GET /vms`` asked nothing: the keys its answer pages by, as svcnb's pager reads
        them (a description only: completeness is the lists' own proof below)."""
        try:
            reply = self.observed.get("/vms", None, "vms:read")
        except AuthError:
            raise  # a token the service does not take: nothing here can be checked
        except ApiError as exc:
            self.add("paging", f"GET /vms answered {exc.status}: nothing to describe")
            return None
        page = parse_page(reply, None, self.observed.req)
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

    def _page_sizes(self, first: Page | None) -> None:
        """What the server served when asked nothing, 100 and 1000 per page, and what that
        shows given the VM list's proven length (nothing, where the length is not proven)."""
        if first is None:
            return
        listed = self.observed.listed
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
            page, refused = self.observed.served(asked)
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
    def _list_findings(self) -> None:
        lists = self.observed.lists
        labels = Counter(e.label for e in lists)
        seen: Counter = Counter()
        for entry in lists:
            seen[entry.label] += 1
            point = entry.label
            if labels[entry.label] > 1:
                point = f"{entry.label} #{seen[entry.label]}"
            if entry.refused is not None:
                self.add(point, f"not readable with this token ({entry.refused})")
            elif entry.failed is not None or entry.items is None:
                self.add(point, f"could not be read: {entry.failed}", ok=False)
            elif getattr(entry.items, "complete", False) is True:
                self._list_proof(point, entry.items)
            else:
                doubt = getattr(entry.items, "doubt", None) or "the client gave no proof"
                self.add(
                    point,
                    f"{len(entry.items)} read, NOT proven complete: {doubt}",
                    ok=False,
                    doubt=doubt,
                )

    def _list_proof(self, point: str, items: Listing) -> None:
        """A complete list's line: the proof, what came and went while it was read, and the
        paging assumption it rests on: pinned (named where), or assumed (unproven, exit 3)."""
        moved = f" (changed while read: {items.changes()})" if items.changes() else ""
        if items.assumed is not None:
            found = assumption(items.assumed)
            said = sum(1 for f in self.findings if f.detail.get("assumed") == found.name)
            meaning = "" if said else f" ({found.meaning})"
            self.add(
                point,
                f"{len(items)} read; complete only as assumed: {items.proof}{moved}; assumed "
                f"{found.name}{meaning}, which the answers do not prove: "
                f"{found.hint(config_path(), 'true')}",
                ok=False,
                assumed=found.name,
                decisions=[Decision(found.name, "unknown")],
            )
        elif items.pinned is not None:
            self.add(
                point,
                f"{len(items)} read; complete: {items.proof}{moved}, pinned by {items.pinned}",
                decisions=[Decision(NO_CONTINUATION, "pinned", "true", where=items.pinned)],
            )
        else:
            self.add(point, f"{len(items)} read; proven complete: {items.proof}{moved}")

    # -- records ---------------------------------------------------------------------------
    def _list_items(self) -> None:
        kinds = self.observed.vm_keys()
        if not kinds:
            self.add("GET /vms items", "no VMs to look at")
            return
        nested, updated = kinds[0]  # the first VM's
        kind = "full VM objects" if len(nested) == len(DETAIL_KEYS) else "summaries"
        if not updated:
            kind += " without updatedAt (a refresh reads every VM's details again)"
        self.add("GET /vms items", kind)

    def _words(self) -> None:
        current = self.vocab()
        observed = self.observed
        for kind, label in (("vm_status", "VM status"), ("billing_status", "billing status")):
            parts, unknown, pinned = [], [], set()
            for word, n in observed.words[kind].most_common():
                cls = current.classify(kind, word, warn=False)  # type: ignore[arg-type]
                source = current.source(kind, word)  # type: ignore[arg-type]
                if cls == vocab.UNKNOWN:
                    if isinstance(word, str):
                        unknown.append(word)
                    evidence = _word_evidence(observed.vms, kind, word, self.client.server_time)
                    parts.append(f"{word}→UNKNOWN ×{n}" + evidence)
                elif source == "built-in":
                    parts.append(f"{word}→{cls} ×{n}")
                else:
                    pinned.add(str(source))
                    parts.append(f"{word}→{cls} ×{n} (pinned by {source})")
            seen = ", ".join(parts) or "none seen"
            if unknown:
                example = unknown[0]
                prefix = "billing:" if kind == "billing_status" else ""
                seen += (
                    f"; any class for {', '.join(map(repr, unknown))} would be assumed: pin it "
                    f"from the evidence above, e.g. svcnb doctor --map {prefix}{example}=CLASS "
                    f"--write-config, or [vocabulary.{kind}] (per account: "
                    f"[accounts.NAME.vocabulary.{kind}])"
                )
            self.add(label, seen, ok=not unknown, unknown=unknown, pinned=sorted(pinned))

    def _ports(self) -> None:
        """Port sentinels in the rules read: their meaning differs between services (``"0"`` is
        every port in DigitalOcean's API, port 0 elsewhere), so unpinned it is an assumption."""
        rules = self.observed.records.get("firewall_rules")
        if not rules:
            return
        pins = firewall.sentinel_pins(self.client.pins)
        sentinel = assumption("firewall.port_sentinels")
        seen: dict[str, list[str]] = {}
        for rule in rules:
            text = firewall.parse_port(rule.get("port"), rule.get("protocol")).sentinel
            if text is not None:
                seen.setdefault(text, []).append(str(rule.get("id")))
        if not seen:
            self.add("firewall ports", f"no port sentinel in the {len(rules)} rules read")
            return
        parts, unpinned = [], []
        for text, ids in seen.items():
            shown = f"{text!r} ×{len(ids)} (rules {', '.join(ids[:3])})"
            name = f"{sentinel.name}.{text}"
            if text in pins:
                parts.append(
                    f"{shown} read as {pins[text]} (pinned by {self.client.pins[name].where})"
                )
                continue
            unpinned.append(text)
            parts.append(
                f"{shown}: may mean {firewall.SENTINELS[text]}; any reading would be assumed, "
                f'so such rules are audited as "could not read; may be open to every port": '
                f"{sentinel.hint(config_path(), key=text)}"
            )
        decided = [decide(f"{sentinel.name}.{t}", self.client.pins, None, True) for t in seen]
        self.add(
            "firewall ports",
            "; ".join(parts),
            ok=not unpinned,
            unpinned=unpinned,
            decisions=decided,
        )

    def _money(self) -> None:
        observed = self.observed
        for label in MONEY_FIELDS:
            if label == "wallet balance" and observed.wallet is None:
                failed = observed.wallet_failed
                if failed is not None:
                    self.add(f"money: {label}", f"could not be read: {failed}", False)
                else:
                    self.add(f"money: {label}", "not readable with this token (billing:read)")
                continue
            values = observed.money_values(label)
            read: Counter = Counter()
            unread: Counter = Counter()
            why: dict[str, str] = {}
            example: dict[str, str] = {}
            scale = self._scale(label, values)
            for value in values:
                form = money_form(value)
                try:
                    money = parse_money(value, scale.value)
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
                shown = (
                    f"{money.raw[:60]} = {money.exact} {money.currency}"
                    if not plain and money.raw is not None  # raw is None only for a None value
                    else ""
                )
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
            text += "; " + scale.text(config_path())
            ok = not unread and scale.ok
            self.add(f"money: {label}", text, ok=ok, unread=dict(unread), decisions=[scale])

    def _scale(self, label: str, values: list[Any]) -> Decision:
        """money.scale for one field, as the frames decide it: needed where an amount is
        written as an integer; proven by a value of the field written with a decimal point."""
        needed = [v for v in values if _open(v)]
        shown = frames.pointed(values) if needed else None
        evidence = None
        if shown is not None:
            evidence = ("major", f"{label} written with a decimal point ({json.dumps(shown)[:40]})")
        found = decide("money.scale", self.client.pins, evidence, bool(needed))
        if found.state == "stated":
            return Decision(found.name, "stated", evidence="every amount states its scale")
        if found.state == "unknown":
            example = json.dumps(needed[0])[:40]
            return Decision(
                found.name, "unknown", evidence=f"{len(needed)} integer amount(s), e.g. {example}"
            )
        return found

    def _times(self) -> None:
        """Every time field the frames read, in every record read, read as the frames read it."""
        seen = self.observed.times()
        ok_forms: Counter = Counter()
        bad_forms: Counter = Counter()
        example: dict[str, str] = {}
        pins = self.client.pins
        zoneless = 0
        for time in seen:
            form = time_form(time.value)
            zoneless += form.startswith("no zone")
            if time.read:
                ok_forms[form] += 1
            else:
                bad_forms[form] += 1
                example.setdefault(form, f"{time.path} {json.dumps(time.value)[:40]}")
        text = f"read {counted(ok_forms)}" if ok_forms else "none read"
        if bad_forms:
            text += "; NOT READ " + "; ".join(
                f"{form} ×{n} (e.g. {example[form]})" for form, n in bad_forms.most_common()
            )
        if not seen:
            text = "none seen"
        zone = decide("times.zone", pins, None, bool(zoneless))
        if zone.state == "stated":
            zone = Decision(zone.name, "stated", evidence="every time states its zone")
        elif zone.state == "unknown":
            zone = Decision(zone.name, "unknown", evidence=f"{zoneless} time(s) without a zone")
        text += "; " + zone.text(config_path())
        ok = not bad_forms and zone.ok
        self.add("times", text, ok=ok, unread=dict(bad_forms), decisions=[zone])

    def _units(self) -> None:
        vms = self.observed.vms
        if not vms:
            self.add("units", "no VMs to check")
            return
        checks = frames.check_units(vms, pins=self.client.pins)
        for quantity in ("ram", "disk"):
            check = checks[quantity]
            text = check.summary().removeprefix(f"{quantity}: ")
            decided = [check.decision] if check.decision is not None else []
            self.add(f"units: {quantity}", text, ok=check.ok, decisions=decided)
        packs = [vm.get("bandwidthPackBytes") for vm in vms]
        if any(p is not None for p in packs):
            # its key names the unit (the spec's own name): no assumption
            self.add("units: bandwidthPackBytes", "bytes, as the key names them (not assumed)")

    def _deliveries(self) -> None:
        hooks = self.observed.read("GET /webhooks")
        if hooks is None or hooks.items is None:
            self.add("delivery records", "not readable with this token (webhooks:read)")
            return
        records = self.observed.deliveries
        self._history_depth(hooks.items)
        if not records:
            self.add("delivery records", f"{len(hooks.items)} subscriptions, no records yet")
            return
        served = self.observed.delivery_keys()
        records, pins = pin_fields(records, pins=self.client.pins)
        self._event_grouping(records)
        keys = list(dict.fromkeys(k for r in records if isinstance(r, dict) for k in r))
        placed: list[str] = []
        absent: list[str] = []
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
        pinned = [f"{k}→{v}" for k, v in pins.items() if k in served]
        if pinned:
            where = "; ".join(
                sorted({p.where for n, p in self.client.pins.items() if n.startswith(FIELDS)})
            )
            text += f"; pinned by {where}: {', '.join(pinned)}"
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
        if unplaced:
            text += "; pin a key to its field: " + assumption("deliveries.fields").hint(
                config_path(), key=str(next(iter(unplaced)))
            )
        self.add("delivery records", text, ok=not unplaced, unplaced=sorted(map(str, unplaced)))

    def _event_grouping(self, records: list[Any]) -> None:
        """How attempts group into events: proven by an event id on every record, pinned, or
        assumed (event counts NA)."""
        names = SCHEMAS["deliveries"]["event_id"].path.split("|")
        ids = [
            next((r[k] for k in names if r.get(k) is not None), None)
            if isinstance(r, dict)
            else None
            for r in records
        ]
        frame = pd.DataFrame({"event_id": pd.array(ids, dtype=object)})
        found = event_grouping(frame, self.client.pins)
        if found.state == "stated":
            self.add("delivery events", f"proven: {found.evidence}")
        elif found.state == "pinned":
            self.add("delivery events", f"pinned by {found.where}", decisions=[found])
        else:
            self.add("delivery events", _assumed(found), ok=False, decisions=[found])

    def _history_depth(self, hooks: list[Any]) -> None:
        """How much delivery history the service keeps: needed only where no subscription
        states its own failure counter."""
        if not hooks:
            return  # no subscription: no run of failures rests on it
        counted = [
            h for h in hooks if isinstance(h, dict) and h.get("consecutiveFailures") is not None
        ]
        if len(counted) == len(hooks):
            self.add(
                "delivery history depth",
                "not needed: every subscription states its own failure counter "
                "(consecutiveFailures), which runs of failures are read from",
            )
            return
        depth = history_depth(self.client.pins)
        if depth.state == "pinned":
            self.add("delivery history depth", f"pinned by {depth.where}", decisions=[depth])
        else:
            self.add("delivery history depth", _assumed(depth), ok=False, decisions=[depth])

    def _rate_limit(self) -> None:
        h = self.observed.rate_limit()
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

    def _grace(self) -> None:
        """The grace period the what-if report dates suspensions by: no answer states one
        (the spec shows no billing rule), so only a pin decides it."""
        grace = decide("billing.grace", self.client.pins, None, True)
        if grace.state == "pinned":
            self.add("grace period", f"{grace.value} pinned by {grace.where}", decisions=[grace])
        elif not self.observed.vms:
            # nothing renews, so nothing rests on it yet: said, not a gap to close by a guess
            self.add("grace period", "not needed yet: no VM was read, so no suspension is dated")
        else:
            why = "the spec states no grace period, and no answer shows one"
            said = _assumed(Decision(grace.name, grace.state, evidence=why))
            self.add("grace period", said, ok=False, decisions=[grace])

    # -- config ----------------------------------------------------------------------------
    def vocab(self) -> vocab.Vocabulary:
        """The words in use (``vocab.current()``, ``--map`` included) and over them the ones
        the client's pins pin (a sandbox's dialect, an account's)."""
        return vocab.from_pins(self.client.pins, base=vocab.current())

    def pins_proven(self) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
        """The assumptions every field that needs them proved alike: name -> (value, the
        evidence), for ``--write-config``; and name -> why it is not, for the rest."""
        by_name: dict[str, list[Decision]] = {}
        for finding in self.findings:
            for d in finding.detail.get("decisions", []):
                if d.state != "stated":
                    by_name.setdefault(d.name, []).append(d)
        proven: dict[str, tuple[str, str]] = {}
        left: dict[str, str] = {}
        for name, decisions in by_name.items():
            values = {d.value for d in decisions}
            if all(d.state == "proven" for d in decisions) and len(values) == 1:
                proven[name] = (decisions[0].value or "", "; ".join(d.evidence for d in decisions))
            elif any(d.state == "unknown" for d in decisions):
                left[name] = "not proven by the answers"
        return proven, left

    def vocabulary(self, extra: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        """Every word seen with its class (unknown ones only where ``extra`` maps them)."""
        current = self.vocab()
        out: dict[str, dict[str, str]] = {"vm_status": {}, "billing_status": {}}
        for kind in out:
            for word in self.observed.words[kind]:
                if not isinstance(word, str):
                    continue
                cls = current.classify(kind, word, warn=False)  # type: ignore[arg-type]
                if cls != vocab.UNKNOWN:
                    out[kind][word] = cls
            out[kind].update(extra.get(kind, {}))
        return out


# keys a service may add to a VM that say its power state, the evidence for a status word
_POWER_KEYS = ("power_status", "powerStatus", "power_state", "powerState", "server_status")


def _word_evidence(vms: list[dict], kind: str, word: Any, now: Any = None) -> str:
    """What the VMs carrying an unknown status word show besides it: how many, a few ids, the
    other status (billing for a VM word, the VM's for a billing word) and any power state, and
    what providers mean by the word, so a user maps it by evidence, not by guess."""

    def billing_of(vm: dict) -> Any:
        billing = vm.get("billing")
        return billing.get("status") if isinstance(billing, dict) else None

    own = (lambda vm: vm.get("status")) if kind == "vm_status" else billing_of
    other, other_name = (
        (billing_of, "billing status")
        if kind == "vm_status"
        else (lambda vm: vm.get("status"), "VM status")
    )
    carrying = [vm for vm in vms if own(vm) == word]
    ids = [str(vm.get("id")) for vm in carrying[:3]]
    bits = [f"VMs {', '.join(ids)}" + (" ..." if len(carrying) > 3 else "")]
    others = Counter(str(other(vm)) for vm in carrying)
    bits.append(f"their {other_name}: " + ", ".join(f"{w} ×{n}" for w, n in others.most_common(3)))
    bits.extend(_renewal_evidence(carrying, now))
    for power_key in _POWER_KEYS:
        power = Counter(str(vm[power_key]) for vm in carrying if power_key in vm)
        if power:
            shown = ", ".join(f"{w} ×{n}" for w, n in power.most_common(3))
            bits.append(f"{power_key}: {shown}")
    key = vocab.normalise(word)
    if key is not None and key in vocab.AMBIGUOUS[kind]:
        bits.append(f"providers differ: {vocab.AMBIGUOUS[kind][key]}")
    return f" [{'; '.join(bits)}]"


def _assumed(decision: Decision) -> str:
    """A doctor line's text for an assumption nothing proves or pins: "assumed", why, and
    the line that pins it (the registry's)."""
    return f"assumed ({decision.name}): {decision.evidence}; " + assumption(decision.name).hint(
        config_path()
    )


def _renewal_evidence(carrying: list[dict], now: Any) -> list[str]:
    """Where the renewal dates of the VMs carrying a word stand against the server's time
    (read by the frames' own reader), and how many state a price: a VM that renews ahead and
    is priced is billed, one whose date is past owes or has stopped renewing."""
    if not carrying:
        return []
    table = quiet(lambda: frames.vms(carrying))
    when = pd.to_datetime(table["next_renewal_at"], utc=True)
    at = pd.Timestamp(now) if now is not None else pd.Timestamp.now(tz="UTC")
    counted = Counter(
        "none" if pd.isna(t) else ("ahead" if t > at else "past") for t in when.tolist()
    )
    said = ", ".join(f"{k} ×{counted[k]}" for k in ("ahead", "past", "none") if counted[k])
    priced = int(table["price_monthly_amount"].notna().sum())
    return [f"renewal date: {said}", f"a price stated ×{priced}"]


def mapping_effect(
    doctor: Doctor, before: vocab.Vocabulary, extra: Mapping[str, Mapping[str, str]]
) -> list[str]:
    """What the mappings ``extra`` change in the billing figures of the VMs the doctor read,
    now (the server's time): renewals due in 30 days, the monthly run rate, the VMs overdue
    and those left out for an unknown word, each as ``before -> after`` (``before``: the
    vocabulary without them). A user sees what a mapping does before writing it."""
    from svcnb.money import money_text
    from svcnb.reports import billing

    vms = quiet(lambda: frames.vms(doctor.observed.vms, pins=doctor.client.pins))
    held = doctor.observed.wallet
    wallet = None if held is None else quiet(lambda: frames.wallet(held, pins=doctor.client.pins))
    now = doctor.client.server_time or pd.Timestamp.now(tz="UTC")

    def money(frame: pd.DataFrame, column: str) -> str:
        parts = [
            money_text(amount, currency)
            for currency, amount in frame.groupby("currency", dropna=False)[column].sum().items()
            if isinstance(currency, str)
        ]
        return " + ".join(parts) or "0"

    def figures() -> dict[str, str]:
        # the words left unknown are the doctor's own finding: no second warning of them here
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return computed()

    def computed() -> dict[str, str]:
        due = quiet(lambda: billing.renewals_due(vms, wallet, now=now, windows=(30,)))
        rate = quiet(lambda: billing.run_rate(vms, wallet, now=now))
        late = quiet(lambda: billing.overdue(vms, now=now))
        left = int(quiet(lambda: billing.unknown_status(vms, now=now)).shape[0])
        return {
            "renewals due in 30 days": f"{int(due['renewals'].sum())} ({money(due, 'amount')})",
            "monthly run rate": money(rate, "monthly_amount"),
            "VMs overdue": str(len(late)),
            "VMs left out (status word unknown)": str(left),
        }

    with vocab.using(before):
        was = figures()
    now_is = figures()
    maps = ", ".join(
        f"{'billing:' if kind == 'billing_status' else ''}{w}={c}"
        for kind, mapping in extra.items()
        for w, c in mapping.items()
    )
    width = max(len(k) for k in was)
    lines = [f"what --map {maps} changes in the figures of the {len(vms)} VMs read, now:"]
    for key, old in was.items():
        new = now_is[key]
        change = f"{old} -> {new}" if old != new else f"{old} (unchanged)"
        lines.append(f"  {key:<{width}}  {change}")
    return lines


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
