"""Stop plans: which VMs a bulk stop touches and why, saved, checked again and applied
(docs/contracts.md §7).

A plan is data, not an action, and a saved file is data anyone can edit: hence the digest, and
every decision taken again at apply time rather than read from the file.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import json
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pandas as pd

from svcnb import files as _files
from svcnb import frames, vocab
from svcnb.config import service_url
from svcnb.errors import Conflict, NotFound, SvcnbError, WaitTimeout
from svcnb.store import StopPlanRecord
from svcnb.times import to_utc

DEFAULT_LIMIT = 10
PLAN_KIND = "svcnb.stop_plan"
PLAN_VERSION = 1
AUDIT_KIND = StopPlanRecord.AUDIT_KIND  # its ``kind`` in ``store.journal.log()``

STOP, PROTECTED, NOT_STOPPABLE = "stop", "protected", "not stoppable"
# outcomes of applying a plan, per VM
STOPPED, STRAGGLER, REFUSED, FAILED, SKIPPED, QUEUED = (
    "stopped",
    "straggler",
    "refused",
    "failed",
    "skipped",
    "queued",
)
# the VM frame columns a plan keeps per VM and compares when it is applied: a change in any of
# them means the VM is no longer the one that was reviewed
GUARDED = ("name", "status", "is_protected", "region_slug", "plan_slug")
ENTRY_COLUMNS = ["vm_id", *GUARDED, "status_class", "decision", "reason"]
OUTCOME_COLUMNS = ["vm_id", "name", "decision", "outcome", "reason", "action_id", "status"]


class PlanError(SvcnbError, ValueError):
    """A stop plan cannot be built, read or applied as asked (the message says what to do)."""


class PlanLimitError(PlanError):
    """A plan would stop more VMs than the limit of one action allows."""


class PlanChangedError(PlanError):
    """A plan's content no longer gives the digest it was reviewed under (edited by hand, or
    changed in memory since it was built): it is refused whole, nothing is sent."""


def _rebuild_hint() -> str:
    return (
        "build the plan again and review it (svcnb stop FILTERS --plan-out FILE, then "
        "--review FILE), then apply that one"
    )


def _text(value: Any) -> str | None:
    return None if value is None or (not isinstance(value, list) and pd.isna(value)) else str(value)


def _flag(value: Any) -> bool | None:
    return None if value is None or pd.isna(value) else bool(value)


def vms_text(count: int) -> str:
    """``count`` VMs in words, singular or plural: ``1 VM``, ``2 VMs``, ``0 VMs``."""
    return f"{count} VM" if count == 1 else f"{count:,} VMs"


def check_limit(count: int, limit: int, doing: str) -> None:
    """PlanLimitError when ``count`` VMs exceed ``limit`` (naming both and how to raise it)."""
    if count > limit:
        raise PlanLimitError(
            f"{doing} would stop {count} VMs, over the limit of {limit} per action; narrow the "
            f"filter, or raise the limit explicitly with limit={count} (svcnb stop --limit "
            f"{count})"
        )


def _limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise PlanError(f"limit must be a whole number of VMs >= 1, got {limit!r}")
    return limit


@dataclass(frozen=True)
class Filter:
    """Terms a VM must all match (AND); None or empty means the term is not used.

    ``status`` is a status class of svcnb.vocab (``running`` matches ``active`` on a service
    that says ``active``) or a service's own word; ``name`` a shell pattern (``web-*``, case
    ignored); ``ids`` explicit VM ids.
    """

    status: str | None = None
    region: str | None = None
    plan: str | None = None
    name: str | None = None
    ids: tuple[str, ...] = ()

    def terms(self) -> dict[str, Any]:
        out = {k: v for k, v in self.as_dict().items() if v not in (None, "", [])}
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "region": self.region,
            "plan": self.plan,
            "name": self.name,
            "ids": list(self.ids),
        }

    def why(self, row: Mapping[str, Any], cls: str) -> list[str] | None:
        """The terms ``row`` matches, in words; None when it misses any term."""
        said: list[str] = []
        if self.ids:
            if str(row["id"]) not in self.ids:
                return None
            said.append("listed by id")
        if self.status:
            word = _text(row["status"])
            if self.status == cls:
                said.append(f"status {word!r} is of class {cls}")
            elif word is not None and vocab.normalise(word) == vocab.normalise(self.status):
                said.append(f"status is {word!r}")
            else:
                return None
        if self.region:
            if _text(row["region_slug"]) != self.region:
                return None
            said.append(f"region {self.region}")
        if self.plan:
            if _text(row["plan_slug"]) != self.plan:
                return None
            said.append(f"plan {self.plan}")
        if self.name:
            name = _text(row["name"]) or ""
            if not fnmatch.fnmatchcase(name.lower(), self.name.lower()):
                return None
            said.append(f"name {name!r} matches {self.name!r}")
        return said


@dataclass
class StopPlan:
    """The VMs a bulk stop would touch, each with its decision and the reason.

    ``entries`` columns: vm_id, name, status, is_protected, region_slug, plan_slug (as read when
    the plan was built), status_class, decision (``stop``, ``protected``, ``not stoppable``),
    reason. ``server`` is the API base URL the fleet was read from, ``built_at`` its clock then.
    """

    entries: pd.DataFrame
    filter: Filter
    limit: int
    include_protected: tuple[str, ...] = ()
    server: str | None = None
    built_at: pd.Timestamp | None = None
    plan_id: str = field(default="")
    # the file the plan was read from, for messages; not part of what was reviewed
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.plan_id:
            self.plan_id = _digest(self._body())

    def check_digest(self) -> None:
        """PlanChangedError unless the plan's content still gives its ``plan_id``: the digest
        is of what the reviewer saw, so a plan changed since is not the reviewed plan."""
        if _digest(self._body()) != self.plan_id:
            where = self.source or "the plan in memory"
            raise PlanChangedError(
                f"{where} (plan {self.plan_id}) was changed after it was built: its content no "
                f"longer gives the plan id it was reviewed under, so nothing is applied; "
                f"{_rebuild_hint()}"
            )

    # --- views ----------------------------------------------------------------------------

    @property
    def to_stop(self) -> list[str]:
        """The VM ids the plan stops."""
        return [str(v) for v in self.entries.loc[self.entries["decision"] == STOP, "vm_id"]]

    def part(self, decision: str) -> pd.DataFrame:
        """The entries with ``decision`` (columns as ``entries``)."""
        return self.entries[self.entries["decision"] == decision].reset_index(drop=True)

    def summary(self) -> str:
        """One line: how many VMs are stopped, held back as protected, or not stoppable."""
        counts = self.entries["decision"].value_counts()
        return (
            f"plan {self.plan_id}: {int(counts.get(STOP, 0))} to stop, "
            f"{int(counts.get(PROTECTED, 0))} protected (not stopped), "
            f"{int(counts.get(NOT_STOPPABLE, 0))} not stoppable; limit {self.limit}"
        )

    def describe(self) -> str:
        """The plan as text for a reviewer: the filter, then each VM with its reason."""
        terms = ", ".join(f"{k}={v}" for k, v in self.filter.terms().items())
        lines = [self.summary(), f"filter: {terms}; server {self.server}; built {self.built_at}"]
        for decision, title in (
            (STOP, "will be stopped"),
            (PROTECTED, "protected, not stopped"),
            (NOT_STOPPABLE, "not stoppable"),
        ):
            part = self.part(decision)
            if len(part):
                lines.append(f"{title} ({len(part)}):")
                lines += [f"  {r.name} ({r.vm_id}): {r.reason}" for r in part.itertuples()]
        return "\n".join(lines)

    # --- file -----------------------------------------------------------------------------

    def _body(self) -> dict[str, Any]:
        rows = []
        for row in self.entries[ENTRY_COLUMNS].to_dict("records"):
            rows.append(
                {k: (_flag(v) if k == "is_protected" else _text(v)) for k, v in row.items()}
            )
        return {
            "kind": PLAN_KIND,
            "version": PLAN_VERSION,
            "server": self.server,
            "built_at": None if self.built_at is None else self.built_at.isoformat(),
            "filter": self.filter.as_dict(),
            "limit": self.limit,
            "include_protected": list(self.include_protected),
            "vms": rows,
        }

    def to_dict(self) -> dict[str, Any]:
        """The plan as saved: its body and ``plan_id``, a digest of the body."""
        return {**self._body(), "plan_id": self.plan_id}

    def save(self, path: str | Path) -> Path:
        """Write the plan as JSON to ``path``; returns the path."""
        path = Path(path)
        _files.write(
            path, json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n", secret=False
        )
        return path

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "the plan") -> StopPlan:
        """A plan from :meth:`to_dict`; PlanError when it is not one or was edited since."""
        if not isinstance(data, Mapping) or data.get("kind") != PLAN_KIND:
            raise PlanError(
                f"{source} is not an svcnb stop plan; build one with svcnb stop --plan-out"
            )
        if data.get("version") != PLAN_VERSION:
            raise PlanError(
                f"{source} is a stop plan of version {data.get('version')!r}; this svcnb reads "
                f"version {PLAN_VERSION}: build the plan again"
            )
        try:
            f = data["filter"]
            entries = pd.DataFrame(list(data["vms"]), columns=ENTRY_COLUMNS)
            twice = entries["vm_id"][entries["vm_id"].duplicated()].astype(str).unique()
            if len(twice):
                # the plan keys its entries by VM: a second entry would be a second decision
                raise PlanError(
                    f"{source} names VM {', '.join(twice)} twice; a stop plan has one entry per "
                    f"VM: {_rebuild_hint()}"
                )
            plan = cls(
                entries=_typed(entries),
                filter=Filter(
                    status=f.get("status"),
                    region=f.get("region"),
                    plan=f.get("plan"),
                    name=f.get("name"),
                    ids=tuple(str(v) for v in f.get("ids") or ()),
                ),
                limit=_limit(data["limit"]),
                include_protected=tuple(str(v) for v in data.get("include_protected") or ()),
                server=data.get("server"),
                built_at=None if not data.get("built_at") else pd.Timestamp(data["built_at"]),
                plan_id=str(data.get("plan_id") or "?"),
                source=source,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, PlanError):
                raise
            raise PlanError(
                f"{source} is not a readable stop plan ({type(exc).__name__}: {exc}); build it "
                "again with svcnb stop --plan-out"
            ) from None
        plan.check_digest()
        return plan

    @classmethod
    def load(cls, path: str | Path) -> StopPlan:
        """Read a plan written by :meth:`save`."""
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except ValueError:
            raise PlanError(
                f"{path} is not JSON; give a file written by svcnb stop --plan-out"
            ) from None
        return cls.from_dict(data, source=str(path))


def _typed(entries: pd.DataFrame) -> pd.DataFrame:
    out = entries.copy()
    for column in ENTRY_COLUMNS:
        if column != "is_protected":
            out[column] = out[column].astype("string")
    out["is_protected"] = out["is_protected"].astype("boolean")
    return out.reset_index(drop=True)


def _digest(body: Mapping[str, Any]) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def decide(
    chosen: Filter, allowed: Iterable[str], record: Mapping[str, Any], cls: str
) -> tuple[str, str] | None:
    """The decision on one VM (a vms frame row, status class ``cls``) under a plan's rules and
    why; None when the filter does not match it. Building and applying a plan both ask this:
    what a plan file says was decided is never taken on trust."""
    why = chosen.why(record, cls)
    if why is None:
        return None
    vm_id = str(record["id"])
    protected = _flag(record["is_protected"])
    word = _text(record["status"])
    if cls != "running":
        if cls == vocab.UNKNOWN:
            return NOT_STOPPABLE, (
                f"status {word!r} is not in svcnb's vocabulary, so it is not known to be "
                "running; map the word (svcnb.vocab.extend) if it means running"
            )
        return NOT_STOPPABLE, f"status {word!r} (class {cls}): only running VMs can be stopped"
    if protected is not False and vm_id not in set(allowed):
        state = "is protected" if protected else "has a protection flag that could not be read"
        return PROTECTED, (
            f"{'; '.join(why)}; but it {state}: include it explicitly to stop it "
            f"(include_protected=[{vm_id!r}], svcnb stop --include-protected {vm_id})"
        )
    reason = "; ".join(why)
    if protected is not False:
        reason += "; protected, included explicitly"
    return STOP, reason


_WILDCARD = ("*", "?", "[")


def _held(values: Iterable[Any]) -> list[str]:
    return sorted({str(v) for v in values if v is not None and not pd.isna(v)})


def _listing(values: list[str], most: int = 10) -> str:
    if not values:
        return "none: the fleet has no VMs"
    more = f", … ({len(values)} in all)" if len(values) > most else ""
    return ", ".join(values[:most]) + more


def _absent(label: str, value: str, held: list[str], plural: str, *, cutoff: float = 0.6) -> str:
    close = difflib.get_close_matches(value, held, n=1, cutoff=cutoff)
    guess = f": did you mean {close[0]!r}?" if close else ""
    return (
        f"no VM in the fleet has {label} {value!r}{guess} ({plural} in the fleet: {_listing(held)})"
    )


def check_terms(chosen: Filter, vms: pd.DataFrame, classes: Iterable[str]) -> None:
    """PlanError when a filter term names a value no VM of ``vms`` has (a typo such as status
    ``runing`` or region ``eu-centrl-1``), naming the closest value the fleet holds: a typo is
    an error, not an empty plan. A status class of svcnb.vocab (``running``...) is a value even
    when no VM is of it now; a name pattern must match some VM's name; every id must be a VM's."""
    if chosen.status:
        words = _held(vms["status"])
        said = {vocab.normalise(w) for w in words}
        known = (*vocab.VM_CLASSES, vocab.UNKNOWN)
        if chosen.status not in known and vocab.normalise(chosen.status) not in said:
            present = sorted(set(classes) | set(words))
            held = sorted(set(present) | set(vocab.VM_CLASSES))
            close = difflib.get_close_matches(chosen.status, held, n=1, cutoff=0.6)
            guess = f": did you mean {close[0]!r}?" if close else ""
            raise PlanError(
                f"no VM in the fleet has status {chosen.status!r}{guess} (give a status class: "
                f"{', '.join(vocab.VM_CLASSES)}, or a word the fleet uses: {_listing(words)})"
            )
    for label, value, column, plural in (
        ("region", chosen.region, "region_slug", "regions"),
        ("plan", chosen.plan, "plan_slug", "plans"),
    ):
        held = _held(vms[column])
        if value and value not in held:
            raise PlanError(_absent(label, value, held, plural))
    if chosen.name:
        names = _held(vms["name"])
        pattern = chosen.name.lower()
        if not any(fnmatch.fnmatchcase(n.lower(), pattern) for n in names):
            lowered = {n.lower(): n for n in names}
            if any(c in chosen.name for c in _WILDCARD):
                bare = pattern.strip("*?")
                close = difflib.get_close_matches(bare, list(lowered), n=3, cutoff=0.3)
                guess = (
                    f"; the closest names: {', '.join(lowered[c] for c in close)}" if close else ""
                )
                raise PlanError(f"no VM name in the fleet matches {chosen.name!r}{guess}")
            raise PlanError(_absent("name", chosen.name, names, "names", cutoff=0.5))
    if chosen.ids:
        ids = set(_held(vms["id"]))
        unknown = [v for v in chosen.ids if v not in ids]
        if unknown:
            nearest = {
                v: difflib.get_close_matches(v, sorted(ids), n=1, cutoff=0.8) for v in unknown
            }
            guess = "; ".join(f"{v}: did you mean {c[0]!r}?" for v, c in nearest.items() if c)
            raise PlanError(
                f"VM id(s) not in the fleet: {', '.join(unknown)}; "
                + (guess if guess else "check the ids")
            )


def build_stop_plan(
    fleet: Any,
    *,
    status: str | None = None,
    region: str | None = None,
    plan: str | None = None,
    name: str | None = None,
    ids: Iterable[str] | None = None,
    include_protected: Iterable[str] = (),
    limit: int = DEFAULT_LIMIT,
    server: str | None = None,
    built_at: Any = None,
) -> StopPlan:
    """A stop plan over ``fleet``: a Client (its VM list is read now) or a ``vms`` frame.

    Reads the vms frame columns id, name, status, is_protected, region_slug and plan_slug. Every
    VM that matches all the filter terms gets an entry: ``stop`` when its status is of class
    running and it is not protected (or its id is in ``include_protected``), ``protected``
    when it is protected or its protection flag could not be read, ``not stoppable`` otherwise.
    Raises PlanLimitError when more than ``limit`` VMs would be stopped, PlanError when no term
    is given, a term names a value no VM has (:func:`check_terms`: the error names the closest
    value the fleet holds), or ``include_protected`` names VMs the filter did not match.
    """
    limit = _limit(limit)
    if hasattr(fleet, "vms") and hasattr(fleet, "base_url"):
        vms = frames.vms(fleet.vms.list(), pins=getattr(fleet, "pins", None))
        server = server or str(fleet.base_url)
        built_at = built_at if built_at is not None else fleet.server_time
    else:
        vms = fleet
    chosen = Filter(
        status=status or None,
        region=region or None,
        plan=plan or None,
        name=name or None,
        ids=tuple(dict.fromkeys(str(v) for v in ids or ())),
    )
    if not chosen.terms():
        raise PlanError(
            "a stop plan needs at least one filter term (status, region, plan, name or ids); "
            "to stop every running VM say so with status='running'"
        )
    allowed = tuple(dict.fromkeys(str(v) for v in include_protected))
    classes = vocab.current().classify_many("vm_status", list(vms["status"])) if len(vms) else []
    check_terms(chosen, vms, classes)
    rows: list[dict[str, Any]] = []
    # pandas-stubs key a record by any Hashable; a vms frame's columns are str
    records = cast(list[dict[str, Any]], vms.to_dict("records"))
    for record, cls in zip(records, classes, strict=True):
        decided = decide(chosen, allowed, record, cls)
        if decided is None:
            continue
        decision, reason = decided
        vm_id = str(record["id"])
        rows.append(
            {
                "vm_id": vm_id,
                **{c: record[c] for c in GUARDED},
                "status_class": cls,
                "decision": decision,
                "reason": reason,
            }
        )
    matched = {r["vm_id"] for r in rows}
    stray = [v for v in allowed if v not in matched]
    if stray:
        raise PlanError(
            f"include_protected names VM(s) the filter does not match: {', '.join(stray)}; "
            "it only lets the filter's protected VMs through"
        )
    entries = _typed(pd.DataFrame(rows, columns=ENTRY_COLUMNS))
    check_limit(int((entries["decision"] == STOP).sum()), limit, "this plan")
    when = None if built_at is None else to_utc(built_at, "built_at")
    return StopPlan(
        entries=entries,
        filter=chosen,
        limit=limit,
        include_protected=allowed,
        server=None if server is None else str(server).rstrip("/"),
        built_at=when,
    )


def held_back(plan: StopPlan, now: Mapping[str, Any]) -> str | None:
    """Why ``plan``'s rules do not stop the VM as read ``now`` (a vms frame row), in words;
    None when they do."""
    decided = decide(plan.filter, plan.include_protected, now, vocab.vm_class(now.get("status")))
    if decided is None:
        terms = ", ".join(f"{k}={v}" for k, v in plan.filter.terms().items())
        return f"held back by the plan's rules: it does not match the plan's filter ({terms})"
    decision, reason = decided
    if decision == STOP:
        return None
    return f"held back by the plan's rules ({decision}): {reason}"


def changes(planned: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The guarded fields that differ between a plan entry and the VM read now, in words."""
    said = []
    for column in GUARDED:
        a, b = planned.get(column), now.get(column)
        a = _flag(a) if column == "is_protected" else _text(a)
        b = _flag(b) if column == "is_protected" else _text(b)
        if a != b:
            said.append(f"{column} was {a!r}, is {b!r} now")
    return said


