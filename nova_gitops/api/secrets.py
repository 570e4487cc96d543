"""Secret ``data`` and ``stringData`` checked as kube-apiserver checks them, without ever quoting a value.

A Secret in the source is rendered like any other object, so a malformed one would be refused only later, by
the API server of every cluster it is placed on, each apply failing in turn. Checking it here turns that into
one validation error at file:line, before anything is written: ``data`` and ``stringData`` are mappings of
Secret keys (``[-._a-zA-Z0-9]+``, at most 253 characters, not ``.``/``..``, as ``IsConfigMapKey`` says) to
text, and every ``data`` value is standard base64 (line breaks ignored, as Go's decoder ignores them).

A Secret's value must never appear in a message (docs/design.md §9: errors are printed, logged and posted to
pull requests): problems name the key and what is wrong with the value, never the value or a piece of it.
"""

from __future__ import annotations

import binascii
import re
from base64 import b64decode
from collections.abc import Mapping
from typing import Any

from nova_gitops.api import names
from nova_gitops.api.problems import described, excerpt

MAX_KEY_LENGTH = 253
_SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+\Z")
_LINE_BREAKS = str.maketrans("", "", "\r\n")


def key_problem(key: object) -> str | None:
    """Why ``key`` cannot be a key of a Secret's (or ConfigMap's) data, or None when it can."""
    if not isinstance(key, str):
        return f"a Secret key must be text, got {_kind_of(key)}"
    if not key:
        return "a Secret key must not be empty"
    if len(key) > MAX_KEY_LENGTH:
        return f"a Secret key must be at most {MAX_KEY_LENGTH} characters, this one has {len(key)}"
    if not _SECRET_KEY.match(key):
        return f"invalid Secret key {excerpt(key)}: use only letters, digits, '-', '_' and '.'"
    if key in (".", "..") or key.startswith(".."):
        return f"invalid Secret key {excerpt(key)}: must not be '.' or '..', nor start with '..'"
    return None


def check_secret_data(body: Mapping[str, Any], check: names.Fields) -> None:
    """An error per defect of ``data``/``stringData`` in a Secret ``body``; values are never quoted."""
    for field, encoded in (("data", True), ("stringData", False)):
        raw = body.get(field)
        if raw is None:
            continue
        if not isinstance(raw, dict):
            check.error(field, f"must be a mapping of key to value, got {_kind_of(raw)}")
            continue
        for key, value in raw.items():
            where = names.child(field, key if isinstance(key, str) else str(key))
            reason = key_problem(key)
            if reason is not None:
                check.error(where, reason)
            elif not isinstance(value, str):
                check.error(where, f"the value must be text, got {_kind_of(value)} (value not shown)")
            elif encoded and not _is_base64(value):
                check.error(
                    where,
                    "the value is not valid base64 (value not shown); plain text goes under stringData",
                )


def _is_base64(value: str) -> bool:
    try:
        b64decode(value.translate(_LINE_BREAKS), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _kind_of(value: object) -> str:
    """What a value is, without its content: a number's digits could be the secret itself."""
    if value is None or isinstance(value, bool | list | dict):
        return described(value)
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__
