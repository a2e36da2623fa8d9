"""Properties of the two files svcnb reads from elsewhere that can steer it: whatever a dialect
file or a sandbox connection file holds (any TOML or JSON structure over the keys svcnb reads,
texts with escapes and line breaks, or bytes that are no such file at all):

- ``svcnb sandbox --dialect-file`` speaks it, or refuses it in one line naming the file, and
  every line it prints is its own (``svcnb sandbox: ...`` or an indented point), with no
  control character a terminal would act on;
- ``svcnb.connect()`` on a connection file gives a Client only for the sandbox proven to be the
  file's (the instance check answered the file's instance), and otherwise one ConfigError line
  naming the file, quoting no token, within the probe's bound; the sandbox sees no request
  with a token it was not proven to own.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path

import tomli_w
from _fuzz import fuzz
from hypothesis import HealthCheck, event, example, given
from hypothesis import strategies as st

import svcnb
from svcnb.cli.sandbox import _speak_dialect_file
from svcnb.config import ConfigError
from svcnb.sandbox import AT_LEAST_POINTS, DIALECT_POINTS, POINTS, SERVICE_POINTS

DIALECT_EXAMPLES = 400  # dialect files: TOML structures over its tables and points
DIALECT_RAW_EXAMPLES = 100  # dialect files that are no TOML
CONNECTION_EXAMPLES = 300  # connection files: JSON structures over its keys
CONNECTION_RAW_EXAMPLES = 100  # connection files that are no JSON

# texts a hostile file would hold: escapes, line breaks that forge a line, bidi overrides
HOSTILE = [
    "\x1b[2J",
    "\x1b]0;owned\x07",
    "ok\r\nsvcnb sandbox: forged",
    "\nsvcnb: forged",
    "\u202egnp.exe",
    "\x00",
    "\x9b31m",
    "a\u2028b",
    "plain",
    "",
]
texts = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=20))
scalars = st.one_of(
    texts,
    st.integers(-(2**63), 2**63 - 1),
    st.floats(),
    st.booleans(),
    st.sampled_from([0, 1, 20, 100, 1000, 1_000_001, -1]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


def _table(known: list[str], value: st.SearchStrategy = values) -> st.SearchStrategy:
    """Mostly the points svcnb reads there (one or two at a time), sometimes others."""
    listed = st.dictionaries(st.sampled_from(known), value, max_size=2)
    extra = st.dictionaries(texts, values, max_size=1)
    return st.one_of(listed, st.tuples(listed, extra).map(lambda t: {**t[1], **t[0]}))


explained = st.dictionaries(
    st.one_of(
        st.sampled_from(list(POINTS)),
        st.tuples(st.sampled_from(list(POINTS)), texts).map(lambda t: f"{t[0]}.{t[1]}"),
        texts,
    ),
    st.one_of(texts, values),
    max_size=3,
)
# files the sandbox speaks, their explanations in any text: what it prints of them
spoken_documents = st.fixed_dictionaries(
    {"format": st.just("svcnb-dialect"), "version": st.just(1)},
    optional={
        table: st.dictionaries(st.sampled_from(list(POINTS)), texts, max_size=3)
        for table in ("not_observed", "not_expressible", "inferred")
    },
)
wild_documents = st.fixed_dictionaries(
    {
        "format": st.one_of(st.just("svcnb-dialect"), texts),
        "version": st.one_of(st.just(1), scalars),
    },
    optional={
        "base_path": st.one_of(st.sampled_from(["/api/public/v1", ""]), texts),
        "dialect": _table(list(DIALECT_POINTS)),
        "service": _table(list(SERVICE_POINTS)),
        "at_least": _table(list(AT_LEAST_POINTS)),
        "not_observed": explained,
        "not_expressible": explained,
        "inferred": explained,
    },
)
dialect_documents = st.one_of(spoken_documents, wild_documents)
raw = st.one_of(st.binary(max_size=120), st.text(max_size=120).map(str.encode))


def _toml(document: dict) -> bytes | None:
    try:
        return tomli_w.dumps(document).encode()
    except (TypeError, ValueError):
        return None


def _spoken(content: bytes) -> tuple[bool, str, Path]:
    """What ``svcnb sandbox --dialect-file`` says of a file holding ``content``: (usable,
    everything it printed, the file)."""
    folder = tempfile.mkdtemp()
    path = Path(folder) / "service.toml"
    path.write_bytes(content)
    args = argparse.Namespace(
        dialect_file=str(path), dialect="default", rate_limit=600, rate_window=60.0
    )
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        usable = _speak_dialect_file(args)
    event("spoken" if usable else "refused")
    return usable, err.getvalue(), path


def _each_line_is_svcnbs_own(usable: bool, said: str, path: Path) -> None:
    lines = said.split("\n")
    assert lines[-1] == "", said  # ends with a line break, and holds no other kind
    lines = lines[:-1]
    for line in lines:
        assert line.isprintable(), line  # no escape, CR, NUL, bidi override or separator
    assert lines[0].startswith("svcnb sandbox: "), lines
    assert str(path) in lines[0], lines[0]
    if not usable:
        assert len(lines) == 1, lines
    for line in lines[1:]:
        assert line.startswith("  ") and not line.startswith("  svcnb"), line


@fuzz(DIALECT_EXAMPLES)
@given(document=dialect_documents)
@example(document={"format": "svcnb-dialect", "version": 1, "not_observed": {"paging": HOSTILE[2]}})
@example(document={"format": "svcnb-dialect", "version": 1, "dialect": {HOSTILE[0]: 1}})
@example(document={"format": "svcnb-dialect", "version": 1, "inferred": {"money": HOSTILE[1]}})
def test_any_dialect_file_is_spoken_or_refused_in_lines_of_svcnbs_own(document):
    content = _toml(document)
    if content is None:
        return
    _each_line_is_svcnbs_own(*_spoken(content))


@fuzz(DIALECT_RAW_EXAMPLES)
@given(content=raw)
def test_a_dialect_file_that_is_no_toml_is_one_line_of_svcnbs_own(content):
    usable, said, path = _spoken(content)
    assert not usable
    _each_line_is_svcnbs_own(usable, said, path)


# -- connection files --------------------------------------------------------------------------

TOKEN = "svc_fuzzed_connection_file_token_4Wq8"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens on loopback there


def _urls(live: str) -> st.SearchStrategy:
    return st.one_of(
        st.sampled_from(
            [
                live,
                live + "/",
                CLOSED,
                "http://127.0.0.1:0",
                "http://[::1",
                "ftp://127.0.0.1",
                "http://127.0.0.1:99999",
                "",
                "127.0.0.1:8000",
                live + "/_sandbox",
                live + "/x",
            ]
        ),  # fmt: skip
        texts,
    )


def _connection_documents(live: str, instance: str) -> st.SearchStrategy:
    tokens = st.one_of(
        st.fixed_dictionaries(
            {"admin": st.one_of(st.just(TOKEN), st.just(TOKEN), scalars)},
            optional={"read": st.just(TOKEN + "r")},
        ),
        values,
    )
    shaped = st.fixed_dictionaries(  # a connection file in form, any of its values drawn
        {
            "base_url": st.one_of(st.just(live), _urls(live)),
            "tokens": st.fixed_dictionaries(
                {"admin": st.just(TOKEN)}, optional={"read": st.just(TOKEN + "r")}
            ),
            "instance": st.one_of(st.just(instance), st.sampled_from(["0" * 16, ""]), scalars),
        },
        optional={"control_url": _urls(live), "api_root": _urls(live), "dialect": texts},
    )
    loose = st.dictionaries(
        st.sampled_from(["base_url", "api_root", "control_url", "tokens", "instance"]),
        st.one_of(_urls(live), scalars, tokens),
        max_size=5,
    )
    # the form twice: a file in form reaches the instance check, where the property lives
    return st.one_of(shaped, shaped, loose, values)


def _connect_to(content: bytes, live: str, instance: str) -> None:
    """connect() on a file holding ``content``: a Client only when the file names the live
    sandbox's address and instance; else one ConfigError line naming the file, no token."""
    folder = tempfile.mkdtemp()
    path = Path(folder) / "sandbox.json"
    path.write_bytes(content)
    saved = os.environ.get("SVCNB_SANDBOX")
    os.environ["SVCNB_SANDBOX"] = str(path)
    started = time.monotonic()
    try:
        client = svcnb.connect(progress=False)
    except ConfigError as exc:
        said = str(exc)
        reasons = {
            "a new sandbox answers": "another instance answers",
            "names no sandbox instance": "no instance in the file",
            "not running": "nothing listens",
            "not as the sandbox": "no proof in the answer",
            "not a readable": "not a connection file",
        }
        event("refused: " + next((r for k, r in reasons.items() if k in said), "other"))
        assert "\n" not in said and str(path) in said, said
        assert TOKEN not in said, said
    else:
        event("a client on the proven sandbox")
        client.close()
        info = json.loads(content)
        assert info["instance"] == instance, info  # only the proven sandbox is used
        assert str(info["base_url"]).rstrip("/") == live
    finally:
        if saved is None:
            os.environ.pop("SVCNB_SANDBOX", None)
        else:
            os.environ["SVCNB_SANDBOX"] = saved
    assert time.monotonic() - started < 2.0 + 1.5


@fuzz(CONNECTION_EXAMPLES, HealthCheck.function_scoped_fixture)
@given(data=st.data())
def test_any_connection_file_gives_the_proven_sandbox_or_one_config_error(sandbox, data):
    live, instance = sandbox.base_url.rstrip("/"), sandbox.control.instance()
    document = data.draw(_connection_documents(live, instance))
    try:
        content = json.dumps(document, allow_nan=True).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):
        return
    _connect_to(content, live, instance)


@fuzz(CONNECTION_RAW_EXAMPLES, HealthCheck.function_scoped_fixture)
@given(content=raw)
def test_a_connection_file_that_is_no_json_is_one_config_error(sandbox, content):
    try:
        json.loads(content)
        return  # JSON after all: the property above covers it
    except ValueError:
        pass
    _connect_to(content, sandbox.base_url.rstrip("/"), sandbox.control.instance())
