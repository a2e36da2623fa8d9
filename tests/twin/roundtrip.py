"""One round trip: ``svcnb doctor --record`` on an original service, a twin from the file holding
the same account, then the doctor and svcnb's frames and reports on both, compared.

The original is a sandbox in some dialect (its saved state gives the twin the same account) or a
blind peer (a store snapshot of it gives the twin its account, through ``--from-store``). The
doctor's findings are compared line by line (the base URL, and the seconds to the rate-limit
window's end, which are when the doctor ran rather than how the service speaks, left out);
frames and reports value by value.
"""

from __future__ import annotations

import re
import tomllib
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from dialects.sweep import reports, same_frame  # tests/ is on sys.path (pytest rootdir insertion)

from svcnb import vocab
from svcnb.client import Client
from svcnb.errors import SchemaDriftWarning
from svcnb.learn.doctor import Doctor, Finding
from svcnb.learn.record import Recorder, write_dialect_file
from svcnb.sandbox import DialectFile, Sandbox, read_dialect_file, serve
from svcnb.store import Store, pull

# a finding -> the points of a dialect file its line depends on
LIST_POINTS = ("paging", "webhooks_paged", "page_default", "page_max", "token_names", "link_form")
DEPENDS: dict[str, tuple[str, ...]] = {
    "base path": ("base_paths",),
    "paging": ("paging", "token_names", "page_default"),
    "page sizes": (
        "paging",
        "page_default",
        "page_max",
        "over_max",
        "validation_status",
        "wording",
    ),
    "GET /vms items": ("list_keys",),
    "VM status": ("vm_words",),
    "billing status": ("billing_words",),
    "money: billing.priceMonthly": ("money", "currency"),
    "money: plan.priceMonthly": ("money", "currency"),
    "money: wallet balance": ("money", "currency"),
    "times": ("timestamps",),
    "units: ram": ("ram_unit", "disk_unit"),
    "units: disk": ("ram_unit", "disk_unit"),
    "delivery records": ("delivery_fields",),
    # the port sentinels of the rules of the first firewall: which firewall is first is the
    # list's order (a twin from a store lists by id)
    "firewall ports": ("order",),
    # what remains of the limit counts the requests the lists took
    "rate limit": ("rate_limit", "rate_window", "rate_window_seconds", *LIST_POINTS),
}


# the lists read under the first item of another list: which item is first is the list's order,
# which a twin from a store does not keep (it lists by id); from a saved state it does
FIRST_OF = ("GET /firewalls/{id}/rules", "GET /networks/{id}/attachments")


def depends(point: str, copied: bool = False) -> tuple[str, ...]:
    """The points of a dialect file the finding ``point`` depends on; ``copied``: on a twin
    from a store, also the order of its lists (``order``, never a dialect point)."""
    if point.startswith("GET /") and point != "GET /vms items":
        return (*LIST_POINTS, "order") if copied and point in FIRST_OF else LIST_POINTS
    return DEPENDS.get(point, ())


def vocabulary_for(choices: dict) -> vocab.Vocabulary:
    """The vocabulary a user gives with ``--map`` for the words of a sandbox dialect that
    svcnb does not know (the doctor names them and asks for it): each its status's class."""
    builtin = vocab.Vocabulary()
    vm_class = {
        "provisioning": "transitional",
        "running": "running",
        "stopping": "transitional",
        "stopped": "stopped",
        "suspended": "suspended",
        "terminated": "terminated",
    }
    billing_class = {"active": "paid", "overdue": "owing", "suspended": "suspended"}
    vm = {
        word: vm_class[status]
        for status, word in choices["vm_words"].items()
        if builtin.classify("vm_status", word, warn=False) == vocab.UNKNOWN
    }
    billing = {
        word: billing_class[status]
        for status, word in choices["billing_words"].items()
        if builtin.classify("billing_status", word, warn=False) == vocab.UNKNOWN
    }
    return vocab.Vocabulary(vm_status=vm, billing_status=billing)


def comparable(findings: list[Finding], base_url: str) -> dict[str, tuple[str, bool]]:
    """Each line as ``point -> (what was seen, ok)``, without the base URL and the seconds to
    the window's end."""
    out = {}
    for f in findings:
        seen = f.seen.replace(base_url, "BASE")
        seen = re.sub(r"reset in \d+ s", "reset in N s", seen)
        out[f.point] = (seen, f.ok)
    return out


