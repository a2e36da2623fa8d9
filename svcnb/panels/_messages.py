"""svcnb errors turned into inline words for a panel's status line.

A panel never lets an exception reach the notebook as a traceback: every handler runs inside
``shown_in(status, doing)``, which writes one sentence saying what went wrong and what to do.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import ipywidgets as widgets

from svcnb import errors
from svcnb.client import Client
from svcnb.client import redact as mask_tokens

Kind = Literal["ok", "info", "warn", "error"]


# Each kind's mark: JupyterLab's theme colour for it (a fallback outside Lab). The box itself
# takes the theme's own text and raised-surface colours, so it never glares on a dark page;
# the kind shows in the bar at its left edge.
_ACCENTS = {
    "ok": "var(--jp-success-color1,#388e3c)",
    "info": "var(--jp-brand-color1,#1976d2)",
    "warn": "var(--jp-warn-color1,#f57c00)",
    "error": "var(--jp-error-color1,#d32f2f)",
}


def redact(text: str) -> str:
    """``text`` with anything shaped like an API token masked; a token must never reach the
    page, even if some layer below forgot to mask it."""
    return mask_tokens(text)


def _api_message(exc: BaseException) -> str:
    # The server's own words are short and specific; the client's full message repeats advice
    # that the sentences below already give, so it is only the fallback.
    message = getattr(exc, "server_message", "") or getattr(exc, "message", None) or str(exc)
    return str(message).rstrip(".")


def describe(exc: BaseException, doing: str) -> tuple[Kind, str]:
    """One sentence for ``exc`` raised while ``doing`` (e.g. "stopping web-1"), and its kind.

    The sentence says what was wrong and what the user can do about it.
    """
    msg = _api_message(exc)
    if isinstance(exc, errors.ScopeError):
        scope = getattr(exc, "scope", None) or "the required"
        text = (
            f"Not allowed {doing}: the API token lacks the {scope} scope. Create a token with "
            f"{scope} in the account dashboard (API keys) and connect with it."
        )
    elif isinstance(exc, errors.AuthError):
        status = getattr(exc, "status", 401)
        text = (
            f"The API token was rejected {doing} ({status}: missing, expired, revoked or "
            "deleted). Set SVC_API_KEY to a valid token and reconnect."
        )
    elif isinstance(exc, errors.LimitExceeded):
        status = getattr(exc, "status", "")
        text = (
            f"An account limit was reached {doing} ({status}): {msg}. Free one up (for "
            "example disable a webhook subscription you no longer need) and retry."
        )
        return "warn", redact(text)
    elif isinstance(exc, errors.Forbidden):
        status = getattr(exc, "status", 403)
        text = f"The service refused {doing} ({status}): {msg}."
    elif isinstance(exc, errors.RateLimited):
        wait = getattr(exc, "retry_after", None)
        after = f"wait {float(wait):.0f} s" if wait is not None else "wait a minute"
        text = (
            f"The API rate limit was reached {doing} and retries ran out ({msg}). "
            f"Nothing more was sent; {after} and try again."
        )
        return "warn", redact(text)
    elif isinstance(exc, errors.Conflict):
        status = getattr(exc, "status", 409)
        text = f"Refused {doing} ({status} conflict): {msg}. Refresh to see the current state."
        return "warn", redact(text)
    elif isinstance(exc, errors.UpstreamSyncError):
        text = (
            f"The service stored the change {doing} but could not sync it upstream (502): {msg}. "
            "The rule below was read again after the failure; check it and save again if needed."
        )
    elif isinstance(exc, errors.ValidationError):
        field = getattr(exc, "field", None)
        where = f" in {field}" if field else ""
        status = getattr(exc, "status", 422)
        text = (
            f"The service refused a value{where} {doing} ({status}): {msg}. Correct it and retry."
        )
    elif isinstance(exc, errors.NotFound):
        text = f"Not found {doing} (404): {msg}. It may have been deleted; refresh the list."
    elif isinstance(exc, errors.ServerError):
        status = getattr(exc, "status", "5xx")
        text = f"The service failed {doing} ({status}): {msg}. Try again in a moment."
    elif isinstance(exc, errors.TransportError):
        text = f"No answer from the service {doing}: {msg}. Check the connection and retry."
    elif isinstance(exc, errors.SvcnbError):
        text = f"Failed {doing}: {msg}."
    elif isinstance(exc, ValueError):
        # raised before anything was sent: a bad value, or nothing to work on yet
        text = f"Cannot go on {doing}: {msg}."
    elif isinstance(exc, OSError) and (exc.filename or exc.strerror):
        # a file or folder of this machine: name it and what the system said, never "report this"
        where = exc.filename2 or exc.filename
        text = (
            f"Could not go on {doing}: {exc.strerror or exc}"
            + (f" ({where})" if where else "")
            + ". Choose a folder or file you can write to and try again."
        )
    else:
        text = f"Unexpected {type(exc).__name__} {doing}: {msg}. Please report this."
    return "error", redact(text)


def folder_problem(folder: Path, exc: OSError, field: str, button: str) -> str:
    """One sentence for a folder that cannot hold a file (``exc`` from creating it): which
    folder, what is wrong with it, and to type another in ``field`` and press ``button``."""
    if folder.is_file() or isinstance(exc, FileExistsError):
        what = "is a file, not a folder"
    elif isinstance(exc, PermissionError):
        what = "cannot be created or written here (permission denied)"
    else:
        reason = (exc.strerror or type(exc).__name__).rstrip(".").lower()
        where = f" at {exc.filename}" if exc.filename and str(exc.filename) != str(folder) else ""
        what = f"does not exist and cannot be created ({reason}{where})"
    return (
        f"Cannot write to folder {folder}: it {what}. Type a folder you can write to in "
        f"'{field}' and press {button} again."
    )


def banner(kind: Kind, text: str, *, raw_html: bool = False) -> str:
    """``text`` as a small coloured HTML box; ``text`` is escaped unless ``raw_html``."""
    body = text if raw_html else html.escape(redact(text))
    return (
        f'<div class="svcnb-msg svcnb-msg-{kind}" style="color:var(--jp-ui-font-color1,#000);'
        f"background:var(--jp-layout-color2,#eee);border-left:4px solid {_ACCENTS[kind]};"
        f'padding:4px 8px;border-radius:2px;margin:2px 0">{body}</div>'
    )


def show(status: widgets.HTML, kind: Kind, text: str) -> None:
    """Put ``text`` into the ``status`` widget as a ``kind`` message."""
    status.value = banner(kind, text)


@contextmanager
def shown_in(status: widgets.HTML, doing: str) -> Iterator[None]:
    """Run the block; any exception becomes a sentence in ``status`` instead of a traceback."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - a widget handler must never raise into the page
        kind, text = describe(exc, doing)
        show(status, kind, text)


class RateWait:
    """Seconds the client spent waiting on the rate limit during a block (from ``client.stats``)."""

    def __init__(self, client: Client | None) -> None:
        self._client = client  # None: a panel reading a store, which never waits
        self.seconds = 0.0

    def _waited(self) -> float:
        stats = getattr(self._client, "stats", None) or {}
        try:
            return float(stats.get("waited_seconds", 0.0) or 0.0)
        except (TypeError, ValueError):
            return 0.0

    def __enter__(self) -> RateWait:
        self._start = self._waited()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.seconds = max(0.0, self._waited() - self._start)

    def words(self) -> str:
        """A sentence for the status line, or "" when no wait worth mentioning happened."""
        if self.seconds < 0.05:
            return ""
        return f" Waited {self.seconds:.1f} s for the API rate limit."
