"""The token, and the one place that decides how it may be shown.

``TOKEN_RE`` is the one definition of what a token looks like: the spec's prefix ``svc_`` and
then the characters of the token alphabet (URL-safe base64, as the service issues them, plus
``.``, which some issuers use as a separator; a trailing dot is left as the sentence's own).
:func:`redact` is the one masking function: the client, the store's audit log and the panels
all call it. :class:`Secret` holds the token itself so that no repr, str, format, log line or
pickle can show it; only the header writer calls :meth:`Secret.reveal`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, NoReturn

TOKEN_PREFIX = "svc_"
TOKEN_ALPHABET = r"A-Za-z0-9_\-."
TOKEN_RE = re.compile(rf"{TOKEN_PREFIX}[{TOKEN_ALPHABET}]*[A-Za-z0-9_\-]")
TOKEN_BYTES_RE = re.compile(TOKEN_RE.pattern.encode())
MASK = TOKEN_PREFIX + "…"
# The service issues tokens of 44 characters; these bounds leave room for other issuers while
# refusing what is plainly something else (a word, a pasted file) held where a token should be.
TOKEN_MIN_LENGTH = 16
TOKEN_MAX_LENGTH = 512
# A short token would be revealed whole by its last four characters.
_MIN_LENGTH_TO_SHOW_TAIL = 12


def mask_token(token: Any) -> str:
    """``svc_…`` plus the last four characters, or ``<none>``; never more of the secret."""
    if isinstance(token, Secret):
        return str(token)
    if not token:
        return "<none>"
    if not isinstance(token, str):
        return "<not a string>"
    tail = token[-4:] if len(token) >= _MIN_LENGTH_TO_SHOW_TAIL else ""
    return f"{MASK}{tail}"


def looks_like_token(value: Any) -> bool:
    """Whether ``value`` has the form of an API token: ``svc_``, then only the token alphabet,
    :data:`TOKEN_MIN_LENGTH` to :data:`TOKEN_MAX_LENGTH` characters in all. It answers a
    yes or no, so a caller that refuses a value never needs a name holding it."""
    return (
        isinstance(value, str)
        and TOKEN_MIN_LENGTH <= len(value) <= TOKEN_MAX_LENGTH
        and TOKEN_RE.fullmatch(value) is not None
    )


def redact(text: Any, secret: Secret | str | None = None) -> str:
    """``text`` (made a string) with ``secret`` and anything shaped like a token masked.

    The exact secret is masked first, so a token outside the usual alphabet (or one a server
    echoes) is masked too; then every ``TOKEN_RE`` match, whoever's token it is.
    """
    text = text if isinstance(text, str) else str(text)
    if isinstance(secret, Secret):
        if secret and secret.reveal() in text:
            text = text.replace(secret.reveal(), str(secret))
    elif isinstance(secret, str) and secret and secret in text:
        text = text.replace(secret, mask_token(secret))
    return TOKEN_RE.sub(lambda match: mask_token(match.group(0)), text)


def redact_bytes(data: bytes, secret: Secret | None = None) -> bytes:
    """:func:`redact` for a body as it came off the wire (UTF-8 masks in place of tokens), so
    an answer that echoes a token holds only its mask from the moment it is read."""
    if TOKEN_PREFIX.encode() not in data:
        return data
    if secret and secret.reveal().encode() in data:
        data = data.replace(secret.reveal().encode(), str(secret).encode())
    return TOKEN_BYTES_RE.sub(lambda m: mask_token(m.group(0).decode("ascii")).encode(), data)


class Secret:
    """An API token that shows as ``svc_…abcd`` wherever it is printed, logged or pickled.

    It never raises while it holds the raw value in a local (a verbose traceback prints the
    locals of every frame): a bad value is wrapped as it is and :attr:`problem` says what is
    wrong with it, for the caller to raise outside.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The raw token: for the header writer only."""
        return self._value

    @property
    def problem(self) -> str | None:
        """Why this value cannot be sent as a token (never quoting it), or None."""
        if not isinstance(self._value, str):
            return f"api_key must be a string, got {type(self._value).__name__}"
        if self._value.strip() != self._value:
            return "api_key has leading or trailing whitespace; pass the token exactly"
        if not (self._value.isascii() and self._value.isprintable()) or " " in self._value:
            # httpx would fail to encode the header and its error would quote the whole value.
            return "api_key holds characters a header cannot carry (spaces, non-ASCII, controls)"
        return None

    def fingerprint(self) -> str:
        """A digest that tells tokens apart without holding any of them."""
        return hashlib.sha256(str(self._value).encode()).hexdigest()

    def __bool__(self) -> bool:
        return bool(self._value)

    def __str__(self) -> str:
        return mask_token(self._value)

    def __repr__(self) -> str:
        return f"Secret({mask_token(self._value)!r})"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict) -> Secret:
        return self

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("an API token is not pickled: pass it again where it is needed")


def as_secret(value: Secret | str | None) -> Secret | None:
    """``value`` wrapped (never raising, see :class:`Secret`); None and "" stay None."""
    if value is None or isinstance(value, Secret):
        return value or None
    if isinstance(value, str) and not value:
        return None
    return Secret(value)
