"""``svcnb doctor``: what the configured service answers, checked read-only
(``svcnb.learn.observe`` reads, ``svcnb.learn.doctor`` judges, ``svcnb.learn.record`` states a
dialect; this module parses the options and prints)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from svcnb import vocab
from svcnb.assumptions import ASSUMPTIONS, UnregisteredAssumptionError, pin_value, split
from svcnb.cli import _common
from svcnb.config import config_path, write_section
from svcnb.errors import SvcnbError
from svcnb.files import RefusedFile
from svcnb.learn.doctor import Doctor, mapping_effect, render, verdict
from svcnb.learn.record import Recorder, write_dialect_file


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


# every assumption --pin takes: the registry's (a keyed one as NAME.KEY)
PIN_NAMES = tuple(f"{a.name}.KEY" if a.keyed else a.name for a in ASSUMPTIONS.values())


def _parse_pins(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in values:
        name, sep, value = raw.partition("=")
        try:
            if not sep:
                raise UnregisteredAssumptionError(name)
            out[name] = pin_value(name, value)
        except UnregisteredAssumptionError:
            raise ValueError(
                f"--pin {raw!r}: write NAME=VALUE, NAME one of {', '.join(PIN_NAMES)}"
            ) from None
        except ValueError as exc:
            raise ValueError(f"--pin {raw!r}: {exc}") from None
    return out


def _write_pins(doctor: Doctor, confirmed: dict[str, str], path: str | None) -> None:
    """Pin what the doctor proved (each with its evidence, printed) and what ``--pin``
    confirms, in the tables every account reads; say which assumptions stay open."""
    proven, left = doctor.pins_proven()
    chosen = {name: (value, f"proven: {evidence}") for name, (value, evidence) in proven.items()}
    chosen.update({name: (value, "confirmed with --pin") for name, value in confirmed.items()})
    for name, (value, why) in chosen.items():
        found, key = split(name)
        key = found.key if key is None else key
        write_section(found.table, {key: found.toml(value)}, path)
        print(f"pinned {found.line(value, key)} ({why})")
    open_ = [name for name in left if name not in chosen]
    if open_:
        print(
            f"not pinned (nothing proved them): {', '.join(open_)}; if you know the answer, "
            "add --pin NAME=VALUE"
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "examples:\n  svcnb doctor\n  svcnb doctor --json\n"
        "  svcnb doctor --map live=running --map billing:arrears=owing --write-config\n"
        "  svcnb doctor --record my-service.toml"
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
    parser.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="with --write-config, pin an assumption you know (money.scale=minor, "
        "units.ram=GiB, times.zone=UTC, paging.no_continuation_is_end=true, "
        "deliveries.records=event, firewall.port_sentinels.0=every; one of "
        f"{', '.join(PIN_NAMES)})",
    )
    parser.add_argument("--config", metavar="PATH", help="config file (default: $SVCNB_CONFIG)")
    parser.add_argument(
        "--record",
        metavar="FILE",
        help="also write what was proven as a dialect file, for `svcnb sandbox --dialect-file "
        "FILE` (a twin of this service; docs/twin.md); a FILE that is a symbolic link is "
        "refused unless --record-follow-link",
    )
    parser.add_argument(
        "--record-follow-link",
        action="store_true",
        help="with --record: FILE may be a symbolic link; the file it points to is replaced",
    )


def run(args: argparse.Namespace) -> int:
    try:
        extra = _parse_maps(args.map)
        follow = getattr(args, "record_follow_link", False)
        if args.record is not None and not follow and Path(args.record).is_symlink():
            raise ValueError(_linked(args.record))
        confirmed = _parse_pins(args.pin)
        client = _common.client(progress=False)
    except (SvcnbError, ValueError) as exc:
        return _common.fail("doctor", str(exc), 2)
    # the user's mappings count in this run too, so the table shows what the config will say;
    # the vocabulary without them is kept to show what they change
    before = _copied(vocab.current())
    vocab.extend(**extra)
    doctor = Doctor(client, record=args.record is not None)
    try:
        with client:
            findings = doctor.run()
            record = Recorder(doctor.observed).record() if args.record is not None else None
    except SvcnbError as exc:
        print(f"svcnb doctor: {exc}", file=sys.stderr)
        if doctor.findings:
            print(render(doctor.findings), file=sys.stderr)
        return 1
    if args.json:
        shown = [{**f.__dict__, "unproven": not f.ok} for f in findings]
        print(json.dumps(shown, indent=2, default=str))
    else:
        print(f"svcnb doctor: {client.base_url} (token {client._req.masked_token}), GET only\n")
        print(render(findings))
        print(f"\n{verdict(findings)}")
        if any(extra.values()):
            _print_effect(doctor, before, extra, args.write_config)
    if record is not None:
        try:
            written = write_dialect_file(record, args.record, follow_link=follow)
        except RefusedFile:
            return _common.fail("doctor", _linked(args.record), 2)
        except SvcnbError as exc:
            return _common.fail("doctor", str(exc), 2)
        print(
            f"\nrecorded the dialect to {written}: {len(record.dialect) + len(record.service)} "
            f"points stated, {len(record.not_observed)} not observed, "
            f"{len(record.not_expressible)} not expressible, {len(record.inferred)} inferred "
            f"(svcnb sandbox --dialect-file {written})",
            file=sys.stderr if args.json else sys.stdout,
        )
    if args.write_config:
        words = doctor.vocabulary(extra)
        try:
            for kind, mapping in words.items():
                if mapping:
                    write_section(f"vocabulary.{kind}", mapping, args.config)
        except SvcnbError as exc:
            return _common.fail("doctor", str(exc), 2)
        print(f"\nwrote the vocabulary seen to {config_path(args.config)}")
        try:
            _write_pins(doctor, confirmed, args.config)
        except SvcnbError as exc:
            return _common.fail("doctor", str(exc), 2)
        left = [
            w
            for f in findings
            for w in f.detail.get("unknown", [])
            if w not in extra["vm_status"] and w not in extra["billing_status"]
        ]
        if left:
            print(f"not written (svcnb cannot tell their class): {', '.join(left)}; add --map")
    return 3 if any(not f.ok for f in findings) else 0


def _copied(current: vocab.Vocabulary) -> vocab.Vocabulary:
    """The vocabulary as it is now, apart from the one ``vocab.extend`` will change."""
    out = vocab.Vocabulary(builtin=False)
    out.words = {kind: dict(words) for kind, words in current.words.items()}
    out.pinned = {kind: dict(pins) for kind, pins in current.pinned.items()}
    return out


def _print_effect(doctor: Doctor, before: vocab.Vocabulary, extra: dict, written: bool) -> None:
    """What the --map entries change in the figures, before (or as) they are written."""
    if not doctor.observed.vms:
        print("\n--map: no VM was read, so no figure changes yet")
        return
    print()
    for line in mapping_effect(doctor, before, extra):
        print(line)
    if not written:
        print("nothing written: add --write-config to keep this mapping")


def _linked(path: str) -> str:
    return (
        f"--record {path} is a symbolic link; writing it would replace the file it points to. "
        "Name a plain file, or add --record-follow-link if replacing that file is meant"
    )
