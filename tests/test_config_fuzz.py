"""Property: whatever the config file holds (any TOML structure, in the sections svcnb reads or
others, any value of any type, or bytes that are no TOML at all), every reader of it either
returns or raises one ConfigError naming the file; never another exception."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

import tomli_w
from _fuzz import fuzz
from hypothesis import assume, example, given
from hypothesis import strategies as st

from svcnb import config, vocab
from svcnb.alerts import longest_delivery, rules_from_config
from svcnb.alerts._deliver import _verify
from svcnb.client import budget_backend, check_budget_file
from svcnb.config import ConfigError


def _delivery(path: Path) -> float:
    rules = rules_from_config(path)
    return longest_delivery(rules.attempts, rules.backoff_seconds, rules.timeout_seconds)


def _ca_bundle(path: Path) -> object:
    rules = rules_from_config(path)
    return _verify(rules.ca_bundle) if rules.ca_bundle else None


def _budget_file(path: Path) -> None:
    where = budget_backend()
    if isinstance(where, Path):
        check_budget_file(where)


# every function that reads the config file, and what commands compute from it at once
READERS = {
    "read_config": lambda path: config.read_config(path),
    "accounts": lambda path: config.accounts(path),
    "budget_config": lambda path: config.budget_config(path),
    "units_config": lambda path: config.units_config(path),
    "rules_from_config": lambda path: rules_from_config(path),
    "vocabulary": lambda path: vocab._from_config(),
    "budget_backend": _budget_file,
    "delivery": _delivery,
    "ca_bundle": _ca_bundle,
}

# what svcnb's sections hold, so draws reach past the first check of each section
KNOWN = {
    "budget": ["backend", "password_env"],
    "units": ["ram", "disk"],
    "alerts": [
        "runway_days", "low_balance_days", "bandwidth_days", "webhook_failures_left",
        "high_findings", "url", "ca_bundle", "attempts", "backoff_seconds", "timeout_seconds",
    ],
}  # fmt: skip
WORDS = [
    "running", "stopped", "paid", "owing", "GiB", "MiB", "gib", "off", "redis://h:6379/0",
    "redis://u:p@h/0", "unix:///tmp/r.sock", "http://x", "~nobody-here/budget.sqlite", "~",
    "https://api.example.com", "SVC_TOKEN_PROD", "PATH", "svc_abcdefghijklmnopqrstuvwxyz",
    "base_url", "token_env", "", " ", "a\x00b", "é", "1e999", "ca.pem",
]  # fmt: skip
NUMBERS = [0, 1, -1, 2**31, 2**63 - 1, 1e300, 0.5, float("inf"), float("nan"), -0.0]
keys = st.one_of(st.sampled_from(WORDS), st.text(max_size=6))
scalars = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(NUMBERS),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(),
    st.text(max_size=12),
    st.datetimes(timezones=st.none() | st.just(dt.UTC)),
    st.dates(),
    st.times(),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)


# a value of each kind a check may not expect, then the words and numbers, then anything
SPECIALS = [False, True, 0, -1, 0.5, 2**63 - 1, 1e300, float("nan"), "", "~nobody-here/x", [], {}]
plausible = st.one_of(
    st.sampled_from(SPECIALS), st.sampled_from(WORDS), st.sampled_from(NUMBERS), values
)


def _table(known: list[str], value=plausible) -> st.SearchStrategy:
    """A table of mostly the keys svcnb reads there, sometimes others, sometimes not a table."""
    # one or two keys at a time: a table wrong in every key stops at the first
    listed = st.dictionaries(st.sampled_from(known), value, max_size=2)
    extra = st.dictionaries(keys, values, max_size=2)
    return st.one_of(listed, st.tuples(listed, extra).map(lambda t: {**t[1], **t[0]}), values)


accounts = st.dictionaries(
    st.one_of(st.sampled_from(["prod", "lab", "all", "*", "a b", "x" * 70]), st.text(max_size=5)),
    _table(["base_url", "token_env", "token"], st.one_of(st.sampled_from(WORDS), values)),
    max_size=3,
)
words_to_classes = st.dictionaries(keys, st.one_of(st.sampled_from(WORDS), values), max_size=3)
documents = st.fixed_dictionaries(
    {},
    optional={
        "vocabulary": _table(["vm_status", "billing_status"], words_to_classes),
        "accounts": st.one_of(accounts, values),
        **{name: _table(known) for name, known in KNOWN.items()},
    },
).flatmap(lambda doc: st.dictionaries(keys, values, max_size=2).map(lambda more: {**more, **doc}))
# text that is no TOML, or TOML no parser can take
raw = st.one_of(
    st.binary(max_size=80),
    st.text(max_size=80).map(str.encode),
    st.integers(100, 6000).map(lambda n: ("a = " + "[" * n + "]" * n).encode()),
    st.integers(100, 3000).map(lambda n: ("a = " + "{b=" * n + "1" + "}" * n).encode()),
)

CONFIG_EXAMPLES = 500  # TOML documents
RAW_EXAMPLES = 150  # files that are no TOML


def _encoded(document: dict) -> bytes | None:
    try:
        return tomli_w.dumps(document).encode()
    except (TypeError, ValueError):
        return None  # a structure TOML cannot write (tomli_w says so); drawn again


def _every_reader_loads_or_says_config_error(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.toml"
        path.write_bytes(content)
        saved = {k: os.environ.get(k) for k in ("SVCNB_CONFIG", "SVCNB_BUDGET", "SVCNB_ALERT_URL")}
        os.environ["SVCNB_CONFIG"] = str(path)
        os.environ.pop("SVCNB_BUDGET", None)
        os.environ.pop("SVCNB_ALERT_URL", None)
        try:
            for name, read in READERS.items():
                try:
                    read(path)
                except ConfigError as exc:
                    assert str(path) in str(exc) or "[alerts] ca_bundle" in str(exc), (name, exc)
                    # one error: no other exception shown chained under it
                    assert exc.__cause__ is None, (name, exc.__cause__)
                    assert exc.__context__ is None or exc.__suppress_context__, (name, exc)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def _parts(document: dict) -> list[dict]:
    """The document, and each key of each of its tables alone: a reader stops at the first bad
    key, so the keys after it are read only when they come alone."""
    parts = [document]
    for name, table in document.items():
        if isinstance(table, dict):
            parts += [{name: {key: value}} for key, value in table.items()]
    return parts


@fuzz(CONFIG_EXAMPLES)
@given(document=documents)
# what it found: a delivery setting set to false, a ~user nobody is, a count that never ends, a
# blank word pinned to a class
@example(document={"alerts": {"attempts": False}})
@example(document={"alerts": {"attempts": 2**31, "backoff_seconds": 1e300}})
@example(document={"alerts": {"ca_bundle": "~nobody-here/ca.pem"}})
@example(document={"alerts": {"ca_bundle": "ca\x00.pem"}})
@example(document={"budget": {"backend": "~nobody-here/budget.sqlite"}})
@example(document={"budget": {"backend": "a\x00b"}})
@example(document={"vocabulary": {"vm_status": {" ": "running"}}})
def test_any_toml_structure_loads_or_is_one_config_error_naming_the_file(document):
    encoded = [_encoded(part) for part in _parts(document)]
    assume(encoded[0] is not None)
    for content in encoded:
        if content is not None:
            _every_reader_loads_or_says_config_error(content)


@fuzz(RAW_EXAMPLES)
@given(content=raw)
def test_a_file_that_is_no_toml_is_one_config_error_naming_it(content):
    _every_reader_loads_or_says_config_error(content)
