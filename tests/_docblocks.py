"""The fenced code blocks of the README and docs/*.md, and how each one is run as written.

Every block is run, or marked just above it with ``<!-- not run: REASON -->`` (an install from
the package index, a listing of signatures or folders, sample output, Spark). A block of a kind
the runner cannot run and that is not marked is an error: a new example is run or says why not.

How a block runs (one session per markdown file, in one empty folder, in file order, as a reader
would type them in a terminal where ``SVCNB_SANDBOX`` names a running sandbox):

- ``python``: one namespace for the whole file, like a notebook; the top-level expressions are
  evaluated as a notebook shows them. What it shows and binds must be something: no frame or
  list it shows or binds is empty, a print prints something, and svcnb warns of nothing.
- ``sql``: DuckDB, on the connection ``con`` an earlier python block of the file opened (the
  README's own); it must return rows.
- ``toml``: a config file, whose every account ``svcnb.config.accounts()`` reads back, or a
  dialect file (``format = "svcnb-dialect"``), which the sandbox reads and speaks as it states.
- ``sh``/``bash``: each statement (a line, or ``;``) is ``export NAME=VALUE ...`` or ``unset
  NAME ...`` (for the rest of the block) or ``svcnb ...`` commands joined by ``&&``. A command
  (run in this process, by ``svcnb.cli.main``, in the session's folder and environment) exits
  0 (``check`` may exit 1 when an alert fired, ``doctor`` 3 when it doubts something), prints
  something and no traceback. A server (``svcnb sandbox``, ``svcnb listen``) runs until
  it answers, then until the block's next server or its end, and is stopped with SIGTERM: it
  must exit 0 (``listen``, uvicorn's, may end by the signal once it has shut down). A sandbox
  starts without ``SVCNB_SANDBOX`` (the README has it in a terminal of its own), so it writes
  its connection file to its default place, and an ``export SVCNB_SANDBOX=...`` after it is
  the line it printed.

What the blocks refer to is made first (``Session``): a certificate and key for ``svcnb listen``,
a store of the first format at ``data/store-old``, an S3 server on loopback with a bucket
``svcnb``. What only a reader has is stood in for (``Session.substitutes``): an exported
``SVC_BASE_URL`` and ``SVC_API_KEY`` become the session sandbox's URL and read token, the
``AWS_*`` endpoint and keys the loopback S3 server's (and nothing about plain HTTP),
``SVCNB_WEBHOOK_SECRET`` a test secret; a fixed ``--port N`` becomes a free port. Any other
``...`` value is an error.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# docs/your-service.md runs against services other than svcnb's own sandbox, with the exit code
# each step states: tests/test_your_service_doc.py
FILES = [
    REPO / "README.md",
    *sorted(p for p in (REPO / "docs").glob("*.md") if p.name != "your-service.md"),
]

_FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)
_MARK = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
RUNNABLE = {"python", "sql", "toml", "sh", "bash"}
SERVERS = {"sandbox", "listen"}
# exit codes a command may end with besides 0: check exits 1 when an alert fired, doctor 3 when
# it saw something it could not vouch for
ALSO_FINE = {"check": {1}, "doctor": {3}}


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    mark: str | None  # the reason given in <!-- not run: ... -->, None when it is to be run

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"


def blocks(path: Path, text: str | None = None) -> list[Block]:
    """The fenced blocks of ``path`` (or of ``text``, read as if it were that file)."""
    text = path.read_text() if text is None else text
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        mark = _MARK.fullmatch(before[-1].strip()) if before else None
        found.append(
            Block(
                path,
                text.count("\n", 0, match.start()) + 1,
                match.group(1).lower(),
                match.group(2),
                mark.group(1) if mark else None,
            )
        )
    return found


def shell_statements(text: str) -> list[list[list[str]]]:
    """The statements of a shell block (split at line ends and ``;``; continuations joined,
    comments dropped), each the words of its commands joined by ``&&``."""
    statements: list[list[list[str]]] = []
    for line in text.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        chain: list[list[str]] = [[]]
        for token in [*lexer, ";"]:
            if token == ";":
                if chain[-1]:
                    statements.append(chain)
                chain = [[]]
            elif token == "&&":
                chain.append([])
            else:
                chain[-1].append(token)
    return statements


def problem(block: Block) -> str | None:
    """Why ``block`` can neither be run nor passed over; None when it can be one of them."""
    if block.mark is not None:
        return None
    if block.lang not in RUNNABLE:
        kind = f"a {block.lang} block" if block.lang else "a block without a language"
        return (
            f"{block.name}: {kind} the runner cannot run; run it or put "
            "<!-- not run: REASON --> on the line above"
        )
    if block.lang in ("sh", "bash"):
        for chain in shell_statements(block.text):
            if len(chain) == 1 and chain[0][0] in ("export", "unset"):
                continue
            if not all(command and command[0] == "svcnb" for command in chain):
                said = " && ".join(shlex.join(command) for command in chain)
                return (
                    f"{block.name}: {said!r} is neither `export`, `unset` nor svcnb commands; "
                    "run it another way or put <!-- not run: REASON --> on the line above"
                )
    return None


# -- running ------------------------------------------------------------------------------------
@dataclass
class Session:
    """One markdown file's run: its folder, environment, namespace and stand-ins."""

    home: Path
    env: dict[str, str]  # for commands: SVCNB_SANDBOX, SVCNB_CONFIG, XDG_STATE_HOME, ...
    sandbox: Any  # the running sandbox SVCNB_SANDBOX names (svcnb.sandbox.Sandbox)
    s3: dict[str, str]  # the loopback S3 server's environment (endpoint, keys, region)
    namespace: dict[str, Any] = field(default_factory=dict)
    # what is checked beyond the generic rules, by a text the source, name or command holds:
    # check(value, session) with what it showed, printed or returned
    checks: dict[str, Callable[[Any, Session], None]] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)

    def substitutes(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.s3["AWS_ENDPOINT_URL"],
            "AWS_ACCESS_KEY_ID": self.s3["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": self.s3["AWS_SECRET_ACCESS_KEY"],
            "SVC_BASE_URL": self.sandbox.base_url,
            "SVC_API_KEY": self.sandbox.tokens["read"],
            "SVCNB_WEBHOOK_SECRET": "whsec_docs_" + "s" * 24,
        }

    def run(self, block: Block) -> None:
        runner = {
            "python": self.run_python,
            "sql": self.run_sql,
            "toml": self.run_toml,
            "sh": self.run_shell,
            "bash": self.run_shell,
        }[block.lang]
        runner(block)
        self.ran.append(block.name)

    # python ------------------------------------------------------------------------------------
    def run_python(self, block: Block) -> None:
        tree = ast.parse(block.text, filename=block.name)
        before = dict(self.namespace)
        shown: list[tuple[str, Any]] = []
        out = io.StringIO()
        with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for statement in tree.body:
                source = ast.get_source_segment(block.text, statement) or ""
                if isinstance(statement, ast.Expr):
                    code = compile(ast.Expression(statement.value), block.name, "eval")
                    shown.append((source, eval(code, self.namespace)))
                else:
                    module = ast.Module([statement], type_ignores=[])
                    exec(compile(module, block.name, "exec"), self.namespace)
        printed = out.getvalue()
        sys.stdout.write(printed)
        for source, value in shown:
            if _is_print(source):
                assert printed.strip(), f"{block.name}: {source!r} printed nothing"
                continue
            _not_empty(value, f"{block.name}: {source!r}")
            self._check(source, value)
        for name, value in self.namespace.items():
            if name.startswith("_") or before.get(name, _UNSET) is value:
                continue
            if hasattr(value, "__len__") and not isinstance(value, type | str | bytes):
                _not_empty(value, f"{block.name}: {name}")
            self._check(name, value)
        ours = [w for w in caught if type(w.message).__module__.startswith("svcnb")]
        assert not ours, f"{block.name}: svcnb warned: {[str(w.message) for w in ours]}"

    def _check(self, key: str, value: Any) -> None:
        for text, check in self.checks.items():
            if text in key:
                check(value, self)

    # sql ---------------------------------------------------------------------------------------
    def run_sql(self, block: Block) -> None:
        con = self.namespace.get("con")
        assert con is not None, f"{block.name}: no DuckDB connection `con` from a block before"
        rows = con.sql(block.text).to_arrow_table()
        assert rows.num_rows > 0, f"{block.name}: no rows"
        self._check(block.text, rows)

    # toml --------------------------------------------------------------------------------------
    def run_toml(self, block: Block) -> None:
        import tomllib

        path = self.home / f"block-{block.line}.toml"
        path.write_text(block.text)
        doc = tomllib.loads(block.text)
        if doc.get("format") == "svcnb-dialect":
            from svcnb.sandbox import Dialect, read_dialect_file

            spoken = Dialect.parse(read_dialect_file(path).name)
            stated = {k: v for k, v in doc["dialect"].items() if not isinstance(v, dict)}
            assert stated, f"{block.name}: states no dialect point"
            for key, value in stated.items():
                assert getattr(spoken, key) == value, f"{block.name}: {key} is not spoken"
            return
        from svcnb import config

        named = set(doc.get("accounts", {}))
        assert named, f"{block.name}: neither a config file naming accounts nor a dialect file"
        assert set(config.accounts(path)) == named, block.name

    # shell -------------------------------------------------------------------------------------
    def run_shell(self, block: Block) -> None:
        env = dict(self.env)
        servers: list[tuple[str, subprocess.Popen, Path]] = []
        printed_file: str | None = None
        try:
            for chain in shell_statements(block.text):
                words = chain[0]
                if words[0] == "unset":
                    for name in words[1:]:
                        env.pop(name, None)
                    continue
                if words[0] == "export":
                    for word in words[1:]:
                        name, _, value = word.partition("=")
                        if name == "SVCNB_SANDBOX" and printed_file:
                            value = printed_file  # "the line it printed"
                        env[name] = self._value(block, name, value)
                    continue
                for command in chain:
                    args = self._args(command[1:])
                    if args[0] in SERVERS:
                        self._stop_all(servers, block)
                        proc, log = self._start(block, args, env)
                        servers.append((shlex.join(args), proc, log))
                        found = re.search(r"^export SVCNB_SANDBOX=(\S+)$", log.read_text(), re.M)
                        printed_file = shlex.split(found.group(1))[0] if found else printed_file
                        continue
                    done = self._svcnb(args, env)
                    sys.stdout.write(done.stdout[-2000:])
                    said = f"{block.name}: svcnb {shlex.join(args)} exited {done.returncode}"
                    assert done.returncode in {0} | ALSO_FINE.get(args[0], set()), (
                        f"{said}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
                    )
                    assert "Traceback" not in done.stderr, f"{said}:\n{done.stderr}"
                    assert (done.stdout + done.stderr).strip(), f"{said} and printed nothing"
                    self._check(shlex.join(command), done.stdout)
                    if done.returncode:
                        break  # `a && b`: b runs only when a succeeded
        finally:
            self._stop_all(servers, block)

    def _svcnb(self, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return svcnb_in_process(args, env, self.home)

    def _value(self, block: Block, name: str, value: str) -> str:
        stand_in = self.substitutes().get(name)
        if stand_in is not None:
            return stand_in
        assert "..." not in value, f"{block.name}: {name}={value} is a placeholder with no stand-in"
        return os.path.expanduser(value)

    def _args(self, args: list[str]) -> list[str]:
        out = list(args)
        for i, word in enumerate(out[:-1]):
            if word == "--port" and out[i + 1].isdigit():
                out[i + 1] = str(_free_port())
        return out

    def _start(
        self, block: Block, args: list[str], env: dict[str, str]
    ) -> tuple[subprocess.Popen, Path]:
        # a terminal of its own, where nothing is exported yet (the module docstring)
        env = {k: v for k, v in env.items() if k != "SVCNB_SANDBOX"}
        log = self.home / f"server-{block.line}-{len(list(self.home.glob('server-*')))}.log"
        with open(log, "w") as sink:
            proc = subprocess.Popen(
                [sys.executable, "-m", "svcnb", *args],
                cwd=self.home,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = log.read_text()
            assert proc.poll() is None, f"{block.name}: svcnb {shlex.join(args)} ended:\n{text}"
            if args[0] == "sandbox" and "export SVCNB_SANDBOX=" in text:
                return proc, log
            if args[0] == "listen":
                port = int(args[args.index("--port") + 1])
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        return proc, log
            time.sleep(0.2)
        proc.kill()
        raise AssertionError(f"{block.name}: svcnb {shlex.join(args)} never answered")

    def _stop_all(self, servers: list, block: Block) -> None:
        while servers:
            command, proc, log = servers.pop()
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
            text = log.read_text()
            # the sandbox saves its state and exits 0; `listen` is uvicorn's, which shuts down
            # gracefully and then ends by the signal it was sent, as servers do
            fine = {0, -signal.SIGTERM} if command.startswith("listen") else {0}
            said = f"{block.name}: svcnb {command} exited {proc.returncode}"
            assert proc.returncode in fine, f"{said}:\n{text}"
            assert "Traceback" not in text, f"{block.name}: svcnb {command}:\n{text}"
            self._check(command, text)


_UNSET = object()


def svcnb_in_process(
    args: list[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``svcnb ARGS`` run in this process (``svcnb.cli.main``) as a terminal in ``cwd`` would run
    it: with exactly ``env``, the vocabulary read afresh, and what it writes to stdout and stderr
    (text or bytes) captured. Its exit code and output are what a doc block or a test checks; a
    new interpreter per command cost a second or two of CPU each. Servers still run as processes
    (``_start``), and what only a process shows (the ``python -m svcnb`` entry point, signals) is
    held by tests/sandbox/test_sandbox_on_its_own.py."""
    from svcnb import cli, vocab

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace")
    saved, here = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        vocab.reload()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(args)
            except SystemExit as stop:  # argparse's usage errors and --help
                code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)
        vocab.reload()
    for stream in (out, err):
        stream.flush()
    said = [stream.buffer.getvalue().decode("utf-8", "replace") for stream in (out, err)]
    return subprocess.CompletedProcess(["svcnb", *args], code, *said)


def _is_print(source: str) -> bool:
    return source.startswith("print(")


def _not_empty(value: Any, what: str) -> None:
    if hasattr(value, "__len__") and not isinstance(value, str | bytes | type):
        assert len(value) > 0, f"{what} is empty"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
