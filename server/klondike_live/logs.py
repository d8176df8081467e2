"""The server's logging: text or JSON lines, and a flood guard for outages.

    configure(level="INFO", fmt="text")    # once, at start (`serve --log-level --log-format`)

`FloodGuard` is a filter on the handler: while Redis is down, every request, tick and
bus read fails the same way, and each would log its traceback. The guard lets the first
record of each kind (logger, level, message template) through per `interval` seconds
and counts the rest; the next record of that kind that passes says how many were
suppressed (`suppressed` in JSON, "(N similar suppressed)" in text). Warnings and
errors are guarded; info and debug lines pass untouched.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Final, Literal

LogFormat = Literal["text", "json"]

TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class FloodGuard(logging.Filter):
    """At most one warning or error of each kind per `interval` seconds (see above)."""

    def __init__(self, interval: float = 10.0) -> None:
        super().__init__()
        self.interval = interval
        self._last: dict[tuple[str, int, str], float] = {}
        self._suppressed: dict[tuple[str, int, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, record.levelno, str(record.msg))
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return False
        self._last[key] = now
        suppressed = self._suppressed.pop(key, 0)
        if suppressed:
            record.suppressed = suppressed
        if len(self._last) > 10_000:  # bounded memory whatever the messages are
            self._last.clear()
        return True


class TextFormatter(logging.Formatter):
    """The classic one-line format, plus the count of suppressed records."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        suppressed = getattr(record, "suppressed", 0)
        if suppressed:
            first, _, rest = line.partition("\n")
            line = f"{first} ({suppressed} similar suppressed)" + (f"\n{rest}" if rest else "")
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, object] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        suppressed = getattr(record, "suppressed", 0)
        if suppressed:
            data["suppressed"] = suppressed
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False)


JsonFormatter.converter = time.gmtime


def configure(
    level: str = "INFO", fmt: LogFormat = "text", *, flood_interval: float = 10.0
) -> None:
    """Log to stderr at `level` in `fmt`, with the flood guard letting one warning or
    error of a kind through per `flood_interval` seconds (replaces any handlers)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(FloodGuard(flood_interval))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # The sessions log one line per websocket connection opened and closed; the library's
    # own lines would add two for every HTTP request (each file of the browser client).
    logging.getLogger("websockets.server").setLevel(logging.WARNING)