def doctor(base_url: str, token: str, record_to: Path | None = None) -> list[Finding]:
    """The doctor's findings on a service; with ``record_to``, the dialect file written too."""
    with Client(token, base_url, progress=False) as client, warnings.catch_warnings():
        # a delivery key no spec names warns as the records are read; the findings say it
        warnings.simplefilter("ignore", SchemaDriftWarning)
        run = Doctor(client, record=record_to is not None)
        findings = run.run()
        if record_to is not None:
            write_dialect_file(Recorder(run.observed).record(), record_to)
    return findings


def pulled(base_url: str, token: str) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """(frames, reports) as svcnb gives them from one pull of the service (what a snapshot
    stores), the reports as of the service's own clock."""
    with Client(token, base_url, progress=False) as client, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what cannot be read is NA alike on both sides
        got = pull(client, None).frames
        now = pd.Timestamp(client.server_time)
        try:
            return got, reports(got, now)
        except ValueError as exc:  # a report that refuses what it was given says so alike
            return got, {"reports": pd.DataFrame({"refused": [str(exc)]})}


def differences(ours: dict[str, pd.DataFrame], twins: dict[str, pd.DataFrame]) -> dict[str, str]:
    """Frame or report name -> its first difference (one side only: said so)."""
    out = {}
    for name in dict.fromkeys([*ours, *twins]):
        if name not in ours or name not in twins:
            out[name] = "given on the " + ("original" if name in ours else "twin") + " only"
            continue
        diff = same_frame(ours[name], twins[name])
        if diff is not None:
            out[name] = diff
    return out


@dataclass
class Trip:
    """What one round trip found."""

    name: str
    file: dict
    listed: list[str]
    findings: dict[str, tuple[str, bool]]  # the original's
    twin_findings: dict[str, tuple[str, bool]]
    frame_diffs: dict[str, str] = field(default_factory=dict)  # frame or report -> difference
    twin_file: dict | None = None  # the file recorded again, on the twin
    copied: bool = False  # the twin holds a store's copy of the account (not a saved state)
    notes: list[str] = field(default_factory=list)  # what the copy said the store did not hold

    @property
    def differing(self) -> list[str]:
        points = list(dict.fromkeys([*self.findings, *self.twin_findings]))
        return [p for p in points if self.findings.get(p) != self.twin_findings.get(p)]

    def listed_points(self, *labels: str) -> set[str]:
        """The points the twin listed at start (under ``labels``: ``not expressible``, ...)."""
        return {
            line.split(": ", 2)[1].split(".")[0]
            for line in self.listed
            if not labels or line.startswith(labels)
        }

    def unexplained(self, *labels: str) -> list[str]:
        """Differing lines none of whose points the twin listed (under ``labels``); on a twin
        from a store, the lists' order counts as said (docs/twin.md says it is not kept)."""
        said = self.listed_points(*labels) | ({"order"} if self.copied else set())
        return [p for p in self.differing if not set(depends(p, self.copied)) & said]


@contextmanager
def twin(file: Path, saved: dict, **settings: Any) -> Iterator[tuple[Sandbox, DialectFile]]:
    """A sandbox speaking ``file`` and holding the account ``saved``."""
    spoken = read_dialect_file(file)
    options = {"time_scale": 0.0, **spoken.settings, **settings}
    with serve(saved=saved, dialect=spoken.name, **options) as sb:
        yield sb, spoken


def sandbox_round_trip(original: Sandbox, dialect: str, vms: int, seed: int, folder: Path) -> Trip:
    """Reset ``original`` to ``dialect``, record it, start its twin from its saved state, and
    compare (module docstring)."""
    original.control.reset(seed=seed, vms=vms, dialect=dialect)
    choices = original.control.dialect()["choices"]
    saved = original.control.state()
    path = folder / f"{dialect.replace(':', '-')}.toml"
    token = original.tokens["admin"]
    with vocab.using(vocabulary_for(choices)):
        findings = doctor(original.base_url, token, record_to=path)
        frames, shown = pulled(original.base_url, token)
        with twin(path, saved) as (sb, spoken):
            twin_findings = doctor(sb.base_url, sb.tokens["admin"])
            twin_frames, twin_shown = pulled(sb.base_url, sb.tokens["admin"])
            again = folder / "again.toml"
            doctor(sb.base_url, sb.tokens["admin"], record_to=again)
    trip = Trip(
        dialect,
        tomllib.loads(path.read_text()),
        spoken.listed,
        comparable(findings, original.base_url),
        comparable(twin_findings, sb.base_url),
        twin_file=tomllib.loads(again.read_text()),
    )
    trip.frame_diffs = differences({**frames, **shown}, {**twin_frames, **twin_shown})
    return trip


