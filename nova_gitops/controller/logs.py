"""Structured logs: one JSON object per line on stderr, for ``kubectl logs`` and log pipelines.

Credentials never reach a log line: every string value passes through :func:`redact`, which strips
``user:password@`` from URLs and replaces any configured secret (webhook secrets, tokens) wherever it appears,
so even an error message that quotes a command line cannot leak one.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Iterable
from typing import IO, Any

URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
REDACTED = "***"


class JsonLog:
    def __init__(
        self, stream: IO[str] | None = None, *, secrets: Iterable[str] = (), debug: bool = False
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.secrets = tuple(sorted({secret for secret in secrets if secret}, key=len, reverse=True))
        self.debug_enabled = debug
        self._lock = threading.Lock()

    def redact(self, text: str) -> str:
        text = URL_CREDENTIALS.sub(r"\g<scheme>", text)
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {str(key): self._clean(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._clean(item) for item in value]
        if value is None or isinstance(value, bool | int | float):
            return value
        return self.redact(str(value))

    def log(self, level: str, event: str, **fields: Any) -> None:
        if level == "debug" and not self.debug_enabled:
            return
        record = {"time": _timestamp(), "level": level, "event": event, **self._clean(fields)}
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self.stream.write(line + "\n")
            self.stream.flush()

    def info(self, event: str, **fields: Any) -> None:
        self.log("info", event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self.log("warning", event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self.log("error", event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        self.log("debug", event, **fields)


def _timestamp() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
