"""Keeping Secret values out of what the agent logs and reports.

kube-apiserver quotes the values it refuses: ``data[token]: Invalid value: "…"`` for a field error, and Go's
rendering of the value (``&value.valueUnstructured{Value:…}``) when a typed patch cannot be built. Those
messages go into the agent's log and, as ``lastError``, into the status report committed to git, so for a
Secret every value the manifest holds is cut out of a server message before anyone sees it: each value
literally (raw, base64-decoded and JSON-escaped, from :data:`MIN_LITERAL` characters on, where replacing is
unambiguous), and whatever follows the server's two value-quoting phrases, whatever its length.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

REDACTED: Final = "[redacted]"
MIN_LITERAL: Final = 3
SECRET_FIELDS: Final = ("data", "stringData")

_INVALID_VALUE = re.compile(r'(Invalid value: )("(?:[^"\\]|\\.)*"|[^:,]*)')
_GO_VALUE = re.compile(r"(valueUnstructured\{Value:).*?(\}(?=[:,;\s]|$))", re.DOTALL)


def is_secret(body: Mapping[str, Any]) -> bool:
    return body.get("kind") == "Secret" and body.get("apiVersion") == "v1"


def secret_values(body: Mapping[str, Any]) -> Iterator[str]:
    """Every value under ``data`` and ``stringData``, as text, with ``data``'s decoded too."""
    for name in SECRET_FIELDS:
        values = body.get(name)
        for value in _leaves(values):
            text = value if isinstance(value, str) else json.dumps(value, default=str)
            yield text
            if name == "data" and isinstance(value, str):
                with contextlib.suppress(binascii.Error, ValueError):
                    yield base64.b64decode(value, validate=True).decode("utf-8")


def _leaves(value: object) -> Iterator[object]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value


def redact_server_message(message: str, body: Mapping[str, Any]) -> str:
    """``message`` with the values of ``body`` (when it is a Secret) removed; other kinds unchanged."""
    if not is_secret(body):
        return message
    redacted = _INVALID_VALUE.sub(lambda match: match.group(1) + REDACTED, message)
    redacted = _GO_VALUE.sub(lambda match: match.group(1) + REDACTED + match.group(2), redacted)
    for value in sorted(set(secret_values(body)), key=len, reverse=True):
        if len(value) < MIN_LITERAL:
            continue
        for form in (value, json.dumps(value)[1:-1]):
            redacted = redacted.replace(form, REDACTED)
    return redacted
