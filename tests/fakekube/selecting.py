"""Label and field selectors, parsed with kube-apiserver's grammar so a selector the real server rejects is
rejected here too (400), and one it accepts filters the same objects.

Label selectors: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>1`, `k<1`, comma-joined.
Field selectors: `=`, `==`, `!=` on `metadata.name`, `metadata.namespace`, and the few extra fields a resource
supports (pods: `spec.nodeName`, `status.phase`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from tests.fakekube.statuses import ApiError, bad_request

Predicate = Callable[[Mapping[str, Any]], bool]

_KEY = r"(?:[A-Za-z0-9.\-]+/)?[A-Za-z0-9](?:[A-Za-z0-9_.\-]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9](?:[A-Za-z0-9_.\-]*[A-Za-z0-9])?)?"
_SET_REQUIREMENT = re.compile(rf"\s*({_KEY})\s+(in|notin)\s*\(([^)]*)\)\s*")
_COMPARE_REQUIREMENT = re.compile(rf"\s*({_KEY})\s*(==|=|!=|>|<)\s*({_VALUE})\s*")
_EXISTS_REQUIREMENT = re.compile(rf"\s*(!?)\s*({_KEY})\s*")
_VALUE_ONLY = re.compile(rf"\s*({_VALUE})\s*")

EXTRA_FIELD_LABELS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    ("", "events"): (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "reason",
        "source",
        "type",
    ),
    ("", "secrets"): ("type",),
    ("", "namespaces"): ("status.phase",),
    ("", "nodes"): ("spec.unschedulable",),
    ("apps", "replicasets"): ("status.replicas",),
    ("batch", "jobs"): ("status.successful",),
}


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _requirement(text: str) -> Predicate:
    if match := _SET_REQUIREMENT.fullmatch(text):
        key, operator, raw_values = match.groups()
        values = set()
        for raw in raw_values.split(","):
            value_match = _VALUE_ONLY.fullmatch(raw)
            if value_match is None:
                raise bad_request(f"unable to parse requirement: invalid label value: {raw.strip()!r}")
            values.add(value_match.group(1))
        if operator == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if match := _COMPARE_REQUIREMENT.fullmatch(text):
        key, operator, value = match.groups()
        if operator in ("=", "=="):
            return lambda labels: labels.get(key) == value
        if operator == "!=":
            return lambda labels: labels.get(key) != value
        if not value.lstrip("-").isdigit():
            raise bad_request(
                f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an "
                f"integer: {value!r}"
            )
        bound = int(value)
        greater = operator == ">"

        def compare(labels: Mapping[str, Any]) -> bool:
            actual = labels.get(key)
            if actual is None or not str(actual).lstrip("-").isdigit():
                return False
            return int(actual) > bound if greater else int(actual) < bound

        return compare
    if match := _EXISTS_REQUIREMENT.fullmatch(text):
        negated, key = match.groups()
        if negated:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise bad_request(f"unable to parse requirement: found '{text.strip()}', expected: label selector syntax")


def label_selector(text: str | None) -> Predicate:
    """A predicate on an object's labels; raises a 400 ApiError for text the real server would reject."""
    if text is None or not text.strip():
        return lambda labels: True
    requirements = [_requirement(part) for part in _split_top_level(text)]
    return lambda labels: all(requirement(labels) for requirement in requirements)


def _field_value(obj: Mapping[str, Any], dotted: str) -> str:
    value: Any = obj
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _field_check(field: str, expected: str, negate: bool) -> Callable[[Mapping[str, Any]], bool]:
    return lambda obj: (_field_value(obj, field) == expected) != negate


def field_selector(text: str | None, group: str, plural: str) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate on a whole object; unsupported field labels give 400 as on the real server."""
    if text is None or not text.strip():
        return lambda obj: True
    supported = ("metadata.name", "metadata.namespace", *EXTRA_FIELD_LABELS.get((group, plural), ()))
    checks: list[Callable[[Mapping[str, Any]], bool]] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*([A-Za-z0-9.]+)\s*(==|=|!=)\s*(.*?)\s*", part)
        if match is None:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field, operator, expected = match.groups()
        if field not in supported:
            raise ApiError(400, "BadRequest", f"field label not supported: {field}")
        checks.append(_field_check(field, expected, negate=operator == "!="))
    return lambda obj: all(check(obj) for check in checks)
