"""The sandbox as one ASGI app: public API, control, OpenAPI, and envelopes for everything else.

``create_app(config)`` builds the state and returns a plain ASGI app (no web framework: the
sandbox routes, answers errors and adds headers itself, so a framework would only be a shell);
it can run under uvicorn or be mounted in-process with ``httpx.ASGITransport``.
``app.state.sandbox`` is the :class:`State`, ``app.state.ticker`` the clock's ticker (or None).
"""

from __future__ import annotations

import logging
from types import SimpleNamespace

from ._build import new_state
from ._clock import Ticker
from ._config import SandboxConfig
from ._control import handle_control
from ._envelopes import dumps, fail, http_date
from ._http import DroppedConnection, header_map, send_response
from ._openapi import openapi_document
from ._public import handle_public
from ._state import State

_log = logging.getLogger(__name__)


class Dispatcher:
    """Routes every HTTP request to control, the OpenAPI document or the public pipeline, and
    turns anything unexpected into a 500 failure envelope."""

    def __init__(self, state: State, config: SandboxConfig) -> None:
        self.state = state
        self.config = config
        self._openapi = dumps(openapi_document())

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        state = self.state
        headers = header_map(scope)
        path = scope["path"]
        try:
            if path == "/_sandbox" or path.startswith("/_sandbox/"):
                await handle_control(state, self.config, scope, receive, send, headers)
            elif path == "/openapi.json" and scope["method"] in ("GET", "HEAD"):
                await send_response(send, 200, self._openapi, {"date": http_date(state.now())})
            else:
                await handle_public(state, scope, receive, send, headers)
        except DroppedConnection:
            raise
        except Exception:
            _log.exception("sandbox request %s %s failed", scope["method"], path)
            await send_response(
                send,
                500,
                dumps(fail("internal server error in the sandbox")),
                {"date": http_date(state.now())},
            )


class SandboxApp:
    """The ASGI app: HTTP goes to the dispatcher; ``lifespan`` shutdown stops the ticker."""

    def __init__(self, state: State, config: SandboxConfig, ticker: Ticker | None) -> None:
        self.state = SimpleNamespace(sandbox=state, ticker=ticker)
        self._dispatch = Dispatcher(state, config)

    async def __call__(self, scope, receive, send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._dispatch(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1000})

    async def _lifespan(self, receive, send) -> None:
        # the ticker starts with the app (in-process callers never send a lifespan), so startup
        # has nothing left to do; shutdown stops it
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.state.ticker is not None:
                    self.state.ticker.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_app(config: SandboxConfig | None = None, saved: dict | None = None) -> SandboxApp:
    """The ASGI app of a freshly seeded sandbox, or of the account the saved state document
    ``saved`` holds (``_saved``; its clock and seed replace the config's)."""
    config = config or SandboxConfig()
    state = new_state(config, saved)
    ticker = Ticker(lambda: state.clock.run_due()) if config.time_scale > 0 else None
    if ticker is not None:
        ticker.start()
    return SandboxApp(state, config, ticker)


class _DropFilter(logging.Filter):
    """Keeps uvicorn from logging the connections the dropRate fault cuts on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, DroppedConnection):
                return False
            exc = exc.__cause__ or exc.__context__
        return True


logging.getLogger("uvicorn.error").addFilter(_DropFilter())
