"""Property: whatever a local store's old audit log (``audit.jsonl``) holds (records of every
kind with fields of any JSON type, fields and keys holding a token, lines that are JSON but no
record, torn and empty lines), the journal's migration either copies every record, scrubbed, so
that each reads back as the scrubbed record and no token is stored, and the journal is written
after; or it refuses with one StoreError naming a line of the log, holding no token, having
copied nothing and left the log as it was, and every write says the same. Never another
exception, never a journal that can no longer be written without a word of why."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from _fuzz import fuzz
from deltalake import DeltaTable
from hypothesis import HealthCheck, event, example, given
from hypothesis import strategies as st

from svcnb.store import SnapshotWarning, Store, StoreError, differs, scrub

# token bodies in capitals and digits, every other text in lower case: a token's text found in
# the store can only have come from a token
TOKENS = st.text("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", min_size=16, max_size=40).map(
    lambda body: "svc_" + body
)
WORDS = st.text("abcdefghij -:é€", max_size=12)
TIMES = st.sampled_from(
    ["2026-10-01T00:00:00+00:00", "2026-10-01T08:30:00Z", "2026-10-01", "2026-10-01T08:30:00"]
)


def _text(tokens: list[str]) -> st.SearchStrategy[str]:
    with_token = st.builds(lambda a, t, b: f"{a} {t} {b}", WORDS, st.sampled_from(tokens), WORDS)
    return st.one_of(WORDS, TIMES, with_token) if tokens else st.one_of(WORDS, TIMES)


def _values(tokens: list[str]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**40), 2**40),
        st.floats(allow_nan=False, allow_infinity=False),
        _text(tokens),
    )
    keys = st.one_of(WORDS, st.sampled_from(["token", "api_key", *tokens]))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)
        ),
        max_leaves=6,
    )


# the fields of the old log's records, of every kind, and the kinds
FIELDS = [
    "time", "firewall_id", "rule_id", "before", "after", "outcome", "detail", "finding_id",
    "reason", "owner", "until", "account", "wallet", "stage", "plan_id", "approver", "plan",
    "vms", "alert_key", "alert_rule", "snapshot_id", "message", "claimed_until", "note",
    "token", "api_key",
]  # fmt: skip
KINDS = [None, None, "alert", "stop_plan", "finding_acceptance", "finding_acceptance", "note"]
OUTCOMES = ["ok", "alert fired", "finding accepted", "acceptance revoked", "stop plan applied"]


@st.composite
def _record(draw: st.DrawFn, tokens: list[str]) -> dict[str, Any]:
    record: dict[str, Any] = {"time": draw(TIMES)}
    kind = draw(st.sampled_from(KINDS))
    if kind is not None:
        record["kind"] = kind
    record["outcome"] = draw(st.sampled_from(OUTCOMES))
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=6, unique=True)):
        # mostly text, as the old log's writers wrote: sometimes any JSON, a wrong type
        text = draw(st.booleans())
        record[name] = draw(_text(tokens) if text else _values(tokens))
    for name in draw(st.lists(st.sampled_from(tokens or ["x"]), max_size=1)):
        record[name] = draw(WORDS)  # a token as a key
    return record


@st.composite
def _log(draw: st.DrawFn) -> list[str]:
    tokens = draw(st.lists(TOKENS, max_size=2, unique=True))
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        shape = draw(st.sampled_from(["record"] * 6 + ["not a record", "torn", "empty"]))
        event(f"line: {shape}")
        if shape == "record":
            lines.append(json.dumps(draw(_record(tokens)), ensure_ascii=draw(st.booleans())))
        elif shape == "not a record":
            value = draw(st.one_of(st.lists(_values(tokens), max_size=2), _values(tokens)))
            lines.append(json.dumps([value] if isinstance(value, dict) else value))
        elif shape == "torn":
            whole = json.dumps(draw(_record(tokens)))
            lines.append(whole[: draw(st.integers(1, len(whole) - 1))])
        else:
            lines.append("")
    if tokens:
        event("log holds a token")
    return lines


_REASON = re.compile(r"[('\[{0-9]")  # where the values in a refusal start


def _stored(root: Path) -> str:
    """Everything the journal stores, as text: each table's rows and its commits."""
    out = []
    for table in sorted((root / "_journal").glob("*")):
        out.append(json.dumps(DeltaTable(str(table)).to_pyarrow_table().to_pylist(), default=str))
        out.extend(p.read_text() for p in sorted((table / "_delta_log").glob("*.json")))
    return "\n".join(out)


def _same(want: dict[str, Any], got: dict[str, Any]) -> None:
    for key in set(want) | set(got):
        a, b = want.get(key), got.get(key)
        if key in ("time", "until", "claimed_until") and a is not None:
            continue  # compared as instants by differs, below
        assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True), (key, a, b)


@fuzz(200, HealthCheck.function_scoped_fixture)
@example(lines=["[]"])
@example(lines=["3"])
@example(lines=["null"])
@example(lines=[json.dumps({"time": "2026-10-01T00:00:00Z", "outcome": 502})])
@example(lines=[json.dumps({"outcome": "ok", "note": "svc_ABCDEFGHJKLMNPQRSTUV", "token": "x"})])
@given(lines=_log())
def test_any_old_log_is_copied_scrubbed_or_refused_by_its_line(tmp_path_factory, lines):
    root = tmp_path_factory.mktemp("store")
    text = "".join(line + "\n" for line in lines)
    (root / "audit.jsonl").write_text(text)
    tokens = set(re.findall(r"svc_[A-Z0-9]{16,}", text))
    edit = {"firewall_id": "fw-1", "rule_id": "r-new", "outcome": "ok"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SnapshotWarning)  # a torn line is skipped, and says so
        try:
            copied = Store(root).journal.migrate()
        except StoreError as exc:
            message = str(exc)
            why = message.partition("into the journal: ")[2].partition(" was ")[0]
            event("refused: " + _REASON.split(why)[0][:70])
            assert "\n" not in message
            number = int(re.search(r"record audit\.jsonl:(\d+) ", message).group(1))
            assert lines[number - 1].strip()
            assert f"line {number} of {root / 'audit.jsonl'}" in message
            assert not any(t in message for t in tokens)
            assert not (root / "_journal").exists()  # nothing copied
            assert (root / "audit.jsonl").read_text() == text
            with pytest.raises(StoreError, match=re.escape(f"audit.jsonl:{number} ")):
                Store(root).journal.append(edit)
            return
        event("copied")
        old = []
        for line in lines:
            try:
                old.append(json.loads(line))
            except ValueError:
                continue
        assert copied == len(old)
        Store(root).journal.append(edit)
        got = Store(root).journal.records()
    assert len(got) == len(old) + 1
    for raw, record in zip(old, got, strict=False):
        want = scrub(raw)
        assert differs(want, record) is None
        _same(want, record.as_audit())
    assert got[-1].as_audit()["rule_id"] == "r-new"
    stored = _stored(root)
    for token in tokens:
        assert token not in stored and token[4:] not in stored
