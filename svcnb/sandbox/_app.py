"""The sandbox as one ASGI app: public API, control, OpenAPI, and envelopes for everything else.

``create_app(config)`` builds the state and returns a Starlette app whose router sends every
request to the dispatcher below; it can run under uvicorn or be mounted in-process with
``httpx.ASGITransport``. ``app.state.sandbox`` is the :class:`State`.
"""

from __future__ import annotations

import logging

from starlette.applications import Starlette

from ._build import new_state
from ._clock import Ticker
from ._config import SandboxConfig
from ._control import handle_control
from ._http import DroppedConnection, header_map, send_response
from ._openapi import openapi_document
from ._public import handle_public
from ._state import State
from ._wire import dumps, fail, http_date

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


def create_app(config: SandboxConfig | None = None) -> Starlette:
    """The ASGI app of a freshly seeded sandbox (see the module docstring)."""
    config = config or SandboxConfig()
    state = new_state(config)
    ticker = Ticker(lambda: state.clock.run_due()) if config.time_scale > 0 else None
    if ticker is not None:
        ticker.start()
    app = Starlette()
    # every request goes to the dispatcher: Starlette's own routing would answer odd paths
    # (a newline in an id, say) with a plain-text 404 outside the envelope
    app.router.default = Dispatcher(state, config)
    app.state.sandbox = state
    app.state.ticker = ticker
    return app


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
