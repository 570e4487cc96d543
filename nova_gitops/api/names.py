"""Names of things in problems and in Kubernetes: field paths we report, and the name rules selectors lack.

Every Problem names the field it is about with a path a user can read and ``loading.locate_field`` can follow
back to a line: dotted keys, ``[n]`` for list items, and ``['key']`` for keys that are not plain words
(label keys such as ``app.kubernetes.io/name``, node names with dots). This is the Kubernetes field-path
syntax of DESIGN §3, so one grammar serves overrides and error messages alike.

The DNS-1123 and label-syntax checks live in ``selectors``; here are the two rules of kube-apiserver they do
not cover: DNS-1035 labels (Service names) and path-segment names (RBAC objects, whose names may hold ``:``).
"""

from __future__ import annotations

import re

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")


def child(base: str, key: str | int) -> str:
    """The path of ``key`` inside ``base``: ``child("spec", "priority")`` → ``spec.priority``,
    ``child("a", 1)`` → ``a[1]``, ``child("labels", "x.io/y")`` → ``labels['x.io/y']``."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    if _PLAIN_KEY.match(key):
        return f"{base}.{key}" if base else key
    quoted = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{base}['{quoted}']"


def is_dns1035_label(name: str) -> bool:
    """A DNS-1035 label: what kube-apiserver requires of Service names (starts with a letter)."""
    return len(name) <= 63 and _DNS1035_LABEL.match(name) is not None


def path_segment_problem(name: str) -> str | None:
    """Why ``name`` cannot be a path segment (kube-apiserver's rule for RBAC names), or None when it can."""
    if name in (".", ".."):
        return f"may not be {name!r}"
    for forbidden in ("/", "%"):
        if forbidden in name:
            return f"may not contain {forbidden!r}"
    if len(name) > 253:
        return "must be no more than 253 characters"
    return None


def type_name(value: object) -> str:
    """The YAML name of a value's type, for messages such as "must be a string, not a number"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
