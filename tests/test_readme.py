"""Every example of the README and docs/*.md is run as written, or marked as not run and why.

The runner and its rules are in ``tests/_docblocks.py``. One session per markdown file: a
sandbox on loopback that ``SVCNB_SANDBOX`` names (seed 7, 40 VMs, its clock at 60 times real
time, so a stop plan's VMs stop within seconds), the session's S3 server on loopback, and an
empty folder the blocks run in, one after the other in the order of the file.
"""

from __future__ import annotations

import ast
import csv
import inspect
import io
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from _docblocks import FILES, REPO, Block, Session, blocks, problem

from svcnb.sandbox import serve

LEGACY_STORE = REPO / "tests" / "store" / "data" / "legacy_store"
ALL = [block for path in FILES for block in blocks(path)]
TO_RUN = [block for block in ALL if block.mark is None]


def test_every_block_is_run_or_says_why_not():
    assert [problem(block) for block in ALL if problem(block)] == []
    assert TO_RUN, "no block to run: the parser lost them"


def test_a_new_block_neither_run_nor_marked_is_refused():
    readme = REPO / "README.md"
    text = (
        "intro\n\n```text\nsome output\n```\n\n```sh\nmake lab\n```\n\n```sh\nsvcnb snapshot\n```\n"
    )
    found = blocks(readme, text)
    assert [b.line for b in found] == [3, 7, 11]
    assert "README.md:3: a text block the runner cannot run" in problem(found[0])
    assert "'make lab' is neither `export`, `unset` nor svcnb commands" in problem(found[1])
    assert problem(found[2]) is None
    marked = blocks(readme, text.replace("```text", "<!-- not run: sample output -->\n```text"))
    assert marked[0].mark == "sample output" and problem(marked[0]) is None


# -- the listings of docs/contracts.md name the parameters the code has --------------------------
def _listed(text: str, call: str) -> list[tuple[str, str | None]]:
    """``call(...)`` as a listing writes it: each parameter's name and default (as source)."""
    start = text.index(call + "(") + len(call)
    depth = 0
    for end in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            break
    inside = " ".join(line.split("#")[0] for line in text[start + 1 : end].splitlines())
    # `approver=,` in a listing: a keyword the caller must give (no default)
    inside = re.sub(r"(\w+)=\s*(?=[,)]|$)", r"\1=REQUIRED", inside.strip())
    args = ast.parse(f"def f({inside}): pass").body[0].args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + [
        ast.unparse(d) for d in args.defaults
    ]
    kw = [None if d is None else ast.unparse(d) for d in args.kw_defaults]
    defaults = [None if d == "REQUIRED" else d for d in defaults]
    kw = [None if d == "REQUIRED" else d for d in kw]
    return [(a.arg, d) for a, d in zip(positional, defaults, strict=True)] + [
        (a.arg, d) for a, d in zip(args.kwonlyargs, kw, strict=True)
    ]


def _actual(function: Any) -> list[tuple[str, str | None]]:
    out = []
    for p in inspect.signature(function).parameters.values():
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        out.append((p.name, None if p.default is p.empty else repr(p.default)))
    return out


def test_the_contracts_listings_match_the_code():
    import svcnb
    from svcnb.plans import apply_plan, build_stop_plan

    text = (REPO / "docs" / "contracts.md").read_text()
    assert _listed(text, "c = Client") == _actual(svcnb.Client)
    assert _listed(text, "s = Store") == _actual(svcnb.Store)
    assert _listed(text, "build_stop_plan") == _actual(build_stop_plan)
    assert _listed(text, "apply_plan") == _actual(apply_plan)


# -- running them -------------------------------------------------------------------------------
def _checks() -> dict:
    """What a block must show beyond something (see _docblocks): keyed by a text its source,
    command or bound name holds."""

    def latest_ids(session: Session) -> list[str]:
        return sorted(session.namespace["store"].load("vms")["id"])

    def sql_rows(rows: Any, session: Session) -> None:
        assert sorted(rows.column("id").to_pylist()) == latest_ids(session)

    def polars_fleet(fleet: Any, session: Session) -> None:
        if hasattr(fleet, "to_pandas") and not hasattr(fleet, "attrs"):  # the Polars frame
            assert sorted(fleet["id"].to_list()) == latest_ids(session)

    def what_if(frame: Any, session: Session) -> None:
        assert (frame["not_found"] == 0).all() and (frame["vms_changed"] == 1).all()
        assert (frame["due_saved"] > 0).all()

    def what_if_csv(out: str, session: Session) -> None:
        rows = list(csv.DictReader(io.StringIO(out)))
        assert rows and all(float(r["due_saved"]) > 0 for r in rows), out

    def migrated(out: str, session: Session) -> None:
        assert "checked row for row" in out

    def saved_state(log: str, session: Session) -> None:
        assert "state saved to" in log, log

    return {
        "FROM delta_scan('data/store/vms')": sql_rows,
        "fleet": polars_fleet,
        "what_if_stop": what_if,
        "--table what_if --format csv": what_if_csv,
        "migrate-store": migrated,
        "--save-state-on-exit": saved_state,
    }


@pytest.fixture(scope="module")
def sessions(tmp_path_factory, s3_server) -> Iterator[dict[Path, Session]]:
    made: dict[Path, Session] = {}
    with serve(vms=40, seed=7, time_scale=60.0) as sandbox:
        for path in FILES:
            home = tmp_path_factory.mktemp(path.stem)
            ca = trustme.CA()
            cert = ca.issue_cert("127.0.0.1", "localhost")
            cert.private_key_pem.write_to_path(home / "key.pem")
            for i, pem in enumerate(cert.cert_chain_pems):
                pem.write_to_path(home / "cert.pem", append=i > 0)
            shutil.copytree(LEGACY_STORE, home / "data" / "store-old")
            sandbox.write_connection_file(home / "sandbox.json")
            env = {
                k: v for k, v in os.environ.items() if not k.startswith(("SVC_", "SVCNB_", "AWS_"))
            }
            env.update(
                SVCNB_SANDBOX=str(home / "sandbox.json"),
                SVCNB_CONFIG=str(home / "config.toml"),
                SVCNB_BUDGET="off",
                XDG_STATE_HOME=str(home / "state"),
                COLUMNS="120",
            )
            made[path] = Session(home, env, sandbox, s3_server, checks=_checks())
        yield made


@pytest.mark.parametrize("block", TO_RUN, ids=[b.name for b in TO_RUN])
def test_block_runs_as_written(block: Block, sessions: dict, monkeypatch) -> None:
    session = sessions[block.path]
    # the python blocks run here, as in the reader's notebook: its folder and environment
    monkeypatch.chdir(session.home)
    for name in ("SVCNB_SANDBOX", "SVCNB_CONFIG", "SVCNB_BUDGET", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, session.env[name])
    session.run(block)


def test_contracts_blocks_are_all_listings():
    # docs/contracts.md shows signatures and layers, none of it a program (checked above)
    contracts = [b for b in ALL if b.path.name == "contracts.md"]
    assert contracts and all(b.mark for b in contracts)