class StopRun:
    """One application of a plan: :meth:`queue` checks and sends, :meth:`wait` waits.

    ``outcomes`` holds one row per plan entry (columns vm_id, name, decision, outcome, reason,
    action_id, status). :func:`apply_plan` runs the whole thing; the VM panel queues here and
    follows the stops with its own watch, then settles the outcomes.
    """

    def __init__(
        self,
        plan: StopPlan,
        client: Any,
        *,
        approver: str,
        store: Any,
        limit: int = DEFAULT_LIMIT,
    ) -> None:
        plan.check_digest()
        who = "" if approver is None else str(approver).strip()
        if not who:
            raise PlanError(
                "applying a stop plan needs an approver: the name of who approved it "
                "(approver='sam', svcnb stop --apply FILE --approver sam)"
            )
        here = str(client.base_url).rstrip("/")
        if plan.server is not None and service_url(plan.server) != service_url(here):
            raise PlanError(
                f"plan {plan.plan_id} was built on {plan.server}, not on {here}: apply it on the "
                "server it was built for, or build a new plan here"
            )
        check_limit(len(plan.to_stop), _limit(limit), f"plan {plan.plan_id}")
        self.plan, self.client, self.approver, self.store = plan, client, who, store
        # the exception behind each ``failed`` outcome, for callers that word it themselves
        self.errors: dict[str, Exception] = {}
        self.outcomes = pd.DataFrame(
            {
                "vm_id": plan.entries["vm_id"],
                "name": plan.entries["name"],
                "decision": plan.entries["decision"],
                "outcome": [SKIPPED if d != STOP else QUEUED for d in plan.entries["decision"]],
                "reason": [
                    r if d != STOP else ""
                    for d, r in zip(plan.entries["decision"], plan.entries["reason"], strict=True)
                ],
                "action_id": pd.Series([None] * len(plan.entries), dtype="string"),
                "status": plan.entries["status"],
            },
            columns=OUTCOME_COLUMNS,
        ).astype({c: "string" for c in OUTCOME_COLUMNS})

    def _set(self, vm_id: str, **values: Any) -> None:
        rows = self.outcomes["vm_id"] == vm_id
        for key, value in values.items():
            self.outcomes.loc[rows, key] = value

    def rules_say(self, now: Mapping[str, Any]) -> str | None:
        """Why the plan's rules (its filter, ``include_protected``, protection, status class)
        hold back the VM as read now (a vms frame row); None when they stop it."""
        return held_back(self.plan, now)

    def queue(self) -> list[str]:
        """Re-read each VM to stop; refuse those the plan's rules hold back as the VM stands
        now (whatever the plan says was decided) and those whose guarded fields changed since
        the plan, send a stop for the rest. Returns the VM ids whose stop was queued."""
        sent: list[str] = []
        planned = self.plan.entries.set_index("vm_id", drop=False)
        for vm_id in self.plan.to_stop:
            try:
                # pandas-stubs key a row by any Hashable; a vms frame's columns are str
                now = cast(
                    dict[str, Any],
                    frames.vms(
                        [self.client.vms.get(vm_id)], pins=getattr(self.client, "pins", None)
                    )
                    .iloc[0]
                    .to_dict(),
                )
            except NotFound:
                self._set(vm_id, outcome=REFUSED, reason="the VM no longer exists", status=None)
                continue
            except SvcnbError as exc:
                self.errors[vm_id] = exc
                self._set(vm_id, outcome=FAILED, reason=f"could not re-read it: {exc}")
                continue
            self._set(vm_id, status=_text(now.get("status")))
            held = self.rules_say(now)
            if held:
                self._set(vm_id, outcome=REFUSED, reason=held)
                continue
            moved = changes(cast(dict[str, Any], planned.loc[vm_id].to_dict()), now)
            if moved:
                self._set(
                    vm_id,
                    outcome=REFUSED,
                    reason="changed since the plan was built: " + "; ".join(moved),
                )
                continue
            try:
                action_id = self.client.vms.stop(vm_id)
            except Conflict as exc:
                self._set(vm_id, outcome=REFUSED, reason=f"the service refused the stop: {exc}")
                continue
            except SvcnbError as exc:
                self.errors[vm_id] = exc
                self._set(vm_id, outcome=FAILED, reason=f"the stop was not queued: {exc}")
                continue
            self._set(vm_id, action_id=str(action_id), reason="stop queued")
            sent.append(vm_id)
        return sent

    def wait(self, timeout: float = 120.0) -> pd.DataFrame:
        """Wait for every queued stop at once (``client.vms.wait_stopped``, ``timeout`` seconds
        each, in parallel); stops still not finished are stragglers. Returns ``outcomes``."""
        queued = [str(v) for v in self.outcomes.loc[self.outcomes["outcome"] == QUEUED, "vm_id"]]

        def one(vm_id: str) -> tuple[str, str, str, str | None]:
            action = self.outcomes.loc[self.outcomes["vm_id"] == vm_id, "action_id"].iloc[0]
            try:
                self.client.vms.wait_stopped(vm_id, timeout=timeout, action_id=str(action))
            except WaitTimeout as exc:
                return vm_id, STRAGGLER, str(exc), self._status(vm_id)
            except SvcnbError as exc:
                return vm_id, FAILED, str(exc), self._status(vm_id)
            return vm_id, STOPPED, "stopped", self._status(vm_id)

        if queued:
            with ThreadPoolExecutor(max_workers=min(8, len(queued))) as pool:
                for vm_id, outcome, reason, status in pool.map(one, queued):
                    self._set(vm_id, outcome=outcome, reason=reason, status=status)
        return self.outcomes

    def _status(self, vm_id: str) -> str | None:
        try:
            return _text(self.client.vms.get(vm_id).get("status"))
        except SvcnbError:
            return None

    def settle(self, statuses: Mapping[str, Any]) -> pd.DataFrame:
        """Outcomes of queued stops from statuses read by someone else's watch (the panel's):
        stopped when the word is of class stopped, else a straggler (or failed when the VM went
        suspended, terminated or away). Returns ``outcomes``."""
        for vm_id in self.outcomes.loc[self.outcomes["outcome"] == QUEUED, "vm_id"]:
            word = statuses.get(str(vm_id))
            cls = vocab.vm_class(word)
            if cls == "stopped":
                outcome, reason = STOPPED, "stopped"
            elif cls in ("suspended", "terminated") or word is None:
                outcome, reason = FAILED, f"it is {word or 'gone'} now; it will not stop"
            else:
                outcome, reason = STRAGGLER, f"still {word!r} when the watch ended"
            self._set(str(vm_id), outcome=outcome, reason=reason, status=word)
        return self.outcomes

    def record(self, stage: str = "applied") -> dict[str, Any]:
        """Write the plan, the approver and each VM's outcome to the store's journal; returns
        the record as ``store.journal.log()`` shows it."""
        counts = self.outcomes["outcome"].value_counts()
        order = (STOPPED, QUEUED, STRAGGLER, REFUSED, FAILED, SKIPPED)
        said = ", ".join(f"{int(counts[k])} {k}" for k in order if counts.get(k, 0))
        when = self.client.server_time or datetime.now(UTC)
        record = StopPlanRecord(
            time=when,
            stage=stage,
            outcome=f"stop plan {stage}: {said}",
            plan_id=self.plan.plan_id,
            approver=self.approver,
            plan=self.plan.to_dict(),
            vms=[
                {k: (None if pd.isna(v) else v) for k, v in row.items()}
                for row in self.outcomes.to_dict("records")
            ],
        )
        return self.store.journal.append(record).as_audit()


def apply_plan(
    plan: StopPlan,
    client: Any,
    *,
    approver: str,
    store: Any,
    limit: int = DEFAULT_LIMIT,
    timeout: float = 120.0,
) -> pd.DataFrame:
    """Apply ``plan``: refuse VMs its rules hold back as they stand now (whatever the plan says
    was decided) or changed since it was built, stop the rest, wait for each to be stopped
    (stragglers after ``timeout`` seconds), and write plan, approver and outcomes to ``store``'s
    audit log.

    Returns one row per plan entry: vm_id, name, decision, outcome (``stopped``, ``straggler``,
    ``refused``, ``failed``, ``skipped``), reason, action_id, status (the last word read).
    PlanError (nothing sent) without an approver, on another server than the plan's, or when the
    plan stops more than ``limit`` VMs; PlanChangedError (nothing sent) when the plan's content
    no longer gives its digest.
    """
    run = StopRun(plan, client, approver=approver, store=store, limit=limit)
    try:
        run.queue()
        run.wait(timeout)
    finally:
        # whatever happened, what was sent is on file
        run.record()
    return run.outcomes