def peer_round_trip(peer: Any, folder: Path, pins: dict | None = None) -> Trip:
    """Record a blind peer, snapshot it, start its twin on the snapshot (``--from-store``) with
    the file, and compare (module docstring). ``pins``: the status words its user pins
    (``vm_status``, ``billing_status``), as the doctor asks for words providers differ on."""
    with vocab.using(vocab.Vocabulary(**(pins or {}))):
        return _peer_round_trip(peer, folder)


def _peer_round_trip(peer: Any, folder: Path) -> Trip:
    import svcnb

    path = folder / "peer.toml"
    findings = doctor(peer.base_url, peer.token, record_to=path)
    store = Store(folder / "store")
    with Client(peer.token, peer.base_url, progress=False) as client, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store.take(client)
    frames, shown = pulled(peer.base_url, peer.token)
    spoken = read_dialect_file(path)
    with svcnb.rehearse(store, dialect=spoken.name, time_scale=0.0, **spoken.settings) as copy:
        token = copy.sandbox.tokens["admin"]
        twin_findings = doctor(copy.base_url, token)
        twin_frames, twin_shown = pulled(copy.base_url, token)
        notes = copy.notes
    trip = Trip(
        "peer",
        tomllib.loads(path.read_text()),
        spoken.listed,
        comparable(findings, peer.base_url),
        comparable(twin_findings, copy.base_url),
        copied=True,
        notes=notes,
    )
    trip.frame_diffs = differences({**frames, **shown}, {**twin_frames, **twin_shown})
    return trip


def wrong_points(file: dict, choices: dict) -> list[str]:
    """The points ``file`` states otherwise than the sandbox dialect it was recorded from
    speaks (``choices``: ``GET /_sandbox/dialect``): empty when the doctor stated only truths.
    Money said per record (``mixed``) may be stated as the one form every record happened to
    be in."""
    from svcnb.sandbox import BILLING_CLASSES, VM_CLASSES

    wrong = []
    for point, value in file.get("dialect", {}).items():
        truth = choices[point]
        if point == "vm_words":
            for cls, word in value.items():
                if cls == "transitional":
                    ok = set(word) <= {truth["provisioning"], truth["stopping"]}
                else:
                    ok = truth[VM_CLASSES[cls]] == word
                if not ok:
                    wrong.append(f"vm_words.{cls}: {word!r}")
        elif point == "billing_words":
            wrong += [
                f"billing_words.{c}: {w!r}"
                for c, w in value.items()
                if truth[BILLING_CLASSES[c]] != w
            ]
        elif point == "delivery_fields":
            wrong += [f"delivery_fields.{k}: {v!r}" for k, v in value.items() if truth[k] != v]
        elif point == "money" and truth == "mixed":
            if value not in ("mixed", "number", "string", "object"):
                wrong.append(f"money: {value!r}")
        elif value != truth:
            wrong.append(f"{point}: {value!r}, the dialect says {truth!r}")
    for point, bound in file.get("at_least", {}).items():
        if point in choices and bound > choices[point]:
            wrong.append(f"at_least.{point}: {bound}, the dialect says {choices[point]}")
    return wrong


def accounted(file: dict) -> list[str]:
    """Points a recorded file neither states nor explains (empty when every point is either
    stated, not observed or not expressible; ``link_form`` and ``token_names`` only where the
    paging stated uses them)."""
    from svcnb.sandbox import POINTS

    said = {*file.get("dialect", {}), *file.get("service", {})}
    said |= {
        key.split(".")[0]
        for table in ("not_observed", "not_expressible", "inferred")
        for key in file.get(table, {})
    }
    paging = file.get("dialect", {}).get("paging")
    optional = {"link_form": "offset", "token_names": "token"}
    return [p for p in POINTS if p not in said and not (p in optional and paging != optional[p])]
