"""A logging handler and collector that finds API tokens in any text it was given."""

from __future__ import annotations

import logging
import traceback


class LeakScan(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.tokens: set[str] = set()
        self.texts: list[tuple[str, str]] = []  # (where it came from, text)

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += "".join(traceback.format_exception(*record.exc_info))
        self.texts.append((f"log {record.name}", text))

    def add(self, obj: object) -> object:
        """Keep ``str``, ``repr`` (and for exceptions the formatted traceback) of ``obj``."""
        self.texts.append(("str", str(obj)))
        self.texts.append(("repr", repr(obj)))
        if isinstance(obj, BaseException):
            self.texts.append(("traceback", "".join(traceback.format_exception(obj))))
        return obj

    def leaks(self) -> list[tuple[str, str]]:
        return [
            (where, text)
            for where, text in self.texts
            if any(token in text for token in self.tokens)
        ]
