"""``serve()``: run a sandbox on loopback in a background thread, and the handle it gives.

with serve(vms=40, seed=7) as sb:
    httpx.get(sb.api_root + "/vms", headers={"x-api-key": sb.tokens["read"]})
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn

from . import _connection
from ._app import create_app
from ._config import SandboxConfig
from ._control_client import Control
from ._state import State

# How long a stop waits for answers being sent to finish before it cuts their connections.
_STOP_GRACE_SECONDS = 5.0


@dataclass
class Sandbox:
    """A running sandbox: where it is, its default tokens and its control helper."""

    base_url: str
    api_root: str
    control_url: str
    tokens: dict[str, str] = field(repr=False)
    control: Control
    state: State = field(repr=False)

    def __repr__(self) -> str:  # tokens stay out of every repr
        return f"Sandbox(base_url={self.base_url!r}, tokens=[{', '.join(self.tokens)}])"

    @property
    def pins(self) -> dict[str, str]:
        """The meanings its dialect gives where answers may not prove them (assumption name ->
        value, ``Dialect.pins``): a client on this sandbox reads with them, and no other does."""
        return dict(self.state.dialect.pins)

    def connection_info(self) -> dict:
        """What a connection file holds (``_connection``): where, the tokens, which server, and
        the pins of its dialect."""
        info = {
            "base_url": self.base_url,
            "api_root": self.api_root,
            "control_url": self.control_url,
            "tokens": dict(self.tokens),
            "instance": self.state.instance,
            "pins": self.pins,
        }
        if self.state.config.dialect != "default":
            info["dialect"] = self.state.config.dialect
        return info

    def write_connection_file(self, path: str | os.PathLike) -> Path:
        """Write the connection JSON readable by the owner only (it holds the tokens)."""
        return _connection.write(self.connection_info(), path)


class _Server(uvicorn.Server):
    """uvicorn's server, run in a thread and stopped at once by ``stop()``.

    uvicorn looks at ``should_exit`` every 0.1 s, then waits a fixed 0.1 s for connections to
    close and 0.1 s between looks at those left: a fifth of a second at the end of every
    ``with serve()`` block and every Ctrl-C of ``svcnb sandbox``, for nothing once no answer is
    being sent."""

    _woken: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    def install_signal_handlers(self) -> None:  # run in a thread: leave signals to the caller
        pass

    def stop(self) -> None:
        """Ask the server to stop, from any thread."""
        self.should_exit = True
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None:
            with contextlib.suppress(RuntimeError):  # its loop already ended
                loop.call_soon_threadsafe(woken.set)

    async def main_loop(self) -> None:
        # no ticks needed: the Date header is the app's own (date_header=False), no request limit
        self._woken = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if not self.should_exit:  # a stop() asked before the loop was known
            await self._woken.wait()

    async def shutdown(self, sockets: list | None = None) -> None:
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()  # an idle keep-alive closes now, a busy one after its answer
        state = self.server_state
        ends = time.monotonic() + _STOP_GRACE_SECONDS
        while (state.connections or state.tasks) and time.monotonic() < ends:
            await asyncio.sleep(0.005)
        for task in state.tasks:
            task.cancel()
        for server in self.servers:
            await server.wait_closed()


def uvicorn_config(app, host: str, port: int) -> uvicorn.Config:
    # the Date header is the sandbox clock's, so uvicorn must not add its own (nor Server)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        date_header=False,
        server_header=False,
        lifespan="off",
        timeout_keep_alive=30,
        # the sandbox decides itself whose X-Forwarded-For to believe (trusted_proxies);
        # uvicorn's own rewrite would believe any loopback caller, that is every caller
        proxy_headers=False,
    )


@contextmanager
def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    connection_file: str | None = None,
    saved: dict | None = None,
    **settings: object,
) -> Iterator[Sandbox]:
    """Serve a sandbox until the block ends. ``settings`` are :class:`SandboxConfig` fields
    (``vms``, ``seed``, ``time_scale`` (default 0: frozen), ``latency_ms``, ``rate_limit``,
    ``ip_rate_limit``, ``rate_window_seconds``, ``ca_bundle``, ``trusted_proxies``, ``dialect``:
    a named dialect such as ``default`` or ``acme``, or ``random:SEED``, see docs/dialects.md).
    ``api_root`` is under a base path the dialect serves. ``saved`` is a saved state document
    (``GET /_sandbox/state``, ``svcnb.sandbox.read_state_file``) to start from instead of a
    seeded fleet; its clock and seed replace ``epoch`` and ``seed``."""
    config = SandboxConfig().with_changes(**settings)
    app = create_app(config, saved)
    server = _Server(uvicorn_config(app, host, port))
    thread = threading.Thread(target=server.run, name="svcnb-sandbox", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the sandbox could not start on {host}:{port} (is the port free?)")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    base = f"http://{shown_host}:{bound}"
    state: State = app.state.sandbox
    sandbox = Sandbox(
        base_url=base,
        api_root=base + state.dialect.prefixes[-1],
        control_url=base + "/_sandbox",
        tokens=dict(state.default_secrets),
        control=Control(base + "/_sandbox", trust_env=False),  # its own server: never a proxy
        state=state,
    )
    if connection_file:
        sandbox.write_connection_file(connection_file)
    try:
        yield sandbox
    finally:
        sandbox.control.close()
        server.stop()
        thread.join(timeout=_STOP_GRACE_SECONDS + 5)
        if app.state.ticker is not None:
            app.state.ticker.stop()
