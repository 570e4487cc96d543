"""Keeping Secret values out of what the agent logs and reports.

kube-apiserver quotes the values it refuses: ``data[token]: Invalid value: "…"`` for a field error, and Go's
rendering of the value (``&value.valueUnstructured{Value:…}``) when a typed patch cannot be built. Those
messages go into the agent's log and, as ``lastError``, into the status report committed to git, so for a
Secret a server message is cut down before anyone sees it: every double-quoted string but the Secret's own
name, namespace and keys (Go's ``%q`` quoting, whatever it escapes), whatever follows the server's two
value-quoting phrases, and each value the manifest holds wherever it appears unquoted (raw, base64-encoded,
base64-decoded and JSON-escaped, from :data:`MIN_LITERAL` characters on, where replacing is unambiguous).
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

_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
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
            yield base64.b64encode(text.encode()).decode()  # a webhook or the server sees stringData encoded
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
    shown = _names(body)
    redacted = _QUOTED.sub(lambda q: q.group() if q.group()[1:-1] in shown else f'"{REDACTED}"', message)
    redacted = _INVALID_VALUE.sub(lambda match: match.group(1) + REDACTED, redacted)
    redacted = _GO_VALUE.sub(lambda match: match.group(1) + REDACTED + match.group(2), redacted)
    for value in sorted(set(secret_values(body)), key=len, reverse=True):
        if len(value) < MIN_LITERAL:
            continue
        for form in (value, json.dumps(value)[1:-1]):
            redacted = redacted.replace(form, REDACTED)
    return redacted


def _names(body: Mapping[str, Any]) -> set[str]:
    """What a message about this Secret may quote: its kind, name, namespace and keys (never a value)."""
    metadata = body.get("metadata")
    shown = {"Secret"}
    if isinstance(metadata, Mapping):
        shown.update((str(metadata.get("name", "")), str(metadata.get("namespace", ""))))
    for name in SECRET_FIELDS:
        values = body.get(name)
        if isinstance(values, Mapping):
            shown.update(str(key) for key in values)
    return shown - {""}
